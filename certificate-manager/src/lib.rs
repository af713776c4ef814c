//! Certificate authorities and the certificates they sign, compatible with Strimzi's Secrets.
//!
//! Every Kafka cluster has a cluster CA (Kafka nodes and operators) and a clients CA
//! (KafkaUsers). This crate reads and writes them in Strimzi's Secret layout, decides when they
//! are created, renewed or have their key replaced ([`authority`]), and issues the certificates
//! they sign ([`leaf`]). It does no I/O: callers pass the Secrets they read and the current
//! time, and apply the Secrets returned.
//!
//! Nothing is lost: an unreadable CA Secret is an error naming the Secret and data key, and
//! the caller leaves everything as it is. A CA is only created when neither of its Secrets
//! exists.
//!
//! ```
//! use strimzi_certificate_manager::authority::{self, CaAction, CaKind, CaSettings};
//! use strimzi_certificate_manager::keys::KeyAlgorithm;
//! use strimzi_certificate_manager::leaf::{self, IssueContext, LeafSpec, NodeLocation};
//!
//! let settings = CaSettings { key_algorithm: KeyAlgorithm::EcdsaP256, ..CaSettings::default() };
//! let now = time::OffsetDateTime::now_utc();
//! let ca = authority::reconcile(CaKind::Cluster, "my-cluster", &settings, None, None, now, true)?;
//! assert_eq!(ca.action, CaAction::Create);
//!
//! let location = NodeLocation { namespace: "kafka", cluster: "my-cluster", cluster_domain: "cluster.local" };
//! let spec = LeafSpec::kafka_node(&location, "my-cluster-brokers-0", true, &[]);
//! let context = IssueContext { now, window_open: true, ca_action: &ca.action, trust_pending: false };
//! let issued = leaf::issue_or_reuse(&ca.authority, &spec, None, &context)?;
//! assert!(issued.certificate.is_signed_by(ca.authority.certificate()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod authority;
pub mod certificate;
pub mod keys;
pub mod leaf;
pub mod maintenance;
pub mod pkcs12;
mod secrets;

/// Name of the operator setting that turns PKCS#12 stores in CA and user Secrets on or off.
pub const PKCS12_KEYSTORE_GENERATION_ENV: &str = "STRIMZI_PKCS12_KEYSTORE_GENERATION";

/// Reads `STRIMZI_PKCS12_KEYSTORE_GENERATION` (`true` when unset), refusing anything but
/// `true` or `false` with a message naming the variable.
pub fn pkcs12_generation(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
        Some(value) => Err(format!(
            "{PKCS12_KEYSTORE_GENERATION_ENV}={value} is invalid: expected `true` or `false`"
        )),
    }
}
