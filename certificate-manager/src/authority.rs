//! The cluster and clients certificate authorities: reading Strimzi's CA Secrets, deciding what
//! to do with them, and producing the Secrets to write.
//!
//! The work is split in three steps, each usable alone:
//! 1. [`observe`] reads and validates the two Secrets (`<cluster>-cluster-ca-cert` with
//!    `ca.crt`, `ca.p12`, `ca.password` and old certificates; `<cluster>-cluster-ca` with
//!    `ca.key`). Anything unreadable is an error naming the Secret and the data key; the
//!    caller then changes nothing, so a CA is never regenerated over a broken one.
//! 2. [`decide`] is a pure function of the settings, what was observed, the time and whether a
//!    maintenance window is open.
//! 3. [`apply`] carries the decision out and returns the desired Secrets.
//!
//! [`reconcile`] runs all three.
//!
//! The two Secrets cannot be written at once, so the caller writes the key Secret first: a
//! certificate is never stored for a key that is not. A key replacement marks its key Secret
//! ([`REPLACES_CERTIFICATE`]) until the certificate Secret is written and the force
//! annotations are gone, so that a reconciliation stopped in between (a crash, a quota, an
//! admission webhook) leaves a state that [`observe`] recognises as its own and the next
//! reconciliation completes, while a mismatched pair nobody marked is still refused.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, KeyPair, KeyUsagePurpose,
    SerialNumber,
};
use strimzi_api::annotations::{
    CA_CERT_GENERATION, CA_KEY_GENERATION, FORCE_RENEW, FORCE_REPLACE, is_true,
};
use strimzi_api::kafka::{CertificateAuthority as CaSpec, CertificateExpirationPolicy};
use strimzi_api::naming;
use time::OffsetDateTime;

use crate::certificate::ParsedCertificate;
use crate::keys::{self, KeyAlgorithm};
use crate::pkcs12::{self, Pkcs12Store};
use crate::secrets;

/// Data key of the current CA certificate.
pub const CA_CRT: &str = "ca.crt";
/// Data key of the CA private key.
pub const CA_KEY: &str = "ca.key";
/// Data key of the PKCS#12 trust store with every trusted CA certificate.
pub const CA_P12: &str = "ca.p12";
/// Data key of the trust store's password.
pub const CA_PASSWORD: &str = "ca.password";
/// Organization of the CA certificates' subject.
pub const ORGANIZATION: &str = "io.strimzi";
/// Our annotation on a CA key Secret whose key replaced the key of a certificate, while that
/// replacement is being written: the SHA-1 thumbprint of the replaced certificate (the
/// certificate Secret's `ca.crt` before the replacement). Written with the new key before the
/// certificate Secret, removed once the certificate Secret is written and the force
/// annotations are removed ([`ReconciledCa::pending_key_secret`]).
pub const REPLACES_CERTIFICATE: &str = "strimzi-rs/replaces-ca-certificate";

/// Which of a cluster's two certificate authorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaKind {
    /// Signs the certificates of Kafka nodes and operators.
    Cluster,
    /// Signs the certificates of KafkaUsers.
    Clients,
}

impl CaKind {
    /// Common name prefix of the CA certificate (`cluster-ca`, `clients-ca`).
    pub fn common_name(self) -> &'static str {
        match self {
            CaKind::Cluster => "cluster-ca",
            CaKind::Clients => "clients-ca",
        }
    }

    /// Name of the Secret with the CA certificate.
    pub fn cert_secret_name(self, cluster: &str) -> String {
        match self {
            CaKind::Cluster => naming::cluster_ca_cert_secret(cluster),
            CaKind::Clients => naming::clients_ca_cert_secret(cluster),
        }
    }

    /// Name of the Secret with the CA private key.
    pub fn key_secret_name(self, cluster: &str) -> String {
        match self {
            CaKind::Cluster => naming::cluster_ca_key_secret(cluster),
            CaKind::Clients => naming::clients_ca_key_secret(cluster),
        }
    }
}

impl std::fmt::Display for CaKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            CaKind::Cluster => "cluster CA",
            CaKind::Clients => "clients CA",
        })
    }
}

/// How one CA is managed: `spec.clusterCa` or `spec.clientsCa` with their defaults, plus the
/// operator's choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaSettings {
    /// Whether the operator creates and renews the CA (`generateCertificateAuthority`).
    pub generate: bool,
    /// Validity of new certificates, in days (`validityDays`).
    pub validity_days: u32,
    /// Days before expiry in which certificates are renewed (`renewalDays`).
    pub renewal_days: u32,
    /// What a time-driven renewal does (`certificateExpirationPolicy`).
    pub policy: CertificateExpirationPolicy,
    /// Algorithm of new keys.
    pub key_algorithm: KeyAlgorithm,
    /// Whether PKCS#12 stores are written (`STRIMZI_PKCS12_KEYSTORE_GENERATION`).
    pub pkcs12: bool,
}

