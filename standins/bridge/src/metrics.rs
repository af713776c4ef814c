//! The few bridge metrics Strimzi's bridge dashboard reads, under its names
//! (`strimzi_bridge_http_server_requests_total`, `…_active_requests`,
//! `strimzi_bridge_kafka_producer_record_send_total`,
//! `strimzi_bridge_kafka_consumer_records_consumed_total`), counted by the stand-in itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

/// A label value in Prometheus' text format.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Counters of one bridge process.
#[derive(Default)]
pub struct BridgeMetrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    active: AtomicI64,
    sent: Mutex<BTreeMap<String, u64>>,
    consumed: Mutex<BTreeMap<String, u64>>,
}

fn add(map: &Mutex<BTreeMap<String, u64>>, key: &str, count: u64) {
    if let Ok(mut map) = map.lock() {
        *map.entry(key.to_owned()).or_default() += count;
    }
}

impl BridgeMetrics {
    /// A request started.
    pub fn started(&self) {
        self.active.fetch_add(1, Ordering::Relaxed);
    }

    /// A request for `path` ended with `code`.
    pub fn finished(&self, method: &str, path: &str, code: u16) {
        self.active.fetch_sub(1, Ordering::Relaxed);
        if let Ok(mut requests) = self.requests.lock() {
            *requests
                .entry((method.to_owned(), path.to_owned(), code))
                .or_default() += 1;
        }
    }

    /// `count` records were written to `topic`.
    pub fn sent(&self, topic: &str, count: u64) {
        add(&self.sent, topic, count);
    }

    /// `count` records of `topic` were handed to a consumer.
    pub fn consumed(&self, topic: &str, count: u64) {
        add(&self.consumed, topic, count);
    }

    /// Prometheus text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP strimzi_bridge_http_server_requests_total HTTP requests answered.\n\
             # TYPE strimzi_bridge_http_server_requests_total counter"
        );
        if let Ok(requests) = self.requests.lock() {
            for ((method, path, code), count) in requests.iter() {
                let path = escape(path);
                let _ = writeln!(
                    out,
                    "strimzi_bridge_http_server_requests_total{{code=\"{code}\",method=\"{method}\",path=\"{path}\"}} {count}"
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP strimzi_bridge_http_server_active_requests HTTP requests being answered.\n\
             # TYPE strimzi_bridge_http_server_active_requests gauge\n\
             strimzi_bridge_http_server_active_requests {}",
            self.active.load(Ordering::Relaxed)
        );
        for (name, help, map) in [
            (
                "strimzi_bridge_kafka_producer_record_send_total",
                "Records written to Kafka.",
                &self.sent,
            ),
            (
                "strimzi_bridge_kafka_consumer_records_consumed_total",
                "Records read from Kafka.",
                &self.consumed,
            ),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            if let Ok(map) = map.lock() {
                for (topic, count) in map.iter() {
                    let topic = escape(topic);
                    let _ = writeln!(out, "{name}{{topic=\"{topic}\"}} {count}");
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_rendered_with_the_dashboards_names() {
        let metrics = BridgeMetrics::default();
        metrics.started();
        metrics.finished("POST", "/topics/t", 200);
        metrics.sent("t", 5);
        metrics.consumed("t", 2);
        let text = metrics.render();
        for line in [
            "strimzi_bridge_http_server_requests_total{code=\"200\",method=\"POST\",path=\"/topics/t\"} 1",
            "strimzi_bridge_http_server_active_requests 0",
            "strimzi_bridge_kafka_producer_record_send_total{topic=\"t\"} 5",
            "strimzi_bridge_kafka_consumer_records_consumed_total{topic=\"t\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in\n{text}");
        }
    }
}
