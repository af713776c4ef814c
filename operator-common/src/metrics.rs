//! Prometheus metrics with Strimzi's names (`strimzi_reconciliations_total`, ...) plus process
//! metrics and our own counters of API writes and reads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// Labels of the reconciliation metrics: the kind, the namespace and the resource selector.
const RECONCILIATION_LABELS: [&str; 3] = ["kind", "namespace", "selector"];

/// Labels of `strimzi_certificate_expiration_timestamp_ms`, as Strimzi's cluster operator
/// serves it: the kind and namespace of the resource, then the cluster's name, the CA
/// ([`CertificateType`]) and the namespace again (the name Strimzi's alert rule reads).
const CERTIFICATE_LABELS: [&str; 5] =
    ["kind", "namespace", "cluster", "type", "resource_namespace"];

/// How long one bucket of `strimzi_reconciliations_duration_seconds_max` lasts: the gauge is
/// the longest reconciliation of the current bucket and the one before, so a long
/// reconciliation shows for one to two minutes (Micrometer's timer max, which Strimzi serves,
/// forgets it after two minutes).
const LONGEST_BUCKET: Duration = Duration::from_secs(60);

/// The CA whose certificate's expiry `strimzi_certificate_expiration_timestamp_ms` reports,
/// by its `type` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertificateType {
    /// The cluster CA (`cluster-ca`).
    ClusterCa,
    /// The clients CA (`client-ca`).
    ClientsCa,
}

impl CertificateType {
    /// The `type` label value Strimzi uses.
    pub fn label(self) -> &'static str {
        match self {
            Self::ClusterCa => "cluster-ca",
            Self::ClientsCa => "client-ca",
        }
    }
}

/// The longest reconciliation of the current bucket and of the one before.
#[derive(Debug, Clone, Copy)]
struct Longest {
    bucket_start: Instant,
    current: f64,
    previous: f64,
}

impl Longest {
    /// Moves on to the bucket of `now`, forgetting what is older than the previous bucket.
    fn at(mut self, now: Instant) -> Self {
        let elapsed = now.saturating_duration_since(self.bucket_start);
        if elapsed >= LONGEST_BUCKET.saturating_mul(2) {
            self = Self {
                bucket_start: now,
                current: 0.0,
                previous: 0.0,
            };
        } else if elapsed >= LONGEST_BUCKET {
            self = Self {
                bucket_start: self.bucket_start + LONGEST_BUCKET,
                current: 0.0,
                previous: self.current,
            };
        }
        self
    }

    fn value(self) -> f64 {
        self.current.max(self.previous)
    }
}

/// Metrics could not be registered or encoded.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// Registering or encoding failed.
    #[error("metrics: {0}")]
    Prometheus(#[from] prometheus::Error),
}

impl crate::ErrorReason for MetricsError {
    fn reason(&self) -> &'static str {
        "MetricsError"
    }
}

/// Every metric of one operator, registered in one registry.
#[derive(Debug, Clone)]
pub struct Metrics {
    registry: Registry,
    reconciliations: IntCounterVec,
    successful: IntCounterVec,
    failed: IntCounterVec,
    retried: IntCounterVec,
    duration: HistogramVec,
    duration_max: GaugeVec,
    longest: Arc<Mutex<HashMap<[String; 3], Longest>>>,
    locked: IntCounterVec,
    periodical: IntCounterVec,
    resources: IntGaugeVec,
    paused: IntGaugeVec,
    in_progress: IntGaugeVec,
    api_writes: IntCounterVec,
    api_reads: IntCounterVec,
    certificate_expiration: IntGaugeVec,
}

/// The reconciliation metrics of one kind in one namespace (or all) with one selector.
#[derive(Debug, Clone)]
pub struct ReconciliationMetrics {
    metrics: Metrics,
    labels: [String; 3],
}

