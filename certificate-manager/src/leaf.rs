//! Certificates signed by a CA: Kafka node server certificates and client certificates for
//! operators and users, reused while still good and issued again when something changed.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use rcgen::{
    CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use strimzi_api::naming;
use time::OffsetDateTime;

use crate::authority::{CaAction, CertificateAuthority, ORGANIZATION, random_serial};
use crate::certificate::ParsedCertificate;
use crate::keys;
use crate::pkcs12::{self, Pkcs12Store};
use crate::secrets;

/// The cluster domain Kubernetes uses unless `KUBERNETES_SERVICE_DNS_DOMAIN` says otherwise.
pub const DEFAULT_CLUSTER_DOMAIN: &str = "cluster.local";

/// What a certificate is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafUsage {
    /// A server that also connects to its peers (Kafka nodes): server and client auth.
    Server,
    /// A client only.
    Client,
}

/// How a certificate is stored in its Secret, as Strimzi 1.2 stores each kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafStorage {
    /// `<name>.crt` and `<name>.key`, plus `<name>.p12` and `<name>.password` when the CA's
    /// settings ask for PKCS#12 stores (component and user certificates).
    WithKeyStore,
    /// `<name>.crt` and `<name>.key` only (the cluster operator's certificate).
    Pem,
    /// `<name>.key` and `<name>.crt` holding the certificate followed by the CA certificate
    /// that signed it, so peers can build the chain (Kafka nodes).
    PemWithCaChain,
}

/// The certificate to have: its data-key prefix in the Secret, subject and names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafSpec {
    /// Prefix of the Secret data keys (`<name>.crt`, `<name>.key`, `<name>.p12`,
    /// `<name>.password`) and the key store alias.
    pub name: String,
    /// Subject common name.
    pub common_name: String,
    /// Subject organization, if any.
    pub organization: Option<String>,
    /// DNS subject alternative names.
    pub dns_names: BTreeSet<String>,
    /// IP address subject alternative names.
    pub ip_addresses: BTreeSet<IpAddr>,
    /// Server or client.
    pub usage: LeafUsage,
    /// How it is stored.
    pub storage: LeafStorage,
}

/// Where a Kafka node lives, for the DNS names of its certificate.
#[derive(Clone, Copy, Debug)]
pub struct NodeLocation<'a> {
    /// Namespace of the Kafka cluster.
    pub namespace: &'a str,
    /// Name of the Kafka cluster.
    pub cluster: &'a str,
    /// Kubernetes cluster domain, usually [`DEFAULT_CLUSTER_DOMAIN`].
    pub cluster_domain: &'a str,
}

impl NodeLocation<'_> {
    /// The four names of a Service: `svc`, `svc.ns`, `svc.ns.svc` and the fully qualified one.
    fn service_names(&self, service: &str) -> [String; 4] {
        let namespace = self.namespace;
        [
            service.to_owned(),
            format!("{service}.{namespace}"),
            format!("{service}.{namespace}.svc"),
            format!("{service}.{namespace}.svc.{}", self.cluster_domain),
        ]
    }
}

impl LeafSpec {
    /// The server certificate of a Kafka node (pod `pod_name`): `CN=<cluster>-kafka,
    /// O=io.strimzi`, the bootstrap and brokers Services' names, the pod's names in the headless
    /// Service and, for brokers only, the external listener addresses (host names or IPs), so
    /// controllers do not roll when those change.
    pub fn kafka_node(
        location: &NodeLocation<'_>,
        pod_name: &str,
        broker: bool,
        external_addresses: &[String],
    ) -> Self {
        let brokers_service = naming::brokers_service(location.cluster);
        let mut dns_names: BTreeSet<String> = location
            .service_names(&naming::bootstrap_service(location.cluster))
            .into_iter()
            .chain(location.service_names(&brokers_service))
            .collect();
        let pod_host = format!("{pod_name}.{brokers_service}.{}.svc", location.namespace);
        dns_names.insert(format!("{pod_host}.{}", location.cluster_domain));
        dns_names.insert(pod_host);
        let mut ip_addresses = BTreeSet::new();
        if broker {
            for address in external_addresses {
                match address.parse::<IpAddr>() {
                    Ok(ip) => {
                        ip_addresses.insert(ip);
                    }
                    Err(_) => {
                        dns_names.insert(address.clone());
                    }
                }
            }
        }
        Self::kafka_node_named(location.cluster, pod_name, dns_names, ip_addresses)
    }

