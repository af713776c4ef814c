#!/usr/bin/env bash
# Writes the release artifacts of the workspace version V (`[workspace.package]` version in
# Cargo.toml, read by deploy/workspace-version.sh) into one folder:
#
#   strimzi-cluster-operator-V.yaml   deploy/install/cluster-operator/*.yaml in file order as one
#                                     file of `---`-separated documents, as Strimzi's release
#                                     names it
#   strimzi-topic-operator-V.yaml     the same of deploy/install/topic-operator
#   strimzi-user-operator-V.yaml      the same of deploy/install/user-operator
#   strimzi-crds-V.yaml               the CRDs alone (deploy/install/cluster-operator/04*-Crd-*.yaml)
#   strimzi-kafka-operator-helm-3-chart-V.tgz
#                                     the Helm chart (deploy/helm/strimzi-kafka-operator), packed
#                                     as `helm package` packs it, under Strimzi's name for it
#   strimzi-rs-operator-image-V.tar   the operator image: an OCI image layout and a docker archive
#                                     in one tar, as `docker save` writes them (docker load,
#                                     podman load, kind load image-archive, ctr images import)
#   kubectl-strimzi-V-linux-ARCH.tar.gz
#                                     the kubectl plugin: its binary, its man page
#                                     (kubectl-strimzi.1) and the LICENSE (ARCH: the machine's,
#                                     amd64 or arm64)
#   strimzi-krew-V.yaml               the plugin's krew manifest (deploy/krew/strimzi.yaml) with the
#                                     archive's address and digest
#   SHA256SUMS                        the digest of every file above (`sha256sum -c SHA256SUMS`)
#
# Usage: release.sh [--out DIR] [--image-repository REPO] [--image-archive FILE | --without-image]
#                   [--plugin-binary FILE | --without-plugin] [--download-url URL]
#
#   --out DIR                 where to write (default target/release-artifacts/V); an existing
#                             folder is replaced only if it is empty or an earlier release folder
#                             (it holds a SHA256SUMS)
#   --image-repository REPO   the repository of our operator image, written into every manifest
#                             (the Deployments' `image` and STRIMZI_DEFAULT_KAFKA_INIT_IMAGE), the
#                             chart's values and the image archive's name, always tagged V (default
#                             localhost/strimzi-rs/operator, the name the sources hold:
#                             OPERATOR_IMAGE_REPOSITORY in tests/testenv/images/versions.env).
#                             Strimzi's images (quay.io/strimzi/...) are never touched.
#   --image-archive FILE      the operator image as build-images.sh packs it (named
#                             localhost/strimzi-rs/operator:V), instead of building it, for example
#                             ~/.cache/strimzi-testenv/images/operator.oci.tar
#   --without-image           no image archive (the manifests and chart only)
#   --plugin-binary FILE      the kubectl-strimzi binary to pack, instead of building it with
#                             `cargo build --release` (a static or glibc binary of this machine's
#                             architecture)
#   --without-plugin          no plugin archive and krew manifest (the chart's check needs
#                             neither)
#   --download-url URL        where the release's files are downloaded from, for the krew
#                             manifest (default: the workspace's repository URL followed by
#                             /releases/download/vV)
#
# Without --image-archive or --without-image the image is built as the Dockerfile builds it
# (static binaries of the release profile), with tests/testenv/images/build-images.sh
# --operator-only: no daemon or registry, but root (its smoke test runs the programs chrooted),
# and minutes of compiling when cold. It builds in $STRIMZI_RELEASE_CACHE (default
# ~/.cache/strimzi-release), apart from the test environment's dev-profile images.
#
# Refuses to run unless CHANGELOG.md has a section for V (`## [V]`) and the bundles and the
# chart are at V. The chart archive's entries are dated $SOURCE_DATE_EPOCH (default: the time of
# the checked-out commit) and the image archive's as the image's, so the same sources and image
# give the same bytes. Prints one line per artifact; any problem is one line and a non-zero exit.
set -euo pipefail

