//! Test documents for the CEL rules, shared by the tests that evaluate them with `kube-cel`
//! (`tests/rules.rs`) and on a real API server (`tests/api_server.rs`): for every rule,
//! complete documents it accepts and documents that only it refuses; and documents that
//! Strimzi's CRDs accept and ours must accept too.

// Test code: a panic with its message is how a failure is reported; each test binary uses
// part of this module.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use serde_json::{Value, json};
use strimzi_crd_generator::rules::{self, Rule};

/// A rule with documents that pass every rule and documents that fail only it.
pub struct Case {
    pub rule: &'static Rule,
    /// Accepted.
    pub valid: Vec<Value>,
    /// The rule is false: refused with the rule's message.
    pub invalid: Vec<Value>,
    /// The rule reads a field the document leaves out and cannot be evaluated: refused all
    /// the same (Strimzi's rack rules).
    pub unevaluable: Vec<Value>,
}

/// The rule of `kind` at `path` whose expression contains `needle`.
fn rule(kind: &str, path: &str, needle: &str) -> &'static Rule {
    let mut found = rules::all()
        .filter(|rule| rule.kind == kind && rule.path == path && rule.rule.contains(needle));
    let rule = found
        .next()
        .unwrap_or_else(|| panic!("no {kind} rule at {path} containing {needle}"));
    assert!(
        found.next().is_none(),
        "{kind} {path}: `{needle}` is ambiguous"
    );
    rule
}

fn case(rule: &'static Rule, valid: Vec<Value>, invalid: Vec<Value>) -> Case {
    Case {
        rule,
        valid,
        invalid,
        unevaluable: Vec::new(),
    }
}

fn resource(kind: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": kind,
        "metadata": {"name": "doc", "labels": {"strimzi.io/cluster": "my-cluster"}},
        "spec": spec,
    })
}

/// Sets `value` at a dot-separated `path` of `document`, creating objects on the way.
pub fn set(mut document: Value, path: &str, value: Value) -> Value {
    let mut node = &mut document;
    for segment in path.split('.') {
        node = node
            .as_object_mut()
            .expect("an object on the way")
            .entry(segment)
            .or_insert_with(|| json!({}));
    }
    *node = value;
    document
}

fn listener(name: &str, port: i64, type_: &str, tls: bool) -> Value {
    json!({"name": name, "port": port, "type": type_, "tls": tls})
}

fn with(mut base: Value, extra: Value) -> Value {
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    base
}

pub fn kafka(listeners: Value) -> Value {
    resource("Kafka", json!({"kafka": {"listeners": listeners}}))
}

/// A Kafka with one plain listener.
pub fn plain_kafka() -> Value {
    kafka(json!([listener("plain", 9092, "internal", false)]))
}

fn node_pool(roles: Value, storage: Value) -> Value {
    resource(
        "KafkaNodePool",
        json!({"replicas": 3, "roles": roles, "storage": storage}),
    )
}

fn pool_with_storage(storage: Value) -> Value {
    node_pool(json!(["broker"]), storage)
}

fn jbod(volumes: Value) -> Value {
    pool_with_storage(json!({"type": "jbod", "volumes": volumes}))
}

fn connect() -> Value {
    resource(
        "KafkaConnect",
        json!({
            "replicas": 1,
            "bootstrapServers": "my-cluster-kafka-bootstrap:9092",
            "groupId": "connect-cluster",
            "configStorageTopic": "connect-configs",
            "offsetStorageTopic": "connect-offsets",
            "statusStorageTopic": "connect-status",
        }),
    )
}

fn bridge() -> Value {
    resource(
        "KafkaBridge",
        json!({"replicas": 1, "bootstrapServers": "my-cluster-kafka-bootstrap:9092"}),
    )
}