    /// The server certificate of Kafka node `pod_name` of `cluster` with the names of the
    /// certificate it holds now (`existing`): for renewing a running node's certificate as it
    /// was issued, when the names it should have cannot be worked out (the Kafka's spec is
    /// invalid). `None` when `existing` holds no readable certificate.
    pub fn kafka_node_as_issued(
        cluster: &str,
        pod_name: &str,
        existing: &ExistingLeaf,
    ) -> Option<Self> {
        let certificate = ParsedCertificate::from_pem(existing.certificate.as_deref()?).ok()?;
        Some(Self::kafka_node_named(
            cluster,
            pod_name,
            certificate.dns_names().iter().cloned().collect(),
            certificate.ip_addresses().iter().copied().collect(),
        ))
    }

    /// A Kafka node's server certificate (`CN=<cluster>-kafka, O=io.strimzi`) with these names.
    fn kafka_node_named(
        cluster: &str,
        pod_name: &str,
        dns_names: BTreeSet<String>,
        ip_addresses: BTreeSet<IpAddr>,
    ) -> Self {
        Self {
            name: pod_name.to_owned(),
            common_name: naming::kafka_component(cluster),
            organization: Some(ORGANIZATION.to_owned()),
            dns_names,
            ip_addresses,
            usage: LeafUsage::Server,
            storage: LeafStorage::PemWithCaChain,
        }
    }

    /// A client certificate of a Strimzi component (`O=io.strimzi`), e.g. `cluster-operator`
    /// or `<cluster>-entity-topic-operator`, stored under data keys `<name>.*`.
    pub fn component(name: &str, common_name: &str) -> Self {
        Self::client(name, common_name, Some(ORGANIZATION))
    }

    /// A KafkaUser's certificate: `CN=<user>`, stored under `user.*` as the User Operator does.
    pub fn user(user_name: &str) -> Self {
        Self::client("user", user_name, None)
    }

    fn client(name: &str, common_name: &str, organization: Option<&str>) -> Self {
        Self {
            name: name.to_owned(),
            common_name: common_name.to_owned(),
            organization: organization.map(str::to_owned),
            dns_names: BTreeSet::new(),
            ip_addresses: BTreeSet::new(),
            usage: LeafUsage::Client,
            storage: LeafStorage::WithKeyStore,
        }
    }

    fn params(&self, now: OffsetDateTime, validity_days: u32) -> CertificateParams {
        let mut params = CertificateParams::default();
        let mut name = DistinguishedName::new();
        if let Some(organization) = &self.organization {
            name.push(DnType::OrganizationName, organization.as_str());
        }
        name.push(DnType::CommonName, self.common_name.as_str());
        params.distinguished_name = name;
        params.subject_alt_names = self
            .dns_names
            .iter()
            .filter_map(|dns| dns.clone().try_into().ok().map(SanType::DnsName))
            .chain(self.ip_addresses.iter().map(|ip| SanType::IpAddress(*ip)))
            .collect();
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = match self.usage {
            LeafUsage::Server => vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ],
            LeafUsage::Client => vec![ExtendedKeyUsagePurpose::ClientAuth],
        };
        params.use_authority_key_identifier_extension = true;
        params.not_before = now;
        params.not_after = now + time::Duration::days(i64::from(validity_days));
        params.serial_number = Some(random_serial());
        params
    }

    fn names_match(&self, certificate: &ParsedCertificate) -> bool {
        let dns: BTreeSet<String> = certificate.dns_names().iter().cloned().collect();
        let ips: BTreeSet<IpAddr> = certificate.ip_addresses().iter().copied().collect();
        dns == self.dns_names && ips == self.ip_addresses
    }
}

/// A certificate as stored in a Secret, read back for reuse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExistingLeaf {
    /// `<name>.crt`.
    pub certificate: Option<Vec<u8>>,
    /// `<name>.key`.
    pub key: Option<Vec<u8>>,
    /// `<name>.p12` with `<name>.password`.
    pub key_store: Option<Pkcs12Store>,
}

impl ExistingLeaf {
    /// Reads the entries of `name` from a Secret.
    pub fn from_secret(secret: &Secret, name: &str) -> Self {
        let entry =
            |suffix: &str| secrets::data(secret, &format!("{name}.{suffix}")).map(<[u8]>::to_vec);
        let key_store = entry("p12")
            .zip(entry("password"))
            .map(|(bytes, password)| Pkcs12Store {
                bytes,
                password: String::from_utf8_lossy(&password).into_owned(),
            });
        Self {
            certificate: entry("crt"),
            key: entry("key"),
            key_store,
        }
    }
}

/// Why a certificate was issued, or that it was reused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IssueReason {
    /// The existing certificate is still good.
    Reused,
    /// There was none.
    Missing,
    /// The stored certificate or key could not be read, or they do not match.
    Unreadable(String),
    /// The CA certificate or key was issued again in this reconciliation.
    CaRenewed,
    /// The stored certificate was not signed by the current CA.
    SignedByOtherCa,
    /// The wanted names differ from the certificate's.
    NamesChanged,
    /// It is within the renewal period (and a maintenance window is open).
    Expiring,
}