impl Default for CaSettings {
    fn default() -> Self {
        Self::from_spec(None)
    }
}

impl CaSettings {
    /// The settings of a CA spec (or of none), with Strimzi's defaults, RSA keys and PKCS#12
    /// stores.
    pub fn from_spec(spec: Option<&CaSpec>) -> Self {
        let spec = spec.cloned().unwrap_or_default();
        let days = |value: i32| u32::try_from(value).unwrap_or(1).max(1);
        Self {
            generate: spec.generates_certificate_authority(),
            validity_days: days(spec.validity_days_or_default()),
            renewal_days: days(spec.renewal_days_or_default()),
            policy: spec.certificate_expiration_policy_or_default(),
            key_algorithm: KeyAlgorithm::default(),
            pkcs12: true,
        }
    }
}

/// Why a CA certificate is (or would be) issued again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaTrigger {
    /// The certificate Secret does not exist while the key does.
    CertificateMissing,
    /// `strimzi.io/force-renew` is set on the certificate Secret.
    ForceRenew,
    /// `strimzi.io/force-replace` is set on the key Secret.
    ForceReplace,
    /// The certificate is within `renewalDays` of its expiry.
    Expiring {
        /// When the certificate expires.
        not_after: OffsetDateTime,
    },
    /// An earlier reconciliation stored a new key and was stopped before it stored the
    /// certificate of that key ([`ObservedCa::KeyReplacementInterrupted`]).
    ReplacementInterrupted,
}

impl std::fmt::Display for CaTrigger {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaTrigger::CertificateMissing => {
                formatter.write_str("the CA certificate Secret is missing")
            }
            CaTrigger::ForceRenew => write!(
                formatter,
                "the certificate Secret is annotated {FORCE_RENEW}"
            ),
            CaTrigger::ForceReplace => {
                write!(formatter, "the key Secret is annotated {FORCE_REPLACE}")
            }
            CaTrigger::Expiring { not_after } => {
                write!(
                    formatter,
                    "the CA certificate expires on {not_after} and is within its renewal period"
                )
            }
            CaTrigger::ReplacementInterrupted => formatter.write_str(
                "an earlier reconciliation stored the new key and was stopped before it stored the new certificate",
            ),
        }
    }
}

/// What to do with a CA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaAction {
    /// Leave key and certificate as they are.
    Keep,
    /// Something is due, but only inside a maintenance time window.
    Postponed(CaTrigger),
    /// Create a new key and certificate: neither Secret exists.
    Create,
    /// Issue a new certificate for the existing key.
    RenewCertificate(CaTrigger),
    /// Generate a new key and certificate; the old certificate stays trusted.
    ReplaceKey(CaTrigger),
}

impl CaAction {
    /// Whether a new CA certificate is issued, so leaf certificates must be issued again.
    pub fn issues_certificate(&self) -> bool {
        matches!(
            self,
            CaAction::Create | CaAction::RenewCertificate(_) | CaAction::ReplaceKey(_)
        )
    }

    /// Whether the CA key changes.
    pub fn replaces_key(&self) -> bool {
        matches!(self, CaAction::ReplaceKey(_))
    }
}

/// Why a CA's Secrets cannot be used. Every variant names the Secret; the caller must change
/// nothing and report it.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    /// A Secret that must exist does not.
    #[error("Secret {secret} is missing: {why}")]
    MissingSecret {
        /// Name of the missing Secret.
        secret: String,
        /// Why it is needed and what the user can do.
        why: String,
    },
    /// A data key is missing from a Secret.
    #[error("Secret {secret} has no data key {key}")]
    MissingData {
        /// Name of the Secret.
        secret: String,
        /// The missing data key.
        key: String,
    },
    /// A certificate does not parse.
    #[error("data key {key} of Secret {secret} is not a valid certificate: {message}")]
    InvalidCertificate {
        /// Name of the Secret.
        secret: String,
        /// The data key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A private key does not parse.
    #[error("data key {key} of Secret {secret} is not a valid private key: {message}")]
    InvalidKey {
        /// Name of the Secret.
        secret: String,
        /// The data key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The key is not the certificate's.
    #[error(
        "the private key in data key {key_data} of Secret {key_secret} does not belong to the certificate in data key {cert_data} of Secret {cert_secret}"
    )]
    KeyMismatch {
        /// Secret with the certificate.
        cert_secret: String,
        /// Its data key.
        cert_data: String,
        /// Secret with the key.
        key_secret: String,
        /// Its data key.
        key_data: String,
    },
    /// A user-supplied CA certificate cannot sign.
    #[error(
        "data key {key} of Secret {secret} is not a CA certificate (basic constraints CA:FALSE)"
    )]
    NotACertificateAuthority {
        /// Name of the Secret.
        secret: String,
        /// The data key.
        key: String,
    },
    /// A user-supplied CA certificate has expired.
    #[error(
        "the CA certificate in data key {key} of Secret {secret} expired on {not_after}; replace it"
    )]
    Expired {
        /// Name of the Secret.
        secret: String,
        /// The data key.
        key: String,
        /// When it expired.
        not_after: OffsetDateTime,
    },
    /// A generation annotation is not a number.
    #[error("annotation {annotation} of Secret {secret} is `{value}`, not a non-negative integer")]
    InvalidAnnotation {
        /// Name of the Secret.
        secret: String,
        /// The annotation key.
        annotation: String,
        /// Its value.
        value: String,
    },
    /// Generating a key, certificate or store failed.
    #[error("generating the {kind}: {message}")]
    Generation {
        /// Which CA.
        kind: CaKind,
        /// What failed.
        message: String,
    },
}