usage="usage: release.sh [--out DIR] [--image-repository REPO] [--image-archive FILE | --without-image] [--plugin-binary FILE | --without-plugin] [--download-url URL]"
fail() {
    echo "release.sh: $*" >&2
    exit 1
}

workspace=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
images_dir=$workspace/tests/testenv/images
default_repository=$(sed -n 's/^OPERATOR_IMAGE_REPOSITORY=//p' "$images_dir/versions.env")
[[ -n $default_repository ]] || fail "no OPERATOR_IMAGE_REPOSITORY in $images_dir/versions.env"

out=""
repository=$default_repository
image_archive=""
with_image=true
plugin_binary=""
with_plugin=true
download_url=""
while (($#)); do
    case $1 in
        --out | --image-repository | --image-archive | --plugin-binary | --download-url)
            (($# > 1)) || { echo "release.sh: $1 needs a value ($usage)" >&2; exit 2; }
            case $1 in
                --out) out=$2 ;;
                --image-repository) repository=$2 ;;
                --image-archive) image_archive=$2 ;;
                --plugin-binary) plugin_binary=$2 ;;
                --download-url) download_url=$2 ;;
            esac
            shift 2
            ;;
        --without-image) with_image=false; shift ;;
        --without-plugin) with_plugin=false; shift ;;
        -h | --help) echo "$usage"; exit 0 ;;
        *) echo "release.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
done
if [[ -n $plugin_binary ]] && ! $with_plugin; then
    echo "release.sh: --plugin-binary and --without-plugin exclude each other ($usage)" >&2
    exit 2
fi
if [[ -n $image_archive ]] && ! $with_image; then
    echo "release.sh: --image-archive and --without-image exclude each other ($usage)" >&2
    exit 2
fi

