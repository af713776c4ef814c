#!/usr/bin/env bash
# Keeps the Helm chart (deploy/helm/strimzi-kafka-operator) in step with the install bundle
# (deploy/install/cluster-operator), which stays the source of truth:
#
#   (a) `helm lint --strict` passes;
#   (b) the chart's crds/ holds byte-identical copies of every deploy/crds/04*.yaml, and
#       nothing else;
#   (c) with default values, `helm template` renders exactly the bundle's non-CRD objects,
#       compared as parsed objects; the chart may add labels and set metadata.namespace
#       (to the release namespace) on namespaced objects, nothing more;
#   (d) watchNamespaces puts the 020, 023 and 031 RoleBindings in every listed namespace plus the
#       release namespace (without repeats) and lists them in STRIMZI_NAMESPACE in that
#       order; watchAnyNamespace turns them into ClusterRoleBindings and STRIMZI_NAMESPACE
#       into "*";
#   (e) the switches and the other non-default values render what they should (leader
#       election off, no RBAC, no global resources, images, optional variables, the logging
#       ConfigMap, its volume and file, JSON lines);
#   (f) Strimzi 1.2's own values.yaml (in $STRIMZI_REFERENCE_DIR/helm, by default
#       ../shared/strimzi-reference beside the checkout) renders the same operator environment
#       as our defaults; its every key is one of ours or named in docs/differences.md as ignored; its
#       default* image values move the Kafka, Connect, MirrorMaker 2 and Bridge images as in
#       Strimzi's chart (the mirror recipe) and leave our operator's image alone; `--set` of
#       its component image keys and of the keys only Strimzi's chart had renders what
#       Strimzi's chart renders for them;
#   (g) the chart as deploy/release.sh packs it, with our image moved to another registry
#       (`--image-repository`), passes `helm lint --strict` and renders, with default values,
#       the objects of (c) with only our image's references changed.
#
# Prints one line per problem and exits 1 if there is any. Needs helm and kubectl (kubectl
# only turns YAML into JSON, offline: `kubectl label --local`), both built by
# tests/testenv/install.sh into its cache; $HELM and $KUBECTL override them. The comparison
# itself is python3 with its standard library only.
set -Eeuo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../tests/testenv/versions.env
source "$root/tests/testenv/versions.env"
cache=${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}
helm=${HELM:-$cache/helm-$HELM_VERSION/bin/helm}
kubectl=${KUBECTL:-$cache/kubernetes-$KUBERNETES_VERSION/bin/kubectl}
chart=$root/deploy/helm/strimzi-kafka-operator
bundle=$root/deploy/install/cluster-operator
crds=$root/deploy/crds
namespace=myproject
reference_values=${STRIMZI_REFERENCE_DIR:-$root/../shared/strimzi-reference}/helm/values.yaml

for tool in helm kubectl; do
    if [[ ! -x ${!tool} ]]; then
        echo "check-chart.sh: $tool not found at ${!tool}: build it with 'bash tests/testenv/install.sh' (or set ${tool^^})" >&2
        exit 1
    fi
done
command -v python3 >/dev/null || { echo "check-chart.sh: python3 not found" >&2; exit 1; }
if [[ ! -f $reference_values ]]; then
    echo "check-chart.sh: Strimzi 1.2's values.yaml not found at $reference_values: set STRIMZI_REFERENCE_DIR" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
problems=$tmp/problems
: >"$problems"
problem() {
    echo "$*" >>"$problems"
}

# (a) lint
if ! "$helm" lint --strict "$chart" >"$tmp/lint.log" 2>&1; then
    problem "helm lint --strict failed:"
    sed 's/^/    /' "$tmp/lint.log" >>"$problems"
fi

# (b) CRDs
for source in "$crds"/04*.yaml; do
    name=$(basename "$source")
    if [[ ! -f $chart/crds/$name ]]; then
        problem "crds/$name: missing from the chart (copy deploy/crds/$name)"
    elif ! cmp -s "$source" "$chart/crds/$name"; then
        problem "crds/$name: differs from deploy/crds/$name (copy it again)"
    fi