fn mirror_maker2() -> Value {
    resource(
        "KafkaMirrorMaker2",
        json!({
            "replicas": 1,
            "target": {
                "alias": "target",
                "bootstrapServers": "target-kafka-bootstrap:9092",
                "groupId": "mirror-maker-2",
                "configStorageTopic": "mm2-configs",
                "offsetStorageTopic": "mm2-offsets",
                "statusStorageTopic": "mm2-status",
            },
            "mirrors": [{"source": {
                "alias": "source",
                "bootstrapServers": "source-kafka-bootstrap:9092",
            }}],
        }),
    )
}

fn user(authentication: Value) -> Value {
    resource("KafkaUser", json!({"authentication": authentication}))
}

/// The kinds with a rack, the path of the rack, and a complete document of the kind.
fn racks() -> [(&'static str, &'static str, Value); 4] {
    [
        ("Kafka", "spec.kafka.rack", plain_kafka()),
        ("KafkaConnect", "spec.rack", connect()),
        ("KafkaBridge", "spec.rack", bridge()),
        ("KafkaMirrorMaker2", "spec.rack", mirror_maker2()),
    ]
}

/// The kinds with a metrics configuration, its path and a complete document of the kind.
fn metrics_configs() -> [(&'static str, &'static str, Value); 5] {
    [
        ("Kafka", "spec.kafka.metricsConfig", plain_kafka()),
        ("Kafka", "spec.cruiseControl.metricsConfig", plain_kafka()),
        ("KafkaConnect", "spec.metricsConfig", connect()),
        ("KafkaBridge", "spec.metricsConfig", bridge()),
        ("KafkaMirrorMaker2", "spec.metricsConfig", mirror_maker2()),
    ]
}

/// The JMX Prometheus Exporter with its configuration.
fn jmx_exporter() -> Value {
    json!({
        "type": "jmxPrometheusExporter",
        "valueFrom": {"configMapKeyRef": {"name": "metrics", "key": "metrics-config.yml"}},
    })
}

