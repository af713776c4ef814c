//! The CustomResourceDefinitions of Strimzi's custom resources, generated from the `api`
//! crate's types and shaped like Strimzi 1.2's: same names, labels, printer columns and
//! subresources, structural schemas with the same properties and `required` lists (embedded
//! Kubernetes types have none, as in Strimzi's), Strimzi's own CEL rules, plus CEL rules of
//! ours for checks that Strimzi only makes inside its operator.
//!
//! [`custom_resource_definitions`] returns them as Kubernetes objects (for operators that
//! install or upgrade CRDs at start-up); [`files`] renders and checks the YAML files under
//! `deploy/crds`; [`coverage`] compares their properties and CEL rules with Strimzi's CRDs;
//! [`rules`] lists the CEL rules.

pub mod coverage;
mod embedded;
mod error;
pub mod files;
mod kinds;
pub mod rules;
mod structural;

pub use error::CrdError;
pub use kinds::{GeneratedCrd, RELEASE, RELEASE_ANNOTATION, custom_resource_definitions};
