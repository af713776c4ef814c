#!/usr/bin/env bash
# Rebuilds, without any container registry, the images a real test node needs, as OCI image
# archives that `ctr -n k8s.io images import` loads:
#
#   ${STRIMZI_TESTENV_CACHE:-$HOME/.cache/strimzi-testenv}/images/
#     pause.oci.tar                          registry.k8s.io/pause:<PAUSE_VERSION>
#     kafka-<strimzi>-<kafka>.oci.tar        quay.io/strimzi/kafka:<strimzi>-kafka-<kafka>
#     kafka-bridge-<bridge>.oci.tar          quay.io/strimzi/kafka-bridge:<bridge>
#     operator.oci.tar                       <OPERATOR_IMAGE_REPOSITORY>:<workspace version>
#                                            (only with --with-operator)
#     <archive>.inputs                       what the archive was built from
#     stages/<part>/                         intermediate results, reused by later rebuilds
#
# Usage: build-images.sh [--with-operator]
#
# The pause image is Kubernetes' pause.c (from the k8s.io/kubernetes module source) compiled
# statically. The Kafka image keeps the name, layout and contract of Strimzi's (CONTRACT.md next
# to this script) and is made of registry packages and our own code only: a Debian root
# filesystem made with debootstrap, Kafka's jars and third-party libraries from Maven Central
# (kafka-dist-pom.xml, kafka-thirdparty-pom.xml), and our start, probe and launcher scripts and
# broker-state agent (kafka/); README.md next to this script lists how it differs from
# Strimzi's published image. (Cruise Control, Kafka Exporter and the bridge are still built
# from the sources in ../shared until their own replacements land.)
# The HTTP Bridge image is the bridge compiled from its sources with Maven, on the same root
# filesystem with a Java runtime made by jlink (the bridge needs Java 21).
# With --with-operator, the script also builds our operator image from the workspace's
# Dockerfile: it runs the build stage's script here (a static cargo build, of the dev profile
# unless STRIMZI_TESTENV_OPERATOR_PROFILE says otherwise) and packs its root with the final
# stage's settings. Without it that image is
# neither built nor checked.
#
# Every input (versions.env, the recipe files, the operator image's root, this script's build
# functions) is recorded in <archive>.inputs; when it matches, the archive is reused and this
# script only prints "cached" lines. Each part is built in <cache>/images/.build-<part>.* and
# moved into place with one rename, so an interrupted build never looks finished. Runs are
# serialised with flock on <cache>/images/.lock, so parallel callers wait for each other. Each
# part logs to <cache>/logs/images-<part>.log; a failure prints one line naming the part and
# its log.
#
# Needs root (debootstrap, chroot, root-owned files in the image) and: debootstrap, gcc with a
# static libc, go (1.24 or newer), mvn, a JDK 17, a JDK 21 or newer for the bridge, python3,
# tar, gzip, flock, unshare; with
# --with-operator also cargo (or $CARGO), readelf and chroot. Network: the Debian mirror, Maven
# Central and the Go module proxy only, plus cargo's registry if its cache lacks a crate.
#
# Environment:
#   STRIMZI_TESTENV_CACHE        cache root (default $HOME/.cache/strimzi-testenv)
#   STRIMZI_TESTENV_MAVEN_REPO   Maven local repository (default: Maven's own, ~/.m2/repository)
#   STRIMZI_KAFKA_EXPORTER_DIR   Kafka Exporter sources (default ../shared/kafka-exporter-reference)
#   STRIMZI_CRUISE_CONTROL_DIR   Cruise Control sources (default ../shared/cruise-control-reference)
#   STRIMZI_BRIDGE_DIR           HTTP Bridge sources (default ../shared/strimzi-bridge-reference)
#   STRIMZI_TESTENV_BRIDGE_JDK   JDK (21 or newer) that compiles the bridge and makes its runtime
#                                (default: the newest such JDK in /usr/lib/jvm)
#   CARGO                        cargo program for --with-operator (default: cargo from PATH)
#   STRIMZI_OPERATOR_TARGET_DIR  its target folder (default <cache>/operator-target)
#   STRIMZI_TESTENV_OPERATOR_PROFILE
#                                the cargo profile of its binaries (default dev; the Dockerfile
#                                builds release)
set -Eeuo pipefail

with_operator=false
for arg in "$@"; do
    case $arg in
        --with-operator) with_operator=true ;;
        -h | --help)
            echo "usage: $0 [--with-operator]"
            echo "  builds the pause and Kafka images; --with-operator also builds the operator image"
            echo "  (a release build of the workspace). See README.md next to this script."
            exit 0
            ;;
        *)
            echo "build-images.sh: unknown argument '$arg' (usage: build-images.sh [--with-operator])" >&2
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

shared=$repo/../shared
exporter_src=${STRIMZI_KAFKA_EXPORTER_DIR:-$shared/kafka-exporter-reference}
cc_src=${STRIMZI_CRUISE_CONTROL_DIR:-$shared/cruise-control-reference}
bridge_src=${STRIMZI_BRIDGE_DIR:-$shared/strimzi-bridge-reference}
# Our own parts of the Kafka image: scripts, launcher, tool list and the broker-state agent.
kafka_own=$here/kafka
# The agent's jar name, as its pom builds it (kafka_run.sh finds it by the prefix).
agent_jar=strimzi-rs-kafka-agent-0.1.0.jar