impl Metrics {
    /// Registers every metric, process metrics included, in a new registry.
    pub fn new() -> Result<Self, MetricsError> {
        let registry = Registry::new();
        let counter = |name: &str, help: &str| -> Result<IntCounterVec, MetricsError> {
            let counter = IntCounterVec::new(Opts::new(name, help), &RECONCILIATION_LABELS)?;
            registry.register(Box::new(counter.clone()))?;
            Ok(counter)
        };
        let gauge = |name: &str, help: &str| -> Result<IntGaugeVec, MetricsError> {
            let gauge = IntGaugeVec::new(Opts::new(name, help), &RECONCILIATION_LABELS)?;
            registry.register(Box::new(gauge.clone()))?;
            Ok(gauge)
        };
        let reconciliations = counter("strimzi_reconciliations_total", "Reconciliations started")?;
        let successful = counter(
            "strimzi_reconciliations_successful_total",
            "Reconciliations that succeeded",
        )?;
        let failed = counter(
            "strimzi_reconciliations_failed_total",
            "Reconciliations that failed",
        )?;
        let retried = counter(
            "strimzi_reconciliations_retried_total",
            "Failed reconciliations scheduled again after a backoff delay",
        )?;
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "strimzi_reconciliations_duration_seconds",
                "Time a reconciliation took",
            )
            .buckets(vec![
                0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
            ]),
            &RECONCILIATION_LABELS,
        )?;
        registry.register(Box::new(duration.clone()))?;
        let duration_max = GaugeVec::new(
            Opts::new(
                "strimzi_reconciliations_duration_seconds_max",
                "Longest reconciliation of the last one to two minutes",
            ),
            &RECONCILIATION_LABELS,
        )?;
        registry.register(Box::new(duration_max.clone()))?;
        let locked = counter(
            "strimzi_reconciliations_locked_total",
            "Reconciliations skipped because another one of the same resource was running",
        )?;
        let periodical = counter(
            "strimzi_reconciliations_periodical_total",
            "Reconciliations started by the periodic full reconciliation timer",
        )?;
        let resources = gauge("strimzi_resources", "Custom resources watched")?;
        let paused = gauge(
            "strimzi_resources_paused",
            "Custom resources whose reconciliation is paused",
        )?;
        let in_progress = gauge(
            "strimzi_operator_reconciliations_in_progress",
            "Reconciliations running now",
        )?;
        let api_writes = IntCounterVec::new(
            Opts::new(
                "strimzi_operator_api_writes_total",
                "Writes to the Kubernetes API server by verb and kind",
            ),
            &["kind", "verb"],
        )?;
        registry.register(Box::new(api_writes.clone()))?;
        let api_reads = IntCounterVec::new(
            Opts::new(
                "strimzi_operator_api_reads_total",
                "Reads (get or list, not watch) of the Kubernetes API server by verb and resource",
            ),
            &["kind", "verb"],
        )?;
        registry.register(Box::new(api_reads.clone()))?;
        let certificate_expiration = IntGaugeVec::new(
            Opts::new(
                "strimzi_certificate_expiration_timestamp_ms",
                "When the CA certificate expires, in milliseconds since the epoch",
            ),
            &CERTIFICATE_LABELS,
        )?;
        registry.register(Box::new(certificate_expiration.clone()))?;
        #[cfg(target_os = "linux")]
        registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ))?;
        Ok(Self {
            registry,
            reconciliations,
            successful,
            failed,
            retried,
            duration,
            duration_max,
            longest: Arc::default(),
            locked,
            periodical,
            resources,
            paused,
            in_progress,
            api_writes,
            api_reads,
            certificate_expiration,
        })
    }

    /// The reconciliation metrics of `kind` in `namespace` (empty for all) with `selector`.
    pub fn reconciliations(
        &self,
        kind: &str,
        namespace: &str,
        selector: &str,
    ) -> ReconciliationMetrics {
        ReconciliationMetrics {
            metrics: self.clone(),
            labels: [kind.to_owned(), namespace.to_owned(), selector.to_owned()],
        }
    }

    /// Counts one write (`verb` is `apply`, `delete`, `status`, ...) of an object of `kind`.
    pub fn count_write(&self, kind: &str, verb: &str) {
        self.api_writes.with_label_values(&[kind, verb]).inc();
    }

    /// Writes of objects of `kind` with `verb` so far.
    pub fn writes(&self, kind: &str, verb: &str) -> u64 {
        self.api_writes.with_label_values(&[kind, verb]).get()
    }

    /// Counts one read (`verb` is `get` or `list`) of `kind`, the resource's plural name
    /// (`secrets`, `kafkas`, ...). The runtime's client counts every read it sends (see
    /// [`crate::api_reads`]).
    pub fn count_read(&self, kind: &str, verb: &str) {
        self.api_reads.with_label_values(&[kind, verb]).inc();
    }

    /// Reads of `kind` (plural resource name) with `verb` (`get` or `list`) so far.
    pub fn reads(&self, kind: &str, verb: &str) -> u64 {
        self.api_reads.with_label_values(&[kind, verb]).get()
    }

    /// Registers an operator's own metric next to the shared ones, so that `/metrics`
    /// serves it too.
    pub fn register(
        &self,
        collector: Box<dyn prometheus::core::Collector>,
    ) -> Result<(), MetricsError> {
        self.registry.register(collector)?;
        Ok(())
    }

    /// Sets when the certificate of the `ca` of cluster `cluster` (a resource of `kind` in
    /// `namespace`) expires: `expires_ms` milliseconds since the epoch.
    pub fn set_certificate_expiration(
        &self,
        kind: &str,
        namespace: &str,
        cluster: &str,
        ca: CertificateType,
        expires_ms: i64,
    ) {
        self.certificate_expiration
            .with_label_values(&[kind, namespace, cluster, ca.label(), namespace])
            .set(expires_ms);
    }

    /// Removes the series labelled with a resource of `kind` (the certificate expiry of its
    /// CAs) for which `live(namespace, name)` is false: it is gone.
    pub fn retain_resources(&self, kind: &str, live: impl Fn(&str, &str) -> bool) {
        use prometheus::core::Collector;
        let label = |metric: &prometheus::proto::Metric, name: &str| {
            metric
                .get_label()
                .iter()
                .find(|pair| pair.name() == name)
                .map(|pair| pair.value().to_owned())
                .unwrap_or_default()
        };
        for family in self.certificate_expiration.collect() {
            for metric in family.get_metric() {
                let values = CERTIFICATE_LABELS.map(|name| label(metric, name));
                if values[0] == kind && !live(&values[1], &values[2]) {
                    let values = values.each_ref().map(String::as_str);
                    // An error only says the series went meanwhile.
                    let _ = self.certificate_expiration.remove_label_values(&values);
                }
            }
        }
    }

    /// Every metric in Prometheus text format.
    pub fn encode(&self) -> Result<String, MetricsError> {
        let now = Instant::now();
        for (labels, longest) in self
            .longest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter_mut()
        {
            *longest = longest.at(now);
            self.duration_max
                .with_label_values(&[&labels[0], &labels[1], &labels[2]])
                .set(longest.value());
        }
        let mut buffer = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buffer)?;
        Ok(String::from_utf8_lossy(&buffer).into_owned())
    }
}

