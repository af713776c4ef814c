#!/usr/bin/env bash
# Rebuilds, without any container registry, the images a real test node needs, as OCI image
# archives that `ctr -n k8s.io images import` loads:
#
#   ${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}/images/
#     pause.oci.tar                          registry.k8s.io/pause:<PAUSE_VERSION>
#     kafka-<strimzi>-<kafka>.oci.tar        quay.io/strimzi/kafka:<strimzi>-kafka-<kafka>, one for
#                                            each Kafka version of KAFKA_VERSIONS
#     kafka-bridge-<bridge>.oci.tar          quay.io/strimzi/kafka-bridge:<bridge>
#     buildah-<strimzi>.oci.tar              quay.io/strimzi/buildah:<strimzi> (Connect builds)
#     registry/maven-builder-<strimzi>.oci.tar
#                                            quay.io/strimzi/maven-builder:<strimzi>, pushed to the
#                                            environment's registry by the Connect build test (not
#                                            imported into the nodes)
#     operator.oci.tar                       <OPERATOR_IMAGE_REPOSITORY>:<workspace version>
#                                            (only with --with-operator or --operator-only)
#     <archive>.inputs                       what the archive was built from
#     stages/<part>/                         intermediate results, reused by later rebuilds
#
# Usage: build-images.sh [--with-operator | --operator-only]
#
# Every archive is an OCI image layout and a docker archive in one tar, as `docker save` writes
# them (oci.py), so `ctr images import`, `docker load` and `podman load` all read it.
# --operator-only builds the operator image alone (no stand-ins, no test images; what
# deploy/release.sh asks for).
#
# Every image is made of registry packages and our own code only (CONTRACT.md next to this
# script says what the images must do; README.md how they differ from Strimzi's):
#   - pause: Kubernetes' pause.c (from the k8s.io/kubernetes module) compiled statically;
#   - Kafka, one image per version of KAFKA_VERSIONS (they share every part but Kafka's own
#     jars): a Debian root filesystem made with debootstrap, Kafka's jars and third-party
#     libraries from Maven Central (kafka-dist-pom.xml, kafka-thirdparty-pom.xml), our start,
#     probe and launcher scripts and broker-state agent (kafka/), and our contract stand-ins
#     for Cruise Control and Kafka Exporter (workspace crates standins/cruise-control and
#     standins/kafka-exporter, with their start scripts, and the stand-in's broker-side
#     metrics reporter built with Maven from standins/cruise-control/metrics-reporter);
#   - HTTP Bridge: the same Debian root filesystem without Java, with our bridge stand-in
#     (standins/bridge) and its start script;
#   - Buildah, the builder of KafkaConnect's spec.build: Debian's minimal base with Debian's
#     buildah, isolation `chroot` as Strimzi's image sets it;
#   - the Maven builder of a Connect build's `maven` artifacts: the Kafka root filesystem with
#     Debian's maven, and a Maven repository (stages/maven-repo) for the test's artifact;
#   - with --with-operator (or --operator-only), our operator image from the workspace's
#     Dockerfile: its build stage's script runs here and its root is packed with the final
#     stage's settings.
# The Rust binaries (the operators and the three stand-ins) come from one cargo invocation,
# the Dockerfile's build stage script (deploy/docker/build-root.sh, static binaries, of the dev
# profile unless STRIMZI_TESTENV_OPERATOR_PROFILE says otherwise) with the stand-ins added:
# their dependencies compile once, in a target folder kept in the cache. Cargo runs on every
# call and decides what is out of date; the binaries it gives are inputs of the images.
#
# Every input (versions.env, the recipe files, the binaries, our scripts, this script's build
# functions) is recorded in <archive>.inputs; when it matches, the archive is reused and this
# script only prints "cached" lines. Each part is built in <cache>/images/.build-<part>.* and
# moved into place with one rename, so an interrupted build never looks finished. Runs are
# serialised with flock on <cache>/images/.lock, so parallel callers wait for each other. Each
# part logs to <cache>/logs/images-<part>.log; a failure prints one line naming the part and
# its log.
#
# Needs root (debootstrap, chroot, root-owned files in the image) and: debootstrap, gcc with a
# static libc, go (1.24 or newer, for the pause program's module), mvn, a JDK 17, cargo (or
# $CARGO) with the static C libraries the workspace links (libssl-dev, zlib1g-dev), readelf,
# chroot, python3, tar, gzip, flock, unshare. Network: the Debian mirror, Maven Central and the
# Go module proxy only, plus cargo's registry if its cache lacks a crate.
#
# Environment:
#   STRIMZI_TESTENV_CACHE        cache root (default $HOME/.cache/strimzi-testenv)
#   STRIMZI_TESTENV_MAVEN_REPO   Maven local repository (default: Maven's own, ~/.m2/repository)
#   CARGO                        cargo program (default: cargo from PATH)
#   STRIMZI_OPERATOR_TARGET_DIR  cargo's target folder for the images' binaries (default
#                                <cache>/operator-target)
#   STRIMZI_TESTENV_OPERATOR_PROFILE
#                                the cargo profile of those binaries (default dev; the
#                                Dockerfile builds release)
set -Eeuo pipefail

with_operator=false
operator_only=false
for arg in "$@"; do
    case $arg in
        --with-operator) with_operator=true ;;
        --operator-only) with_operator=true operator_only=true ;;
        -h | --help)
            echo "usage: $0 [--with-operator | --operator-only]"
            echo "  builds the pause, Kafka and bridge images; --with-operator also packs the operator image"
            echo "  (the workspace's Dockerfile), --operator-only packs that one alone. See README.md next to"
            echo "  this script."
            exit 0
            ;;
        *)
            echo "build-images.sh: unknown argument '$arg' (usage: build-images.sh [--with-operator | --operator-only])" >&2
            exit 2
            ;;
    esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
KUBERNETES_VERSION=$(sed -n 's/^KUBERNETES_VERSION=//p' "$here/../versions.env")

cache=${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}
images=$cache/images
stages=$images/stages
logs=$cache/logs

# Our own parts of the Kafka image: scripts, launcher, tool list and the broker-state agent.
kafka_own=$here/kafka
# The agent's jar name, as its pom builds it (kafka_run.sh finds it by the prefix).
agent_jar=strimzi-rs-kafka-agent-0.1.0.jar
# The contract stand-ins (workspace crates): each one's package, which is also its binary.
standins=$repo/standins
cc_standin=strimzi-cruise-control-standin
exporter_standin=strimzi-kafka-exporter-standin
bridge_standin=strimzi-bridge-standin
# The Cruise Control stand-in's broker-side metrics reporter, as its pom names the jar.
reporter_jar=cruise-control-metrics-reporter-standin-0.1.0.jar