impl std::fmt::Display for IssueReason {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IssueReason::Reused => formatter.write_str("the existing certificate is still valid"),
            IssueReason::Missing => formatter.write_str("no certificate exists yet"),
            IssueReason::Unreadable(why) => {
                write!(formatter, "the stored certificate is unusable: {why}")
            }
            IssueReason::CaRenewed => formatter.write_str("the CA certificate was renewed"),
            IssueReason::SignedByOtherCa => {
                formatter.write_str("the certificate was signed by another CA")
            }
            IssueReason::NamesChanged => {
                formatter.write_str("the DNS names or IP addresses changed")
            }
            IssueReason::Expiring => {
                formatter.write_str("the certificate is within its renewal period")
            }
        }
    }
}

/// Why a certificate could not be issued.
#[derive(Debug, thiserror::Error)]
#[error("issuing the certificate `{name}`: {message}")]
pub struct LeafError {
    /// The certificate's name.
    pub name: String,
    /// What failed.
    pub message: String,
}

impl LeafError {
    /// Stable reason string for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        "CertificateIssueFailed"
    }
}

/// The context of issuing: the time, whether renewals may happen now, and what the CA step did.
#[derive(Clone, Debug)]
pub struct IssueContext<'a> {
    /// Now.
    pub now: OffsetDateTime,
    /// Whether a maintenance time window is open (time-driven renewals wait for one).
    pub window_open: bool,
    /// What the CA reconciliation did in this pass.
    pub ca_action: &'a CaAction,
    /// Whether some holder of these certificates does not trust the CA's current certificate
    /// yet (a CA key was replaced and not every node has restarted with the new trust): a
    /// certificate signed by a CA certificate that is still trusted is then kept, so that
    /// nobody is handed a certificate its peers cannot verify.
    pub trust_pending: bool,
}

/// A certificate with its key, new or reused.
#[derive(Clone, Debug)]
pub struct IssuedCertificate {
    /// Data key prefix.
    pub name: String,
    /// The certificate.
    pub certificate: ParsedCertificate,
    /// The private key as PKCS#8 PEM.
    pub key_pem: String,
    /// The PKCS#12 key store, when wanted.
    pub key_store: Option<Pkcs12Store>,
    /// The PEM of the CA certificate stored after the certificate in `<name>.crt`, for
    /// [`LeafStorage::PemWithCaChain`].
    pub ca_chain_pem: Option<String>,
    /// Why it was issued, or [`IssueReason::Reused`].
    pub reason: IssueReason,
}

impl IssuedCertificate {
    /// Whether this is a new certificate.
    pub fn is_new(&self) -> bool {
        self.reason != IssueReason::Reused
    }

    /// The SHA-1 thumbprint of the certificate, for roll decisions.
    pub fn thumbprint(&self) -> String {
        self.certificate.thumbprint()
    }

    /// The Secret data entries: `<name>.crt` (with the CA certificate after it, when
    /// chained), `<name>.key` and, with a key store, `<name>.p12` and `<name>.password`.
    pub fn secret_data(&self) -> BTreeMap<String, ByteString> {
        let name = &self.name;
        let mut crt = self.certificate.to_pem();
        crt.push_str(self.ca_chain_pem.as_deref().unwrap_or_default());
        let mut data = BTreeMap::from([
            (format!("{name}.crt"), ByteString(crt.into_bytes())),
            (
                format!("{name}.key"),
                ByteString(self.key_pem.clone().into_bytes()),
            ),
        ]);
        if let Some(store) = &self.key_store {
            data.insert(format!("{name}.p12"), ByteString(store.bytes.clone()));
            data.insert(
                format!("{name}.password"),
                ByteString(store.password.clone().into_bytes()),
            );
        }
        data
    }
}

/// Reuses `existing` if it is readable, signed by the current CA, has the wanted names and is
/// not due for renewal (or no window is open), unless the CA itself was issued again in this
/// pass; otherwise issues a new certificate with a new key. Leaf keys are replaceable, so an
/// unreadable stored certificate is replaced rather than reported.
pub fn issue_or_reuse(
    authority: &CertificateAuthority,
    spec: &LeafSpec,
    existing: Option<&ExistingLeaf>,
    context: &IssueContext<'_>,
) -> Result<IssuedCertificate, LeafError> {
    if context.trust_pending
        && let Some(existing) = existing
        && let Ok((certificate, key)) = read_existing(existing)
        && spec.names_match(&certificate)
        && authority
            .trusted_certificates()
            .values()
            .any(|trusted| certificate.is_signed_by(trusted))
    {
        return reused(authority, spec, existing, certificate, &key);
    }
    let reason = match existing {
        None => IssueReason::Missing,
        Some(_) if context.ca_action.issues_certificate() => IssueReason::CaRenewed,
        Some(existing) => match read_existing(existing) {
            Err(why) => IssueReason::Unreadable(why),
            Ok((certificate, key)) => {
                let settings = authority.settings();
                if !certificate.is_signed_by(authority.certificate()) {
                    IssueReason::SignedByOtherCa
                } else if !spec.names_match(&certificate) {
                    IssueReason::NamesChanged
                } else if context.window_open
                    && certificate.in_renewal_period(context.now, settings.renewal_days)
                {
                    IssueReason::Expiring
                } else {
                    return reused(authority, spec, existing, certificate, &key);
                }
            }
        },
    };
    issue(authority, spec, reason, context)
}

