//! Time to create a CA and issue 100 leaf certificates, for RSA-4096 and ECDSA P-256 keys.
//! Run with `cargo bench -p strimzi-certificate-manager`; `LEAVES=N` changes the count.
//! Figures are printed, never asserted.

use std::time::{Duration, Instant};

use strimzi_certificate_manager::authority::{self, CaKind, CaSettings};
use strimzi_certificate_manager::keys::KeyAlgorithm;
use strimzi_certificate_manager::leaf::{self, IssueContext, IssueReason, LeafSpec, NodeLocation};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let leaves: usize = std::env::var("LEAVES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(100);
    let location = NodeLocation {
        namespace: "kafka",
        cluster: "bench",
        cluster_domain: "cluster.local",
    };
    println!(
        "{:<12} {:>10} {:>14} {:>12} {:>16}",
        "keys", "CA", "leaves", "per leaf", "per leaf + p12"
    );
    for algorithm in [KeyAlgorithm::EcdsaP256, KeyAlgorithm::Rsa4096] {
        let now = time::OffsetDateTime::now_utc();
        let mut ca_time = Duration::ZERO;
        let mut per_leaf = Vec::new();
        for pkcs12 in [false, true] {
            let settings = CaSettings {
                key_algorithm: algorithm,
                pkcs12,
                ..CaSettings::default()
            };
            let started = Instant::now();
            let ca =
                authority::reconcile(CaKind::Cluster, "bench", &settings, None, None, now, true)?;
            ca_time = started.elapsed();
            let context = IssueContext {
                now,
                window_open: true,
                ca_action: &ca.action,
                trust_pending: false,
            };
            let started = Instant::now();
            for node in 0..leaves {
                let spec =
                    LeafSpec::kafka_node(&location, &format!("bench-pool-{node}"), true, &[]);
                leaf::issue(&ca.authority, &spec, IssueReason::Missing, &context)?;
            }
            per_leaf.push(started.elapsed());
        }
        let each = |total: Duration| total / u32::try_from(leaves.max(1)).unwrap_or(u32::MAX);
        println!(
            "{:<12} {:>10.1?} {:>14.1?} {:>12.1?} {:>16.1?}",
            algorithm.to_string(),
            ca_time,
            per_leaf[0],
            each(per_leaf[0]),
            each(per_leaf[1]),
        );
    }
    println!("({leaves} broker certificates each; times include key generation)");
    Ok(())
}
