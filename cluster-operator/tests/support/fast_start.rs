//! What makes a test's Kafka nodes and Java components cheaper to start and sooner seen
//! Ready, for the real-node tests that are not about Strimzi's defaults (`real_kafka`,
//! `takeover` and the install programs keep Strimzi's for Kafka): JVM flags for a short life, and
//! readiness probes that look more often. Liveness probes keep Strimzi's values: one tighter
//! than a JVM's start on two loaded cores kills it again and again.
//!
//! Everything here goes into the resources when they are created, so it is in the first pods
//! and never makes a roll of its own. The model tests check what the pods get from it.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use serde_json::{Value, json};

/// Seconds between two readiness checks of an HTTP probe, which the kubelet makes itself at
/// little cost (Strimzi's and Kubernetes' default: 10).
const HTTP_PROBE_PERIOD: u32 = 2;

/// `jvmOptions` of a heap from `initial_heap` up to `max_heap`, leaving the other JVM flags to
/// the image's start script (Strimzi's defaults: for Kafka, Connect and Cruise Control
/// `-XX:+UseG1GC` with Kafka's G1 tuning and the C2 compiler).
pub fn heap_only_jvm(initial_heap: &str, max_heap: &str) -> Value {
    json!({"-Xms": initial_heap, "-Xmx": max_heap})
}

/// [`heap_only_jvm`] with flags for a fast start: the C1 compiler only
/// (`-XX:TieredStopAtLevel=1`) and the serial collector (`-XX:+UseSerialGC`). A KRaft
/// broker-and-controller JVM of Kafka 4.3.1 with a 256–512 MiB heap, measured on the two-core
/// CI machine, used 5.2 CPU-seconds in its first ~60 s and 6.2 after another idle minute with
/// Kafka's default flags (G1, C2), and 3.0 and 3.9 with these.
///
/// Any `-XX` option replaces the start script's default performance flags as a whole (Kafka's
/// and Cruise Control's `KAFKA_JVM_PERFORMANCE_OPTS`, G1 and its tuning included), so no G1
/// tuning is left without G1; the bridge's script adds them to the JVM's defaults
/// (`STRIMZI_JAVA_OPTS`).
pub fn fast_start_jvm(initial_heap: &str, max_heap: &str) -> Value {
    let mut options = heap_only_jvm(initial_heap, max_heap);
    options["-XX"] = json!({"TieredStopAtLevel": "1", "UseSerialGC": "true"});
    options
}

/// What the JVM gets from [`fast_start_jvm`] besides the heap, in place of the start script's
/// default performance flags (`KAFKA_JVM_PERFORMANCE_OPTS`) or added to the bridge's
/// (`STRIMZI_JAVA_OPTS`).
pub const FAST_START_FLAGS: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

/// `readinessProbe` of the Kafka nodes (`spec.kafka`): checked from 5 s after the start
/// (Strimzi: 15 s) every 3 s (Kubernetes' default: 10 s). The operator restarts the next node
/// of a roll once this one is seen Ready, so each restart waits half a period less on
/// average (3.5 s) and is not held to 15 s when the node is ready sooner. The probe runs a
/// script in the container (`kafka_readiness.sh`, through runc), which costs far more than an
/// HTTP check, and keeps running all the pod's life: 3 s rather than 2 s for that reason.
pub fn kafka_node_readiness_probe() -> Value {
    json!({"initialDelaySeconds": 5, "periodSeconds": 3})
}

/// `readinessProbe` of a component probed over HTTP (entity operator, Kafka Exporter,
/// Connect, MirrorMaker 2, bridge): checked from 2 s after the start (Strimzi: 10 to 60 s)
/// every [`HTTP_PROBE_PERIOD`] seconds; the resource is Ready once its pod is.
pub fn http_readiness_probe() -> Value {
    json!({"initialDelaySeconds": 2, "periodSeconds": HTTP_PROBE_PERIOD})
}

/// `startupProbe` of the topic operator, which holds back its readiness probe until it
/// passes: checked every [`HTTP_PROBE_PERIOD`] seconds instead of Strimzi's 10, with the same
/// two minutes (Strimzi: 12 failures of 10 s) before the container is restarted.
pub fn topic_operator_startup_probe() -> Value {
    json!({"periodSeconds": HTTP_PROBE_PERIOD, "failureThreshold": 120 / HTTP_PROBE_PERIOD})
}