/// Cases of Strimzi 1.2's own rules.
fn strimzi_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (kind, path, base) in racks() {
        let doc = |rack: Value| set(base.clone(), path, rack);
        let zone = "topology.kubernetes.io/zone";
        cases.push(Case {
            rule: rule(kind, path, "topologyKey"),
            valid: vec![
                doc(json!({"topologyKey": zone})),
                doc(json!({"type": "topology-label", "topologyKey": zone})),
                doc(json!({"type": "environment-variable", "envVarName": "RACK_ID"})),
            ],
            invalid: vec![
                doc(json!({"topologyKey": ""})),
                doc(json!({"type": "topology-label", "topologyKey": ""})),
            ],
            unevaluable: vec![doc(json!({})), doc(json!({"type": "topology-label"}))],
        });
        cases.push(Case {
            rule: rule(kind, path, "envVarName"),
            valid: vec![
                doc(json!({"type": "environment-variable", "envVarName": "RACK_ID"})),
                // The variable's name only matters for that type.
                doc(json!({"topologyKey": zone, "envVarName": ""})),
            ],
            invalid: vec![doc(
                json!({"type": "environment-variable", "envVarName": ""}),
            )],
            unevaluable: vec![doc(
                json!({"type": "environment-variable", "topologyKey": zone}),
            )],
        });
    }
    for (kind, path, base) in metrics_configs() {
        let doc = |metrics: Value| set(base.clone(), path, metrics);
        let cruise_control = path.starts_with("spec.cruiseControl");
        let mut valid = vec![doc(jmx_exporter())];
        if !cruise_control {
            valid.push(doc(json!({"type": "strimziMetricsReporter"})));
            valid.push(doc(
                json!({"type": "strimziMetricsReporter", "values": {"allowList": ["kafka_.*"]}}),
            ));
        }
        cases.push(case(
            rule(kind, path, "jmxPrometheusExporter"),
            valid,
            vec![
                doc(json!({"type": "jmxPrometheusExporter"})),
                doc(json!({"type": "jmxPrometheusExporter", "values": {"allowList": [".*"]}})),
            ],
        ));
    }
    let cruise_control =
        |metrics: Value| set(plain_kafka(), "spec.cruiseControl.metricsConfig", metrics);
    cases.push(case(
        rule(
            "Kafka",
            "spec.cruiseControl.metricsConfig",
            "strimziMetricsReporter",
        ),
        vec![
            cruise_control(jmx_exporter()),
            set(plain_kafka(), "spec.cruiseControl", json!({})),
        ],
        vec![
            cruise_control(json!({"type": "strimziMetricsReporter"})),
            cruise_control(
                json!({"type": "strimziMetricsReporter", "values": {"allowList": ["kafka_.*"]}}),
            ),
        ],
    ));
    let path = "spec.authentication";
    cases.push(case(
        rule("KafkaUser", path, "self.type == 'tls' ||"),
        vec![
            user(json!({"type": "tls", "validityDays": 365, "renewalDays": 30})),
            user(json!({"type": "scram-sha-512"})),
            user(json!({"type": "tls-external"})),
        ],
        vec![
            user(json!({"type": "scram-sha-512", "validityDays": 365})),
            user(json!({"type": "tls-external", "renewalDays": 30})),
            user(json!({"type": "scram-sha-512", "validityDays": 365, "renewalDays": 30})),
        ],
    ));
    cases.push(case(
        rule(
            "KafkaUser",
            path,
            "has(self.renewalDays) == has(self.validityDays)",
        ),
        vec![
            user(json!({"type": "tls"})),
            user(json!({"type": "tls", "validityDays": 365, "renewalDays": 30})),
        ],
        vec![
            user(json!({"type": "tls", "validityDays": 365})),
            user(json!({"type": "tls", "renewalDays": 30})),
        ],
    ));
    cases.push(case(
        rule("KafkaUser", path, "self.renewalDays < self.validityDays"),
        vec![user(
            json!({"type": "tls", "validityDays": 31, "renewalDays": 30}),
        )],
        vec![
            user(json!({"type": "tls", "validityDays": 30, "renewalDays": 30})),
            user(json!({"type": "tls", "validityDays": 10, "renewalDays": 30})),
        ],
    ));
    cases
}