pause_archive=$images/pause.oci.tar
# The Kafka images, one per version of KAFKA_VERSIONS (KAFKA_VERSION, the default one, among
# them), named as Strimzi names its own: the repository of KAFKA_IMAGE, tag
# <strimzi>-kafka-<version>. The build functions read the version being built from
# kafka_version and kafka_image (set by kafka_version_is).
IFS=, read -r -a kafka_versions <<<"$KAFKA_VERSIONS"
kafka_version=""
kafka_image=""
kafka_archive=""
# kafka_version_is <version>: sets the Kafka version being built, its image and its archive.
kafka_version_is() {
    kafka_version=$1
    kafka_image=${KAFKA_IMAGE%:*}:$STRIMZI_VERSION-kafka-$1
    kafka_archive=$images/kafka-$STRIMZI_VERSION-$1.oci.tar
}
operator_archive=$images/operator.oci.tar
bridge_archive=$images/kafka-bridge-$BRIDGE_VERSION.oci.tar
buildah_archive=$images/buildah-$STRIMZI_VERSION.oci.tar
# What the Buildah image holds besides Debian's minimal base: buildah (with the containers'
# policy and registries files it depends on, not what it recommends: the builder runs no
# containers of its own) and the CA certificates a push over TLS needs.
buildah_packages=(buildah ca-certificates)
maven_builder_archive=$images/registry/maven-builder-$STRIMZI_VERSION.oci.tar
created=$(date -u -d "@$IMAGE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

# What the Kafka image's root filesystem holds besides Debian's minimal base: the JRE and what
# Strimzi's Dockerfiles install or its scripts and Kafka's launchers call (openssl and keytool
# for certificates, curl for the readiness and Cruise Control health checks, netstat for the
# controller readiness check, hostname, gawk, ps, find/xargs, tar, gzip and unzip for Connect
# builds, tini as the PID 1 the scripts exec, tzdata, useradd from passwd).
rootfs_packages=("$JAVA_PACKAGE" ca-certificates openssl curl net-tools hostname findutils tar gzip
    unzip gawk procps bash grep sed coreutils passwd tzdata tini)
image_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

current_component=""
current_log=""
work=""

# remove <dir>: deletes a build directory, first detaching anything mounted inside it (an
# interrupted debootstrap can leave /proc or /sys mounted there), and never crossing into a
# mount.
remove() {
    local dir=$1 mount
    [[ -e $dir ]] || return 0
    while read -r mount; do
        umount -l "$mount" 2>/dev/null || true
    done < <(awk -v prefix="$dir/" 'index($2, prefix) == 1 { print $2 }' /proc/self/mounts | sort -r)
    rm -rf --one-file-system "$dir"
}

on_error() {
    local rc=$?
    if [[ -n $current_component ]]; then
        [[ -z $work ]] || remove "$work"
        echo "build-images.sh: building $current_component failed (exit $rc); log: $current_log" >&2
    else
        echo "build-images.sh: failed (exit $rc) outside a component build" >&2
    fi
    exit "$rc"
}
trap on_error ERR

fail() {
    echo "build-images.sh: $*" >&2
    exit 1
}

# need <command> <how to get it>
need() {
    command -v "$1" >/dev/null 2>&1 || fail "'$1' not found: $2"
}

# log <command...>: runs a command with its output appended to the component log.
log() {
    echo "+ $*" >>"$current_log"
    "$@" >>"$current_log" 2>&1
}

# note <text>: a line in the component log.
note() {
    echo "== $*" >>"$current_log"
}

# tree_hash <dir> <path>...: one digest over the names, modes and contents of the files under
# the given paths (relative to <dir>, so the digest does not depend on where <dir> is).
tree_hash() {
    local dir=$1
    shift
    (
        cd "$dir"
        find "$@" \( -type f -o -type l \) -printf '%m %p %l\n' | LC_ALL=C sort
        find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    ) | sha256sum | cut -c1-64
}

# code_hash <function>...: digest of the named functions' source as bash holds it.
code_hash() {
    declare -f "$@" | sha256sum | cut -c1-64
}

# is_current <marker file> <inputs>: true when the marker records exactly these inputs.
is_current() {
    [[ -f $1 ]] && [[ "$(cat "$1")" == "$2" ]]
}

# write_marker <marker file> <inputs>: replaces the marker in one rename.
write_marker() {
    printf '%s\n' "$2" >"$1.tmp"
    mv "$1.tmp" "$1"
}

# start <component> <description> <cold time>: opens the log and a temp dir ($work) in the cache.
start() {
    current_component=$1
    current_log=$logs/images-$1.log
    echo "$2: building (cold: about $3)"
    work=$(mktemp -d "$images/.build-$1.XXXXXX")
    mkdir -p "$work/out"
    : >"$current_log"
    build_started=$SECONDS
}

# finish_stage <stage dir> <inputs>: moves $work/out into place with one rename.
finish_stage() {
    printf '%s\n' "$2" >"$work/out/.inputs"
    remove "$1"
    mv "$work/out" "$1"
    remove "$work"
    work=""
    echo "$current_component: built in $((SECONDS - build_started))s"
    current_component=""
}

# finish_archive <archive> <inputs> <label>: moves $work/image.oci.tar into place, records inputs.
finish_archive() {
    rm -f "$1.inputs"
    mv "$work/image.oci.tar" "$1"
    write_marker "$1.inputs" "$2"
    remove "$work"
    work=""
    echo "$3: built in $((SECONDS - build_started))s, $(du -m "$1" | cut -f1) MB: $1"
    current_component=""
}

# in_root <root> <user:group> <command...>: runs a command chrooted into <root> with the host's
# /dev and a fresh /proc mounted in a private mount namespace (gone when the command ends).
in_root() {
    local root=$1 user=$2
    shift 2
    # shellcheck disable=SC2016 # expanded by the inner bash
    unshare --mount --propagation private --fork -- bash -c '
        set -e
        root=$1 user=$2
        shift 2
        mount --rbind /dev "$root/dev"
        mount -t proc proc "$root/proc"
        exec chroot --userspec="$user" "$root" "$@"' in_root "$root" "$user" "$@"
}

# mvn_run <arg>...: Maven in batch mode, resolving from Maven Central only (a mirror of every
# repository), with the local repository of STRIMZI_TESTENV_MAVEN_REPO when set.
mvn_run() {
    local settings=$work/maven-settings.xml
    cat >"$settings" <<'EOF'
<settings>
  <mirrors>
    <mirror>
      <id>central-only</id>
      <mirrorOf>*</mirrorOf>
      <url>https://repo.maven.apache.org/maven2</url>
    </mirror>
  </mirrors>
</settings>
EOF
    local args=(-B -ntp -s "$settings")
    if [[ -n ${STRIMZI_TESTENV_MAVEN_REPO:-} ]]; then
        args+=("-Dmaven.repo.local=$STRIMZI_TESTENV_MAVEN_REPO")
    fi
    log mvn "${args[@]}" "$@"
}

# pack_image <root> <runtime config json> <image name> [tar option...]: writes
# $work/image.oci.tar from the directory tree <root> as the single layer, and checks the result.
pack_image() {
    local root=$1 config=$2 name=$3 diff_id
    shift 3
    # Sorted names without a leading "./", numeric owners, no access/change times, fixed
    # extended-header names: the same tree gives the same layer bytes.
    (cd "$root" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort) >"$work/layer.files"
    log tar --create --file="$work/layer.tar" --directory="$root" --no-recursion \
        --verbatim-files-from --files-from="$work/layer.files" \
        --numeric-owner --format=posix \
        --pax-option='exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime' "$@"
    diff_id=sha256:$(sha256sum "$work/layer.tar" | cut -c1-64)
    note "layer: $(du -m "$work/layer.tar" | cut -f1) MB uncompressed, diff_id $diff_id"
    log gzip -n -6 "$work/layer.tar"
    log python3 "$here/oci.py" pack --layer "$work/layer.tar.gz" --diff-id "$diff_id" \
        --config "$config" --name "$name" --arch "$oci_arch" --created "$created" \
        --out "$work/image.oci.tar"
    rm -f "$work/layer.tar.gz"
    log python3 "$here/oci.py" verify "$work/image.oci.tar" --name "$name"
}

# ---------------------------------------------------------------------------------------------
# The pause image: Kubernetes' pause.c, compiled as Kubernetes' build/pause/Makefile does
# (-Os -Wall -Werror -static), as /pause in an otherwise empty image.
build_pause() {
    local dir makefile_tag
    cd "$work"
    log env GOWORK=off GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION"
    dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' "$current_log" | tail -1)
    [[ -f $dir/build/pause/linux/pause.c ]] || { note "pause.c not found in '$dir'"; false; }
    makefile_tag=$(awk '$1 == "TAG" && $2 == "?=" { print $3 }' "$dir/build/pause/Makefile")
    if [[ $makefile_tag != "$PAUSE_VERSION" ]]; then
        note "Kubernetes $KUBERNETES_VERSION builds pause $makefile_tag, versions.env pins $PAUSE_VERSION"
        false
    fi
    mkdir -p "$work/root"
    log gcc -Os -Wall -Werror -static "-DVERSION=v$PAUSE_VERSION-$KUBERNETES_VERSION" \
        -o "$work/root/pause" "$dir/build/pause/linux/pause.c"
    log "$work/root/pause" -v
    chmod 0755 "$work/root/pause"
    touch -d "@$IMAGE_EPOCH" "$work/root/pause"
    # Runtime settings of registry.k8s.io/pause: /pause as the entry point, run as 65535.
    cat >"$work/config.json" <<EOF
{
  "User": "65535:65535",
  "Env": ["PATH=$image_path"],
  "Entrypoint": ["/pause"]
}
EOF
    pack_image "$work/root" "$work/config.json" "$PAUSE_IMAGE" --owner=0 --group=0
    cd "$here"
}

# strip_root <root>: removes from a debootstrapped root what a container runtime provides at
# start or a build leaves behind (caches, package lists, docs, logs, the host's resolver and
# name), with a plain /etc/hosts.
strip_root() {
    local root=$1
    rm -rf "${root:?}"/dev/* "${root:?}"/proc/* "${root:?}"/sys/* "${root:?}"/run/* "${root:?}"/tmp/* \
        "${root:?}"/var/tmp/* "${root:?}"/var/lib/apt/lists/* "${root:?}"/var/cache/apt/* \
        "${root:?}"/var/cache/debconf/*-old "${root:?}"/var/lib/dpkg/*-old \
        "${root:?}"/usr/share/doc/* "${root:?}"/usr/share/man/* "${root:?}"/usr/share/info/* \
        "${root:?}"/usr/share/locale/* "${root:?}"/usr/share/lintian "${root:?}"/debootstrap \
        "${root:?}"/etc/resolv.conf "${root:?}"/etc/hostname "${root:?}"/root/.bash_history
    find "$root/var/log" -type f -delete
    printf '%s\n' '127.0.0.1 localhost' '::1 localhost ip6-localhost ip6-loopback' >"$root/etc/hosts"
}

# ---------------------------------------------------------------------------------------------
# Parts of the Kafka image.

# Debian's minimal base with the packages above, the kafka user, and no caches or docs.
build_rootfs() {
    local root=$work/out/rootfs java
    log debootstrap --variant=minbase --arch="$deb_arch" \
        --include="$(IFS=,; echo "${rootfs_packages[*]}")" \
        "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR"
    # The user Strimzi's images run as: uid 1001 in group 0 (root), with a home directory.
    # Bash as its shell, as on UBI (Debian's useradd would pick /bin/sh).
    log chroot "$root" useradd -r -m -u 1001 -g 0 -s /bin/bash kafka
    # Private home, as useradd makes it on UBI.
    chmod 0700 "$root/home/kafka"
    [[ -x $root/usr/bin/tini ]] || { note "/usr/bin/tini missing"; false; }
    if awk -v prefix="$root/" 'index($2, prefix) == 1' /proc/self/mounts | grep -q .; then
        note "debootstrap left file systems mounted in $root"
        false
    fi
    java=$(chroot "$root" readlink -f /usr/bin/java)
    [[ $java == /usr/lib/jvm/*/bin/java ]] || { note "unexpected java path $java"; false; }
    echo "JAVA_HOME=${java%/bin/java}" >"$work/out/java.env"
    strip_root "$root"
    log in_root "$root" 1001:0 /usr/bin/java -version
    log in_root "$root" 1001:0 /usr/bin/tini --version
    # What the JVM left (its perf data directory).
    rm -rf "${root:?}"/tmp/*
    note "root filesystem: $(du -sm "$root" | cut -f1) MB"
}

# Kafka's distribution libs/, resolved from Maven Central (kafka-dist-pom.xml).
build_kafka_dist() {
    local jar lacking=$kafka_version substitute
    # The modules Maven Central lacks at this version come at the substitute KAFKA_SUBSTITUTES names.
    for substitute in ${KAFKA_SUBSTITUTES//,/ }; do
        [[ ${substitute%%:*} == "$kafka_version" ]] && lacking=${substitute#*:}
    done
    cp "$here/kafka-dist-pom.xml" "$work/pom.xml"
    cd "$work"
    mvn_run -f "$work/pom.xml" "-Dkafka.version=$kafka_version" "-Dkafka.lacking.version=$lacking" \
        "-Dscala.binary.version=$SCALA_BINARY_VERSION" "-Dlog4j2.version=$LOG4J2_VERSION" \
        "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
        -DincludeScope=runtime "-DoutputDirectory=$work/out/libs"
    for jar in "kafka_$SCALA_BINARY_VERSION-$kafka_version.jar" "kafka-server-$kafka_version.jar" \
        "kafka-clients-$kafka_version.jar" "kafka-tools-$kafka_version.jar" \
        "connect-runtime-$kafka_version.jar" "kafka-streams-$kafka_version.jar" \
        "log4j-core-$LOG4J2_VERSION.jar" "log4j-slf4j-impl-$LOG4J2_VERSION.jar"; do
        [[ -f $work/out/libs/$jar ]] || { note "missing $jar"; false; }
    done
    note "kafka libs: $(find "$work/out/libs" -name '*.jar' | wc -l) jars (modules lacking at $kafka_version taken at $lacking)"
    cd "$here"
}

# mvn_package <source dir> <jar>: `mvn package` of a copy of one of our Maven projects (tests
# not compiled), its jar copied to the stage's output.
mvn_package() {
    cp -r "$1" "$work/src"
    chmod -R u+w "$work/src"
    rm -rf "$work/src/target"
    cd "$work/src"
    mvn_run -f "$work/src/pom.xml" package -Dmaven.test.skip=true
    cp "target/$2" "$work/out/$2"
    cd "$here"
}

# Our broker-state agent (CONTRACT.md 3.6), built with Maven from kafka/agent (the JDK and Maven
# Central's build plugins only; no library dependency). Compiled for Java 17, the image's JRE.
build_kafka_agent() {
    mvn_package "$kafka_own/agent" "$agent_jar"
    python3 - "$work/out/$agent_jar" >>"$current_log" 2>&1 <<'EOF'
import sys, zipfile
jar = zipfile.ZipFile(sys.argv[1])
manifest = jar.read("META-INF/MANIFEST.MF").decode()
assert "Premain-Class: io.strimzi.rs.agent.BrokerStateAgent" in manifest, manifest
assert "io/strimzi/rs/agent/BrokerStateAgent.class" in jar.namelist()
print("the agent's manifest names its premain class")
EOF
}

# The Cruise Control stand-in's broker-side metrics reporter (CONTRACT.md 5.5), our class under
# Cruise Control's name, built with Maven from standins/cruise-control/metrics-reporter against
# kafka-clients from Maven Central (provided: the brokers' class path has it). Java 17.
build_cc_reporter() {
    mvn_package "$standins/cruise-control/metrics-reporter" "$reporter_jar"
}

# The third-party libraries of Kafka's libs/ (CONTRACT.md 9), from our own list
# (kafka-thirdparty-pom.xml: Maven Central coordinates, versions pinned, substitutions for
# versions Maven Central lacks written down in it).
build_thirdparty_libs() {
    cp "$here/kafka-thirdparty-pom.xml" "$work/pom.xml"
    cd "$work"
    mvn_run -f "$work/pom.xml" \
        "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
        -DincludeScope=runtime "-DoutputDirectory=$work/out/libs"
    note "third-party libs: $(find "$work/out/libs" -name '*.jar' | wc -l) jars"
    cd "$here"
}

# The Prometheus JMX exporter Java agent from Maven Central: the newest release up to the
# pinned one (a version range), because Maven Central stops before the release Strimzi
# downloads from the project's own release page. A difference is printed and kept in
# <stage>/substitutions.txt.
build_jmx_exporter() {
    local jar
    cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.strimzi.rs.testenv</groupId>
  <artifactId>jmx-exporter</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.prometheus.jmx</groupId>
      <artifactId>jmx_prometheus_javaagent</artifactId>
      <version>[0,$JMX_EXPORTER_VERSION]</version>
    </dependency>
  </dependencies>
</project>
EOF
    cd "$work"
    mvn_run -f "$work/pom.xml" \
        "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
        -DexcludeTransitive=true "-DoutputDirectory=$work/out"
    jar=$(cd "$work/out" && echo jmx_prometheus_javaagent-*.jar)
    [[ -f $work/out/$jar ]] || { note "no jmx_prometheus_javaagent jar"; false; }
    : >"$work/out/substitutions.txt"
    if [[ $jar != "jmx_prometheus_javaagent-$JMX_EXPORTER_VERSION.jar" ]]; then
        echo "jmx_prometheus_javaagent $JMX_EXPORTER_VERSION: ${jar#jmx_prometheus_javaagent-} instead" |
            sed 's/\.jar instead$/ instead/' >"$work/out/substitutions.txt"
        echo "jmx-exporter: not on Maven Central at Strimzi's version: $(cat "$work/out/substitutions.txt")"
    fi
    cd "$here"
}
# ---------------------------------------------------------------------------------------------
# The Rust binaries of the images, from one cargo invocation: the Dockerfile's build stage
# script (static binaries; oci.py dockerfile reads the script's command and the final stage's
# settings) with our three stand-ins added to it. Updates in place (a binary is only written
# when it changed, so an up-to-date run writes nothing; the images are checked against the
# binaries' contents, not their times)
#   <stage>/root/          the operator image's root (packed only with --with-operator)
#   <stage>/config.json    the operator image's runtime settings
#   <stage>/standins/      the stand-ins' binaries, for the Kafka and bridge images
build_binaries() {
    local stage=$1
    local -a command with_standins=()
    mkdir -p "$stage"
    mapfile -t command < <(python3 "$here/oci.py" dockerfile "$repo/Dockerfile" --config-out "$stage/config.json")
    ((${#command[@]} > 0)) || fail "no build command read from $repo/Dockerfile"
    $operator_only || with_standins=(--also "$cc_standin" --also "$exporter_standin" --also "$bridge_standin"
        --also-into "$stage/standins")
    cd "$repo"
    log env CARGO_TARGET_DIR="$operator_target" STRIMZI_OPERATOR_PROFILE="$operator_profile" "${command[@]}" \
        "${with_standins[@]}" "$stage/root"
    cd "$here"
}

# standin_note <file> <program> <binary> <crate> <contract section>: the note next to a
# stand-in in an image, saying what it is and what it is not.
standin_note() {
    printf '%s\n' \
        "$3 is a contract stand-in for $2; it is not $2." \
        "It is strimzi-rs code (the workspace crate $4), written for the images of the" \
        "strimzi-rs test environment: it reads what $2 reads in the pods the operator" \
        "creates and serves what the operator, the probes and the dashboards use of it, as" \
        "tests/testenv/images/CONTRACT.md $5 describes; what it leaves out is listed there." >"$1"
}

# refuses_to_start <root> <exit status> <text> <command...>: runs a start script or program in
# <root> as uid 1001 with nothing of a pod around it; it must stop with that exit status and a
# message containing <text> (what it found missing). 126 or 127 would mean it could not run.
refuses_to_start() {
    local root=$1 expected=$2 text=$3 rc=0
    shift 3
    in_root "$root" 1001:0 /usr/bin/env -i "PATH=$image_path" timeout 20 "$@" >"$work/start.out" 2>&1 || rc=$?
    cat "$work/start.out" >>"$current_log"
    note "$* exited with $rc"
    if ((rc != expected)) || ! grep -qF "$text" "$work/start.out"; then
        note "$* did not stop with exit status $expected naming $text"
        false
    fi
}

# The Kafka image: the root filesystem plus /opt laid out as Strimzi's Kafka Dockerfile does.
build_kafka_image() {
    local root=$work/rootfs kafka_home=/opt/kafka java_home script jar
    java_home=$(sed -n 's/^JAVA_HOME=//p' "$stages/rootfs/java.env")
    # Hard links: the stage's files are only read, and this copy takes no space.
    cp -al "$stages/rootfs/rootfs" "$root"
    local k=$root$kafka_home
    mkdir -p "$k/libs" "$k/bin" "$k/config" "$k/plugins"
    # Kafka's distribution: libs/ from Maven Central; bin/ our launcher and tool wrappers.
    cp "$stages/kafka-dist-$kafka_version/libs/"*.jar "$k/libs/"
    install -m 0755 "$kafka_own/bin/kafka-run-class.sh" "$k/bin/"
    local name class heap alternative
    # The classes in libs/, for the tools whose class moved between Kafka versions.
    for jar in "$k/libs/"*.jar; do unzip -Z1 "$jar"; done >"$work/classes"
    while read -r name class heap; do
        [[ -n $name && $name != \#* ]] || continue
        # a|b: the first of these classes that libs/ has.
        for alternative in ${class//|/ }; do
            grep -qxF "${alternative//.//}.class" "$work/classes" && class=$alternative && break
        done
        [[ $class != *'|'* ]] || { note "$name: none of $class is in libs/"; false; }
        {
            echo '#!/usr/bin/env bash'
            echo "# $name: Kafka's $class through our launcher (tests/testenv/images/kafka/bin/tools.list)."
            if [[ -n $heap ]]; then
                echo "export KAFKA_HEAP_OPTS=\${KAFKA_HEAP_OPTS:-\"${heap//_/ }\"}"
            fi
            echo "exec \"\$(dirname \"\$0\")/kafka-run-class.sh\" $class \"\$@\""
        } >"$k/bin/$name"
        chmod 0755 "$k/bin/$name"
    done <"$kafka_own/bin/tools.list"
    # Licence texts: Kafka's own LICENSE and NOTICE, as its clients jar carries them, and a note
    # of ours at the end of NOTICE.
    unzip -p "$k/libs/kafka-clients-$kafka_version.jar" LICENSE >"$k/LICENSE"
    unzip -p "$k/libs/kafka-clients-$kafka_version.jar" NOTICE >"$k/NOTICE"
    [[ -s $k/LICENSE && -s $k/NOTICE ]] || { note "kafka-clients-$kafka_version.jar has no LICENSE or NOTICE"; false; }
    printf '\n%s\n%s\n%s\n%s\n' \
        "libs/ holds Apache Kafka $kafka_version and the libraries it and this image need, as published" \
        'on Maven Central, each under the licence in its own jar. The scripts in this folder and in' \
        "bin/, the broker-state agent and the Cruise Control stand-in's metrics reporter" \
        "(libs/$reporter_jar) are strimzi-rs code." >>"$k/NOTICE"
    # A console-only Log4j2 configuration for tools run by hand with KAFKA_LOG4J_OPTS pointing
    # at it (Strimzi's scripts always pass their own configuration).
    printf '%s\n' \
        'rootLogger.level = WARN' \
        'rootLogger.appenderRef.stderr.ref = STDERR' \
        'appender.stderr.type = Console' \
        'appender.stderr.name = STDERR' \
        'appender.stderr.target = SYSTEM_ERR' \
        'appender.stderr.layout.type = PatternLayout' \
        'appender.stderr.layout.pattern = [%d] %p %m (%c)%n' >"$k/config/tools-log4j2.properties"
    # Our start, readiness and liveness scripts at the top of KAFKA_HOME (Strimzi's paths).
    for script in kafka_run.sh kafka_connect_run.sh kafka_readiness.sh kafka_liveness.sh; do
        install -m 0755 "$kafka_own/$script" "$k/"
    done
    install -m 0644 "$kafka_own/kafka_common.sh" "$k/"
    # Our agent and the third-party libraries.
    cp "$stages/kafka-agent/$agent_jar" "$k/libs/"
    cp "$stages/thirdparty-libs/libs/"*.jar "$k/libs/"
    # The Cruise Control stand-in's metrics reporter, loaded by the brokers (CONTRACT.md 5.5).
    cp "$stages/cc-reporter/$reporter_jar" "$k/libs/"
    # The Prometheus JMX exporter agent.
    mkdir -p "$root/opt/prometheus-jmx-exporter"
    install -m 0644 "$stages/jmx-exporter"/jmx_prometheus_javaagent-*.jar "$root/opt/prometheus-jmx-exporter/"
    # Our contract stand-ins for Kafka Exporter and Cruise Control (CONTRACT.md 6 and 5.7) at
    # the paths Strimzi's image has, with their start scripts and a note saying what they are.
    # The exporter is also installed as the program Strimzi's image has there.
    local exporter=$root/opt/kafka-exporter cc=$root/opt/cruise-control
    mkdir -p "$exporter" "$cc"
    install -m 0755 "$stages/binaries/standins/$exporter_standin" "$exporter/"
    ln -s "$exporter_standin" "$exporter/kafka_exporter"
    install -m 0755 "$standins/kafka-exporter/scripts/kafka_exporter_run.sh" "$exporter/"
    standin_note "$exporter/STAND-IN" "Kafka Exporter" "$exporter_standin" standins/kafka-exporter "section 6"
    install -m 0755 "$stages/binaries/standins/$cc_standin" "$cc/"
    install -m 0755 "$standins/cruise-control/scripts/cruise_control_run.sh" \
        "$standins/cruise-control/scripts/cruise_control_healthcheck.sh" "$cc/"
    standin_note "$cc/STAND-IN" "Cruise Control" "$cc_standin" standins/cruise-control "section 5"
    # As in Strimzi's image: /opt owned by root, readable (not writable) by everyone else.
    chown -R 0:0 "$root/opt"
    find "$root/opt" -type d -exec chmod 0755 {} +
    find "$root/opt" -type f \( -name '*.jar' -o -name STAND-IN \) -exec chmod 0644 {} +
    find "$root/opt" -exec touch -h -d "@$IMAGE_EPOCH" {} +

    # Jars present in more than one version (Strimzi's build checks the same for classpath
    # collisions): listed in the log, not an error.
    note "artifacts in libs/ with more than one version:"
    (cd "$k/libs" && find . -name '*.jar' -printf '%f\n' | sed -E 's/-[0-9][^-]*(-[A-Za-z][A-Za-z0-9.]*)?\.jar$//' | sort | uniq -d) >>"$current_log"
    note "libs: $(find "$k/libs" -name '*.jar' | wc -l) jars, $(du -sm "$k/libs" | cut -f1) MB"

    # Smoke tests inside the image, as the kafka user: Kafka's launcher with these libs on this
    # JRE, and the shell scripts parse.
    log in_root "$root" 1001:0 /usr/bin/env -i "PATH=$image_path" "JAVA_HOME=$java_home" \
        HOME=/home/kafka "KAFKA_HOME=$kafka_home" \
        bash -c "cd / && $kafka_home/bin/kafka-storage.sh random-uuid && $kafka_home/bin/kafka-topics.sh --version"
    for script in "$k"/*.sh "$k"/bin/*.sh "$root"/opt/kafka-exporter/*.sh "$root"/opt/cruise-control/*.sh; do
        log chroot "$root" bash -n "${script#"$root"}"
    done
    # Every tool wrapper's main class and every class a generated server.config can name
    # (CONTRACT.md 3.5) is in libs/.
    python3 - "$k/libs" "$kafka_own/bin/tools.list" >>"$current_log" 2>&1 <<'EOF'
import os, sys, zipfile
libs, tools = sys.argv[1], sys.argv[2]
names = set()
for jar in os.listdir(libs):
    names.update(zipfile.ZipFile(os.path.join(libs, jar)).namelist())
wanted = [line.split()[1] for line in open(tools) if line.strip() and not line.startswith("#")]
wanted += ["io.strimzi.kafka.KubernetesSecretConfigProvider",
           "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
           "org.apache.kafka.common.config.provider.FileConfigProvider",
           "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
           "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
           "org.apache.kafka.common.metrics.JmxReporter",
           "io.strimzi.kafka.quotas.StaticQuotaCallback",
           "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager",
           "io.strimzi.rs.agent.BrokerStateAgent",
           "com.linkedin.kafka.cruisecontrol.metricsreporter.CruiseControlMetricsReporter"]
missing = [c for c in wanted if all(a.replace(".", "/") + ".class" not in names for a in c.split("|"))]
assert not missing, f"classes not in libs/: {missing}"
print(f"{len(wanted)} classes found in libs/")
EOF
    # The stand-ins run on this root as uid 1001 through their start scripts, and outside a
    # pod stop on the first variable they miss.
    refuses_to_start "$root" 2 KAFKA_EXPORTER_KAFKA_SERVER /opt/kafka-exporter/kafka_exporter_run.sh
    refuses_to_start "$root" 1 STRIMZI_KAFKA_BOOTSTRAP_SERVERS /opt/cruise-control/cruise_control_run.sh
    # What the smoke tests left, and /tmp's time as it was, so equal inputs give equal bytes.
    rm -rf "${root:?}"/tmp/*
    touch -r "$stages/rootfs/rootfs/tmp" "$root/tmp"

    # Runtime settings of Strimzi's image: user 1001, KAFKA_HOME as working directory, the
    # variables its Dockerfiles set, and the shell command of its UBI base (no entry point:
    # the cluster operator's pods name /opt/kafka/kafka_run.sh as their command). One addition,
    # LANG=C.UTF-8: Java 17 takes its default charset from the locale (ASCII without one), where
    # Strimzi's Java 21 uses UTF-8 regardless.
    cat >"$work/config.json" <<EOF
{
  "User": "1001",
  "WorkingDir": "$kafka_home",
  "Env": [
    "PATH=$image_path",
    "container=oci",
    "JAVA_HOME=$java_home",
    "LANG=C.UTF-8",
    "KAFKA_HOME=$kafka_home",
    "KAFKA_VERSION=$kafka_version",
    "STRIMZI_VERSION=$STRIMZI_VERSION",
    "KAFKA_EXPORTER_HOME=/opt/kafka-exporter",
    "JMX_EXPORTER_HOME=/opt/prometheus-jmx-exporter",
    "CRUISE_CONTROL_HOME=/opt/cruise-control"
  ],
  "Cmd": ["/bin/bash"],
  "Labels": {
    "name": "kafka",
    "version": "$STRIMZI_VERSION-$kafka_version",
    "release": "$STRIMZI_VERSION",
    "org.opencontainers.image.description": "Kafka $kafka_version image with the layout and contract of Strimzi's, for the strimzi-rs test environment (Debian $DEBIAN_SUITE, $JAVA_PACKAGE, our scripts and agent)",
    "io.strimzi.rs.stand-ins": "Cruise Control (/opt/cruise-control) and Kafka Exporter (/opt/kafka-exporter) are contract stand-ins written for strimzi-rs, not the real programs: see STAND-IN in each folder"
  }
}
EOF
    pack_image "$root" "$work/config.json" "$kafka_image"
    remove "$root"
}


# ---------------------------------------------------------------------------------------------
# The HTTP Bridge image, quay.io/strimzi/kafka-bridge: our bridge stand-in (CONTRACT.md 8), a
# static program, on the Kafka image's root filesystem without Java, with the user, paths and
# settings of Strimzi's bridge image that the pods rely on.
build_bridge_image() {
    local root=$work/rootfs home=/opt/strimzi
    # A copy of its own, not hard links: purging packages rewrites files in place.
    cp -a "$stages/rootfs/rootfs" "$root"
    # No Java: the runtime and the two packages that came for it alone are purged (the
    # libraries they brought stay), then the links left dangling (to manual pages the root
    # filesystem lost) are removed.
    log in_root "$root" 0:0 dpkg --purge "$JAVA_PACKAGE" ca-certificates-java java-common
    log chroot "$root" find /usr/bin /etc/alternatives -xtype l -print -delete
    if [[ -e $root/usr/lib/jvm || -e $root/usr/bin/java ]]; then
        note "Java is left in the bridge image's root"
        false
    fi
    # Strimzi's bridge image runs as user strimzi: the Kafka root filesystem's kafka user renamed
    # (same uid 1001 and group 0).
    sed -i -e 's#^kafka:\(.*\):/home/kafka:#strimzi:\1:/home/strimzi:#' "$root/etc/passwd"
    sed -i -e 's#^kafka:#strimzi:#' "$root/etc/shadow"
    mv "$root/home/kafka" "$root/home/strimzi"
    grep -q '^strimzi:x:1001:0:' "$root/etc/passwd" || { note "no strimzi user in /etc/passwd"; false; }
    mkdir -p "$root$home/bin/docker"
    install -m 0755 "$stages/binaries/standins/$bridge_standin" "$root$home/bin/"
    install -m 0755 "$standins/bridge/scripts/kafka_bridge_run.sh" "$root$home/bin/docker/"
    standin_note "$root$home/STAND-IN" "Strimzi's HTTP Bridge" "$bridge_standin" standins/bridge "section 8"
    chmod 0644 "$root$home/STAND-IN"
    chown -R 0:0 "$root/opt"
    find "$root/opt" -type d -exec chmod 0755 {} +
    find "$root/opt" "$root/home/strimzi" -exec touch -h -d "@$IMAGE_EPOCH" {} +
    # Smoke tests as the strimzi user: the start script parses, stops without its mounted
    # configuration, and the stand-in names a configuration file it cannot read.
    log chroot "$root" bash -n "$home/bin/docker/kafka_bridge_run.sh"
    refuses_to_start "$root" 1 "$home/custom-config/application.properties" "$home/bin/docker/kafka_bridge_run.sh"
    refuses_to_start "$root" 2 /nonexistent.properties "$home/bin/$bridge_standin" --config-file=/nonexistent.properties
    # What the smoke tests left, and /tmp's time as it was, so equal inputs give equal bytes.
    rm -rf "${root:?}"/tmp/*
    touch -r "$stages/rootfs/rootfs/tmp" "$root/tmp"
    # Runtime settings of Strimzi's bridge image that matter here: user 1001, /opt/strimzi as
    # working directory and STRIMZI_HOME, the version variable, and the start script as the
    # command (the pods give it as args). No JAVA_HOME: there is no Java.
    cat >"$work/config.json" <<EOF
{
  "User": "1001",
  "WorkingDir": "$home",
  "Env": [
    "PATH=$image_path",
    "container=oci",
    "LANG=C.UTF-8",
    "STRIMZI_KAFKA_BRIDGE_VERSION=$BRIDGE_VERSION",
    "STRIMZI_HOME=$home"
  ],
  "Cmd": ["$home/bin/docker/kafka_bridge_run.sh"],
  "Labels": {
    "name": "kafka-bridge",
    "version": "$BRIDGE_VERSION",
    "org.opencontainers.image.description": "HTTP Bridge image with the name and paths of Strimzi's $BRIDGE_VERSION, for the strimzi-rs test environment (Debian $DEBIAN_SUITE)",
    "io.strimzi.rs.stand-ins": "the bridge ($home/bin/$bridge_standin) is a contract stand-in written for strimzi-rs, not Strimzi's HTTP Bridge: see $home/STAND-IN"
  }
}
EOF
    pack_image "$root" "$work/config.json" "$BRIDGE_IMAGE"
    remove "$root"
}

# ---------------------------------------------------------------------------------------------
# The Buildah image a KafkaConnect build runs (STRIMZI_DEFAULT_BUILDAH_IMAGE's name): Debian's
# minimal base with Debian's buildah, run as root with `chroot` isolation (BUILDAH_ISOLATION,
# as Strimzi's image sets it: a builder pod has no privileges to run containers of its own).
build_buildah_image() {
    local root=$work/root
    # buildah's dependencies do not configure in debootstrap's own order (containers-common
    # fails): the base first, then apt inside it.
    log debootstrap --variant=minbase --arch="$deb_arch" "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    log in_root "$root" 0:0 apt-get update
    log in_root "$root" 0:0 env DEBIAN_FRONTEND=noninteractive apt-get install -y \
        --no-install-recommends "${buildah_packages[@]}"
    if awk -v prefix="$root/" 'index($2, prefix) == 1' /proc/self/mounts | grep -q .; then
        note "debootstrap left file systems mounted in $root"
        false
    fi
    log in_root "$root" 0:0 buildah --version
    [[ -f $root/etc/containers/policy.json ]] || { note "/etc/containers/policy.json missing"; false; }
    strip_root "$root"
    note "root filesystem: $(du -sm "$root" | cut -f1) MB"
    find "$root" -exec touch -h -d "@$IMAGE_EPOCH" {} +
    cat >"$work/config.json" <<EOF
{
  "User": "0",
  "Env": [
    "PATH=$image_path",
    "container=oci",
    "BUILDAH_ISOLATION=chroot"
  ],
  "Cmd": ["/bin/bash"],
  "Labels": {
    "org.opencontainers.image.description": "Buildah image with the name of Strimzi's $STRIMZI_VERSION, for the strimzi-rs test environment (Debian $DEBIAN_SUITE's buildah)"
  }
}
EOF
    pack_image "$root" "$work/config.json" "$BUILDAH_IMAGE"
    remove "$root"
}

# ---------------------------------------------------------------------------------------------
# The Maven builder image, the first stage of a Connect build with `maven` artifacts
# (STRIMZI_DEFAULT_MAVEN_BUILDER's name): the Kafka image's root filesystem (a JRE, curl) with
# Debian's Maven, run as root. Not imported into the nodes: the Connect build test pushes it to
# the environment's registry, where Buildah pulls it from.
build_maven_builder_image() {
    local root=$work/root
    cp -a "$stages/rootfs/rootfs" "$root"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # Maven's post-installation links its manual page there (the root filesystem has no manuals).
    mkdir -p "$root/usr/share/man/man1"
    log in_root "$root" 0:0 apt-get update
    log in_root "$root" 0:0 env DEBIAN_FRONTEND=noninteractive apt-get install -y \
        --no-install-recommends maven
    log in_root "$root" 0:0 mvn --version
    strip_root "$root"
    find "$root" -exec touch -h -d "@$IMAGE_EPOCH" {} +
    cat >"$work/config.json" <<EOF
{
  "User": "0",
  "Env": [
    "PATH=$image_path",
    "container=oci",
    "JAVA_HOME=$(sed -n 's/^JAVA_HOME=//p' "$stages/rootfs/java.env")"
  ],
  "Cmd": ["/bin/bash"],
  "Labels": {
    "org.opencontainers.image.description": "Maven builder image with the name of Strimzi's $STRIMZI_VERSION, for the strimzi-rs test environment (Debian $DEBIAN_SUITE's maven)"
  }
}
EOF
    pack_image "$root" "$work/config.json" "$MAVEN_BUILDER_IMAGE"
    remove "$root"
}

# A Maven repository for the Connect build test's `maven` artifact (MAVEN_TEST_ARTIFACT), which
# the test serves inside the node network as the artifact's mirror: what the Dockerfile's
# `mvn dependency:copy-dependencies` on that artifact's POM needs (the plugin, its own
# dependencies, the artifact's), resolved from Maven Central by the same Maven version as the
# builder image's, and the artifact's POM and JAR.
build_maven_repo() {
    local group artifact version path
    IFS=: read -r group artifact version <<<"$MAVEN_TEST_ARTIFACT"
    path=${group//.//}/$artifact/$version/$artifact-$version
    cd "$work"
    mvn_run "-Dmaven.repo.local=$work/out/repository" \
        "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:get" \
        "-Dartifact=$MAVEN_TEST_ARTIFACT" -Dtransitive=false
    cp "$work/out/repository/$path.pom" "$work/pom.xml"
    mvn_run "-Dmaven.repo.local=$work/out/repository" dependency:copy-dependencies \
        "-DoutputDirectory=$work/deps" -f "$work/pom.xml"
    [[ -f $work/out/repository/$path.jar ]] || { note "$path.jar missing"; false; }
    note "maven repository: $(du -sm "$work/out/repository" | cut -f1) MB, $(find "$work/deps" -name '*.jar' | wc -l) dependencies"
    cd "$here"
}

# ---------------------------------------------------------------------------------------------
# The operator image (only with --with-operator), from the workspace's Dockerfile: the root and
# settings of the binaries' part, smoke-tested, in one layer. No registry, no daemon.
build_operator_image() {
    local root=$work/root program rc chroot_program
    # A copy: the files' times are changed for packing.
    cp -a "$stages/binaries/root" "$root"
    # Each program starts in this root as uid 1001 with an empty environment and stops on its
    # missing configuration (exit 1); 126 or 127 means it could not be run at all.
    chroot_program=$(command -v chroot)
    for program in cluster_operator_run.sh topic_operator_run.sh user_operator_run.sh kafka_init_run.sh; do
        rc=0
        log timeout 20 env -i "$chroot_program" --userspec=1001:0 "$root" "/opt/strimzi/bin/$program" || rc=$?
        note "$program exited with $rc"
        ((rc == 1)) || { note "$program did not stop on its missing configuration"; false; }
    done
    find "$root" -exec touch -h -d "@$IMAGE_EPOCH" {} +
    pack_image "$root" "$stages/binaries/config.json" "$operator_image" --owner=0 --group=0
    remove "$root"
}

# ---------------------------------------------------------------------------------------------

[[ -n $KUBERNETES_VERSION ]] || fail "KUBERNETES_VERSION not found in $here/../versions.env"
need sha256sum "apt-get install -y coreutils"
need flock "apt-get install -y util-linux"
need python3 "apt-get install -y python3"
need "${CARGO:-cargo}" "install Rust (https://rustup.rs) or set CARGO to the cargo program"
need readelf "apt-get install -y binutils"
# The binaries' target folder (static binaries for an explicit target triple): kept in the
# cache so that a fresh checkout rebuilds only the workspace's crates.
operator_target=${STRIMZI_OPERATOR_TARGET_DIR:-$cache/operator-target}
# The same code as the Dockerfile's release build, compiled without optimisation: a fraction
# of the time on 2 cores (the tests' clusters are small, and the operators the tests start on
# the host are such builds too).
operator_profile=${STRIMZI_TESTENV_OPERATOR_PROFILE:-dev}
if $with_operator; then
    # The image is tagged with the workspace version ([workspace.package] in Cargo.toml).
    workspace_version=$(bash "$repo/deploy/workspace-version.sh") || fail "the workspace version is unknown"
    operator_image=$OPERATOR_IMAGE_REPOSITORY:$workspace_version
fi

mkdir -p "$images" "$stages" "$logs"
# One builder at a time per cache; parallel callers wait here, then find the archives cached.
exec 9>"$images/.lock"
flock 9
# Leftovers of interrupted builds.
for leftover in "$images"/.build-*; do
    if [[ -e $leftover ]]; then remove "$leftover"; fi
done

# The binaries first, on every run: cargo decides what is out of date, and the images record
# what it gives. Quiet under STRIMZI_TESTENV_QUIET=1 (a warm start of the test environment
# prints nothing) unless it took a while.
quiet=false
[[ ${STRIMZI_TESTENV_QUIET:-} == 1 ]] && quiet=true
$quiet || echo "Rust binaries (the Dockerfile's build stage$($operator_only || echo " and the stand-ins"); cargo, profile $operator_profile): compiling what changed (cold: about 5 minutes on 2 cores for dev; seconds when up to date)"
current_component=binaries
current_log=$logs/images-binaries.log
: >"$current_log"
build_started=$SECONDS
build_binaries "$stages/binaries"
current_component=""
took=$((SECONDS - build_started))
if ! $quiet || ((took >= 10)); then
    echo "Rust binaries: ready in ${took}s"
fi

# cached <what>: says a part is already built (not with STRIMZI_TESTENV_QUIET=1, which the test
# environment sets so that a warm start prints nothing).
cached() {
    $quiet || echo "$1: cached"
}

# image_arch: the machine's architecture as the images name it: deb_arch (Debian's, for
# debootstrap) and oci_arch (the images' platform).
image_arch() {
    need tar "apt-get install -y tar"
    need gzip "apt-get install -y gzip"
    need dpkg "this script needs a Debian-based machine (dpkg)"
    deb_arch=$(dpkg --print-architecture)
    case $deb_arch in
        amd64 | arm64) oci_arch=$deb_arch ;;
        *) fail "unsupported architecture $deb_arch (amd64 and arm64 are supported)" ;;
    esac
}

# operator_image_part: packs the operator archive from the binaries' root and settings unless
# the archive records these inputs already.
operator_image_part() {
    local operator_inputs
    operator_inputs="image=$operator_image epoch=$IMAGE_EPOCH
root=$(cd "$stages/binaries/root" && find . -printf '%p %m %l\n' | LC_ALL=C sort | sha256sum | cut -c1-64) files=$(cd "$stages/binaries/root" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-64)
config=$(sha256sum "$stages/binaries/config.json" | cut -c1-64) oci.py=$oci_hash code=$(code_hash build_operator_image pack_image)"
    if is_current "$operator_archive.inputs" "$operator_inputs" && [[ -f $operator_archive ]]; then
        cached "operator image $operator_image"
    else
        [[ $(id -u) -eq 0 ]] || fail "building the operator image needs root (chroot for its smoke test)"
        need chroot "apt-get install -y coreutils"
        need timeout "apt-get install -y coreutils"
        start operator "operator image $operator_image" "10 seconds"
        build_operator_image
        finish_archive "$operator_archive" "$operator_inputs" "operator image"
    fi
}

oci_hash=$(sha256sum "$here/oci.py" | cut -c1-64)
# --operator-only: that image, and nothing of the test images is looked at.
if $operator_only; then
    image_arch
    operator_image_part
    $quiet || echo "operator image: $operator_archive"
    exit 0
fi

# Inputs of every part: a change to any of them rebuilds that part and what uses it.
pause_inputs="image=$PAUSE_IMAGE kubernetes=$KUBERNETES_VERSION epoch=$IMAGE_EPOCH
oci.py=$oci_hash code=$(code_hash build_pause pack_image)"
rootfs_inputs="suite=$DEBIAN_SUITE mirror=$DEBIAN_MIRROR packages=${rootfs_packages[*]}
code=$(code_hash build_rootfs in_root strip_root)"
kafka_agent_inputs="jar=$agent_jar sources=$(tree_hash "$kafka_own" agent/pom.xml agent/src)
code=$(code_hash build_kafka_agent mvn_package mvn_run)"
reporter_inputs="jar=$reporter_jar sources=$(tree_hash "$standins/cruise-control" metrics-reporter/pom.xml metrics-reporter/src/main)
code=$(code_hash build_cc_reporter mvn_package mvn_run)"
thirdparty_inputs="pom=$(sha256sum "$here/kafka-thirdparty-pom.xml" | cut -c1-64) plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION
code=$(code_hash build_thirdparty_libs mvn_run)"
jmx_inputs="jmx-exporter=$JMX_EXPORTER_VERSION plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION code=$(code_hash build_jmx_exporter mvn_run)"
standin_code="code=$(code_hash standin_note refuses_to_start pack_image in_root) oci.py=$oci_hash"
# kafka_dist_inputs, kafka_inputs: the inputs of kafka_version's libs and image.
kafka_dist_inputs() {
    echo "kafka=$kafka_version substitutes=$KAFKA_SUBSTITUTES scala=$SCALA_BINARY_VERSION log4j2=$LOG4J2_VERSION plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION
pom=$(sha256sum "$here/kafka-dist-pom.xml" | cut -c1-64) code=$(code_hash build_kafka_dist mvn_run)"
}
kafka_inputs() {
    echo "image=$kafka_image strimzi=$STRIMZI_VERSION kafka=$kafka_version epoch=$IMAGE_EPOCH
rootfs=$(echo "$rootfs_inputs" | sha256sum | cut -c1-64)
kafka-dist=$(kafka_dist_inputs | sha256sum | cut -c1-64)
kafka-agent=$(echo "$kafka_agent_inputs" | sha256sum | cut -c1-64)
cc-reporter=$(echo "$reporter_inputs" | sha256sum | cut -c1-64)
thirdparty-libs=$(echo "$thirdparty_inputs" | sha256sum | cut -c1-64)
jmx-exporter=$(echo "$jmx_inputs" | sha256sum | cut -c1-64)
scripts=$kafka_scripts
stand-ins=$kafka_standins
$standin_code code=$(code_hash build_kafka_image)"
}
kafka_scripts=$(tree_hash "$kafka_own" kafka_run.sh kafka_connect_run.sh kafka_readiness.sh kafka_liveness.sh kafka_common.sh bin)
kafka_standins="$(tree_hash "$stages/binaries/standins" "$cc_standin" "$exporter_standin") $(tree_hash "$standins" cruise-control/scripts kafka-exporter/scripts)"
bridge_image_inputs="image=$BRIDGE_IMAGE epoch=$IMAGE_EPOCH
rootfs=$(echo "$rootfs_inputs" | sha256sum | cut -c1-64)
stand-in=$(tree_hash "$stages/binaries/standins" "$bridge_standin") $(tree_hash "$standins" bridge/scripts)
$standin_code code=$(code_hash build_bridge_image)"
buildah_inputs="image=$BUILDAH_IMAGE suite=$DEBIAN_SUITE mirror=$DEBIAN_MIRROR packages=${buildah_packages[*]}
epoch=$IMAGE_EPOCH oci.py=$oci_hash code=$(code_hash build_buildah_image in_root strip_root pack_image)"
maven_builder_inputs="image=$MAVEN_BUILDER_IMAGE epoch=$IMAGE_EPOCH
rootfs=$(echo "$rootfs_inputs" | sha256sum | cut -c1-64)
oci.py=$oci_hash code=$(code_hash build_maven_builder_image in_root strip_root pack_image)"
maven_repo_inputs="artifact=$MAVEN_TEST_ARTIFACT plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION code=$(code_hash build_maven_repo mvn_run)"

pause_ready=false
kafka_ready=true
bridge_ready=false
buildah_ready=false
maven_builder_ready=false
is_current "$pause_archive.inputs" "$pause_inputs" && [[ -f $pause_archive ]] && pause_ready=true
# The default version must be one of those built, under the pinned name.
kafka_version_is "$KAFKA_VERSION"
[[ $kafka_image == "$KAFKA_IMAGE" && " ${kafka_versions[*]} " == *" $KAFKA_VERSION "* ]] ||
    fail "versions.env: KAFKA_VERSIONS ($KAFKA_VERSIONS) must hold KAFKA_VERSION ($KAFKA_VERSION), and KAFKA_IMAGE must be $kafka_image"
for version in "${kafka_versions[@]}"; do
    kafka_version_is "$version"
    is_current "$kafka_archive.inputs" "$(kafka_inputs)" && [[ -f $kafka_archive ]] || kafka_ready=false
done
is_current "$bridge_archive.inputs" "$bridge_image_inputs" && [[ -f $bridge_archive ]] && bridge_ready=true
is_current "$buildah_archive.inputs" "$buildah_inputs" && [[ -f $buildah_archive ]] && buildah_ready=true
is_current "$maven_builder_archive.inputs" "$maven_builder_inputs" && [[ -f $maven_builder_archive ]] &&
    is_current "$stages/maven-repo/.inputs" "$maven_repo_inputs" && maven_builder_ready=true

if ! $pause_ready || ! $kafka_ready || ! $bridge_ready || ! $buildah_ready || ! $maven_builder_ready || $with_operator; then
    image_arch
fi
if ! $pause_ready; then
    need go "install Go 1.24 or newer (Debian 12's golang-go is too old)"
    need gcc "apt-get install -y gcc libc6-dev"
fi
if ! $kafka_ready || ! $bridge_ready || ! $buildah_ready || ! $maven_builder_ready; then
    [[ $(id -u) -eq 0 ]] || fail "building the Kafka, Bridge, Buildah and Maven builder images needs root (debootstrap, chroot, root-owned files)"
    need debootstrap "apt-get install -y debootstrap"
    [[ -f /usr/share/keyrings/debian-archive-keyring.gpg ]] ||
        fail "Debian's archive keys not found: apt-get install -y debian-archive-keyring"
    need unshare "apt-get install -y util-linux"
    need chroot "apt-get install -y coreutils"
    need mvn "apt-get install -y maven"
    need javac "apt-get install -y openjdk-17-jdk-headless"
fi

if $pause_ready; then
    cached "pause image $PAUSE_IMAGE"
else
    start pause "pause image $PAUSE_IMAGE" "10 seconds"
    build_pause
    finish_archive "$pause_archive" "$pause_inputs" "pause image"
fi

# stage <name> <inputs> <description> <cold time> <function>
stage() {
    if is_current "$stages/$1/.inputs" "$2"; then
        cached "$3"
    else
        start "$1" "$3" "$4"
        "$5"
        finish_stage "$stages/$1" "$2"
    fi
}

# The Kafka images: the parts every version shares are built (or found cached) once, then
# each version's libs and image.
for version in "${kafka_versions[@]}"; do
    kafka_version_is "$version"
    inputs=$(kafka_inputs)
    if is_current "$kafka_archive.inputs" "$inputs" && [[ -f $kafka_archive ]]; then
        cached "kafka image $kafka_image"
        continue
    fi
    stage rootfs "$rootfs_inputs" "root filesystem (debootstrap $DEBIAN_SUITE, $JAVA_PACKAGE)" "1 to 3 minutes" build_rootfs
    stage "kafka-dist-$kafka_version" "$(kafka_dist_inputs)" "Kafka $kafka_version libs (Maven Central)" "30 seconds" build_kafka_dist
    stage kafka-agent "$kafka_agent_inputs" "broker-state agent (Maven, kafka/agent)" "30 seconds" build_kafka_agent
    stage cc-reporter "$reporter_inputs" "Cruise Control stand-in's metrics reporter (Maven, standins/cruise-control/metrics-reporter)" "30 seconds" build_cc_reporter
    stage thirdparty-libs "$thirdparty_inputs" "third-party libs (Maven Central, kafka-thirdparty-pom.xml)" "1.5 minutes" build_thirdparty_libs
    stage jmx-exporter "$jmx_inputs" "Prometheus JMX exporter up to $JMX_EXPORTER_VERSION (Maven Central)" "10 seconds" build_jmx_exporter
    start "kafka-$kafka_version" "kafka image $kafka_image" "1 minute"
    build_kafka_image
    finish_archive "$kafka_archive" "$inputs" "kafka image"
done

if $bridge_ready; then
    cached "bridge image $BRIDGE_IMAGE"
else
    stage rootfs "$rootfs_inputs" "root filesystem (debootstrap $DEBIAN_SUITE, $JAVA_PACKAGE)" "1 to 3 minutes" build_rootfs
    start kafka-bridge "bridge image $BRIDGE_IMAGE" "20 seconds"
    build_bridge_image
    finish_archive "$bridge_archive" "$bridge_image_inputs" "bridge image"
fi

if $buildah_ready; then
    cached "buildah image $BUILDAH_IMAGE"
else
    start buildah "buildah image $BUILDAH_IMAGE" "1 to 2 minutes"
    build_buildah_image
    finish_archive "$buildah_archive" "$buildah_inputs" "buildah image"
fi

if $maven_builder_ready; then
    cached "maven builder image $MAVEN_BUILDER_IMAGE"
else
    stage rootfs "$rootfs_inputs" "root filesystem (debootstrap $DEBIAN_SUITE, $JAVA_PACKAGE)" "1 to 3 minutes" build_rootfs
    stage maven-repo "$maven_repo_inputs" "Maven repository of the Connect build test (Maven Central)" "1.5 minutes" build_maven_repo
    if is_current "$maven_builder_archive.inputs" "$maven_builder_inputs" && [[ -f $maven_builder_archive ]]; then
        cached "maven builder image $MAVEN_BUILDER_IMAGE"
    else
        mkdir -p "$(dirname "$maven_builder_archive")"
        start maven-builder "maven builder image $MAVEN_BUILDER_IMAGE" "1 minute"
        build_maven_builder_image
        finish_archive "$maven_builder_archive" "$maven_builder_inputs" "maven builder image"
    fi
fi

if $with_operator; then
    operator_image_part
fi

$quiet && exit 0
echo "pause image: $pause_archive"
for version in "${kafka_versions[@]}"; do
    kafka_version_is "$version"
    echo "kafka image: $kafka_archive"
done
echo "bridge image: $bridge_archive"
echo "buildah image: $buildah_archive"
echo "maven builder image: $maven_builder_archive (Maven repository: $stages/maven-repo/repository)"
if $with_operator; then
    echo "operator image: $operator_archive"
fi