impl CaError {
    /// Stable reason string for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            CaError::MissingSecret { .. } => "MissingCaSecret",
            CaError::MissingData { .. } => "MissingCaSecretData",
            CaError::InvalidCertificate { .. } => "InvalidCaCertificate",
            CaError::InvalidKey { .. } => "InvalidCaKey",
            CaError::KeyMismatch { .. } => "CaKeyMismatch",
            CaError::NotACertificateAuthority { .. } => "NotACertificateAuthority",
            CaError::Expired { .. } => "CaCertificateExpired",
            CaError::InvalidAnnotation { .. } => "InvalidCaAnnotation",
            CaError::Generation { .. } => "CaGenerationFailed",
        }
    }
}

/// Something the user should notice that does not stop the reconciliation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaWarning {
    /// Stable reason string.
    pub reason: &'static str,
    /// What to tell the user.
    pub message: String,
}

/// What was found in a CA's two Secrets, validated.
#[derive(Debug)]
pub enum ObservedCa {
    /// Neither Secret exists.
    Absent,
    /// Only the key Secret exists (with a valid key).
    KeyOnly {
        /// The CA key.
        key: Box<KeyPair>,
        /// Its generation.
        key_generation: u32,
    },
    /// Both Secrets exist and hold a matching certificate and key.
    Complete(Box<StoredCa>),
    /// A key replacement of ours was stopped between its writes: the key Secret holds the new
    /// key, marked ([`REPLACES_CERTIFICATE`]) as replacing the key of the certificate that the
    /// certificate Secret still holds. The stored CA has that old certificate and the new key
    /// (with its generation); the certificate of the new key is still to be issued.
    KeyReplacementInterrupted(Box<StoredCa>),
}

/// A CA read from its Secrets.
#[derive(Debug)]
pub struct StoredCa {
    certificate: ParsedCertificate,
    key: KeyPair,
    cert_generation: u32,
    key_generation: u32,
    force_renew: bool,
    force_replace: bool,
    old_certificates: BTreeMap<String, ParsedCertificate>,
    trust_store: Option<Pkcs12Store>,
    /// The key Secret's [`REPLACES_CERTIFICATE`] mark, when it names a certificate of the
    /// certificate Secret: the key replacement that wrote it is written through (the mark
    /// names an old certificate) or interrupted (it names `ca.crt`).
    replaced_certificate: Option<String>,
}

/// Which force annotations a reconciliation has carried out (or found carried out by the
/// interrupted one it completed), to be removed from the live Secrets once both are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForceAnnotationsDone {
    /// `strimzi.io/force-renew` on the certificate Secret.
    pub renew: bool,
    /// `strimzi.io/force-replace` on the key Secret.
    pub replace: bool,
}

/// Reads a CA that someone else keeps, only to sign certificates with it: the user operator
/// reads the clients CA this way and never writes it. The two Secrets are named by their own
/// metadata, and an expired CA certificate is an error.
pub fn read_signer(
    kind: CaKind,
    settings: &CaSettings,
    cert_secret: &Secret,
    key_secret: &Secret,
    now: OffsetDateTime,
) -> Result<CertificateAuthority, CaError> {
    let cert_name = secrets::name(cert_secret).to_owned();
    let key_name = secrets::name(key_secret).to_owned();
    let stored = read_stored(settings, cert_secret, &cert_name, key_secret, &key_name)?;
    if stored.certificate.is_expired(now) {
        return Err(CaError::Expired {
            secret: cert_name,
            key: CA_CRT.to_owned(),
            not_after: stored.certificate.not_after(),
        });
    }
    let mut trusted = stored.old_certificates;
    trusted.insert(CA_CRT.to_owned(), stored.certificate.clone());
    Ok(CertificateAuthority {
        kind,
        certificate: stored.certificate,
        key: stored.key,
        cert_generation: stored.cert_generation,
        key_generation: stored.key_generation,
        trusted,
        settings: *settings,
    })
}