impl ReconciliationMetrics {
    fn labels(&self) -> [&str; 3] {
        [&self.labels[0], &self.labels[1], &self.labels[2]]
    }

    /// Counts a started reconciliation, and serves the other reconciliation counters of its
    /// labels from then on, at 0 until they count (so that a dashboard shows 0, not "no
    /// data"). A reconciliation never waits for another one of the same resource here (the
    /// controller runs one at a time per resource and queues the rest), so
    /// `strimzi_reconciliations_locked_total` stays at 0.
    pub fn started(&self) {
        self.metrics
            .reconciliations
            .with_label_values(&self.labels())
            .inc();
        for counter in [
            &self.metrics.successful,
            &self.metrics.failed,
            &self.metrics.locked,
            &self.metrics.periodical,
        ] {
            counter.with_label_values(&self.labels()).inc_by(0);
        }
        self.metrics
            .in_progress
            .with_label_values(&self.labels())
            .inc();
    }

    /// Counts a finished reconciliation and records how long it took.
    pub fn finished(&self, succeeded: bool, seconds: f64) {
        let counter = if succeeded {
            &self.metrics.successful
        } else {
            &self.metrics.failed
        };
        counter.with_label_values(&self.labels()).inc();
        self.metrics
            .in_progress
            .with_label_values(&self.labels())
            .dec();
        self.metrics
            .duration
            .with_label_values(&self.labels())
            .observe(seconds);
        let now = Instant::now();
        let mut longest = self
            .metrics
            .longest
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let entry = longest.entry(self.labels.clone()).or_insert(Longest {
            bucket_start: now,
            current: 0.0,
            previous: 0.0,
        });
        *entry = entry.at(now);
        entry.current = entry.current.max(seconds);
        self.metrics
            .duration_max
            .with_label_values(&self.labels())
            .set(entry.value());
    }

