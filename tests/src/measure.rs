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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_sums_every_labelled_sample() {
        let text = "# HELP x\nx_total{a=\"1\"} 2\nx_total{a=\"2\"} 3\nx_total_other 9\n";
        assert_eq!(metric(text, "x_total"), 5.0);
        assert_eq!(metric(text, "missing"), 0.0);
    }
}