/// Reads and validates a CA's Secrets.
pub fn observe(
    kind: CaKind,
    cluster: &str,
    settings: &CaSettings,
    cert_secret: Option<&Secret>,
    key_secret: Option<&Secret>,
) -> Result<ObservedCa, CaError> {
    let cert_name = kind.cert_secret_name(cluster);
    let key_name = kind.key_secret_name(cluster);
    match (cert_secret, key_secret) {
        (None, None) if settings.generate => Ok(ObservedCa::Absent),
        (_, None) if settings.generate => Err(CaError::MissingSecret {
            secret: key_name,
            why: format!(
                "the {kind} certificate in Secret {cert_name} exists, and a new key would break everything that trusts it; \
                 restore the key Secret, or delete {cert_name} as well to start a new {kind}"
            ),
        }),
        (None, Some(key_secret)) if settings.generate => Ok(ObservedCa::KeyOnly {
            key: Box::new(read_key(key_secret, &key_name)?),
            key_generation: generation(key_secret, &key_name, CA_KEY_GENERATION)?,
        }),
        (Some(cert_secret), Some(key_secret)) => {
            let mut stored = read_pair(cert_secret, &cert_name, key_secret, &key_name)?;
            let mark = secrets::annotation(key_secret, REPLACES_CERTIFICATE);
            if !stored.certificate.matches_key(&stored.key) {
                // Only a key replacement of ours, stopped before it stored the certificate,
                // leaves a key that is not the certificate's; anyone else's is refused.
                if !(settings.generate && mark == Some(stored.certificate.thumbprint().as_str())) {
                    return Err(key_mismatch(&cert_name, &key_name));
                }
                stored.replaced_certificate = mark.map(str::to_owned);
                return Ok(ObservedCa::KeyReplacementInterrupted(Box::new(stored)));
            }
            stored.replaced_certificate = mark
                .filter(|_| settings.generate)
                .filter(|mark| {
                    stored
                        .old_certificates
                        .values()
                        .any(|old| old.thumbprint() == *mark)
                })
                .map(str::to_owned);
            checked_authority(settings, &stored, &cert_name)?;
            Ok(ObservedCa::Complete(Box::new(stored)))
        }
        (cert_secret, _) => {
            let missing = if cert_secret.is_none() {
                cert_name
            } else {
                key_name
            };
            Err(CaError::MissingSecret {
                secret: missing,
                why: format!(
                    "generateCertificateAuthority is false, so the user supplies both {kind} Secrets"
                ),
            })
        }
    }
}

/// Reads both Secrets of a CA that must hold a certificate and its key.
fn read_stored(
    settings: &CaSettings,
    cert_secret: &Secret,
    cert_name: &str,
    key_secret: &Secret,
    key_name: &str,
) -> Result<StoredCa, CaError> {
    let stored = read_pair(cert_secret, cert_name, key_secret, key_name)?;
    if !stored.certificate.matches_key(&stored.key) {
        return Err(key_mismatch(cert_name, key_name));
    }
    checked_authority(settings, &stored, cert_name)?;
    Ok(stored)
}

/// The error of a key that does not belong to the certificate.
fn key_mismatch(cert_name: &str, key_name: &str) -> CaError {
    CaError::KeyMismatch {
        cert_secret: cert_name.to_owned(),
        cert_data: CA_CRT.to_owned(),
        key_secret: key_name.to_owned(),
        key_data: CA_KEY.to_owned(),
    }
}

/// Refuses a user-supplied CA certificate that cannot sign.
fn checked_authority(
    settings: &CaSettings,
    stored: &StoredCa,
    cert_name: &str,
) -> Result<(), CaError> {
    if !settings.generate && !stored.certificate.is_ca() {
        return Err(CaError::NotACertificateAuthority {
            secret: cert_name.to_owned(),
            key: CA_CRT.to_owned(),
        });
    }
    Ok(())
}

