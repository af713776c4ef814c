//! Opt-in (`STRIMZI_INSTALL_CRDS=true`, not a Strimzi setting): the cluster operator applies
//! its own CRDs when it starts, so that upgrading the operator upgrades them too and Helm's
//! "CRDs are never upgraded" chore goes away.
//!
//! The CRDs are the ones `strimzi-crd-generator` generates from the `api` types (the same as
//! `deploy/crds`), each annotated with the release that generated it
//! ([`RELEASE_ANNOTATION`]). What happens to each is decided by [`decide`] from what the
//! cluster has: a missing CRD is created; one of ours from the same or an older release is
//! applied over (server-side apply, this operator's field manager, taking over the fields it
//! sets); a newer one of ours, or one without the annotation (installed by Strimzi or by hand),
//! is left alone and reported.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use strimzi_crd_generator::{CrdError, RELEASE, RELEASE_ANNOTATION, custom_resource_definitions};
use strimzi_operator_common::api_error::ApiCallError;
use thiserror::Error;

/// Why the CRDs could not be installed; [`CrdInstallError::reason`] names each kind.
#[derive(Debug, Error)]
pub enum CrdInstallError {
    /// The CRDs could not be generated from the types.
    #[error("generating the CRDs: {0}")]
    Generate(#[from] CrdError),
    /// A CRD could not be read or applied.
    #[error(transparent)]
    Api(#[from] ApiCallError),
}

impl CrdInstallError {
    /// A stable name of the error's kind.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Generate(_) => "CrdGenerationFailed",
            Self::Api(_) => "CrdInstallFailed",
        }
    }
}

/// What happens to one CRD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CrdAction {
    /// It is missing: created.
    Create,
    /// Ours from this or an older release (named): applied over.
    Upgrade(String),
    /// Left alone, with why.
    Keep(String),
}

/// A release as three numbers, for ordering; `None` for anything else.
fn release_numbers(release: &str) -> Option<(u64, u64, u64)> {
    let mut parts = release
        .trim()
        .split('.')
        .map(|part| part.parse::<u64>().ok());
    let numbers = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(numbers)
}

/// What to do with the CRD the cluster has (`existing`) when ours is from `release`.
pub fn decide(existing: Option<&CustomResourceDefinition>, release: &str) -> CrdAction {
    let Some(existing) = existing else {
        return CrdAction::Create;
    };
    let Some(theirs) = existing.annotations().get(RELEASE_ANNOTATION) else {
        return CrdAction::Keep(format!(
            "it has no {RELEASE_ANNOTATION} annotation (installed by Strimzi or by hand); \
             apply deploy/crds once to hand it over"
        ));
    };
    match (release_numbers(theirs), release_numbers(release)) {
        (Some(theirs_numbers), Some(ours)) if theirs_numbers <= ours => {
            CrdAction::Upgrade(theirs.clone())
        }
        (Some(_), Some(_)) => CrdAction::Keep(format!(
            "it comes from release {theirs}, newer than this operator's {release}"
        )),
        _ => CrdAction::Keep(format!(
            "its release {theirs:?} is not a version this operator can compare"
        )),
    }
}

/// Applies the generated CRDs as [`decide`] says, with `field_manager`; returns each CRD's
/// name and what was done.
pub async fn install(
    client: &Client,
    field_manager: &str,
) -> Result<Vec<(String, CrdAction)>, CrdInstallError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut outcome = Vec::new();
    for generated in custom_resource_definitions()? {
        let name = generated.crd.name_any();
        let failed = |action| {
            let object = format!("CRD {name}");
            move |source| CrdInstallError::Api(ApiCallError::new(action, object, source))
        };
        let existing = api.get_opt(&name).await.map_err(failed("reading"))?;
        let action = decide(existing.as_ref(), RELEASE);
        if !matches!(action, CrdAction::Keep(_)) {
            api.patch(
                &name,
                &PatchParams::apply(field_manager).force(),
                &Patch::Apply(&generated.crd),
            )
            .await
            .map_err(failed("applying"))?;
        }
        outcome.push((name, action));
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    fn crd(release: Option<&str>) -> CustomResourceDefinition {
        CustomResourceDefinition {
            metadata: ObjectMeta {
                name: Some("kafkas.kafka.strimzi.io".into()),
                annotations: release
                    .map(|release| [(RELEASE_ANNOTATION.to_owned(), release.to_owned())].into()),
                ..ObjectMeta::default()
            },
            ..CustomResourceDefinition::default()
        }
    }

    #[test]
    fn missing_and_older_crds_are_written_newer_and_foreign_ones_kept() {
        assert_eq!(decide(None, "0.2.0"), CrdAction::Create);
        assert_eq!(
            decide(Some(&crd(Some("0.1.9"))), "0.2.0"),
            CrdAction::Upgrade("0.1.9".into())
        );
        assert_eq!(
            decide(Some(&crd(Some("0.2.0"))), "0.2.0"),
            CrdAction::Upgrade("0.2.0".into())
        );
        assert_eq!(
            decide(Some(&crd(Some("0.10.0"))), "0.9.5"),
            CrdAction::Keep(
                "it comes from release 0.10.0, newer than this operator's 0.9.5".into()
            )
        );
        assert!(
            matches!(decide(Some(&crd(None)), "0.2.0"), CrdAction::Keep(why) if why.contains("Strimzi"))
        );
        assert!(matches!(
            decide(Some(&crd(Some("next"))), "0.2.0"),
            CrdAction::Keep(_)
        ));
    }

    #[test]
    fn releases_compare_as_numbers() {
        assert_eq!(release_numbers("1.20.3"), Some((1, 20, 3)));
        assert_eq!(release_numbers("1.2"), None);
        assert_eq!(release_numbers("1.2.3.4"), None);
        assert!(release_numbers("0.9.0") < release_numbers("0.10.0"));
    }
}
