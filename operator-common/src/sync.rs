//! The one way a controller brings the objects it owns to their desired state: each kind
//! is listed once per reconciliation by the controller's label selector ([`Listed`]), the
//! desired objects are applied in the controller's order, each compared with its listed copy
//! (no read per object), and one cleanup pass deletes what was listed and is no longer
//! desired ([`ObjectSync::prune`]). A [`SyncReport`] says what was written and deleted.
//!
//! A controller keeps its desired objects in a struct with one field per kind (its *desired
//! set*) and consumes it by destructuring without `..`, so that a kind added to the set and
//! forgotten by the apply or the cleanup fails to compile. `docs/controller-shape.md`
//! shows the whole shape.
//!
//! Only what the selector lists can be deleted: an object the controller did not label as its
//! own is never among the listed, whatever its name. Objects already being deleted are left
//! to finish.

use std::collections::{BTreeMap, BTreeSet};

use kube::api::{Api, ListParams};
use kube::{Client, Resource, ResourceExt};

use crate::api_error::ApiCallError;
use crate::apply::{Applicable, Applied, Applier, ApplyError};

/// The live objects of one kind a controller owns, listed once in this reconciliation by
/// its selector, keyed by namespace and name.
#[derive(Debug, Clone)]
pub struct Listed<K> {
    objects: BTreeMap<(String, String), K>,
}

impl<K> Default for Listed<K> {
    fn default() -> Self {
        Self {
            objects: BTreeMap::new(),
        }
    }
}

impl<K: Applicable> Listed<K> {
    /// Lists the objects of kind `K` matching `selector` in each of `namespaces`.
    pub async fn list<'n>(
        client: &Client,
        namespaces: impl IntoIterator<Item = &'n str>,
        selector: &str,
    ) -> Result<Self, ApplyError> {
        let mut objects = BTreeMap::new();
        for namespace in namespaces {
            let api: Api<K> = Api::namespaced(client.clone(), namespace);
            let listed = api
                .list(&ListParams::default().labels(selector))
                .await
                .map_err(|source| ApiCallError::of::<K>("list", namespace, "", source))?;
            for object in listed.items {
                objects.insert((namespace.to_owned(), object.name_any()), object);
            }
        }
        Ok(Self { objects })
    }

    /// The listed object `name` in `namespace`.
    pub fn get(&self, namespace: &str, name: &str) -> Option<&K> {
        self.objects.get(&(namespace.to_owned(), name.to_owned()))
    }

    /// The listed copy of `desired` (same namespace and name).
    pub fn copy_of(&self, desired: &K) -> Option<&K> {
        self.get(
            &desired.namespace().unwrap_or_default(),
            &desired.name_any(),
        )
    }

    /// Every listed object, by namespace and name.
    pub fn iter(&self) -> impl Iterator<Item = &K> {
        self.objects.values()
    }
}

/// One object a sync wrote or deleted.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SyncedObject {
    /// Its kind.
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl SyncedObject {
    fn of<K: Resource<DynamicType = ()>>(object: &K) -> Self {
        Self {
            kind: K::kind(&()).into_owned(),
            namespace: object.meta().namespace.clone().unwrap_or_default(),
            name: object.meta().name.clone().unwrap_or_default(),
        }
    }
}

/// What a sync changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// The objects created or changed, in the order they were applied.
    pub written: Vec<SyncedObject>,
    /// The objects deleted because they were no longer desired.
    pub deleted: Vec<SyncedObject>,
}

impl SyncReport {
    /// Whether an object of kind `K` was written (its listed status is then out of date).
    pub fn wrote<K: Resource<DynamicType = ()>>(&self) -> bool {
        let kind = K::kind(&());
        self.written.iter().any(|object| object.kind == kind)
    }
}

/// Applies and prunes the objects of one reconciliation through an [`Applier`], recording
/// what changed.
#[derive(Debug)]
pub struct ObjectSync<'a> {
    applier: &'a Applier,
    report: SyncReport,
}

impl<'a> ObjectSync<'a> {
    /// A sync writing through `applier`.
    pub fn new(applier: &'a Applier) -> Self {
        Self {
            applier,
            report: SyncReport::default(),
        }
    }

    /// Applies each of `desired`, compared with its copy in `listed`: one that is not
    /// listed does not exist and is created without a read.
    pub fn apply<'s, 'd: 's, K: Applicable + Send + Sync + 'd>(
        &'s mut self,
        desired: impl IntoIterator<Item = &'d K>,
        listed: &'s Listed<K>,
    ) -> impl Future<Output = Result<(), ApplyError>> + Send + 's {
        let desired: Vec<&'d K> = desired.into_iter().collect();
        async move {
            for object in desired {
                let applied = self
                    .applier
                    .apply_cached(object, listed.copy_of(object))
                    .await?;
                self.record(object, applied);
            }
            Ok(())
        }
    }

    /// Applies each of `desired` after reading it: for kinds the controller does not list
    /// (it never deletes them, or deletes them with their owner).
    pub fn apply_read<'s, 'd: 's, K: Applicable + Send + Sync + 'd>(
        &'s mut self,
        desired: impl IntoIterator<Item = &'d K>,
    ) -> impl Future<Output = Result<(), ApplyError>> + Send + 's {
        let desired: Vec<&'d K> = desired.into_iter().collect();
        async move {
            for object in desired {
                let applied = self.applier.apply(object, None).await?;
                self.record(object, applied);
            }
            Ok(())
        }
    }

    /// The cleanup pass for one kind: deletes each object of `listed` that `desired` does
    /// not have (same namespace and name) and that is not already being deleted.
    pub fn prune<'s, 'd, K: Applicable + Send + Sync + 'd>(
        &'s mut self,
        listed: &'s Listed<K>,
        desired: impl IntoIterator<Item = &'d K>,
    ) -> impl Future<Output = Result<(), ApplyError>> + Send + 's {
        let keep: BTreeSet<(String, String)> = desired
            .into_iter()
            .map(|object| (object.namespace().unwrap_or_default(), object.name_any()))
            .collect();
        async move {
            for (key, object) in &listed.objects {
                if keep.contains(key) || object.meta().deletion_timestamp.is_some() {
                    continue;
                }
                let (namespace, name) = key;
                let api: Api<K> = Api::namespaced(self.applier.client().clone(), namespace);
                if self.applier.delete(&api, name).await? {
                    tracing::info!(kind = %K::kind(&()), namespace, name, "deleted an object no longer desired");
                    self.report.deleted.push(SyncedObject::of(object));
                }
            }
            Ok(())
        }
    }

    /// What this sync changed so far.
    pub fn report(&self) -> &SyncReport {
        &self.report
    }

    /// Ends the sync with what it changed.
    pub fn finish(self) -> SyncReport {
        self.report
    }

    fn record<K: Resource<DynamicType = ()>>(&mut self, object: &K, applied: Applied) {
        if applied == Applied::Written {
            self.report.written.push(SyncedObject::of(object));
        }
    }
}