/// Reads and parses both Secrets of a CA, whether or not the key is the certificate's.
fn read_pair(
    cert_secret: &Secret,
    cert_name: &str,
    key_secret: &Secret,
    key_name: &str,
) -> Result<StoredCa, CaError> {
    let certificate = read_certificate(cert_secret, cert_name, CA_CRT)?;
    let key = read_key(key_secret, key_name)?;
    let old_certificates = cert_secret
        .data
        .iter()
        .flatten()
        .filter(|(data_key, _)| data_key.ends_with(".crt") && data_key.as_str() != CA_CRT)
        .filter_map(|(data_key, value)| {
            ParsedCertificate::from_pem(&value.0)
                .ok()
                .map(|parsed| (data_key.clone(), parsed))
        })
        .collect();
    Ok(StoredCa {
        certificate,
        key,
        cert_generation: generation(cert_secret, cert_name, CA_CERT_GENERATION)?,
        key_generation: generation(key_secret, key_name, CA_KEY_GENERATION)?,
        force_renew: is_true(cert_secret.metadata.annotations.as_ref(), FORCE_RENEW),
        force_replace: is_true(key_secret.metadata.annotations.as_ref(), FORCE_REPLACE),
        old_certificates,
        trust_store: stored_trust_store(cert_secret),
        replaced_certificate: None,
    })
}

fn read_certificate(secret: &Secret, name: &str, key: &str) -> Result<ParsedCertificate, CaError> {
    let bytes = secrets::data(secret, key).ok_or_else(|| CaError::MissingData {
        secret: name.to_owned(),
        key: key.to_owned(),
    })?;
    ParsedCertificate::from_pem(bytes).map_err(|error| CaError::InvalidCertificate {
        secret: name.to_owned(),
        key: key.to_owned(),
        message: error.to_string(),
    })
}

fn read_key(secret: &Secret, name: &str) -> Result<KeyPair, CaError> {
    let bytes = secrets::data(secret, CA_KEY).ok_or_else(|| CaError::MissingData {
        secret: name.to_owned(),
        key: CA_KEY.to_owned(),
    })?;
    keys::from_pem(bytes).map_err(|error| CaError::InvalidKey {
        secret: name.to_owned(),
        key: CA_KEY.to_owned(),
        message: error.to_string(),
    })
}

/// A generation annotation; missing means 0, as Strimzi reads it.
fn generation(secret: &Secret, name: &str, annotation: &str) -> Result<u32, CaError> {
    match secrets::annotation(secret, annotation) {
        None => Ok(0),
        Some(value) => value
            .trim()
            .parse()
            .map_err(|_| CaError::InvalidAnnotation {
                secret: name.to_owned(),
                annotation: annotation.to_owned(),
                value: value.to_owned(),
            }),
    }
}

/// Decides what to do with a CA. User-supplied CAs are always kept. Forced and time-driven
/// renewals wait for a maintenance window; creating a missing CA or certificate, or completing
/// an interrupted key replacement, does not. When both force annotations are set, replacing
/// the key wins, as it renews the certificate too. Force annotations that a key replacement
/// written earlier carried out (its mark is still on the key Secret) are not acted on again.
pub fn decide(
    settings: &CaSettings,
    observed: &ObservedCa,
    now: OffsetDateTime,
    window_open: bool,
) -> CaAction {
    if !settings.generate {
        return CaAction::Keep;
    }
    let stored = match observed {
        ObservedCa::Absent => return CaAction::Create,
        ObservedCa::KeyOnly { .. } => {
            return CaAction::RenewCertificate(CaTrigger::CertificateMissing);
        }
        ObservedCa::KeyReplacementInterrupted(_) => {
            return CaAction::ReplaceKey(CaTrigger::ReplacementInterrupted);
        }
        ObservedCa::Complete(stored) => stored,
    };
    let forced = stored.replaced_certificate.is_none();
    let due = if forced && stored.force_replace {
        Some(CaAction::ReplaceKey(CaTrigger::ForceReplace))
    } else if forced && stored.force_renew {
        Some(CaAction::RenewCertificate(CaTrigger::ForceRenew))
    } else if stored
        .certificate
        .in_renewal_period(now, settings.renewal_days)
    {
        let trigger = CaTrigger::Expiring {
            not_after: stored.certificate.not_after(),
        };
        Some(match settings.policy {
            CertificateExpirationPolicy::RenewCertificate => CaAction::RenewCertificate(trigger),
            CertificateExpirationPolicy::ReplaceKey => CaAction::ReplaceKey(trigger),
        })
    } else {
        None
    };
    match due {
        None => CaAction::Keep,
        Some(action) if window_open => action,
        Some(CaAction::RenewCertificate(trigger) | CaAction::ReplaceKey(trigger)) => {
            CaAction::Postponed(trigger)
        }
        Some(other) => other,
    }
}

/// A CA ready to sign leaf certificates.
#[derive(Debug)]
pub struct CertificateAuthority {
    kind: CaKind,
    certificate: ParsedCertificate,
    key: KeyPair,
    cert_generation: u32,
    key_generation: u32,
    trusted: BTreeMap<String, ParsedCertificate>,
    settings: CaSettings,
}