done
for copy in "$chart"/crds/*; do
    name=$(basename "$copy")
    [[ $name == 04*.yaml && -f $crds/$name ]] || problem "crds/$name: not one of deploy/crds/04*.yaml"
done

# to_json <output> <kubectl -f arguments...>: the objects as JSON documents, one after
# another. `label --local` needs no server and no kubeconfig; removing a label that is not
# there changes nothing.
to_json() {
    local output=$1
    shift
    if ! KUBECONFIG=/dev/null "$kubectl" label --local -o json "$@" strimzi-check-chart- >"$output" 2>"$output.err"; then
        problem "could not read $*: $(tr '\n' ' ' <"$output.err")"
        : >"$output"
    fi
}

# render_chart <name> <chart folder or package> [helm template arguments...]: the chart's
# objects as JSON in $tmp/<name>.json.
render_chart() {
    local name=$1 from=$2
    shift 2
    if "$helm" template strimzi "$from" --namespace "$namespace" "$@" >"$tmp/$name.yaml" 2>"$tmp/$name.err"; then
        if [[ -s $tmp/$name.yaml ]]; then
            to_json "$tmp/$name.json" -f "$tmp/$name.yaml"
        else
            : >"$tmp/$name.json"
        fi
    else
        problem "helm template $*: failed: $(tr '\n' ' ' <"$tmp/$name.err")"
        : >"$tmp/$name.json"
    fi
}

# render <name> [helm template arguments...]: render_chart of deploy/helm's chart.
render() {
    render_chart "$1" "$chart" "${@:2}"
}

bundle_files=()
for file in "$bundle"/*.yaml; do
    [[ $(basename "$file") == *-Crd-* ]] || bundle_files+=(-f "$file")
done
to_json "$tmp/bundle.json" "${bundle_files[@]}"
to_json "$tmp/crd-bundle.json" -f "$root/deploy/install/crd-self-install"

render default
render watch --set 'watchNamespaces={a,b}'
render watch-repeat --set 'watchNamespaces={a,myproject}'
render any --set watchAnyNamespace=true --set 'watchNamespaces={a,b}'
render no-election --set leaderElection.enable=false
render no-rbac --set rbac.create=false --set serviceAccountCreate=false
render no-global --set createGlobalResources=false
render crds --set installCrds=true
render logging --set logFormat=json --set logConfigMap=my-logging --set logVolume=my-log-volume \
    --set-string logConfiguration='rootLogger.level = DEBUG'
render custom \
    --set image.registry=registry.example.com --set image.repository=team --set image.tag=1.2.3 \
    --set image.imagePullPolicy=Always --set 'image.imagePullSecrets=pull-a\,pull-b' \
    --set kafkaInit.image.digest=sha256:0123 --set topicOperator.image.tag=7.7.7 \
    --set kafka.image.registry=mirror.example.com --set kafka.image.tagPrefix=9.9.9 \
    --set kafkaConnect.image.repository=connect --set kafkaMirrorMaker2.image.name=mm2 \
    --set kubernetesServiceDnsDomain=example.local --set generateNetworkPolicy=false \
    --set generatePodDisruptionBudget=false \
    --set labelsExclusionPattern='^secret/.*' --set operatorNamespaceLabels=team=kafka \
    --set logLevel=DEBUG --set featureGates=+Gate --set fullReconciliationIntervalMs=30000 \
    --set operationTimeoutMs=60000 --set replicas=2 --set revisionHistoryLimit=3 \
    --set 'extraEnvs[0].name=EXTRA' --set 'extraEnvs[0].value=yes' \
    --set serviceAccount=other-account --set priorityClassName=high \
    --set 'labels.team=kafka' --set 'annotations.note=here' --set 'nodeSelector.disk=ssd'

# (f) Strimzi's values file: the values as JSON (through a chart that prints them), then renders.
mkdir -p "$tmp/dump/templates"
printf 'apiVersion: v2\nname: dump\nversion: 0.1.0\n' >"$tmp/dump/Chart.yaml"
echo '{{ toJson .Values }}' >"$tmp/dump/templates/values.json"
for values in reference:"$reference_values" ours:"$chart/values.yaml"; do
    if ! "$helm" template dump "$tmp/dump" -f "${values#*:}" 2>"$tmp/dump.err" | grep '^{' >"$tmp/values-${values%%:*}.json"; then
        problem "could not read ${values#*:}: $(tr '\n' ' ' <"$tmp/dump.err")"
    fi
done
render strimzi-values -f "$reference_values"
render strimzi-mirror -f "$reference_values" \
    --set defaultImageRegistry=mirror.example.com --set defaultImageRepository=mirrored --set defaultImageTag=1.2.0-m
render strimzi-keys -f "$reference_values" \
    --set kafka.image.tag=single --set kafkaConnect.image.digest=sha256:abc \
    --set kafkaMirrorMaker2.image.tagPrefix=7.0.0 --set kafkaBridge.image.repository=bridges \
    --set kafkaExporter.image.registry=exporter.example.com --set cruiseControl.image.tag=cc \
    --set topicOperator.image.registry=to.example.com --set userOperator.image.tag=uo \
    --set kafkaInit.image.repository=init --set image.tag=9.9.9 --set image.imagePullPolicy=Always \
    --set logLevel=DEBUG --set image.operatorNamespaceLabels=team=kafka \
    --set podDisruptionBudget.enabled=true --set operatorNetworkPolicy.enabled=true \
    --set createAggregateRoles=true --set hostUsers=false --set enableServiceLinks=false \
    --set deploymentLabels.team=kafka --set deploymentAnnotations.note=here \
    --set deploymentStrategy.type=Recreate \
    --set 'topologySpreadConstraints[0].maxSkew=1' \
    --set 'topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname' \
    --set 'topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway'
render pdb-max --set podDisruptionBudget.enabled=true --set podDisruptionBudget.minAvailable=null \
    --set podDisruptionBudget.maxUnavailable=1

# (g) the packaged chart, with our image in another registry.
released_repository=registry.example.com/team/strimzi-rs-operator
if bash "$root/deploy/release.sh" --out "$tmp/release" --without-image --without-plugin \
    --image-repository "$released_repository" >"$tmp/release.log" 2>&1; then
    package=$(echo "$tmp"/release/*.tgz)
    if ! "$helm" lint --strict "$package" >"$tmp/lint-package.log" 2>&1; then
        problem "helm lint --strict of the packaged chart failed:"
        sed 's/^/    /' "$tmp/lint-package.log" >>"$problems"
    fi
    render_chart packaged "$package"
else
    problem "deploy/release.sh failed: $(tr '\n' ' ' <"$tmp/release.log")"
    : >"$tmp/packaged.json"
fi

python3 - "$tmp" "$namespace" "$root/docs/differences.md" "$released_repository" >>"$problems" <<'EOF' || problem "the comparison itself failed (python3 error above)"
import json
import sys

tmp, namespace, differences_page, released_repository = sys.argv[1:5]
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Namespace"}


def load(name):
    """The JSON documents kubectl wrote, one after another."""
    with open(f"{tmp}/{name}.json") as f:
        text = f.read()
    decoder, objects, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return objects
        obj, at = decoder.raw_decode(text, at)
        objects.extend(obj["items"] if obj.get("kind") == "List" else [obj])


def key(obj):
    meta = obj["metadata"]
    return (obj["kind"], meta.get("namespace", ""), meta["name"])


def show(k):
    kind, ns, name = k
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def diff(path, want, got, out):
    """Paths where got differs from want."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got)):
            sub = f"{path}.{k}" if path else k
            if k not in got:
                out.append(f"{sub}: missing (bundle: {json.dumps(want[k])})")
            elif k not in want:
                out.append(f"{sub}: not in the bundle (chart: {json.dumps(got[k])})")
            else:
                diff(sub, want[k], got[k], out)
    elif isinstance(want, list) and isinstance(got, list) and named(want) and named(got):
        # Lists of named entries (env, ports, volumes, containers): by name, then order.
        wanted = {e["name"]: e for e in want}
        gotten = {e["name"]: e for e in got}
        for name in wanted:
            if name not in gotten:
                out.append(f"{path}[{name}]: missing (bundle: {json.dumps(wanted[name])})")
            else:
                diff(f"{path}[{name}]", wanted[name], gotten[name], out)
        for name in gotten:
            if name not in wanted:
                out.append(f"{path}[{name}]: not in the bundle (chart: {json.dumps(gotten[name])})")
        common = [n for n in wanted if n in gotten]
        if common != [n for n in gotten if n in wanted]:
            out.append(f"{path}: order {json.dumps([n for n in gotten if n in wanted])}, bundle {json.dumps(common)}")
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (w, g) in enumerate(zip(want, got)):
            diff(f"{path}[{i}]", w, g, out)
    elif want != got:
        out.append(f"{path}: bundle {json.dumps(want)}, chart {json.dumps(got)}")


def named(entries):
    names = [e.get("name") if isinstance(e, dict) else None for e in entries]
    return bool(names) and None not in names and len(set(names)) == len(names)


def index(objects, where):
    found = {}
    for obj in objects:
        k = key(obj)
        if k in found:
            print(f"{where}: {show(k)} rendered twice")
        found[k] = obj
    return found


def env(objects, where):
    """The operator container's environment, name -> value or valueFrom, in order."""
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    if len(deployments) != 1:
        print(f"{where}: {len(deployments)} Deployments rendered, expected 1")
        return {}
    containers = deployments[0]["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in containers[0].get("env", [])}


def expect(where, what, want, got):
    if want != got:
        print(f"{where}: {what} is {json.dumps(got)}, expected {json.dumps(want)}")


def role_bindings(objects, name):
    """Namespaces of the RoleBindings called name."""
    return sorted(o["metadata"].get("namespace", "") for o in objects if o["kind"] == "RoleBinding" and o["metadata"]["name"] == name)


def cluster_role_bindings(objects, names):
    return sorted(o["metadata"]["name"] for o in objects if o["kind"] == "ClusterRoleBinding" and o["metadata"]["name"] in names)


# The ClusterRoleBindings that replace the 020 and 023 RoleBindings with watchAnyNamespace.
WATCH_ANY = ("strimzi-cluster-operator-namespaced", "strimzi-cluster-operator-watched",
             "strimzi-cluster-operator-entity-operator-delegation")


# (c) default values render the bundle.
bundle = index(load("bundle"), "bundle")
bundle = {(kind, "", name): obj for (kind, _, name), obj in bundle.items()}
default = load("default")
chart = {}
for obj in default:
    meta = obj["metadata"]
    k = key(obj)
    if obj["kind"] in CLUSTER_SCOPED:
        if "namespace" in meta:
            print(f"default values: {show(k)} is cluster-scoped but has a namespace")
    else:
        if meta.get("namespace") != namespace:
            print(f"default values: {show(k)} is not in the release namespace {namespace}")
        meta.pop("namespace", None)
    chart[key(obj)] = obj
for k in sorted(set(bundle) - set(chart)):
    print(f"default values: {show(k)} is in the bundle but not rendered by the chart")
for k in sorted(set(chart) - set(bundle)):
    print(f"default values: {show(k)} is rendered by the chart but not in the bundle")
for k in sorted(set(chart) & set(bundle)):
    want, got = bundle[k], chart[k]
    wanted_labels = want["metadata"].get("labels", {})
    got_labels = got["metadata"].get("labels", {})
    # The chart may add labels of its own, but must keep every bundle label.
    got["metadata"]["labels"] = {l: v for l, v in got_labels.items() if l in wanted_labels}
    if not got["metadata"]["labels"] and "labels" not in want["metadata"]:
        del got["metadata"]["labels"]
    out = []
    diff("", want, got, out)
    for line in out:
        print(f"default values: {show(k)}: {line}")

# (d) watched namespaces.
watch = load("watch")
where = "watchNamespaces={a,b}"
for name in ("strimzi-cluster-operator", "strimzi-cluster-operator-watched", "strimzi-cluster-operator-entity-operator-delegation"):
    expect(where, f"namespaces of RoleBinding {name}", sorted(["a", "b", namespace]), role_bindings(watch, name))
expect(where, "ClusterRoleBindings for the watched namespaces", [], cluster_role_bindings(watch, WATCH_ANY))
expect(where, "STRIMZI_NAMESPACE", f"a,b,{namespace}", env(watch, where).get("STRIMZI_NAMESPACE"))
for obj in watch:
    for subject in obj.get("subjects", []):
        expect(where, f"{show(key(obj))} subject namespace", namespace, subject.get("namespace"))
expect(where, "namespaces of the leader election RoleBinding", [namespace],
       role_bindings(watch, "strimzi-cluster-operator-leader-election"))

repeat = load("watch-repeat")
where = "watchNamespaces={a,myproject}"
for name in ("strimzi-cluster-operator", "strimzi-cluster-operator-watched", "strimzi-cluster-operator-entity-operator-delegation"):
    expect(where, f"namespaces of RoleBinding {name}", sorted(["a", namespace]), role_bindings(repeat, name))
expect(where, "STRIMZI_NAMESPACE", f"a,{namespace}", env(repeat, where).get("STRIMZI_NAMESPACE"))

anyns = load("any")
where = "watchAnyNamespace=true"
for name, role in (("strimzi-cluster-operator-namespaced", "strimzi-cluster-operator-namespaced"),
                   ("strimzi-cluster-operator-watched", "strimzi-cluster-operator-watched"),
                   ("strimzi-cluster-operator-entity-operator-delegation", "strimzi-entity-operator")):
    found = [o for o in anyns if o["metadata"]["name"] == name and o["kind"] == "ClusterRoleBinding"]
    if len(found) != 1:
        print(f"{where}: {len(found)} ClusterRoleBindings {name}, expected 1")
    for obj in found:
        expect(where, f"ClusterRoleBinding {name} roleRef", role, obj["roleRef"]["name"])
        expect(where, f"ClusterRoleBinding {name} subjects",
               [{"kind": "ServiceAccount", "name": "strimzi-cluster-operator", "namespace": namespace}], obj["subjects"])
for obj in anyns:
    if obj["kind"] == "RoleBinding" and obj["metadata"]["name"] != "strimzi-cluster-operator-leader-election":
        print(f"{where}: RoleBinding {obj['metadata'].get('namespace')}/{obj['metadata']['name']} rendered")
expect(where, "STRIMZI_NAMESPACE", "*", env(anyns, where).get("STRIMZI_NAMESPACE"))

# (e) switches and other values.
def kinds_names(objects):
    return sorted(f"{o['kind']}/{o['metadata']['name']}" for o in objects)

full = kinds_names(default)
election = load("no-election")
where = "leaderElection.enable=false"
expect(where, "objects", [n for n in full if "leader-election" not in n], kinds_names(election))
election_env = env(election, where)
expect(where, "STRIMZI_LEADER_ELECTION_ENABLED", "false", election_env.get("STRIMZI_LEADER_ELECTION_ENABLED"))
expect(where, "other STRIMZI_LEADER_ELECTION_ variables", [],
       [n for n in election_env if n.startswith("STRIMZI_LEADER_ELECTION_") and n != "STRIMZI_LEADER_ELECTION_ENABLED"])
expect("rbac.create=false serviceAccountCreate=false", "objects",
       ["ConfigMap/strimzi-cluster-operator", "Deployment/strimzi-cluster-operator"],
       kinds_names(load("no-rbac")))
expect("createGlobalResources=false", "objects",
       [n for n in full if not n.startswith("Cluster")], kinds_names(load("no-global")))

# The logging values: the ConfigMap and its volume renamed, its file replaced, JSON lines.
logging = load("logging")
where = "logging values"
expect(where, "logging ConfigMap", [{"log4j2.properties": "rootLogger.level = DEBUG\n"}],
       [o["data"] for o in logging if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "my-logging"])
pod = next(o for o in logging if o["kind"] == "Deployment")["spec"]["template"]["spec"]
expect(where, "logging volume", [{"name": "my-log-volume", "configMap": {"name": "my-logging"}}],
       [v for v in pod.get("volumes", []) if v["name"] == "my-log-volume"])
expect(where, "logging mount", ["/opt/strimzi/custom-config/"],
       [m["mountPath"] for m in pod["containers"][0].get("volumeMounts", []) if m["name"] == "my-log-volume"])
expect(where, "STRIMZI_LOG_FORMAT", "json", env(logging, where).get("STRIMZI_LOG_FORMAT"))
expect("default values", "STRIMZI_LOG_FORMAT", None, env(default, "default values").get("STRIMZI_LOG_FORMAT"))

crds = load("crds")
where = "installCrds=true"
expect(where, "objects", sorted(full + ["ClusterRole/strimzi-cluster-operator-crds",
                                        "ClusterRoleBinding/strimzi-cluster-operator-crds"]), kinds_names(crds))
expect(where, "STRIMZI_INSTALL_CRDS", "true", env(crds, where).get("STRIMZI_INSTALL_CRDS"))
expect("default values", "STRIMZI_INSTALL_CRDS", None, env(default, "default values").get("STRIMZI_INSTALL_CRDS"))
for wanted in load("crd-bundle"):
    found = [o for o in crds if o["kind"] == wanted["kind"] and o["metadata"]["name"] == wanted["metadata"]["name"]]
    if wanted["kind"] == "ClusterRole":
        expect(where, "rules of strimzi-cluster-operator-crds (deploy/install/crd-self-install)",
               wanted.get("rules"), found[0].get("rules") if found else None)
    else:
        expect(where, "roleRef of strimzi-cluster-operator-crds", wanted.get("roleRef"),
               found[0].get("roleRef") if found else None)

custom = load("custom")
where = "non-default values"
deployments = [o for o in custom if o["kind"] == "Deployment"]
if deployments:
    spec = deployments[0]["spec"]
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    expect(where, "replicas", 2, spec.get("replicas"))
    expect(where, "revisionHistoryLimit", 3, spec.get("revisionHistoryLimit"))
    expect(where, "image", "registry.example.com/team/operator:1.2.3", container["image"])
    expect(where, "imagePullPolicy", "Always", container.get("imagePullPolicy"))
    expect(where, "imagePullSecrets", [{"name": "pull-a"}, {"name": "pull-b"}], pod.get("imagePullSecrets"))
    expect(where, "serviceAccountName", "other-account", pod.get("serviceAccountName"))
    expect(where, "priorityClassName", "high", pod.get("priorityClassName"))
    expect(where, "nodeSelector", {"disk": "ssd"}, pod.get("nodeSelector"))
    expect(where, "pod label team", "kafka", spec["template"]["metadata"]["labels"].get("team"))
    expect(where, "pod annotations", {"note": "here"}, spec["template"]["metadata"].get("annotations"))
    variables = env(custom, where)
    for name, value in {
        "STRIMZI_KAFKA_IMAGES": "".join(f"{v}=mirror.example.com/strimzi/kafka:9.9.9-kafka-{v}\n" for v in ("4.2.0", "4.2.1", "4.3.0", "4.3.1")),
        "STRIMZI_KAFKA_CONNECT_IMAGES": "".join(f"{v}=quay.io/connect/kafka:1.2.0-kafka-{v}\n" for v in ("4.2.0", "4.2.1", "4.3.0", "4.3.1")),
        "STRIMZI_KAFKA_MIRROR_MAKER_2_IMAGES": "".join(f"{v}=quay.io/strimzi/mm2:1.2.0-kafka-{v}\n" for v in ("4.2.0", "4.2.1", "4.3.0", "4.3.1")),
        "STRIMZI_DEFAULT_KAFKA_INIT_IMAGE": "localhost/strimzi-rs/operator@sha256:0123",
        "STRIMZI_DEFAULT_TOPIC_OPERATOR_IMAGE": "localhost/strimzi-rs/operator:7.7.7",
        "STRIMZI_DEFAULT_KAFKA_BRIDGE_IMAGE": "quay.io/strimzi/kafka-bridge:1.1.0",
        "STRIMZI_IMAGE_PULL_SECRETS": "pull-a,pull-b",
        "KUBERNETES_SERVICE_DNS_DOMAIN": "example.local",
        "STRIMZI_NETWORK_POLICY_GENERATION": "false",
        "STRIMZI_POD_DISRUPTION_BUDGET_GENERATION": "false",
        "STRIMZI_LABELS_EXCLUSION_PATTERN": "^secret/.*",
        "STRIMZI_OPERATOR_NAMESPACE_LABELS": "team=kafka",
        "STRIMZI_LOG_LEVEL": "DEBUG",
        "STRIMZI_FEATURE_GATES": "+Gate",
        "STRIMZI_FULL_RECONCILIATION_INTERVAL_MS": "30000",
        "STRIMZI_OPERATION_TIMEOUT_MS": "60000",
        "EXTRA": "yes",
    }.items():
        expect(where, name, value, variables.get(name))
else:
    print(f"{where}: no Deployment rendered")
for obj in custom:
    for subject in obj.get("subjects", []):
        expect(where, f"{show(key(obj))} subject", "other-account", subject.get("name"))

# (f) Strimzi's values file.
VERSIONS = ("4.2.0", "4.2.1", "4.3.0", "4.3.1")
# Our operator image as the bundle names it (its install_bundle test checks it against the
# workspace version), and its tag.
OURS = next(o for o in bundle.values() if o["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
OURS_TAG = OURS.rpartition(":")[2]
# Keys of Strimzi's values.yaml this chart does not have, each named in docs/differences.md.
IGNORED = ("dashboards",)
# Values the chart writes into the objects as they are: any key under them is accepted.
FREE_FORM = ("securityContext", "podSecurityContext", "resources", "affinity", "nodeSelector", "annotations",
             "labels", "deploymentAnnotations", "deploymentLabels", "deploymentStrategy")


def leaves(values, path=""):
    """Dotted paths of the values that are not maps (lists count as one value)."""
    if isinstance(values, dict) and values:
        for k, v in values.items():
            yield from leaves(v, f"{path}.{k}" if path else k)
    else:
        yield path


def has(values, path):
    for part in path.split("."):
        if not isinstance(values, dict) or part not in values:
            return False
        values = values[part]
    return True


def kafka_images(image):
    return "".join(f"{v}={image(v)}\n" for v in VERSIONS)


def deployment(objects, where):
    found = [o for o in objects if o["kind"] == "Deployment"]
    if len(found) != 1:
        print(f"{where}: {len(found)} Deployments rendered, expected 1")
        return {"metadata": {}, "spec": {"template": {"spec": {"containers": [{}]}}}}
    return found[0]


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError:
        return {}


reference, ours = read_json(f"{tmp}/values-reference.json"), read_json(f"{tmp}/values-ours.json")
with open(differences_page) as f:
    differences = f.read().partition("## Install and Helm chart")[2].partition("\n## ")[0]
if not differences:
    print(f"{differences_page}: no section \"## Install and Helm chart\"")
where = "Strimzi's values.yaml"
if not reference or not ours:
    print(f"{where}: the values files were not read")
for path in leaves(reference):
    if not has(ours, path) and path.split(".")[0] not in IGNORED + FREE_FORM:
        print(f"{where}: key {path} is neither in the chart's values.yaml nor ignored")
for key in IGNORED:
    if has(ours, key):
        print(f"{where}: {key} is ignored but in the chart's values.yaml")
    if f"`{key}`" not in differences:
        print(f"{where}: {key} is ignored but not named in docs/differences.md (Install and Helm chart)")

strimzi_values = load("strimzi-values")
expect(where, "operator environment (compared with our defaults)", env(default, "default values"), env(strimzi_values, where))
expect(where, "operator image", OURS,
       deployment(strimzi_values, where)["spec"]["template"]["spec"]["containers"][0].get("image"))

where = "Strimzi's values.yaml with mirror default* images"
variables = env(load("strimzi-mirror"), where)
for name in ("STRIMZI_KAFKA_IMAGES", "STRIMZI_KAFKA_CONNECT_IMAGES", "STRIMZI_KAFKA_MIRROR_MAKER_2_IMAGES"):
    expect(where, name, kafka_images(lambda v: f"mirror.example.com/mirrored/kafka:1.2.0-m-kafka-{v}"), variables.get(name))
for name, value in {
    "STRIMZI_DEFAULT_KAFKA_BRIDGE_IMAGE": "mirror.example.com/mirrored/kafka-bridge:1.1.0",
    "STRIMZI_DEFAULT_KAFKA_INIT_IMAGE": OURS,
    "STRIMZI_DEFAULT_TOPIC_OPERATOR_IMAGE": OURS,
    "STRIMZI_DEFAULT_USER_OPERATOR_IMAGE": OURS,
    # Not set: Kafka Exporter and Cruise Control run the cluster's (mirrored) Kafka image.
    "STRIMZI_DEFAULT_KAFKA_EXPORTER_IMAGE": None,
    "STRIMZI_DEFAULT_CRUISE_CONTROL_IMAGE": None,
}.items():
    expect(where, name, value, variables.get(name))

keys = load("strimzi-keys")
where = "Strimzi's values.yaml with --set of its keys"
operator = deployment(keys, where)
pod = operator["spec"]["template"]["spec"]
variables = env(keys, where)
for name, value in {
    "STRIMZI_KAFKA_IMAGES": kafka_images(lambda v: "quay.io/strimzi/kafka:single"),
    "STRIMZI_KAFKA_CONNECT_IMAGES": kafka_images(lambda v: "quay.io/strimzi/kafka@sha256:abc"),
    "STRIMZI_KAFKA_MIRROR_MAKER_2_IMAGES": kafka_images(lambda v: f"quay.io/strimzi/kafka:7.0.0-kafka-{v}"),
    "STRIMZI_DEFAULT_KAFKA_BRIDGE_IMAGE": "quay.io/bridges/kafka-bridge:1.1.0",
    "STRIMZI_DEFAULT_KAFKA_EXPORTER_IMAGE": "exporter.example.com/strimzi/kafka:1.2.0-kafka-4.3.1",
    "STRIMZI_DEFAULT_CRUISE_CONTROL_IMAGE": "quay.io/strimzi/kafka:cc",
    "STRIMZI_DEFAULT_TOPIC_OPERATOR_IMAGE": f"to.example.com/strimzi-rs/operator:{OURS_TAG}",
    "STRIMZI_DEFAULT_USER_OPERATOR_IMAGE": "localhost/strimzi-rs/operator:uo",
    "STRIMZI_DEFAULT_KAFKA_INIT_IMAGE": f"localhost/init/operator:{OURS_TAG}",
    "STRIMZI_IMAGE_PULL_POLICY": "Always",
    "STRIMZI_LOG_LEVEL": "DEBUG",
    "STRIMZI_OPERATOR_NAMESPACE_LABELS": "team=kafka",
}.items():
    expect(where, name, value, variables.get(name))
container = pod["containers"][0]
expect(where, "operator image", "localhost/strimzi-rs/operator:9.9.9", container.get("image"))
expect(where, "imagePullPolicy", "Always", container.get("imagePullPolicy"))
expect(where, "Deployment label team", "kafka", operator["metadata"].get("labels", {}).get("team"))
expect(where, "Deployment annotations", {"note": "here"}, operator["metadata"].get("annotations"))
expect(where, "Deployment strategy", {"type": "Recreate"}, operator["spec"].get("strategy"))
expect(where, "hostUsers", False, pod.get("hostUsers"))
expect(where, "enableServiceLinks", False, pod.get("enableServiceLinks"))
expect(where, "topologySpreadConstraints",
       [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}],
       pod.get("topologySpreadConstraints"))
selector = {"name": "strimzi-cluster-operator"}
pdbs = [o for o in keys if o["kind"] == "PodDisruptionBudget"]
expect(where, "PodDisruptionBudgets", [{"name": "strimzi-cluster-operator-pdb", "namespace": namespace}],
       [{k: o["metadata"].get(k) for k in ("name", "namespace")} for o in pdbs])
expect(where, "PodDisruptionBudget spec",
       [{"selector": {"matchLabels": selector}, "minAvailable": 1, "unhealthyPodEvictionPolicy": "IfHealthyBudget"}],
       [o["spec"] for o in pdbs])
expect("podDisruptionBudget.maxUnavailable=1 minAvailable=null", "PodDisruptionBudget spec",
       [{"selector": {"matchLabels": selector}, "maxUnavailable": 1, "unhealthyPodEvictionPolicy": "IfHealthyBudget"}],
       [o["spec"] for o in load("pdb-max") if o["kind"] == "PodDisruptionBudget"])
expect(where, "NetworkPolicies", [{
    "podSelector": {"matchLabels": {**selector, "strimzi.io/kind": "cluster-operator"}},
    "policyTypes": ["Ingress", "Egress"],
    "ingress": [{"ports": [{"protocol": "TCP", "port": "http"}]}],
    "egress": [{}],
}], [o["spec"] for o in keys if o["kind"] == "NetworkPolicy"])
for name, to, verbs in (("strimzi-admin", ["admin", "edit"], ["create", "delete", "get", "list", "patch", "update", "watch"]),
                        ("strimzi-view", ["view"], ["get", "list", "watch"])):
    roles = [o for o in keys if o["kind"] == "ClusterRole" and o["metadata"]["name"] == name]
    if len(roles) != 1:
        print(f"{where}: {len(roles)} ClusterRoles {name}, expected 1")
        continue
    labels = roles[0]["metadata"].get("labels", {})
    expect(where, f"{name} aggregated to", to,
           sorted(l.rpartition("-")[2] for l, v in labels.items() if l.startswith("rbac.authorization.k8s.io/aggregate-to-") and v == "true"))
    for rule in roles[0]["rules"]:
        expect(where, f"{name} verbs on {rule['apiGroups']}", verbs, sorted(rule["verbs"]))
    resources = {r for rule in roles[0]["rules"] for r in rule["resources"]}
    expect(where, f"{name} covers kafkas and strimzipodsets", True, {"kafkas", "strimzipodsets"} <= resources)

# (g) the packaged chart renders what the folder renders, with our image at the released name.
where = "the chart as deploy/release.sh packs it"
released = f"{released_repository}:{OURS.rpartition(':')[2]}"
packaged, folder = load("packaged"), json.dumps(load("default"))
expect(where, "references to our image in the default rendering", True, OURS in folder)
differences_found = []
diff("", json.loads(folder.replace(OURS, released)), packaged, differences_found)
for line in differences_found:
    print(f"{where}: {line} (the folder's rendering with {released} as the bundle)")
EOF

if [[ -s $problems ]]; then
    cat "$problems"
    echo "check-chart.sh: $(grep -c '^[^ ]' "$problems") problem(s): the chart must render what deploy/install/cluster-operator holds" >&2
    exit 1
fi
echo "check-chart.sh: the chart matches deploy/install/cluster-operator (lint, CRDs, default render, watched namespaces, switches) and takes Strimzi's values"
