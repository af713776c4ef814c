//! Settings of the cluster and clients certificate authorities.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// How a certificate authority is managed and how long its certificates last.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CertificateAuthority {
    /// Whether the operator creates and renews the CA itself; when `false` the user supplies
    /// the CA Secrets. Defaults to `true`.
    pub generate_certificate_authority: Option<bool>,
    /// Whether the CA Secrets are owned by the `Kafka` resource and so deleted with it.
    /// Defaults to `true`.
    pub generate_secret_owner_reference: Option<bool>,
    /// Days that generated certificates stay valid. Defaults to 365.
    #[schemars(range(min = 1))]
    pub validity_days: Option<i32>,
    /// Days before expiry during which certificates are renewed (or, for user-managed CAs,
    /// warnings logged). Defaults to 30.
    #[schemars(range(min = 1))]
    pub renewal_days: Option<i32>,
    /// What happens when a generated CA certificate expires. Defaults to
    /// `renew-certificate`.
    pub certificate_expiration_policy: Option<CertificateExpirationPolicy>,
}

impl CertificateAuthority {
    /// Default of `validityDays`.
    pub const DEFAULT_VALIDITY_DAYS: i32 = 365;
    /// Default of `renewalDays`.
    pub const DEFAULT_RENEWAL_DAYS: i32 = 30;

    /// `generateCertificateAuthority`, or its default `true`.
    pub fn generates_certificate_authority(&self) -> bool {
        self.generate_certificate_authority.unwrap_or(true)
    }

    /// `generateSecretOwnerReference`, or its default `true`.
    pub fn generates_secret_owner_reference(&self) -> bool {
        self.generate_secret_owner_reference.unwrap_or(true)
    }

    /// `validityDays`, or its default.
    pub fn validity_days_or_default(&self) -> i32 {
        self.validity_days.unwrap_or(Self::DEFAULT_VALIDITY_DAYS)
    }

    /// `renewalDays`, or its default.
    pub fn renewal_days_or_default(&self) -> i32 {
        self.renewal_days.unwrap_or(Self::DEFAULT_RENEWAL_DAYS)
    }

    /// `certificateExpirationPolicy`, or its default.
    pub fn certificate_expiration_policy_or_default(&self) -> CertificateExpirationPolicy {
        self.certificate_expiration_policy
            .unwrap_or(CertificateExpirationPolicy::RenewCertificate)
    }
}

/// What the operator does when a CA certificate it generated is about to expire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum CertificateExpirationPolicy {
    /// Issue a new CA certificate for the existing private key.
    #[serde(rename = "renew-certificate")]
    RenewCertificate,
    /// Generate a new private key and a new CA certificate for it.
    #[serde(rename = "replace-key")]
    ReplaceKey,
}