/// Cases of our own rules.
fn own_cases() -> Vec<Case> {
    let ingress_config = json!({"configuration": {"bootstrap": {"host": "kafka.example.com"}}});
    let plain = listener("plain", 9092, "internal", false);
    let tls = listener("tls", 9093, "internal", true);
    let listeners = "spec.kafka.listeners";
    let each_listener = "spec.kafka.listeners[]";
    vec![
        case(
            rule("Kafka", listeners, "o.name == l.name"),
            vec![
                kafka(json!([plain, tls])),
                kafka(json!([listener("a", 9092, "internal", false)])),
            ],
            vec![kafka(json!([
                listener("same", 9092, "internal", false),
                tls,
                listener("same", 9094, "internal", true),
            ]))],
        ),
        case(
            rule("Kafka", listeners, "o.port == l.port"),
            vec![kafka(json!([
                plain,
                tls,
                listener("ext", 9094, "nodeport", false)
            ]))],
            vec![kafka(json!([
                plain,
                tls,
                listener("ext", 9092, "nodeport", false),
            ]))],
        ),
        case(
            rule("Kafka", each_listener, "'tlsroute'"),
            vec![kafka(json!([
                listener("route", 9094, "route", true),
                listener("tlsroute", 9095, "tlsroute", true),
                with(
                    listener("ingress", 9096, "ingress", true),
                    ingress_config.clone()
                ),
                listener("nodeport", 9097, "nodeport", false),
                listener("lb", 9098, "loadbalancer", false),
                listener("clusterip", 9099, "cluster-ip", false),
            ]))],
            vec![
                kafka(json!([listener("route", 9094, "route", false)])),
                kafka(json!([listener("tlsroute", 9094, "tlsroute", false)])),
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", false),
                    ingress_config.clone()
                )])),
            ],
        ),
        case(
            rule("Kafka", each_listener, "self.authentication.type"),
            vec![kafka(json!([
                with(
                    plain.clone(),
                    json!({"authentication": {"type": "scram-sha-512"}})
                ),
                with(tls.clone(), json!({"authentication": {"type": "tls"}})),
                listener("none", 9094, "internal", false),
            ]))],
            vec![kafka(json!([with(
                plain.clone(),
                json!({"authentication": {"type": "tls"}})
            )]))],
        ),
        case(
            rule("Kafka", each_listener, "9404"),
            vec![kafka(json!([
                listener("a", 9403, "internal", false),
                listener("b", 9405, "internal", false),
                listener("c", 9998, "internal", false),
                listener("d", 10000, "internal", false),
            ]))],
            vec![
                kafka(json!([listener("metrics", 9404, "internal", false)])),
                kafka(json!([listener("jmx", 9999, "internal", false)])),
            ],
        ),
        case(
            rule("Kafka", each_listener, "bootstrap.host"),
            vec![
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", true),
                    ingress_config.clone()
                )])),
                // Other types may leave the bootstrap out.
                kafka(json!([with(
                    listener("route", 9094, "route", true),
                    json!({"configuration": {"bootstrap": {}}})
                )])),
            ],
            vec![
                kafka(json!([listener("ingress", 9094, "ingress", true)])),
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", true),
                    json!({"configuration": {"hostTemplate": "b-{nodeId}.example.com"}})
                )])),
                kafka(json!([with(
                    listener("ingress", 9094, "ingress", true),
                    json!({"configuration": {"bootstrap": {"alternativeNames": ["x"]}}})
                )])),
            ],
        ),
        case(
            rule("KafkaNodePool", "spec.roles", "size()"),
            vec![
                node_pool(json!(["broker"]), json!({"type": "ephemeral"})),
                node_pool(json!(["controller"]), json!({"type": "ephemeral"})),
            ],
            vec![node_pool(json!([]), json!({"type": "ephemeral"}))],
        ),
        case(
            rule("KafkaNodePool", "spec.roles", "exists_one"),
            vec![node_pool(
                json!(["controller", "broker"]),
                json!({"type": "ephemeral"}),
            )],
            vec![
                node_pool(json!(["broker", "broker"]), json!({"type": "ephemeral"})),
                node_pool(
                    json!(["controller", "controller"]),
                    json!({"type": "ephemeral"}),
                ),
            ],
        ),
        case(
            rule("KafkaNodePool", "spec.storage", "self.volumes.size() > 0"),
            vec![
                jbod(json!([{"id": 0, "type": "ephemeral"}])),
                // Volumes only matter for jbod storage.
                pool_with_storage(json!({"type": "ephemeral"})),
            ],
            vec![pool_with_storage(json!({"type": "jbod"})), jbod(json!([]))],
        ),
        case(
            rule("KafkaNodePool", "spec.storage", "all(v, has(v.id))"),
            vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "100Gi"},
                {"id": 1, "type": "ephemeral"},
            ]))],
            vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "100Gi"},
                {"type": "persistent-claim", "size": "100Gi"},
            ]))],
        ),
        case(
            rule("KafkaNodePool", "spec.storage", "o.id == v.id"),
            vec![jbod(json!([
                {"id": 0, "type": "ephemeral"},
                {"id": 1, "type": "ephemeral"},
                {"id": 2, "type": "ephemeral"},
            ]))],
            vec![jbod(json!([
                {"id": 1, "type": "ephemeral"},
                {"id": 0, "type": "ephemeral"},
                {"id": 1, "type": "persistent-claim", "size": "10Gi"},
            ]))],
        ),
        case(
            rule("KafkaNodePool", "spec.storage", "kraftMetadata"),
            vec![jbod(json!([
                {"id": 0, "type": "ephemeral", "kraftMetadata": "shared"},
                {"id": 1, "type": "ephemeral"},
            ]))],
            vec![jbod(json!([
                {"id": 0, "type": "ephemeral", "kraftMetadata": "shared"},
                {"id": 1, "type": "ephemeral"},
                {"id": 2, "type": "ephemeral", "kraftMetadata": "shared"},
            ]))],
        ),
        case(
            rule("KafkaNodePool", "spec.storage", "has(self.size)"),
            vec![
                pool_with_storage(json!({"type": "persistent-claim", "size": "100Gi"})),
                pool_with_storage(json!({"type": "ephemeral"})),
            ],
            vec![pool_with_storage(
                json!({"type": "persistent-claim", "deleteClaim": true}),
            )],
        ),
        case(
            rule("KafkaNodePool", "spec.storage.volumes[]", "has(self.size)"),
            vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "1Ti", "class": "fast"},
                {"id": 1, "type": "ephemeral", "sizeLimit": "1Gi"},
            ]))],
            vec![jbod(json!([
                {"id": 0, "type": "persistent-claim", "size": "1Ti"},
                {"id": 1, "type": "persistent-claim", "class": "fast"},
            ]))],
        ),
    ]
}

