//! The load monitor's metric windows, from the stand-in's own sampling (pure).
//!
//! The stand-in does not read the brokers' metrics topic. Every `metric.sampling.interval.ms`
//! it describes the cluster through the Kafka admin API; a sample that succeeds marks its
//! window (`partition.metrics.window.ms` long, aligned to the epoch) as sampled. A window is
//! *valid* once it has ended with at least one sample in it, so proposals are refused with
//! `NotEnoughValidWindowsException` until one whole window has been watched (at most two
//! window lengths after start), as Cruise Control refuses them before its first window.
//! `numMonitoredWindows` counts valid windows among the last `num.partition.metrics.windows`.

use std::collections::BTreeSet;

use crate::config::WindowSettings;

/// Sampled windows.
#[derive(Clone, Debug)]
pub struct LoadMonitor {
    settings: WindowSettings,
    sampled: BTreeSet<u64>,
    partitions: usize,
}

/// What the `state` endpoint's `MonitorState` reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MonitorView {
    /// Valid windows among the retained ones.
    pub valid_windows: u32,
    /// Percentage of partitions covered by the valid windows (100 or 0: every sample sees
    /// every partition).
    pub coverage_pct: f64,
    /// Partitions seen in the last sample.
    pub partitions: usize,
}

impl LoadMonitor {
    /// A monitor with nothing sampled.
    pub fn new(settings: WindowSettings) -> Self {
        Self {
            settings,
            sampled: BTreeSet::new(),
            partitions: 0,
        }
    }

    fn window_of(&self, now_ms: u64) -> u64 {
        now_ms / (self.settings.window.as_millis().max(1) as u64)
    }

    /// Records a successful sample at `now_ms` that saw `partitions` partitions.
    pub fn record(&mut self, now_ms: u64, partitions: usize) {
        let window = self.window_of(now_ms);
        self.sampled.insert(window);
        self.partitions = partitions;
        let keep = u64::from(self.settings.windows) + 1;
        while self.sampled.len() as u64 > keep {
            self.sampled.pop_first();
        }
    }

    /// The valid windows at `now_ms`.
    pub fn view(&self, now_ms: u64) -> MonitorView {
        let current = self.window_of(now_ms);
        let oldest = current.saturating_sub(u64::from(self.settings.windows));
        let valid = self
            .sampled
            .iter()
            .filter(|window| **window < current && **window >= oldest)
            .count() as u32;
        MonitorView {
            valid_windows: valid,
            coverage_pct: if valid > 0 { 100.0 } else { 0.0 },
            partitions: self.partitions,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn monitor(windows: u32) -> LoadMonitor {
        LoadMonitor::new(WindowSettings {
            window: Duration::from_millis(10_000),
            windows,
            sampling_interval: Duration::from_millis(5_000),
        })
    }

    #[test]
    fn a_window_is_valid_once_it_has_ended_with_a_sample() {
        let mut monitor = monitor(1);
        assert_eq!(monitor.view(0).valid_windows, 0);
        monitor.record(12_000, 7);
        assert_eq!(monitor.view(19_999).valid_windows, 0, "window still open");
        let view = monitor.view(20_000);
        assert_eq!(view.valid_windows, 1);
        assert_eq!(view.coverage_pct, 100.0);
        assert_eq!(view.partitions, 7);
        assert_eq!(
            monitor.view(40_000).valid_windows,
            0,
            "too old for one window"
        );
    }

    #[test]
    fn valid_windows_are_capped_by_the_configured_count() {
        let mut monitor = monitor(3);
        for second in (0..100).step_by(5) {
            monitor.record(second * 1000, 1);
        }
        assert_eq!(monitor.view(100_000).valid_windows, 3);
    }
}