# The repository's parts as image references read them (and as the chart composes them:
# registry, repository and name joined with `/`, empty ones left out): a first component with
# a `.` or `:`, or `localhost`, is a registry host; the last is the name. The host may have a
# port; the other components are lower case, with single separators; no tag or digest (the tag
# is always V).
image_registry="" image_path=$repository
first_component=${repository%%/*}
if [[ $repository == */* && ($first_component == *.* || $first_component == *:* || $first_component == localhost) ]]; then
    image_registry=$first_component
    image_path=${repository#*/}
fi
host='^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]+)?$'
components='^[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*$'
if [[ ! $image_path =~ $components ]] || [[ -n $image_registry && ! $image_registry =~ $host ]]; then
    fail "--image-repository '$repository' is not an image repository (for example registry.example.com/team/strimzi-rs-operator: lower case, no tag)"
fi
image_name=${image_path##*/}
image_repository=""
[[ $image_path != */* ]] || image_repository=${image_path%/*}

version=$(bash "$workspace/deploy/workspace-version.sh")
out=${out:-$workspace/target/release-artifacts/$version}
old_image=$default_repository:$version
new_image=$repository:$version

# The changelog speaks for the release.
grep -Eq "^## \[${version//./\\.}\]([[:space:]]|$)" "$workspace/CHANGELOG.md" 2>/dev/null ||
    fail "CHANGELOG.md has no section for $version (a '## [$version] - YYYY-MM-DD' heading): write it first"

# The chart is at V too (the bundles are checked below, by their image references).
chart_dir=$workspace/deploy/helm/strimzi-kafka-operator
chart_field() {
    sed -n "s/^$1:[[:space:]]*\"\{0,1\}\([^\"]*\)\"\{0,1\}[[:space:]]*$/\1/p" "$chart_dir/Chart.yaml"
}
[[ $(chart_field version) == "$version" && $(chart_field appVersion) == "$version" ]] ||
    fail "deploy/helm/strimzi-kafka-operator/Chart.yaml: version $(chart_field version), appVersion $(chart_field appVersion); both must be $version"

epoch=${SOURCE_DATE_EPOCH:-$(git -C "$workspace" log -1 --format=%ct 2>/dev/null || true)}
[[ $epoch =~ ^[0-9]+$ ]] || fail "no commit time to date the chart archive with: set SOURCE_DATE_EPOCH (seconds since 1970)"

# The output folder is written beside its place and moved there at the end: an interrupted run
# leaves no half release.
if [[ -e $out && ! -f $out/SHA256SUMS ]] && ! rmdir "$out" 2>/dev/null; then
    fail "$out exists and is neither empty nor an earlier release folder (no SHA256SUMS): choose another --out"
fi
mkdir -p "$(dirname "$out")"
staging=$(mktemp -d "$(dirname "$out")/.release-$version.XXXXXX")
chmod 0755 "$staging"
trap 'rm -rf "$staging"' EXIT
started=$SECONDS

# Our operator image's reference set to new_image, as a sed command (the old name's dots
# escaped; the new name's characters need no escape).
image_sed="s#${old_image//./\\.}#${new_image}#g"

# single_file <name> <file>...: the files in order, `---` between them, with our image's
# reference set, into <name>.
single_file() {
    local name=$1 file first=true
    shift
    for file in "$@"; do
        $first || echo "---"
        first=false
        sed "$image_sed" "$file"
    done >"$staging/$name"
}

for bundle in cluster-operator topic-operator user-operator; do
    files=("$workspace/deploy/install/$bundle/"*.yaml)
    grep -qF "$old_image" "${files[@]}" ||
        fail "deploy/install/$bundle names no $old_image: are its Deployment's images at version $version?"
    single_file "strimzi-$bundle-$version.yaml" "${files[@]}"
done
single_file "strimzi-crds-$version.yaml" "$workspace/deploy/install/cluster-operator/"04*-Crd-*.yaml
if [[ $new_image != "$old_image" ]] && grep -qF -e "$default_repository:" -e "$default_repository@" "$staging"/*.yaml; then
    fail "deploy/install names $default_repository at another tag than $version"
fi

# The chart: our image's parts in values.yaml (operatorImageDefaults' registry and repository,
# and the `name` of image, kafkaInit.image, topicOperator.image and userOperator.image: exactly
# these two and four lines, or the chart's layout has changed), and its full reference wherever
# another file of the chart names it (its README).
chart=$staging/chart/strimzi-kafka-operator
mkdir -p "$chart"
cp -R "$chart_dir/." "$chart/"
while read -r file; do
    sed -i "$image_sed" "$file"
done < <(grep -rlF "$old_image" "$chart" || true)
awk -v registry="$image_registry" -v repository="$image_repository" -v name="$image_name" '
    /^[^ #]/ { block = $1 }
    block == "operatorImageDefaults:" && /^  registry: / { print "  registry: \"" registry "\""; defaults++; next }
    block == "operatorImageDefaults:" && /^  repository: / { print "  repository: \"" repository "\""; defaults++; next }
    /^ +name: operator$/ && block ~ /^(image|kafkaInit|topicOperator|userOperator):$/ {
        sub(/name: operator$/, "name: \"" name "\""); names++
    }
    { print }
    END { if (defaults != 2 || names != 4) exit 3 }' "$chart_dir/values.yaml" >"$chart/values.yaml" ||
    fail "deploy/helm/strimzi-kafka-operator/values.yaml: expected operatorImageDefaults.registry and .repository and four image names 'operator' to set"
chmod -R u=rwX,go=rX "$chart"
chart_archive=strimzi-kafka-operator-helm-3-chart-$version.tgz
tar --create --directory="$staging/chart" --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
    --mtime="@$epoch" strimzi-kafka-operator | gzip -n -9 >"$staging/$chart_archive"
rm -rf "$staging/chart"

# The image: built here unless given, then named new_image.
if $with_image; then
    oci=$images_dir/oci.py
    if [[ -z $image_archive ]]; then
        release_cache=${STRIMZI_RELEASE_CACHE:-$HOME/.cache/strimzi-release}
        echo "operator image: building as the Dockerfile does (release profile) in $release_cache (cold: 10 minutes and more on 2 cores)"
        STRIMZI_TESTENV_CACHE=$release_cache STRIMZI_TESTENV_OPERATOR_PROFILE=release \
            bash "$images_dir/build-images.sh" --operator-only ||
            fail "building the operator image failed (build-images.sh above names its log)"
        image_archive=$release_cache/images/operator.oci.tar
    fi
    [[ -f $image_archive ]] || fail "--image-archive $image_archive: no such file"
    python3 "$oci" verify "$image_archive" --name "$old_image" >/dev/null ||
        fail "--image-archive $image_archive is not the operator image $old_image as build-images.sh packs it (above)"
    python3 "$oci" rename "$image_archive" --name "$new_image" --out "$staging/strimzi-rs-operator-image-$version.tar" >/dev/null
fi

# The kubectl plugin: its archive (binary, man page, LICENSE; entries dated as the chart's) and
# its krew manifest.
if $with_plugin; then
    case $(uname -m) in
        x86_64) plugin_arch=amd64 ;;
        aarch64 | arm64) plugin_arch=arm64 ;;
        *) fail "kubectl plugin: no krew architecture name for $(uname -m)" ;;
    esac
    if [[ -z $plugin_binary ]]; then
        echo "kubectl-strimzi: building with cargo build --release (cold: minutes)"
        cargo build --quiet --release --locked --manifest-path "$workspace/Cargo.toml" -p strimzi-kubectl-plugin --bin kubectl-strimzi ||
            fail "building kubectl-strimzi failed (above)"
        plugin_binary=$(cargo metadata --format-version 1 --no-deps --manifest-path "$workspace/Cargo.toml" |
            python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release/kubectl-strimzi
    fi
    [[ -x $plugin_binary ]] || fail "--plugin-binary $plugin_binary: no such executable"
    plugin_version=$("$plugin_binary" --version 2>/dev/null | awk '{print $2}')
    [[ $plugin_version == "$version" ]] ||
        fail "--plugin-binary $plugin_binary is version '${plugin_version}', not $version"
    plugin_dir=$staging/plugin
    mkdir -p "$plugin_dir"
    install -m 0755 "$plugin_binary" "$plugin_dir/kubectl-strimzi"
    "$plugin_binary" man >"$plugin_dir/kubectl-strimzi.1" || fail "kubectl-strimzi man failed"
    install -m 0644 "$workspace/LICENSE" "$plugin_dir/LICENSE"
    chmod 0644 "$plugin_dir/kubectl-strimzi.1"
    plugin_archive=kubectl-strimzi-$version-linux-$plugin_arch.tar.gz
    tar --create --directory="$plugin_dir" --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
        --mtime="@$epoch" kubectl-strimzi kubectl-strimzi.1 LICENSE | gzip -n -9 >"$staging/$plugin_archive"
    rm -rf "$plugin_dir"
    homepage=$(sed -n 's/^repository = "\(.*\)"$/\1/p' "$workspace/Cargo.toml" | head -1)
    [[ -n $homepage ]] || fail "Cargo.toml: no repository URL in [workspace.package]"
    download_url=${download_url:-$homepage/releases/download/v$version}
    plugin_sha=$(sha256sum "$staging/$plugin_archive" | cut -d' ' -f1)
    sed -e "s#vVERSION#v$version#" -e "s#HOMEPAGE#$homepage#" -e "s#ARCH#$plugin_arch#" \
        -e "s#URI#${download_url%/}/$plugin_archive#" -e "s#SHA256#$plugin_sha#" -e "/^#/d" \
        "$workspace/deploy/krew/strimzi.yaml" >"$staging/strimzi-krew-$version.yaml"
fi

(cd "$staging" && LC_ALL=C sha256sum -- * >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
for artifact in "$out"/*; do
    echo "$(du -k "$artifact" | cut -f1) KiB  $artifact"
done
echo "release $version with $new_image: $out, $((SECONDS - started))s"
