//! What benchmarks read from an operator process: its `/metrics` and `/ready` over plain
//! HTTP, and its resident set size from `/proc`.

/// The body and status line of `GET http://127.0.0.1:<port><path>`; empty when nothing
/// answers.
pub fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

/// Sum of the samples of metric `name` (any labels) in a Prometheus text exposition.
pub fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|line| line.starts_with(name) && line[name.len()..].starts_with(['{', ' ']))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// `VmHWM` (peak) or `VmRSS` (current) resident set size of process `pid`, in MiB; 0 when
/// unknown.
pub fn rss_mib(pid: u32, field: &str) -> f64 {
    let kib: u64 = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_default();
    kib as f64 / 1024.0
}

/// The sum of the samples of metric `name` whose labels contain `label` (e.g.
/// `kind="Kafka"`).
pub fn metric_with_label(text: &str, name: &str, label: &str) -> f64 {
    text.lines()
        .filter(|line| line.starts_with(&format!("{name}{{")) && line.contains(label))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// How much each sample of the counter `metric` grew between two expositions, by its
/// labels (e.g. `kind="secrets",verb="get"`), for those that grew.
pub fn growth_by_labels(
    metric: &str,
    before: &str,
    after: &str,
) -> std::collections::BTreeMap<String, f64> {
    let prefix = format!("{metric}{{");
    let samples = |text: &str| -> std::collections::BTreeMap<String, f64> {
        text.lines()
            .filter_map(|line| {
                let (labels, value) = line.strip_prefix(&prefix)?.rsplit_once(' ')?;
                Some((labels.trim_end_matches('}').to_owned(), value.parse().ok()?))
            })
            .collect()
    };
    let earlier = samples(before);
    samples(after)
        .into_iter()
        .filter_map(|(labels, value)| {
            let delta = value - earlier.get(&labels).copied().unwrap_or(0.0);
            (delta > 0.0).then_some((labels, delta))
        })
        .collect()
}

/// The CPU time process `pid` has used, user and system, in seconds; 0 when unknown.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command name in parentheses: state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&index| fields.get(index)?.parse::<f64>().ok())
        .sum();
    let per_second = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    ticks / per_second
}

/// The `quantile` (0 to 1) of the observations a Prometheus histogram gained between two
/// expositions, from the samples of `histogram` whose labels contain `label` (every
/// sample when empty), interpolated linearly within the bucket it falls in; `None` without
/// observations.
pub fn histogram_quantile(
    before: &str,
    after: &str,
    histogram: &str,
    label: &str,
    quantile: f64,
) -> Option<f64> {
    let buckets = |text: &str| -> std::collections::BTreeMap<u64, f64> {
        let mut sums = std::collections::BTreeMap::new();
        let prefix = format!("{histogram}_bucket{{");
        for line in text.lines().filter(|line| line.starts_with(&prefix)) {
            let Some((labels, value)) = line.rsplit_once(' ') else {
                continue;
            };
            if !labels.contains(label) {
                continue;
            }
            let Some(bound) = labels
                .split("le=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
            else {
                continue;
            };
            let bound = if bound == "+Inf" {
                f64::INFINITY
            } else {
                bound.parse().unwrap_or(f64::INFINITY)
            };
            *sums.entry(bound.to_bits()).or_insert(0.0) += value.parse::<f64>().unwrap_or(0.0);
        }
        sums
    };
    let earlier = buckets(before);
    let mut gained: Vec<(f64, f64)> = buckets(after)
        .into_iter()
        .map(|(bits, count)| {
            let bound = f64::from_bits(bits);
            (bound, count - earlier.get(&bits).copied().unwrap_or(0.0))
        })
        .collect();
    gained.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total = gained.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let wanted = quantile * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for (bound, cumulative) in gained {
        if cumulative >= wanted {
            if bound.is_infinite() {
                return Some(lower);
            }
            let share = if cumulative > below {
                (wanted - below) / (cumulative - below)
            } else {
                1.0
            };
            return Some(lower + (bound - lower) * share);
        }
        (lower, below) = (bound, cumulative);
    }
    Some(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_sums_every_labelled_sample() {
        let text = "# HELP x\nx_total{a=\"1\"} 2\nx_total{a=\"2\"} 3\nx_total_other 9\n";
        assert_eq!(metric(text, "x_total"), 5.0);
        assert_eq!(metric(text, "missing"), 0.0);
    }

    #[test]
    fn a_quantile_is_interpolated_within_the_bucket_the_new_observations_reach() {
        let before = "h_bucket{kind=\"Kafka\",le=\"0.1\"} 10\nh_bucket{kind=\"Kafka\",le=\"1\"} 10\nh_bucket{kind=\"Kafka\",le=\"+Inf\"} 10\n";
        let after = "h_bucket{kind=\"Kafka\",le=\"0.1\"} 60\nh_bucket{kind=\"Kafka\",le=\"1\"} 110\nh_bucket{kind=\"Kafka\",le=\"+Inf\"} 110\nh_bucket{kind=\"Topic\",le=\"0.1\"} 5\n";
        let p50 = histogram_quantile(before, after, "h", "kind=\"Kafka\"", 0.5).unwrap();
        assert!((p50 - 0.1).abs() < 1e-9, "{p50}");
        let p99 = histogram_quantile(before, after, "h", "kind=\"Kafka\"", 0.99).unwrap();
        assert!((p99 - (0.1 + 0.9 * 0.98)).abs() < 1e-9, "{p99}");
        assert_eq!(histogram_quantile(after, after, "h", "", 0.5), None);
    }

    #[test]
    fn this_process_has_used_some_cpu_time() {
        let mut spin = 0u64;
        for i in 0..20_000_000u64 {
            spin = spin.wrapping_add(i ^ (spin >> 3));
        }
        assert!(spin > 0);
        assert!(cpu_seconds(std::process::id()) > 0.0);
    }
}
