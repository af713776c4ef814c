//! Which of several resources naming one thing outside Kubernetes (a Kafka topic, a Kafka
//! user) manages it, when they live in different namespaces or under different names: the one
//! whose status says it manages it already, otherwise the oldest; the others are refused.
//! No I/O: the resources come from the operator's caches.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::Store;
use serde::de::DeserializeOwned;
use strimzi_api::common::Condition;
use strimzi_api::conditions;

/// One resource naming the contested thing, as far as ownership goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// `namespace/name` of the resource.
    pub key: String,
    /// Its creation timestamp (RFC 3339, so that text order is time order).
    pub created: String,
    /// Whether its status says it manages the thing already (each kind says how).
    pub ready: bool,
}

impl Claim {
    /// The claim of the resource with `meta`; `ready` when its status says it manages the
    /// contested thing already.
    pub fn of(meta: &ObjectMeta, ready: bool) -> Self {
        Self {
            key: key(meta),
            created: meta
                .creation_timestamp
                .as_ref()
                .and_then(|time| serde_json::to_string(time).ok())
                .unwrap_or_default(),
            ready,
        }
    }

    /// The namespace and name of the resource.
    pub fn namespace_and_name(&self) -> (&str, &str) {
        self.key.split_once('/').unwrap_or(("", &self.key))
    }

    /// Strimzi's way of naming the owner in a conflict: `Ref{namespace='…', name='…'}`.
    pub fn reference(&self) -> String {
        let (namespace, name) = self.namespace_and_name();
        format!("Ref{{namespace='{namespace}', name='{name}'}}")
    }
}

/// `namespace/name` of the resource with `meta`.
pub fn key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// Whether `conditions` has `Ready` with status `True`.
pub fn is_ready<'a>(conditions: impl IntoIterator<Item = &'a Condition>) -> bool {
    conditions.into_iter().any(|condition| {
        condition.r#type.as_deref() == Some(conditions::READY)
            && condition.status.as_deref() == Some(conditions::STATUS_TRUE)
    })
}

/// The claim that manages the contested thing among `claims`: one whose status says it
/// manages it already, otherwise the oldest; ties go to the smallest key.
pub fn owner(claims: &[Claim]) -> Option<&Claim> {
    claims
        .iter()
        .min_by(|a, b| (!a.ready, &a.created, &a.key).cmp(&(!b.ready, &b.created, &b.key)))
}

/// The claims of the cached resources that name the same thing as resource `me` (its
/// [`key`]), as `names_it` tells, each made by `claim`; empty when no other resource names it,
/// which is found without going through every cached resource.
pub fn rival_claims<K>(
    stores: &[Store<DeserializeGuard<K>>],
    me: &str,
    names_it: impl Fn(&K) -> bool,
    claim: impl Fn(&K) -> Claim,
) -> Vec<Claim>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + 'static,
{
    let contested = stores.iter().any(|store| {
        store
            .find(|object| {
                object
                    .0
                    .as_ref()
                    .is_ok_and(|other| names_it(other) && key(other.meta()) != me)
            })
            .is_some()
    });
    if !contested {
        return Vec::new();
    }
    stores
        .iter()
        .flat_map(Store::state)
        .filter_map(|object| {
            object
                .0
                .as_ref()
                .ok()
                .filter(|other| names_it(other))
                .map(&claim)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_or_else_the_oldest_claim_owns() {
        let claim = |key: &str, created: &str, ready: bool| Claim {
            key: key.into(),
            created: created.into(),
            ready,
        };
        let older = claim("ns/a", "2026-01-01T00:00:00Z", false);
        let newer = claim("ns/b", "2026-02-01T00:00:00Z", false);
        let twin = claim("ns/c", "2026-01-01T00:00:00Z", false);
        assert_eq!(owner(&[newer.clone(), older.clone()]), Some(&older));
        assert_eq!(owner(&[twin.clone(), older.clone()]), Some(&older));
        let newer_ready = claim("ns/b", "2026-02-01T00:00:00Z", true);
        assert_eq!(
            owner(&[older.clone(), newer_ready.clone()]),
            Some(&newer_ready)
        );
        assert_eq!(owner(&[]), None);
        assert_eq!(older.reference(), "Ref{namespace='ns', name='a'}");
    }
}