/// `existing` as it is, with a key store made for it when one is wanted and missing.
fn reused(
    authority: &CertificateAuthority,
    spec: &LeafSpec,
    existing: &ExistingLeaf,
    certificate: ParsedCertificate,
    key: &KeyPair,
) -> Result<IssuedCertificate, LeafError> {
    let key_store = match &existing.key_store {
        Some(store) if wants_key_store(authority, spec) => Some(store.clone()),
        None if wants_key_store(authority, spec) => {
            Some(key_store(spec, key, &certificate, authority)?)
        }
        _ => None,
    };
    let ca_chain_pem = ca_chain_pem(authority, spec, &certificate);
    Ok(IssuedCertificate {
        name: spec.name.clone(),
        certificate,
        key_pem: key.serialize_pem(),
        key_store,
        ca_chain_pem,
        reason: IssueReason::Reused,
    })
}

/// Issues a new certificate with a new key.
pub fn issue(
    authority: &CertificateAuthority,
    spec: &LeafSpec,
    reason: IssueReason,
    context: &IssueContext<'_>,
) -> Result<IssuedCertificate, LeafError> {
    let failed = |message: String| LeafError {
        name: spec.name.clone(),
        message,
    };
    let settings = authority.settings();
    let key = keys::generate(settings.key_algorithm.for_signed_certificates())
        .map_err(|error| failed(error.to_string()))?;
    let issuer = Issuer::from_ca_cert_der(
        &authority.certificate().der().to_vec().into(),
        authority.key(),
    )
    .map_err(|error| failed(format!("reading the CA certificate: {error}")))?;
    let signed = spec
        .params(context.now, settings.validity_days)
        .signed_by(&key, &issuer)
        .map_err(|error| failed(error.to_string()))?;
    let certificate =
        ParsedCertificate::from_der(signed.der()).map_err(|error| failed(error.to_string()))?;
    let key_store = if wants_key_store(authority, spec) {
        Some(key_store(spec, &key, &certificate, authority)?)
    } else {
        None
    };
    let ca_chain_pem = ca_chain_pem(authority, spec, &certificate);
    Ok(IssuedCertificate {
        name: spec.name.clone(),
        certificate,
        key_pem: key.serialize_pem(),
        key_store,
        ca_chain_pem,
        reason,
    })
}

/// Whether the certificate of `spec` is stored with a PKCS#12 key store.
fn wants_key_store(authority: &CertificateAuthority, spec: &LeafSpec) -> bool {
    spec.storage == LeafStorage::WithKeyStore && authority.settings().pkcs12
}

/// The CA certificate stored after `certificate` (of `spec`), if it is chained: the one that
/// signed it, which is an older one of the CA's while a certificate of the old key is kept.
fn ca_chain_pem(
    authority: &CertificateAuthority,
    spec: &LeafSpec,
    certificate: &ParsedCertificate,
) -> Option<String> {
    (spec.storage == LeafStorage::PemWithCaChain).then(|| {
        std::iter::once(authority.certificate())
            .chain(authority.trusted_certificates().values())
            .find(|ca| certificate.is_signed_by(ca))
            .unwrap_or(authority.certificate())
            .to_pem()
    })
}

fn key_store(
    spec: &LeafSpec,
    key: &KeyPair,
    certificate: &ParsedCertificate,
    authority: &CertificateAuthority,
) -> Result<Pkcs12Store, LeafError> {
    pkcs12::key_store(&spec.name, key, &[certificate, authority.certificate()]).map_err(|error| {
        LeafError {
            name: spec.name.clone(),
            message: error.to_string(),
        }
    })
}

fn read_existing(existing: &ExistingLeaf) -> Result<(ParsedCertificate, KeyPair), String> {
    let certificate_pem = existing
        .certificate
        .as_deref()
        .ok_or("the certificate is missing")?;
    let key_pem = existing
        .key
        .as_deref()
        .ok_or("the private key is missing")?;
    let certificate =
        ParsedCertificate::from_pem(certificate_pem).map_err(|error| error.to_string())?;
    let key = keys::from_pem(key_pem).map_err(|error| error.to_string())?;
    if !certificate.matches_key(&key) {
        return Err("the private key does not belong to the certificate".to_owned());
    }
    Ok((certificate, key))
}