impl CertificateAuthority {
    /// Which CA this is.
    pub fn kind(&self) -> CaKind {
        self.kind
    }

    /// The current CA certificate.
    pub fn certificate(&self) -> &ParsedCertificate {
        &self.certificate
    }

    /// The CA key.
    pub fn key(&self) -> &KeyPair {
        &self.key
    }

    /// How often the certificate was issued (the `strimzi.io/ca-cert-generation` value).
    pub fn cert_generation(&self) -> u32 {
        self.cert_generation
    }

    /// How often the key was replaced (the `strimzi.io/ca-key-generation` value).
    pub fn key_generation(&self) -> u32 {
        self.key_generation
    }

    /// The settings the CA was reconciled with, which also govern its leaf certificates.
    pub fn settings(&self) -> &CaSettings {
        &self.settings
    }

    /// Every certificate clients should trust, by data key: the current one (`ca.crt`) and old
    /// ones kept while their key's certificates are still in use.
    pub fn trusted_certificates(&self) -> &BTreeMap<String, ParsedCertificate> {
        &self.trusted
    }

    /// The trusted certificates as one PEM bundle, current first.
    pub fn trusted_pem_bundle(&self) -> String {
        let mut bundle = self.certificate.to_pem();
        for (data_key, certificate) in &self.trusted {
            if data_key != CA_CRT {
                bundle.push_str(&certificate.to_pem());
            }
        }
        bundle
    }
}

/// The outcome of reconciling a CA: what was done, the signer, and the Secrets to write.
#[derive(Debug)]
pub struct ReconciledCa {
    /// What was decided.
    pub action: CaAction,
    /// The CA to sign leaf certificates with.
    pub authority: CertificateAuthority,
    /// The desired certificate Secret; `None` for a user-supplied CA, which is never written.
    pub cert_secret: Option<Secret>,
    /// The desired key Secret; `None` for a user-supplied CA. Written after the certificate
    /// Secret when there is a [`Self::pending_key_secret`], else before it.
    pub key_secret: Option<Secret>,
    /// The key Secret to write before the certificate Secret while a key replacement is
    /// written: the new key marked [`REPLACES_CERTIFICATE`]. Once the certificate Secret is
    /// written and the force annotations carried out are removed, [`Self::key_secret`]
    /// (without the mark) is written. `None` when no key replacement is being written.
    pub pending_key_secret: Option<Secret>,
    /// The force annotations carried out, to be removed from the live Secrets once the
    /// certificate Secret is written.
    pub force_annotations_done: ForceAnnotationsDone,
    /// Whether expired old certificates were dropped from the certificate Secret.
    pub expired_certificates_removed: bool,
    /// What the user should notice.
    pub warnings: Vec<CaWarning>,
}

/// Reads, decides and applies in one go: the entry point of the cluster operator's CA step.
pub fn reconcile(
    kind: CaKind,
    cluster: &str,
    settings: &CaSettings,
    cert_secret: Option<&Secret>,
    key_secret: Option<&Secret>,
    now: OffsetDateTime,
    window_open: bool,
) -> Result<ReconciledCa, CaError> {
    let observed = observe(kind, cluster, settings, cert_secret, key_secret)?;
    let action = decide(settings, &observed, now, window_open);
    apply(kind, cluster, settings, observed, action, now)
}

