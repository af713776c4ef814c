//! Kubernetes quantities as numbers: the one parser of sizes that the model and the storage
//! reconciliation share.

/// The number a Kubernetes quantity such as `100Gi`, `1.5T`, `500M` or `250m` stands for
/// (bytes, for a size): decimal suffixes (`m`, `k`, `M`, `G`, `T`, `P`, `E`) and binary ones
/// (`Ki` … `Ei`). `K` is read as `k`, as Strimzi's `brokerCapacity` throughputs write it
/// (`10000KB/s`). `None` for anything else, which the caller reports.
pub fn value(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let factor = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    Some(number.parse::<f64>().ok()? * factor)
}

#[cfg(test)]
mod tests {
    use super::value;

    #[test]
    fn quantities_compare_across_suffixes() {
        assert_eq!(value("1Gi"), Some(1024.0 * 1024.0 * 1024.0));
        assert_eq!(value("100Gi"), Some(100.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(value("100"), Some(100.0));
        assert!(value("1Gi") > value("1G"));
        assert!(value("1.5Ti") > value("1Ti"));
        assert_eq!(value("500m"), Some(0.5));
        assert_eq!(value("10K"), value("10k"));
        assert_eq!(value("ten"), None);
        assert_eq!(value("1Xi"), None);
    }
}