    /// Counts a reconciliation started by the periodic full reconciliation timer rather than
    /// by a change.
    pub fn periodical(&self) {
        self.metrics
            .periodical
            .with_label_values(&self.labels())
            .inc();
    }

    /// Counts a failed reconciliation scheduled again after a backoff delay; failures only
    /// a change of the resource can cure are not retried and not counted.
    pub fn retried(&self) {
        self.metrics.retried.with_label_values(&self.labels()).inc();
    }

    /// Sets how many resources are watched and how many of them are paused.
    pub fn set_resources(&self, total: usize, paused: usize) {
        self.set_count(total);
        self.metrics
            .paused
            .with_label_values(&self.labels())
            .set(i64::try_from(paused).unwrap_or(i64::MAX));
    }

    /// Sets how many resources are seen (`strimzi_resources`), for a kind counted without
    /// a controller of its own (node pools, which the Kafka controller reads).
    pub fn set_count(&self, total: usize) {
        self.metrics
            .resources
            .with_label_values(&self.labels())
            .set(i64::try_from(total).unwrap_or(i64::MAX));
    }

    /// Reconciliations started so far.
    pub fn started_count(&self) -> u64 {
        self.metrics
            .reconciliations
            .with_label_values(&self.labels())
            .get()
    }

    /// Reconciliations that succeeded so far.
    pub fn succeeded_count(&self) -> u64 {
        self.metrics
            .successful
            .with_label_values(&self.labels())
            .get()
    }

    /// Reconciliations that failed so far.
    pub fn failed_count(&self) -> u64 {
        self.metrics.failed.with_label_values(&self.labels()).get()
    }

    /// Reconciliations started by the periodic timer so far.
    pub fn periodical_count(&self) -> u64 {
        self.metrics
            .periodical
            .with_label_values(&self.labels())
            .get()
    }

    /// Failed reconciliations scheduled again after a backoff delay so far.
    pub fn retried_count(&self) -> u64 {
        self.metrics.retried.with_label_values(&self.labels()).get()
    }
}

/// A counter of the Kafka requests an operator sends, labelled by Kafka API (`api`), served
/// on `/metrics`; cloning shares it.
#[derive(Debug, Clone)]
pub struct KafkaRequestCounts {
    counter: IntCounterVec,
    queued: IntGaugeVec,
    apis: &'static [&'static str],
}