/// Carries out `action` on what was observed.
pub fn apply(
    kind: CaKind,
    cluster: &str,
    settings: &CaSettings,
    observed: ObservedCa,
    action: CaAction,
    now: OffsetDateTime,
) -> Result<ReconciledCa, CaError> {
    let cert_name = kind.cert_secret_name(cluster);
    let mut warnings = Vec::new();
    if let CaAction::Postponed(trigger) = &action {
        warnings.push(CaWarning {
            reason: "CaRenewalPostponed",
            message: format!(
                "The {kind} in Secret {cert_name} is due for renewal ({trigger}); it happens in the next maintenance time window"
            ),
        });
    }

    // The certificate a key replacement being written replaces, which marks its key Secret.
    let replaced = match (&observed, &action) {
        (
            ObservedCa::Complete(stored) | ObservedCa::KeyReplacementInterrupted(stored),
            CaAction::ReplaceKey(_),
        ) => Some(stored.certificate.thumbprint()),
        (ObservedCa::Complete(stored), _) => stored.replaced_certificate.clone(),
        _ => None,
    };
    let force_annotations_done = ForceAnnotationsDone {
        renew: replaced.is_some() || matches!(action, CaAction::RenewCertificate(_)),
        replace: replaced.is_some(),
    };

    let StoredCa {
        certificate,
        key,
        cert_generation,
        key_generation,
        old_certificates: mut old,
        trust_store: existing_store,
        ..
    } = next_material(kind, settings, observed, &action, now)?;

    if !settings.generate {
        if certificate.is_expired(now) {
            return Err(CaError::Expired {
                secret: cert_name,
                key: CA_CRT.to_owned(),
                not_after: certificate.not_after(),
            });
        }
        if certificate.in_renewal_period(now, settings.renewal_days) {
            warnings.push(CaWarning {
                reason: "CaCertificateExpiring",
                message: format!(
                    "The user-supplied {kind} certificate in Secret {cert_name} expires on {}; replace it before then",
                    certificate.not_after()
                ),
            });
        }
    }

    let before = old.len();
    old.retain(|_, certificate| !certificate.is_expired(now));
    let expired_certificates_removed = old.len() != before;

    let mut trusted = old;
    trusted.insert(CA_CRT.to_owned(), certificate.clone());

    let (cert_secret, key_secret, pending_key_secret) = if settings.generate {
        let unchanged = !action.issues_certificate() && !expired_certificates_removed;
        let data = cert_secret_data(kind, settings.pkcs12, &trusted, existing_store, unchanged)?;
        let cert_secret = secrets::build(
            &cert_name,
            BTreeMap::from([(CA_CERT_GENERATION.to_owned(), cert_generation.to_string())]),
            data,
        );
        let key_secret = |mark: Option<&String>| {
            let generation = (CA_KEY_GENERATION.to_owned(), key_generation.to_string());
            let mark = mark.map(|mark| (REPLACES_CERTIFICATE.to_owned(), mark.clone()));
            secrets::build(
                &kind.key_secret_name(cluster),
                std::iter::once(generation).chain(mark).collect(),
                BTreeMap::from([(CA_KEY.to_owned(), key.serialize_pem().into_bytes())]),
            )
        };
        let pending = replaced.as_ref().map(|mark| key_secret(Some(mark)));
        (Some(cert_secret), Some(key_secret(None)), pending)
    } else {
        (None, None, None)
    };

    Ok(ReconciledCa {
        action,
        authority: CertificateAuthority {
            kind,
            certificate,
            key,
            cert_generation,
            key_generation,
            trusted,
            settings: *settings,
        },
        cert_secret,
        key_secret,
        pending_key_secret,
        force_annotations_done,
        expired_certificates_removed,
        warnings,
    })
}

/// The key, certificate and generations after carrying out `action`.
fn next_material(
    kind: CaKind,
    settings: &CaSettings,
    observed: ObservedCa,
    action: &CaAction,
    now: OffsetDateTime,
) -> Result<StoredCa, CaError> {
    let failed = |message: String| CaError::Generation { kind, message };
    let new_key =
        || keys::generate(settings.key_algorithm).map_err(|error| failed(error.to_string()));
    let sign = |key_generation: u32, key: &KeyPair| {
        self_signed(kind, key_generation, key, now, settings.validity_days).map_err(failed)
    };
    let fresh = |certificate, key, key_generation| StoredCa {
        certificate,
        key,
        cert_generation: 0,
        key_generation,
        force_renew: false,
        force_replace: false,
        old_certificates: BTreeMap::new(),
        trust_store: None,
        replaced_certificate: None,
    };
    // The stored CA with its new certificate for `key` (a new one, else the stored one, which
    // an interrupted replacement stored), the certificate it replaces kept as an old one.
    let replaced = |stored: StoredCa, new_key: Option<KeyPair>| {
        let (key, key_generation) = match new_key {
            Some(key) => (key, stored.key_generation + 1),
            None => (stored.key, stored.key_generation),
        };
        let certificate = sign(key_generation, &key)?;
        let mut old_certificates = stored.old_certificates;
        old_certificates.insert(
            old_certificate_key(stored.certificate.not_after()),
            stored.certificate,
        );
        Ok::<_, CaError>(StoredCa {
            certificate,
            key,
            cert_generation: stored.cert_generation + 1,
            key_generation,
            old_certificates,
            ..stored
        })
    };
    Ok(match (observed, action) {
        (ObservedCa::Absent, _) => {
            let key = new_key()?;
            fresh(sign(0, &key)?, key, 0)
        }
        (
            ObservedCa::KeyOnly {
                key,
                key_generation,
            },
            _,
        ) => fresh(sign(key_generation, &key)?, *key, key_generation),
        (ObservedCa::KeyReplacementInterrupted(stored), _) => replaced(*stored, None)?,
        (ObservedCa::Complete(stored), CaAction::RenewCertificate(_)) => StoredCa {
            certificate: sign(stored.key_generation, &stored.key)?,
            cert_generation: stored.cert_generation + 1,
            ..*stored
        },
        (ObservedCa::Complete(stored), CaAction::ReplaceKey(_)) => {
            replaced(*stored, Some(new_key()?))?
        }
        (ObservedCa::Complete(stored), _) => *stored,
    })
}