pause_archive=$images/pause.oci.tar
kafka_archive=$images/kafka-$STRIMZI_VERSION-$KAFKA_VERSION.oci.tar
operator_archive=$images/operator.oci.tar
bridge_archive=$images/kafka-bridge-$BRIDGE_VERSION.oci.tar
# The modules of the bridge's Java runtime (build_bridge_jre).
bridge_jre_modules=java.se,jdk.unsupported,jdk.management,jdk.management.agent,jdk.httpserver,jdk.naming.dns,jdk.net,jdk.zipfs,jdk.crypto.cryptoki,jdk.security.auth,jdk.security.jgss,jdk.jfr,jdk.charsets,jdk.localedata
created=$(date -u -d "@$IMAGE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

# What the Kafka image's root filesystem holds besides Debian's minimal base: the JRE and what
# Strimzi's Dockerfiles install or its scripts and Kafka's launchers call (openssl and keytool
# for certificates, curl for the readiness and Cruise Control health checks, netstat for the
# controller readiness check, hostname, gawk for to_bytes.gawk, ps, find/xargs, tar, gzip and
# unzip for Connect builds, tini as the PID 1 the scripts exec, tzdata, useradd from passwd).
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
    # What a container runtime provides at start, or a build leaves behind.
    rm -rf "${root:?}"/dev/* "${root:?}"/proc/* "${root:?}"/sys/* "${root:?}"/run/* "${root:?}"/tmp/* \
        "${root:?}"/var/tmp/* "${root:?}"/var/lib/apt/lists/* "${root:?}"/var/cache/apt/* \
        "${root:?}"/var/cache/debconf/*-old "${root:?}"/var/lib/dpkg/*-old \
        "${root:?}"/usr/share/doc/* "${root:?}"/usr/share/man/* "${root:?}"/usr/share/info/* \
        "${root:?}"/usr/share/locale/* "${root:?}"/usr/share/lintian "${root:?}"/debootstrap \
        "${root:?}"/etc/resolv.conf "${root:?}"/etc/hostname "${root:?}"/root/.bash_history
    find "$root/var/log" -type f -delete
    printf '%s\n' '127.0.0.1 localhost' '::1 localhost ip6-localhost ip6-loopback' >"$root/etc/hosts"
    log in_root "$root" 1001:0 /usr/bin/java -version
    log in_root "$root" 1001:0 /usr/bin/tini --version
    # What the JVM left (its perf data directory).
    rm -rf "${root:?}"/tmp/*
    note "root filesystem: $(du -sm "$root" | cut -f1) MB"
}

# Kafka's distribution libs/, resolved from Maven Central (kafka-dist-pom.xml).
build_kafka_dist() {
    local jar
    cp "$here/kafka-dist-pom.xml" "$work/pom.xml"
    cd "$work"
    mvn_run -f "$work/pom.xml" "-Dkafka.version=$KAFKA_VERSION" \
        "-Dscala.binary.version=$SCALA_BINARY_VERSION" "-Dlog4j2.version=$LOG4J2_VERSION" \
        "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
        -DincludeScope=runtime "-DoutputDirectory=$work/out/libs"
    for jar in "kafka_$SCALA_BINARY_VERSION-$KAFKA_VERSION.jar" "kafka-server-$KAFKA_VERSION.jar" \
        "kafka-clients-$KAFKA_VERSION.jar" "kafka-tools-$KAFKA_VERSION.jar" \
        "connect-runtime-$KAFKA_VERSION.jar" "kafka-streams-$KAFKA_VERSION.jar" \
        "log4j-core-$LOG4J2_VERSION.jar" "log4j-slf4j-impl-$LOG4J2_VERSION.jar"; do
        [[ -f $work/out/libs/$jar ]] || { note "missing $jar"; false; }
    done
    note "kafka libs: $(find "$work/out/libs" -name '*.jar' | wc -l) jars"
    cd "$here"
}

# Our broker-state agent (CONTRACT.md 3.6), built with Maven from kafka/agent (the JDK and Maven
# Central's build plugins only; no library dependency). Compiled for Java 17, the image's JRE.
build_kafka_agent() {
    cp -r "$kafka_own/agent" "$work/src"
    chmod -R u+w "$work/src"
    rm -rf "$work/src/target"
    cd "$work/src"
    mvn_run -f "$work/src/pom.xml" package -Dmaven.test.skip=true
    cp "target/$agent_jar" "$work/out/$agent_jar"
    python3 - "$work/out/$agent_jar" >>"$current_log" 2>&1 <<'EOF'
import sys, zipfile
jar = zipfile.ZipFile(sys.argv[1])
manifest = jar.read("META-INF/MANIFEST.MF").decode()
assert "Premain-Class: io.strimzi.rs.agent.BrokerStateAgent" in manifest, manifest
assert "io/strimzi/rs/agent/BrokerStateAgent.class" in jar.namelist()
print("the agent's manifest names its premain class")
EOF
    cd "$here"
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

# Cruise Control, compiled from its sources with Maven (the poms in cruise-control/ stand in
# for upstream's build.gradle; tests are not compiled). Gives
#   libs/        cruise-control, -core and -metrics-reporter with the runtime closure Strimzi's
#                kafka-thirdparty-libs/cc/pom.xml resolves (for /opt/cruise-control/libs)
#   kafka-libs/  the metrics reporter alone, for Kafka's libs/ (its dependencies are already
#                there, and Strimzi's third-party pom excludes the rest)
build_cruise_control() {
    local v=$CRUISE_CONTROL_VERSION jar
    cp -r "$here/cruise-control" "$work/pom"
    chmod -R u+w "$work/pom"
    # Gradle's createVersionFile puts this file into the cruise-control jar; KafkaCruiseControl
    # logs it at start. No commit id without upstream's .git (Gradle writes "unknown" then too).
    mkdir -p "$work/generated/cruise-control"
    printf '%s\n' "commitId=unknown" "version=$v" >"$work/generated/cruise-control/cruise-control-version.properties"
    cd "$work/pom"
    mvn_run -f "$work/pom/pom.xml" package -Dmaven.test.skip=true -Dmaven.compiler.release=17 \
        "-Dcc.source=$cc_src" "-Dcc.generated=$work/generated" "-Dcc.libs.dir=$work/out/libs" \
        "-Ddependency.plugin.version=$MAVEN_DEPENDENCY_PLUGIN_VERSION"
    for jar in "cruise-control-$v.jar" "cruise-control-core-$v.jar" "cruise-control-metrics-reporter-$v.jar"; do
        [[ -f $work/out/libs/$jar ]] || { note "missing $jar (do the poms in cruise-control/ say $v?)"; false; }
    done
    mkdir -p "$work/out/kafka-libs"
    cp "$work/out/libs/cruise-control-metrics-reporter-$v.jar" "$work/out/kafka-libs/"
    python3 - "$work/out/libs" "$v" >>"$current_log" 2>&1 <<'EOF'
import sys, zipfile
libs, v = sys.argv[1], sys.argv[2]
names = set(zipfile.ZipFile(f"{libs}/cruise-control-{v}.jar").namelist())
for name in ("com/linkedin/kafka/cruisecontrol/KafkaCruiseControlMain.class", "yaml/base.yaml",
             "cruise-control/cruise-control-version.properties", "LICENSE", "NOTICE"):
    assert name in names, f"{name} not in cruise-control-{v}.jar"
reporter = set(zipfile.ZipFile(f"{libs}/cruise-control-metrics-reporter-{v}.jar").namelist())
assert "com/linkedin/kafka/cruisecontrol/metricsreporter/CruiseControlMetricsReporter.class" in reporter
print("cruise-control jars hold their main class, reporter and resources")
EOF
    note "cruise control libs: $(find "$work/out/libs" -name '*.jar' | wc -l) jars, $(du -sm "$work/out/libs" | cut -f1) MB"
    cd "$here"
}

# Kafka Exporter, built from its sources (copied to the temp dir) with the module proxy for its
# dependencies, with the version stamps its release build (promu) sets.
build_kafka_exporter() {
    local version ldflags module=github.com/prometheus/common/version
    cp -r "$exporter_src" "$work/src"
    chmod -R u+w "$work/src"
    cd "$work/src"
    version=$(cat VERSION)
    if [[ v$version != "$KAFKA_EXPORTER_VERSION" ]]; then
        note "the sources are Kafka Exporter $version, versions.env pins $KAFKA_EXPORTER_VERSION"
        false
    fi
    ldflags="-X $module.Version=$version -X $module.Revision= -X $module.Branch=HEAD"
    ldflags+=" -X $module.BuildUser=strimzi-testenv -X $module.BuildDate=$(date -u -d "@$IMAGE_EPOCH" +%Y%m%d-%H:%M:%S)"
    log env CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local GOWORK=off \
        go build -trimpath -tags netgo -ldflags "$ldflags" -o "$work/out/kafka_exporter" .
    log "$work/out/kafka_exporter" --version
    cd "$here"
}

# not_yet <script> <component>: a start script that fails loudly. Strimzi's Cruise Control and
# Kafka Exporter scripts are no longer copied (this build reads no Strimzi source); our own
# replacements come with those components' stand-ins (CONTRACT.md 10).
not_yet() {
    printf '%s\n' '#!/usr/bin/env bash' \
        "echo \"ERROR: $2 is not yet part of this image: its start script is being replaced (issue 35, CONTRACT.md 10)\" >&2" \
        'exit 1' >"$1"
    chmod 0755 "$1"
}

# The Kafka image: the root filesystem plus /opt laid out as Strimzi's Kafka Dockerfile does.
build_kafka_image() {
    local root=$work/rootfs kafka_home=/opt/kafka java_home script
    java_home=$(sed -n 's/^JAVA_HOME=//p' "$stages/rootfs/java.env")
    # Hard links: the stage's files are only read, and this copy takes no space.
    cp -al "$stages/rootfs/rootfs" "$root"
    local k=$root$kafka_home
    mkdir -p "$k/libs" "$k/bin" "$k/config" "$k/plugins"
    # Kafka's distribution: libs/ from Maven Central; bin/ our launcher and tool wrappers.
    cp "$stages/kafka-dist/libs/"*.jar "$k/libs/"
    install -m 0755 "$kafka_own/bin/kafka-run-class.sh" "$k/bin/"
    local name class heap
    while read -r name class heap; do
        [[ -n $name && $name != \#* ]] || continue
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
    unzip -p "$k/libs/kafka-clients-$KAFKA_VERSION.jar" LICENSE >"$k/LICENSE"
    unzip -p "$k/libs/kafka-clients-$KAFKA_VERSION.jar" NOTICE >"$k/NOTICE"
    [[ -s $k/LICENSE && -s $k/NOTICE ]] || { note "kafka-clients-$KAFKA_VERSION.jar has no LICENSE or NOTICE"; false; }
    printf '\n%s\n' \
        "libs/ holds Apache Kafka $KAFKA_VERSION and the libraries it and this image need, as published" \
        'on Maven Central, each under the licence in its own jar. The scripts in this folder and in' \
        'bin/, and the broker-state agent, are strimzi-rs code.' >>"$k/NOTICE"
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
    # Cruise Control's metrics reporter, which Strimzi's third-party list puts there.
    cp "$stages/cruise-control/kafka-libs/"*.jar "$k/libs/"
    # Kafka Exporter with Strimzi's start script.
    mkdir -p "$root/opt/kafka-exporter"
    install -m 0755 "$stages/kafka-exporter/kafka_exporter" "$root/opt/kafka-exporter/"
    not_yet "$root/opt/kafka-exporter/kafka_exporter_run.sh" "Kafka Exporter"
    # The Prometheus JMX exporter agent.
    mkdir -p "$root/opt/prometheus-jmx-exporter"
    install -m 0644 "$stages/jmx-exporter"/jmx_prometheus_javaagent-*.jar "$root/opt/prometheus-jmx-exporter/"
    # Cruise Control: Strimzi's scripts, and its jars with their dependencies in libs/.
    mkdir -p "$root/opt/cruise-control"
    not_yet "$root/opt/cruise-control/cruise_control_run.sh" "Cruise Control"
    not_yet "$root/opt/cruise-control/cruise_control_healthcheck.sh" "Cruise Control"
    mkdir -p "$root/opt/cruise-control/libs"
    cp "$stages/cruise-control/libs/"*.jar "$root/opt/cruise-control/libs/"
    # As in Strimzi's image: /opt owned by root, readable (not writable) by everyone else.
    chown -R 0:0 "$root/opt"
    find "$root/opt" -type d -exec chmod 0755 {} +
    find "$root/opt" -type f -name '*.jar' -exec chmod 0644 {} +
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
    # (CONTRACT.md 3.5; the Cruise Control reporter comes with that stage) is in libs/.
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
           "io.strimzi.rs.agent.BrokerStateAgent"]
missing = [c for c in wanted if c.replace(".", "/") + ".class" not in names]
assert not missing, f"classes not in libs/: {missing}"
print(f"{len(wanted)} classes found in libs/")
EOF
    log in_root "$root" 1001:0 /opt/kafka-exporter/kafka_exporter --version
    # Cruise Control's main class loads with the class path cruise_control_run.sh gives it and,
    # without a configuration file, stops with its usage message.
    in_root "$root" 1001:0 /usr/bin/env -i "PATH=$image_path" "JAVA_HOME=$java_home" \
        /usr/bin/java -cp '/opt/cruise-control/libs/*' com.linkedin.kafka.cruisecontrol.KafkaCruiseControlMain \
        >"$work/cc-main.out" 2>&1 || true
    cat "$work/cc-main.out" >>"$current_log"
    grep -q 'USAGE: java KafkaCruiseControlMain' "$work/cc-main.out" ||
        { note "KafkaCruiseControlMain did not start"; false; }
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
    "KAFKA_VERSION=$KAFKA_VERSION",
    "STRIMZI_VERSION=$STRIMZI_VERSION",
    "KAFKA_EXPORTER_HOME=/opt/kafka-exporter",
    "JMX_EXPORTER_HOME=/opt/prometheus-jmx-exporter",
    "CRUISE_CONTROL_HOME=/opt/cruise-control"
  ],
  "Cmd": ["/bin/bash"],
  "Labels": {
    "name": "kafka",
    "version": "$STRIMZI_VERSION-$KAFKA_VERSION",
    "release": "$STRIMZI_VERSION",
    "org.opencontainers.image.description": "Local rebuild of Strimzi's Kafka $KAFKA_VERSION image for the strimzi-rs test environment (Debian $DEBIAN_SUITE, $JAVA_PACKAGE)"
  }
}
EOF
    pack_image "$root" "$work/config.json" "$KAFKA_IMAGE"
    remove "$root"
}

# ---------------------------------------------------------------------------------------------
# The HTTP Bridge image, quay.io/strimzi/kafka-bridge: the bridge compiled from its sources, on
# the Kafka image's root filesystem with a Java runtime of the bridge's Java release.

# The bridge with its runtime dependencies, as its Maven assembly lays it out (bin/, config/,
# libs/, LICENSE, README.md), built from a copy of its sources whose pom is changed so that
# Maven Central alone can serve it: its test dependencies are taken out (tests are not built),
# and each io.strimzi library asks for the newest release up to the pinned one (a version
# range), as for Strimzi's third-party libraries. What differs from the pinned versions is
# printed and kept in <stage>/substitutions.txt. Strimzi's code checks are skipped.
build_bridge() {
    local v=$BRIDGE_VERSION dist
    mkdir -p "$work/src"
    cp -r "$bridge_src/src" "$bridge_src/bin" "$bridge_src/config" "$bridge_src/LICENSE" \
        "$bridge_src/README.md" "$work/src/"
    chmod -R u+w "$work/src"
    python3 - "$bridge_src/pom.xml" "$work/src/pom.xml" >>"$current_log" 2>&1 <<'EOF'
import re, sys
import xml.etree.ElementTree as ET
ns = "http://maven.apache.org/POM/4.0.0"
q = lambda tag: f"{{{ns}}}{tag}"
ET.register_namespace("", ns)
ET.register_namespace("xsi", "http://www.w3.org/2001/XMLSchema-instance")
tree = ET.parse(sys.argv[1])
project = tree.getroot()
properties = {p.tag[len(ns) + 2:]: p.text for p in project.find(q("properties"))}
dependencies = project.find(q("dependencies"))
for dependency in list(dependencies):
    group, artifact = dependency.findtext(q("groupId")), dependency.findtext(q("artifactId"))
    if dependency.findtext(q("scope")) == "test":
        dependencies.remove(dependency)
        print(f"left out test dependency {group}:{artifact}")
    elif group == "io.strimzi":
        version = dependency.find(q("version"))
        pinned = re.sub(r"\$\{([^}]+)\}", lambda m: properties[m.group(1)], version.text)
        version.text = f"[0,{pinned}]"
        print(f"{group}:{artifact}: newest release up to {pinned}")
tree.write(sys.argv[2], xml_declaration=True, encoding="UTF-8")
EOF
    cd "$work/src"
    # Maven runs on the bridge's JDK, which compiles for the pom's Java release.
    local -x JAVA_HOME=$bridge_jdk
    mvn_run -f "$work/src/pom.xml" package -Dmaven.test.skip=true -DskipTests \
        -Dcheckstyle.skip=true -Dspotbugs.skip=true -Dmdep.analyze.skip=true -Dmaven.source.skip=true \
        -Dmaven.javadoc.skip=true -Dgpg.skip=true
    dist=$work/src/target/kafka-bridge-$v/kafka-bridge-$v
    [[ -x $dist/bin/kafka_bridge_run.sh && -f $dist/libs/io.strimzi.kafka-bridge-$v.jar ]] ||
        { note "no assembled bridge in $dist"; false; }
    mv "$dist" "$work/out/kafka-bridge"
    # Versions of io.strimzi libraries that differ from the pom's.
    python3 - "$bridge_src/pom.xml" "$work/out/kafka-bridge/libs" >"$work/out/substitutions.txt" <<'EOF'
import os, re, sys
import xml.etree.ElementTree as ET
ns = "http://maven.apache.org/POM/4.0.0"
q = lambda tag: f"{{{ns}}}{tag}"
project = ET.parse(sys.argv[1]).getroot()
properties = {p.tag[len(ns) + 2:]: p.text for p in project.find(q("properties"))}
jars = os.listdir(sys.argv[2])
for dependency in project.find(q("dependencies")):
    group, artifact = dependency.findtext(q("groupId")), dependency.findtext(q("artifactId"))
    if group != "io.strimzi" or dependency.findtext(q("scope")) == "test":
        continue
    pinned = re.sub(r"\$\{([^}]+)\}", lambda m: properties[m.group(1)], dependency.findtext(q("version")))
    prefix = f"{group}.{artifact}-"
    found = [j[len(prefix):-4] for j in jars if j.startswith(prefix)]
    if found and pinned not in found:
        print(f"{artifact} {pinned}: {', '.join(found)} instead")
EOF
    cat "$work/out/substitutions.txt" >>"$current_log"
    if [[ -s $work/out/substitutions.txt ]]; then
        echo "bridge: not on Maven Central at the bridge's versions: $(paste -sd ';' "$work/out/substitutions.txt" | sed 's/;/, /g')"
    fi
    note "bridge libs: $(find "$work/out/kafka-bridge/libs" -name '*.jar' | wc -l) jars, $(du -sm "$work/out/kafka-bridge/libs" | cut -f1) MB"
    cd "$here"
}

# A Java runtime for the bridge made with the JDK's jlink: the Java SE modules and the JDK
# modules the bridge and its libraries use (HTTP server of the Prometheus exporter, JMX,
# DNS, unsupported APIs, crypto providers, locales), without debug data or man pages.
build_bridge_jre() {
    log "$bridge_jdk/bin/jlink" --add-modules "$bridge_jre_modules" --strip-debug --no-man-pages \
        --no-header-files --output "$work/out/jre"
    log "$work/out/jre/bin/java" -version
    note "bridge Java runtime: $(du -sm "$work/out/jre" | cut -f1) MB"
}

# The bridge image: the Kafka image's root filesystem with the bridge's Java runtime in place
# of Debian's, the strimzi user (uid 1001, group 0) and /opt/strimzi laid out as the bridge's
# Dockerfile does; tini is Debian's, at the path the Dockerfile puts it.
build_bridge_image() {
    local root=$work/rootfs jre=/usr/lib/jvm/jre-$BRIDGE_JAVA_RELEASE java_home
    java_home=$(sed -n 's/^JAVA_HOME=//p' "$stages/rootfs/java.env")
    cp -al "$stages/rootfs/rootfs" "$root"
    # Debian's Java runtime leaves; java on the PATH is the bridge's.
    rm -rf "${root:?}$java_home"
    cp -a "$stages/bridge-jre/jre" "$root$jre"
    ln -sfn "$jre/bin/java" "$root/usr/bin/java"
    ln -sfn "$jre/bin/keytool" "$root/usr/bin/keytool"
    # The Dockerfile's user: strimzi rather than the Kafka image's kafka, same uid and group.
    sed -i -e 's#^kafka:\(.*\):/home/kafka:#strimzi:\1:/home/strimzi:#' "$root/etc/passwd"
    sed -i -e 's#^kafka:#strimzi:#' "$root/etc/shadow"
    mv "$root/home/kafka" "$root/home/strimzi"
    grep -q '^strimzi:x:1001:0:' "$root/etc/passwd" || { note "no strimzi user in /etc/passwd"; false; }
    mkdir -p "$root/opt/strimzi"
    cp -a "$stages/bridge/kafka-bridge/." "$root/opt/strimzi/"
    chown -R 0:0 "$root/opt" "$root$jre"
    find "$root/opt" -type d -exec chmod 0755 {} +
    find "$root/opt" "$root$jre" "$root/home/strimzi" -exec touch -h -d "@$IMAGE_EPOCH" {} +
    # Smoke tests as the strimzi user: the scripts parse, and the bridge's main class starts on
    # this runtime with the image's libs and stops on a missing configuration file.
    for script in "$root"/opt/strimzi/bin/*.sh "$root"/opt/strimzi/bin/docker/*.sh; do
        log chroot "$root" bash -n "${script#"$root"}"
    done
    in_root "$root" 1001:0 /usr/bin/env -i "PATH=$image_path" "JAVA_HOME=$jre" \
        /opt/strimzi/bin/kafka_bridge_run.sh --config-file=/nonexistent.properties \
        >"$work/bridge-main.out" 2>&1 || true
    cat "$work/bridge-main.out" >>"$current_log"
    grep -q 'nonexistent.properties' "$work/bridge-main.out" ||
        { note "the bridge did not start"; false; }
    rm -rf "${root:?}"/tmp/*
    touch -r "$stages/rootfs/rootfs/tmp" "$root/tmp"
    # Runtime settings of the bridge's Dockerfile: user 1001, /opt/strimzi as working
    # directory, its variables, and its start script as the command. LANG=C.UTF-8 as in the
    # Kafka image.
    cat >"$work/config.json" <<EOF
{
  "User": "1001",
  "WorkingDir": "/opt/strimzi",
  "Env": [
    "PATH=$image_path",
    "container=oci",
    "JAVA_HOME=$jre",
    "LANG=C.UTF-8",
    "STRIMZI_KAFKA_BRIDGE_VERSION=$BRIDGE_VERSION",
    "STRIMZI_HOME=/opt/strimzi",
    "TINI_VERSION=v0.19.0"
  ],
  "Cmd": ["/opt/strimzi/bin/kafka_bridge_run.sh"],
  "Labels": {
    "name": "kafka-bridge",
    "version": "$BRIDGE_VERSION",
    "org.opencontainers.image.description": "Local rebuild of Strimzi HTTP Bridge $BRIDGE_VERSION for the strimzi-rs test environment (Debian $DEBIAN_SUITE, Java runtime of JDK $bridge_jdk_version)"
  }
}
EOF
    pack_image "$root" "$work/config.json" "$BRIDGE_IMAGE"
    remove "$root"
}

# ---------------------------------------------------------------------------------------------
# The operator image (only with --with-operator), from the workspace's Dockerfile: its build
# stage's script runs here (cargo, static binaries) into a root folder, and its final stage's
# settings become the image's configuration (oci.py dockerfile). No registry, no daemon.

# The build stage: the Dockerfile's script with the root folder as its last argument.
build_operator_root() {
    local -a command
    mapfile -t command < <(python3 "$here/oci.py" dockerfile "$repo/Dockerfile" --config-out "$work/config.json")
    ((${#command[@]} > 0)) || fail "no build command read from $repo/Dockerfile"
    cd "$repo"
    log env CARGO_TARGET_DIR="$operator_target" STRIMZI_OPERATOR_PROFILE="$operator_profile" "${command[@]}" "$work/root"
    cd "$here"
}

# The final stage: smoke tests in the root, then one layer with the Dockerfile's settings.
build_operator_image() {
    local root=$work/root program rc chroot_program
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
    pack_image "$root" "$work/config.json" "$operator_image" --owner=0 --group=0
    remove "$root"
}

# ---------------------------------------------------------------------------------------------

[[ -f $exporter_src/go.mod ]] || fail "Kafka Exporter sources not found at $exporter_src: set STRIMZI_KAFKA_EXPORTER_DIR"
[[ -f $cc_src/build.gradle ]] || fail "Cruise Control sources not found at $cc_src: set STRIMZI_CRUISE_CONTROL_DIR"
[[ -f $bridge_src/pom.xml && $(cat "$bridge_src/release.version" 2>/dev/null) == "$BRIDGE_VERSION" ]] ||
    fail "HTTP Bridge $BRIDGE_VERSION sources not found at $bridge_src: set STRIMZI_BRIDGE_DIR"
[[ -n $KUBERNETES_VERSION ]] || fail "KUBERNETES_VERSION not found in $here/../versions.env"
need sha256sum "apt-get install -y coreutils"
need flock "apt-get install -y util-linux"
if $with_operator; then
    # The image is tagged with the workspace version ([workspace.package] in Cargo.toml).
    workspace_version=$(awk '/^\[/ { section = $1 }
        section == "[workspace.package]" && /^version[[:space:]]*=/ { sub(/^[^"]*"/, ""); sub(/".*/, ""); print; exit }' \
        "$repo/Cargo.toml")
    [[ -n $workspace_version ]] || fail "no version in [workspace.package] of $repo/Cargo.toml"
    operator_image=$OPERATOR_IMAGE_REPOSITORY:$workspace_version
    # A target folder of its own (static binaries for an explicit target triple): kept in the
    # cache so that a fresh checkout rebuilds only the workspace's crates.
    operator_target=${STRIMZI_OPERATOR_TARGET_DIR:-$cache/operator-target}
    # The same code as the Dockerfile's release build, compiled without optimisation: about
    # 2.5 minutes cold on 2 cores instead of 12 to 20 (the tests' clusters are small, and the
    # operators the tests start on the host are such builds too).
    operator_profile=${STRIMZI_TESTENV_OPERATOR_PROFILE:-dev}
    need "${CARGO:-cargo}" "install Rust (https://rustup.rs) or set CARGO to the cargo program"
    need readelf "apt-get install -y binutils"