impl KafkaRequestCounts {
    /// The counter `name` registered in `metrics`, for requests of the Kafka `apis`.
    pub fn register(
        metrics: &Metrics,
        name: &str,
        help: &str,
        apis: &'static [&'static str],
    ) -> Result<Self, MetricsError> {
        let counter = IntCounterVec::new(Opts::new(name, help), &["api"])?;
        metrics.register(Box::new(counter.clone()))?;
        let queued = IntGaugeVec::new(
            Opts::new(
                "strimzi_operator_batch_queue_size",
                "Requests waiting to be sent to Kafka in a batch, by batcher",
            ),
            &["batcher"],
        )?;
        metrics.register(Box::new(queued.clone()))?;
        Ok(Self {
            counter,
            queued,
            apis,
        })
    }

    /// The gauge of the requests waiting in `batcher`.
    pub fn queued(&self, batcher: &str) -> prometheus::IntGauge {
        self.queued.with_label_values(&[batcher])
    }

    /// Counts one request of `api`.
    pub fn count(&self, api: &str) {
        self.counter.with_label_values(&[api]).inc();
    }

    /// Requests of `apis` sent so far.
    pub fn sum(&self, apis: &[&str]) -> u64 {
        apis.iter()
            .map(|api| self.counter.with_label_values(&[*api]).get())
            .sum()
    }

    /// Requests sent so far, all APIs together.
    pub fn total(&self) -> u64 {
        self.sum(self.apis)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn strimzi_names_in_text_format() {
        let metrics = Metrics::new().unwrap();
        let topics = metrics.reconciliations("KafkaTopic", "ns", "");
        topics.started();
        topics.finished(true, 0.2);
        topics.started();
        topics.finished(false, 0.1);
        topics.retried();
        topics.periodical();
        topics.set_resources(3, 1);
        metrics.set_certificate_expiration(
            "Kafka",
            "ns",
            "my-cluster",
            CertificateType::ClientsCa,
            1_900_000_000_000,
        );
        metrics.count_write("ConfigMap", "apply");
        assert_eq!(metrics.writes("ConfigMap", "apply"), 1);
        metrics.count_read("secrets", "get");
        metrics.count_read("secrets", "get");
        assert_eq!(metrics.reads("secrets", "get"), 2);
        assert_eq!(metrics.reads("secrets", "list"), 0);
        assert_eq!(topics.started_count(), 2);
        assert_eq!(topics.failed_count(), 1);
        assert_eq!(topics.retried_count(), 1);
        let text = metrics.encode().unwrap();
        for line in [
            "strimzi_reconciliations_total{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 2",
            "strimzi_reconciliations_successful_total{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 1",
            "strimzi_reconciliations_failed_total{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 1",
            "strimzi_reconciliations_retried_total{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 1",
            "strimzi_reconciliations_duration_seconds_count{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 2",
            "strimzi_reconciliations_duration_seconds_max{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 0.2",
            "strimzi_reconciliations_locked_total{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 0",
            "strimzi_reconciliations_periodical_total{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 1",
            "strimzi_certificate_expiration_timestamp_ms{cluster=\"my-cluster\",kind=\"Kafka\",namespace=\"ns\",resource_namespace=\"ns\",type=\"client-ca\"} 1900000000000",
            "strimzi_resources{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 3",
            "strimzi_resources_paused{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 1",
            "strimzi_operator_reconciliations_in_progress{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 0",
            "strimzi_operator_api_writes_total{kind=\"ConfigMap\",verb=\"apply\"} 1",
            "strimzi_operator_api_reads_total{kind=\"secrets\",verb=\"get\"} 2",
            "process_resident_memory_bytes",
        ] {
            assert!(text.contains(line), "missing {line} in\n{text}");
        }
        metrics.retain_resources("Kafka", |_, name| name != "my-cluster");
        let text = metrics.encode().unwrap();
        assert!(
            !text.contains("cluster=\"my-cluster\""),
            "the deleted cluster's certificate series stay:\n{text}"
        );
    }

    #[test]
    fn the_longest_reconciliation_is_forgotten_after_two_buckets() {
        let start = Instant::now();
        let longest = Longest {
            bucket_start: start,
            current: 7.0,
            previous: 0.0,
        };
        let next_bucket = longest.at(start + LONGEST_BUCKET);
        assert_eq!(next_bucket.value(), 7.0);
        assert_eq!(next_bucket.current, 0.0);
        assert_eq!(longest.at(start + LONGEST_BUCKET * 2).value(), 0.0);
        assert_eq!(next_bucket.at(start + LONGEST_BUCKET * 2).value(), 0.0);
    }
}