/// The certificate Secret without the old certificates, for when every component trusts and
/// uses the current CA (Strimzi drops them after the cluster has rolled). `None` when there are
/// none to drop.
pub fn without_old_certificates(
    authority: &CertificateAuthority,
    cert_secret: &Secret,
) -> Result<Option<Secret>, CaError> {
    let has_old = authority.trusted.keys().any(|data_key| data_key != CA_CRT);
    if !has_old {
        return Ok(None);
    }
    let current = BTreeMap::from([(CA_CRT.to_owned(), authority.certificate.clone())]);
    let data = cert_secret_data(
        authority.kind,
        authority.settings.pkcs12,
        &current,
        stored_trust_store(cert_secret),
        false,
    )?;
    let annotations = cert_secret.metadata.annotations.clone().unwrap_or_default();
    Ok(Some(secrets::build(
        secrets::name(cert_secret),
        annotations,
        data,
    )))
}

/// The trust store and its password stored in a certificate Secret, if both are there.
fn stored_trust_store(cert_secret: &Secret) -> Option<Pkcs12Store> {
    let bytes = secrets::data(cert_secret, CA_P12)?;
    let password = secrets::data(cert_secret, CA_PASSWORD)?;
    Some(Pkcs12Store {
        bytes: bytes.to_vec(),
        password: String::from_utf8_lossy(password).into_owned(),
    })
}

/// The certificate Secret's data: every trusted certificate as PEM under its data key and,
/// with PKCS#12 on, a trust store of them all. `existing` is reused as it is when `unchanged`;
/// otherwise a new store is written, keeping the existing password.
fn cert_secret_data(
    kind: CaKind,
    pkcs12: bool,
    trusted: &BTreeMap<String, ParsedCertificate>,
    existing: Option<Pkcs12Store>,
    unchanged: bool,
) -> Result<BTreeMap<String, Vec<u8>>, CaError> {
    let mut data: BTreeMap<String, Vec<u8>> = trusted
        .iter()
        .map(|(data_key, certificate)| (data_key.clone(), certificate.to_pem().into_bytes()))
        .collect();
    if !pkcs12 {
        return Ok(data);
    }
    let store = match existing {
        Some(store) if unchanged => store,
        existing => {
            let password = existing.map_or_else(pkcs12::random_password, |store| store.password);
            let entries = trusted
                .iter()
                .map(|(alias, certificate)| (alias.as_str(), certificate));
            pkcs12::trust_store(entries, &password).map_err(|error| CaError::Generation {
                kind,
                message: error.to_string(),
            })?
        }
    };
    data.insert(CA_P12.to_owned(), store.bytes);
    data.insert(CA_PASSWORD.to_owned(), store.password.into_bytes());
    Ok(data)
}

/// Data key under which a replaced CA certificate is kept: `ca-<expiry>.crt` with the expiry
/// as `YYYY-MM-DDTHH-MM-SSZ`, as Strimzi names it.
pub fn old_certificate_key(not_after: OffsetDateTime) -> String {
    let at = not_after.to_offset(time::UtcOffset::UTC);
    format!(
        "ca-{:04}-{:02}-{:02}T{:02}-{:02}-{:02}Z.crt",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// A self-signed CA certificate for `key`, with Strimzi's subject `CN=<kind> v<generation>,
/// O=io.strimzi` (the key generation keeps old and new CA subjects apart).
fn self_signed(
    kind: CaKind,
    key_generation: u32,
    key: &KeyPair,
    now: OffsetDateTime,
    validity_days: u32,
) -> Result<ParsedCertificate, String> {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    name.push(DnType::OrganizationName, ORGANIZATION);
    name.push(
        DnType::CommonName,
        format!("{} v{key_generation}", kind.common_name()),
    );
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.not_before = now;
    params.not_after = now + time::Duration::days(i64::from(validity_days));
    params.serial_number = Some(random_serial());
    let certificate = params.self_signed(key).map_err(|error| error.to_string())?;
    ParsedCertificate::from_der(certificate.der()).map_err(|error| error.to_string())
}

/// A random positive 16-byte serial number.
pub(crate) fn random_serial() -> SerialNumber {
    let mut bytes: [u8; 16] = rand::random();
    bytes[0] &= 0x7f;
    bytes[0] |= 0x01;
    SerialNumber::from_slice(&bytes)
}