fi

# java_release <java home>: the feature release of a JDK (21 for 21.0.5), from its release file.
java_release() {
    [[ -f $1/release ]] || return 0
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release"
}

# The JDK of the bridge: STRIMZI_TESTENV_BRIDGE_JDK, else the newest JDK with jlink in
# /usr/lib/jvm of at least the bridge's Java release.
bridge_jdk=${STRIMZI_TESTENV_BRIDGE_JDK:-}
if [[ -z $bridge_jdk ]]; then
    best=0
    for candidate in /usr/lib/jvm/*/; do
        candidate=${candidate%/}
        release=$(java_release "$candidate")
        if [[ -x $candidate/bin/jlink && -x $candidate/bin/javac && -n $release ]] && ((release > best)); then
            best=$release
            bridge_jdk=$candidate
        fi
    done
fi
bridge_jdk_version=""
if [[ -n $bridge_jdk ]]; then
    bridge_jdk_version=$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$bridge_jdk/release" 2>/dev/null || true)
fi

# Inputs of every part: a change to any of them rebuilds that part and what uses it.
oci_hash=$(sha256sum "$here/oci.py" | cut -c1-64)
pause_inputs="image=$PAUSE_IMAGE kubernetes=$KUBERNETES_VERSION epoch=$IMAGE_EPOCH
oci.py=$oci_hash code=$(code_hash build_pause pack_image)"
rootfs_inputs="suite=$DEBIAN_SUITE mirror=$DEBIAN_MIRROR packages=${rootfs_packages[*]}
code=$(code_hash build_rootfs in_root)"
kafka_dist_inputs="kafka=$KAFKA_VERSION scala=$SCALA_BINARY_VERSION log4j2=$LOG4J2_VERSION plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION
pom=$(sha256sum "$here/kafka-dist-pom.xml" | cut -c1-64) code=$(code_hash build_kafka_dist mvn_run)"
kafka_agent_inputs="jar=$agent_jar sources=$(tree_hash "$kafka_own" agent/pom.xml agent/src)
code=$(code_hash build_kafka_agent mvn_run)"
thirdparty_inputs="pom=$(sha256sum "$here/kafka-thirdparty-pom.xml" | cut -c1-64) plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION
code=$(code_hash build_thirdparty_libs mvn_run)"
jmx_inputs="jmx-exporter=$JMX_EXPORTER_VERSION plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION code=$(code_hash build_jmx_exporter mvn_run)"
cc_inputs="cruise-control=$CRUISE_CONTROL_VERSION plugin=$MAVEN_DEPENDENCY_PLUGIN_VERSION
sources=$(tree_hash "$cc_src" build.gradle gradle.properties LICENSE NOTICE cruise-control/src/main cruise-control-core/src/main cruise-control-metrics-reporter/src/main)
poms=$(tree_hash "$here" cruise-control) code=$(code_hash build_cruise_control mvn_run)"
exporter_inputs="kafka-exporter=$KAFKA_EXPORTER_VERSION sources=$(tree_hash "$exporter_src" .)
code=$(code_hash build_kafka_exporter)"
bridge_inputs="bridge=$BRIDGE_VERSION jdk=$bridge_jdk_version sources=$(tree_hash "$bridge_src" pom.xml src bin config LICENSE README.md)
code=$(code_hash build_bridge mvn_run)"
bridge_jre_inputs="jdk=$bridge_jdk_version modules=$bridge_jre_modules code=$(code_hash build_bridge_jre)"
bridge_image_inputs="image=$BRIDGE_IMAGE epoch=$IMAGE_EPOCH release=$BRIDGE_JAVA_RELEASE
rootfs=$(echo "$rootfs_inputs" | sha256sum | cut -c1-64)
bridge=$(echo "$bridge_inputs" | sha256sum | cut -c1-64)
bridge-jre=$(echo "$bridge_jre_inputs" | sha256sum | cut -c1-64)
oci.py=$oci_hash code=$(code_hash build_bridge_image pack_image in_root)"
kafka_inputs="image=$KAFKA_IMAGE strimzi=$STRIMZI_VERSION kafka=$KAFKA_VERSION epoch=$IMAGE_EPOCH
rootfs=$(echo "$rootfs_inputs" | sha256sum | cut -c1-64)
kafka-dist=$(echo "$kafka_dist_inputs" | sha256sum | cut -c1-64)
kafka-agent=$(echo "$kafka_agent_inputs" | sha256sum | cut -c1-64)
thirdparty-libs=$(echo "$thirdparty_inputs" | sha256sum | cut -c1-64)
jmx-exporter=$(echo "$jmx_inputs" | sha256sum | cut -c1-64)
kafka-exporter=$(echo "$exporter_inputs" | sha256sum | cut -c1-64)
cruise-control=$(echo "$cc_inputs" | sha256sum | cut -c1-64)
scripts=$(tree_hash "$kafka_own" kafka_run.sh kafka_connect_run.sh kafka_readiness.sh kafka_liveness.sh kafka_common.sh bin)
oci.py=$oci_hash code=$(code_hash build_kafka_image not_yet pack_image in_root)"

mkdir -p "$images" "$stages" "$logs"
# One builder at a time per cache; parallel callers wait here, then find the archives cached.
exec 9>"$images/.lock"
flock 9
# Leftovers of interrupted builds.
for leftover in "$images"/.build-*; do
    if [[ -e $leftover ]]; then remove "$leftover"; fi
done

pause_ready=false
kafka_ready=false
bridge_ready=false
is_current "$pause_archive.inputs" "$pause_inputs" && [[ -f $pause_archive ]] && pause_ready=true
is_current "$kafka_archive.inputs" "$kafka_inputs" && [[ -f $kafka_archive ]] && kafka_ready=true
is_current "$bridge_archive.inputs" "$bridge_image_inputs" && [[ -f $bridge_archive ]] && bridge_ready=true

if ! $pause_ready || ! $kafka_ready || ! $bridge_ready || $with_operator; then
    need python3 "apt-get install -y python3"
    need tar "apt-get install -y tar"
    need gzip "apt-get install -y gzip"
    need dpkg "this script needs a Debian-based machine (dpkg)"
    deb_arch=$(dpkg --print-architecture)
    case $deb_arch in
        amd64 | arm64) oci_arch=$deb_arch ;;
        *) fail "unsupported architecture $deb_arch (amd64 and arm64 are supported)" ;;
    esac
fi
if ! $pause_ready; then
    need go "install Go 1.24 or newer (Debian 12's golang-go is too old)"
    need gcc "apt-get install -y gcc libc6-dev"
fi
if ! $kafka_ready || ! $bridge_ready; then
    [[ $(id -u) -eq 0 ]] || fail "building the Kafka and Bridge images needs root (debootstrap, chroot, root-owned files)"
    need debootstrap "apt-get install -y debootstrap"
    [[ -f /usr/share/keyrings/debian-archive-keyring.gpg ]] ||
        fail "Debian's archive keys not found: apt-get install -y debian-archive-keyring"
    need unshare "apt-get install -y util-linux"
    need mvn "apt-get install -y maven"
    need javac "apt-get install -y openjdk-17-jdk-headless"
    need go "install Go 1.24 or newer (Debian 12's golang-go is too old)"
fi
if ! $bridge_ready; then
    [[ -n $bridge_jdk && $(java_release "$bridge_jdk") -ge $BRIDGE_JAVA_RELEASE ]] ||
        fail "the HTTP Bridge needs a JDK $BRIDGE_JAVA_RELEASE or newer (with jlink) in /usr/lib/jvm, or STRIMZI_TESTENV_BRIDGE_JDK naming one (e.g. Temurin 25 from https://adoptium.net)"
fi

# cached <what>: says a part is already built (not with STRIMZI_TESTENV_QUIET=1, which the test
# environment sets so that a warm start prints nothing).
cached() {
    [[ ${STRIMZI_TESTENV_QUIET:-} == 1 ]] || echo "$1: cached"
}

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

if $kafka_ready; then
    cached "kafka image $KAFKA_IMAGE"
else
    stage rootfs "$rootfs_inputs" "root filesystem (debootstrap $DEBIAN_SUITE, $JAVA_PACKAGE)" "1 to 3 minutes" build_rootfs
    stage kafka-dist "$kafka_dist_inputs" "Kafka $KAFKA_VERSION libs (Maven Central)" "30 seconds" build_kafka_dist
    stage kafka-agent "$kafka_agent_inputs" "broker-state agent (Maven, kafka/agent)" "30 seconds" build_kafka_agent
    stage thirdparty-libs "$thirdparty_inputs" "third-party libs (Maven Central, kafka-thirdparty-pom.xml)" "1.5 minutes" build_thirdparty_libs
    stage jmx-exporter "$jmx_inputs" "Prometheus JMX exporter up to $JMX_EXPORTER_VERSION (Maven Central)" "10 seconds" build_jmx_exporter
    stage kafka-exporter "$exporter_inputs" "Kafka Exporter $KAFKA_EXPORTER_VERSION (go build)" "1 minute" build_kafka_exporter
    stage cruise-control "$cc_inputs" "Cruise Control $CRUISE_CONTROL_VERSION (Maven, from sources)" "1 minute" build_cruise_control
    start kafka "kafka image $KAFKA_IMAGE" "30 seconds"
    build_kafka_image
    finish_archive "$kafka_archive" "$kafka_inputs" "kafka image"
fi

if $bridge_ready; then
    cached "bridge image $BRIDGE_IMAGE"
else
    stage rootfs "$rootfs_inputs" "root filesystem (debootstrap $DEBIAN_SUITE, $JAVA_PACKAGE)" "1 to 3 minutes" build_rootfs
    stage bridge "$bridge_inputs" "HTTP Bridge $BRIDGE_VERSION (Maven, from sources)" "1 minute" build_bridge
    stage bridge-jre "$bridge_jre_inputs" "bridge Java runtime (jlink of JDK $bridge_jdk_version)" "15 seconds" build_bridge_jre
    start kafka-bridge "bridge image $BRIDGE_IMAGE" "20 seconds"
    build_bridge_image
    finish_archive "$bridge_archive" "$bridge_image_inputs" "bridge image"
fi

if $with_operator; then
    # No cached/building decision before the build stage: the binaries are an input.
    start operator-root "operator image root (Dockerfile build stage: cargo build, profile $operator_profile)" "2.5 minutes on 2 cores for dev; seconds when up to date"
    build_operator_root
    operator_inputs="image=$operator_image epoch=$IMAGE_EPOCH
root=$(cd "$work/root" && find . -printf '%p %m %l\n' | LC_ALL=C sort | sha256sum | cut -c1-64) files=$(cd "$work/root" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-64)
config=$(sha256sum "$work/config.json" | cut -c1-64) oci.py=$oci_hash code=$(code_hash build_operator_image pack_image)"
    echo "operator image root: ready in $((SECONDS - build_started))s"
    if is_current "$operator_archive.inputs" "$operator_inputs" && [[ -f $operator_archive ]]; then
        remove "$work"
        work=""
        current_component=""
        cached "operator image $operator_image"
    else
        [[ $(id -u) -eq 0 ]] || fail "building the operator image needs root (chroot for its smoke test)"
        need chroot "apt-get install -y coreutils"
        need timeout "apt-get install -y coreutils"
        # The root and the configuration move into the packing step's folder.
        stage_work=$work
        start operator "operator image $operator_image" "10 seconds"
        mv "$stage_work/root" "$stage_work/config.json" "$work/"
        remove "$stage_work"
        build_operator_image
        finish_archive "$operator_archive" "$operator_inputs" "operator image"
    fi
fi

[[ ${STRIMZI_TESTENV_QUIET:-} == 1 ]] && exit 0
echo "pause image: $pause_archive"
echo "kafka image: $kafka_archive"
echo "bridge image: $bridge_archive"
if $with_operator; then
    echo "operator image: $operator_archive"
fi