/// A case for every rule, Strimzi's first.
pub fn cases() -> Vec<Case> {
    let mut cases = strimzi_cases();
    cases.extend(own_cases());
    cases
}

/// Documents that Strimzi's CRDs accept because they drop the `required` lists of embedded
/// Kubernetes types (and do not insist on a volume source): ours accept them too. What each
/// shows, and the document.
pub fn accepted_as_by_strimzi() -> Vec<(&'static str, Value)> {
    let pod = |field: &str, value: Value| {
        set(
            plain_kafka(),
            &format!("spec.kafka.template.pod.{field}"),
            value,
        )
    };
    vec![
        (
            "an image pull secret without a name",
            pod("imagePullSecrets", json!([{}])),
        ),
        (
            "a volume without a source (Kubernetes makes it an emptyDir)",
            pod("volumes", json!([{"name": "scratch"}])),
        ),
        (
            "a ConfigMap volume without the ConfigMap's name, items without key and path",
            pod(
                "volumes",
                json!([{"name": "config", "configMap": {"items": [{"mode": 420}]}}]),
            ),
        ),
        (
            "a claim volume without the claim's name, a CSI volume without a driver",
            pod(
                "volumes",
                json!([{"name": "claim", "persistentVolumeClaim": {}}, {"name": "csi", "csi": {}}]),
            ),
        ),
        (
            "affinity terms and a spread constraint without their required fields",
            pod(
                "affinity",
                json!({
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}},
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [{}],
                        "requiredDuringSchedulingIgnoredDuringExecution": [{}],
                    },
                }),
            ),
        ),
        (
            "a spread constraint and a host alias without their required fields",
            set(
                pod("topologySpreadConstraints", json!([{}])),
                "spec.kafka.template.pod.hostAliases",
                json!([{"hostnames": ["kafka.example.com"]}]),
            ),
        ),
        (
            "a templated volume without a source, a volume mount without a path",
            set(
                set(
                    node_pool(json!(["broker"]), json!({"type": "ephemeral"})),
                    "spec.template.pod.templatedVolumes",
                    json!([{"name": "per-node"}]),
                ),
                "spec.template.kafkaContainer.volumeMounts",
                json!([{"name": "per-node"}]),
            ),
        ),
        (
            "a label selector requirement without key and operator",
            json!({
                "apiVersion": "core.strimzi.io/v1",
                "kind": "StrimziPodSet",
                "metadata": {"name": "doc"},
                "spec": {"selector": {"matchExpressions": [{}]}, "pods": []},
            }),
        ),
    ]
}

/// The field names a schema node's own `required` list names (empty without one).
pub fn required_names(node: &Value) -> Vec<String> {
    node["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|name| name.as_str().map(str::to_owned))
        .collect()
}
