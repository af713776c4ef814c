//! Prometheus metrics with Strimzi's names (`strimzi_reconciliations_total`, ...) plus process
//! metrics and our own counters of API writes and reads.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder,
};

/// Labels of the reconciliation metrics: the kind, the namespace and the resource selector.
const RECONCILIATION_LABELS: [&str; 3] = ["kind", "namespace", "selector"];

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
    resources: IntGaugeVec,
    paused: IntGaugeVec,
    in_progress: IntGaugeVec,
    api_writes: IntCounterVec,
    api_reads: IntCounterVec,
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
                0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0,
            ]),
            &RECONCILIATION_LABELS,
        )?;
        registry.register(Box::new(duration.clone()))?;
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
            resources,
            paused,
            in_progress,
            api_writes,
            api_reads,
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

    /// Every metric in Prometheus text format.
    pub fn encode(&self) -> Result<String, MetricsError> {
        let mut buffer = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buffer)?;
        Ok(String::from_utf8_lossy(&buffer).into_owned())
    }
}

impl ReconciliationMetrics {
    fn labels(&self) -> [&str; 3] {
        [&self.labels[0], &self.labels[1], &self.labels[2]]
    }

    /// Counts a started reconciliation.
    pub fn started(&self) {
        self.metrics
            .reconciliations
            .with_label_values(&self.labels())
            .inc();
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
    }

    /// Counts a failed reconciliation scheduled again after a backoff delay; failures only
    /// a change of the resource can cure are not retried and not counted.
    pub fn retried(&self) {
        self.metrics.retried.with_label_values(&self.labels()).inc();
    }

    /// Sets how many resources are watched and how many of them are paused.
    pub fn set_resources(&self, total: usize, paused: usize) {
        let as_gauge = |count: usize| i64::try_from(count).unwrap_or(i64::MAX);
        self.metrics
            .resources
            .with_label_values(&self.labels())
            .set(as_gauge(total));
        self.metrics
            .paused
            .with_label_values(&self.labels())
            .set(as_gauge(paused));
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
        topics.set_resources(3, 1);
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
            "strimzi_resources{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 3",
            "strimzi_resources_paused{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 1",
            "strimzi_operator_reconciliations_in_progress{kind=\"KafkaTopic\",namespace=\"ns\",selector=\"\"} 0",
            "strimzi_operator_api_writes_total{kind=\"ConfigMap\",verb=\"apply\"} 1",
            "strimzi_operator_api_reads_total{kind=\"secrets\",verb=\"get\"} 2",
            "process_resident_memory_bytes",
        ] {
            assert!(text.contains(line), "missing {line} in\n{text}");
        }
    }
}
