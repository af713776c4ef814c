//! What the user operator knows of Kafka and how it changes it.
//!
//! Reading: three caches, filled with one request each (every ACL binding, every user
//! quota, every SCRAM user) and read again every `STRIMZI_CACHE_REFRESH_INTERVAL_MS`, so a
//! reconciliation compares against memory and a periodic reconciliation that changes nothing
//! sends Kafka no request at all besides those refreshes. Writes update the caches at once; a
//! refresh never overwrites what was written while it ran.
//!
//! Writing: ACL creations, ACL deletions, quota changes and SCRAM changes of many users go
//! to Kafka in batched requests ([`strimzi_operator_common::batch`]), with back-pressure when
//! the queues are full.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use kafka_protocol::error::ResponseError;
use strimzi_operator_common::batch::{BatchSettings, Batcher};
use strimzi_operator_common::kafka::{
    AclBinding, AclBindingFilter, AdminError, ItemResult, KafkaAdmin, QuotaAlteration, QuotaEntity,
    QuotaFilterComponent, QuotaMatch, ScramCredentialChange, ScramMechanism,
};
use strimzi_operator_common::metrics::{KafkaRequestCounts, Metrics, MetricsError};
use tokio::sync::{Mutex as AsyncMutex, MutexGuard};

use crate::error::UserError;
use crate::model::{self, AclChanges};

/// Name of the counter of Kafka requests, labelled by Kafka API.
pub const KAFKA_REQUESTS: &str = "strimzi_user_operator_kafka_requests_total";
/// PBKDF2 iterations of the SCRAM credentials the operator writes (Kafka's minimum, as
/// Strimzi uses).
pub const SCRAM_ITERATIONS: i32 = 4096;
/// Quota entity type of users.
const USER_ENTITY: &str = "user";
/// Locks that keep a reconciliation and the cleanup of the same user apart.
const USER_LOCKS: usize = 256;

const DESCRIBE_ACLS: &str = "DescribeAcls";
const CREATE_ACLS: &str = "CreateAcls";
const DELETE_ACLS: &str = "DeleteAcls";
const DESCRIBE_QUOTAS: &str = "DescribeClientQuotas";
const ALTER_QUOTAS: &str = "AlterClientQuotas";
const DESCRIBE_SCRAM: &str = "DescribeUserScramCredentials";
const ALTER_SCRAM: &str = "AlterUserScramCredentials";
const APIS: [&str; 7] = [
    DESCRIBE_ACLS,
    CREATE_ACLS,
    DELETE_ACLS,
    DESCRIBE_QUOTAS,
    ALTER_QUOTAS,
    DESCRIBE_SCRAM,
    ALTER_SCRAM,
];

/// Kafka requests sent since start, per Kafka API; served on `/metrics`.
pub type RequestCounts = KafkaRequestCounts;

/// The counter of the user operator's Kafka requests, registered in `metrics`.
pub fn request_counts(metrics: &Metrics) -> Result<RequestCounts, MetricsError> {
    KafkaRequestCounts::register(
        metrics,
        KAFKA_REQUESTS,
        "Kafka admin requests sent by the user operator",
        &APIS,
    )
}

/// What the caches hold.
#[derive(Debug, Default)]
struct Cached {
    /// ACL bindings per principal (`User:...`).
    acls: HashMap<String, BTreeSet<AclBinding>>,
    /// Quotas per Kafka user name.
    quotas: HashMap<String, BTreeMap<String, f64>>,
    /// Kafka user names with a SCRAM credential.
    scram: BTreeSet<String>,
    /// A fingerprint of the password last written per Kafka user name.
    passwords: HashMap<String, u64>,
    /// Whether the first refresh succeeded.
    loaded: bool,
    /// Number of the refresh in progress or last done.
    epoch: u64,
    /// The epoch in which each Kafka user name (or principal) was last written.
    written: HashMap<String, u64>,
}

/// The state shared by the batch handlers and the operations.
struct Context {
    admin: Arc<dyn KafkaAdmin>,
    requests: RequestCounts,
    acls_supported: bool,
    cached: Mutex<Cached>,
    refreshing: AsyncMutex<()>,
    users: Vec<AsyncMutex<()>>,
}

impl Context {
    fn cached(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The user operator's view of Kafka and its batched writes; cloning shares them.
#[derive(Clone)]
pub struct UserKafka {
    context: Arc<Context>,
    create_acls: Batcher<Vec<AclBinding>, Result<(), UserError>>,
    delete_acls: Batcher<Vec<AclBinding>, Result<(), UserError>>,
    quotas: Batcher<QuotaAlteration, Result<(), UserError>>,
    scram: Batcher<ScramCredentialChange, Result<(), UserError>>,
}

impl UserKafka {
    /// The caches (empty until [`Self::refresh`]) and batchers on `admin`; must be called
    /// inside a Tokio runtime. Without `acls_supported`, ACLs are neither read nor written.
    pub fn new(
        admin: Arc<dyn KafkaAdmin>,
        settings: BatchSettings,
        requests: RequestCounts,
        acls_supported: bool,
    ) -> Self {
        let context = Arc::new(Context {
            admin,
            requests,
            acls_supported,
            cached: Mutex::new(Cached::default()),
            refreshing: AsyncMutex::new(()),
            users: (0..USER_LOCKS).map(|_| AsyncMutex::new(())).collect(),
        });
        Self {
            create_acls: Batcher::spawn_with(
                "create ACLs",
                settings,
                &context,
                create_acls_batch,
                context.requests.queued("create ACLs"),
            ),
            delete_acls: Batcher::spawn_with(
                "delete ACLs",
                settings,
                &context,
                delete_acls_batch,
                context.requests.queued("delete ACLs"),
            ),
            quotas: Batcher::spawn_with(
                "alter quotas",
                settings,
                &context,
                quotas_batch,
                context.requests.queued("alter quotas"),
            ),
            scram: Batcher::spawn_with(
                "alter SCRAM",
                settings,
                &context,
                scram_batch,
                context.requests.queued("alter SCRAM"),
            ),
            context,
        }
    }

    /// Kafka requests sent so far.
    pub fn requests(&self) -> &RequestCounts {
        &self.context.requests
    }

    /// Waits until no other reconciliation or cleanup works on the KafkaUser `name` (both
    /// its Kafka user names) and returns the guard that keeps others out.
    pub async fn lock_user(&self, name: &str) -> MutexGuard<'_, ()> {
        let mut hasher = DefaultHasher::new();
        name.hash(&mut hasher);
        let shard = usize::try_from(hasher.finish() % USER_LOCKS as u64).unwrap_or_default();
        self.context.users[shard].lock().await
    }

    /// Fills the caches unless they already are; fails while Kafka cannot be read.
    pub async fn ensure_loaded(&self) -> Result<(), UserError> {
        if self.context.cached().loaded {
            return Ok(());
        }
        let _refreshing = self.context.refreshing.lock().await;
        // Loaded by whoever held the lock before: one first load, however many wait for it.
        if self.context.cached().loaded {
            return Ok(());
        }
        self.refresh_locked().await
    }

    /// Reads every ACL binding, user quota and SCRAM user from Kafka (three requests) and
    /// replaces the caches, except for what was written meanwhile.
    pub async fn refresh(&self) -> Result<(), UserError> {
        let _refreshing = self.context.refreshing.lock().await;
        self.refresh_locked().await
    }

    /// [`Self::refresh`], with the refresh lock held by the caller.
    async fn refresh_locked(&self) -> Result<(), UserError> {
        let context = &self.context;
        let epoch = {
            let mut cached = context.cached();
            cached.epoch += 1;
            cached.epoch
        };
        let acls = async {
            if !context.acls_supported {
                return Ok(Vec::new());
            }
            context.requests.count(DESCRIBE_ACLS);
            match context.admin.describe_acls(&AclBindingFilter::any()).await {
                // No authorizer: there are no ACLs; users with ACL rules fail when written.
                Err(error) if error.is(ResponseError::SecurityDisabled) => {
                    tracing::warn!(%error, "the Kafka cluster has no authorizer, so no ACLs; set STRIMZI_ACLS_ADMIN_API_SUPPORTED=false if that is intended");
                    Ok(Vec::new())
                }
                other => other,
            }
        };
        let quotas = async {
            context.requests.count(DESCRIBE_QUOTAS);
            let users = QuotaFilterComponent {
                entity_type: USER_ENTITY.to_owned(),
                matching: QuotaMatch::Any,
            };
            context
                .admin
                .describe_client_quotas(std::slice::from_ref(&users), true)
                .await
        };
        let scram = async {
            context.requests.count(DESCRIBE_SCRAM);
            context.admin.describe_user_scram_credentials(None).await
        };
        let (acls, quotas, scram) = futures::try_join!(acls, quotas, scram)
            .map_err(|error| UserError::kafka("reading users from Kafka", error))?;
        let mut fresh_acls: HashMap<String, BTreeSet<AclBinding>> = HashMap::new();
        for binding in acls {
            fresh_acls
                .entry(binding.principal.clone())
                .or_default()
                .insert(binding);
        }
        let fresh_quotas: HashMap<String, BTreeMap<String, f64>> = quotas
            .into_iter()
            .filter_map(|(entity, values)| user_of_entity(&entity).map(|user| (user, values)))
            .filter(|(_, values)| !values.is_empty())
            .collect();
        let fresh_scram: BTreeSet<String> = scram
            .into_iter()
            .filter(|(_, result)| result.as_ref().is_ok_and(|infos| !infos.is_empty()))
            .map(|(user, _)| user)
            .collect();

        let mut cached = context.cached();
        let kept: BTreeSet<String> = cached
            .written
            .iter()
            .filter(|(_, written)| **written >= epoch)
            .map(|(name, _)| name.clone())
            .collect();
        let mut acls = fresh_acls;
        let mut quotas = fresh_quotas;
        let mut scram = fresh_scram;
        for name in &kept {
            let principal = model::principal(name);
            match cached.acls.get(&principal) {
                Some(bindings) => acls.insert(principal, bindings.clone()),
                None => acls.remove(&principal),
            };
            match cached.quotas.get(name) {
                Some(values) => quotas.insert(name.clone(), values.clone()),
                None => quotas.remove(name),
            };
            if cached.scram.contains(name) {
                scram.insert(name.clone());
            } else {
                scram.remove(name);
            }
        }
        let passwords = std::mem::take(&mut cached.passwords)
            .into_iter()
            .filter(|(name, _)| scram.contains(name))
            .collect();
        cached.acls = acls;
        cached.quotas = quotas;
        cached.scram = scram;
        cached.passwords = passwords;
        cached.written.retain(|_, written| *written >= epoch);
        cached.loaded = true;
        Ok(())
    }

    /// The cached ACL bindings of the Kafka user `kafka_name`.
    pub fn acls(&self, kafka_name: &str) -> BTreeSet<AclBinding> {
        self.context
            .cached()
            .acls
            .get(&model::principal(kafka_name))
            .cloned()
            .unwrap_or_default()
    }

    /// The cached quotas of the Kafka user `kafka_name`.
    pub fn quotas(&self, kafka_name: &str) -> BTreeMap<String, f64> {
        self.context
            .cached()
            .quotas
            .get(kafka_name)
            .cloned()
            .unwrap_or_default()
    }

    /// Whether the Kafka user `kafka_name` has a SCRAM credential.
    pub fn has_scram(&self, kafka_name: &str) -> bool {
        self.context.cached().scram.contains(kafka_name)
    }

    /// Whether `password` is the one this operator last wrote for `kafka_name` and the
    /// credential still exists: then nothing needs writing.
    pub fn scram_is_current(&self, kafka_name: &str, password: &str) -> bool {
        let cached = self.context.cached();
        cached.scram.contains(kafka_name)
            && cached.passwords.get(kafka_name) == Some(&fingerprint(password))
    }

    /// Every Kafka user name with an ACL binding, a quota or a SCRAM credential.
    pub fn kafka_names(&self) -> BTreeSet<String> {
        let cached = self.context.cached();
        let mut names: BTreeSet<String> = cached
            .acls
            .keys()
            .filter_map(|principal| model::kafka_name_of_principal(principal))
            .map(str::to_owned)
            .collect();
        names.extend(cached.quotas.keys().cloned());
        names.extend(cached.scram.iter().cloned());
        names
    }

    /// Creates and deletes ACL bindings of `kafka_name`.
    pub async fn change_acls(
        &self,
        kafka_name: &str,
        changes: AclChanges,
    ) -> Result<(), UserError> {
        if changes.is_empty() {
            return Ok(());
        }
        if !self.context.acls_supported {
            return Err(UserError::InvalidResource(
                "ACLs are not managed through the Admin API (STRIMZI_ACLS_ADMIN_API_SUPPORTED=false)"
                    .to_owned(),
            ));
        }
        let AclChanges { create, delete } = changes;
        let created = async {
            if create.is_empty() {
                Ok(())
            } else {
                self.create_acls.call(create.clone()).await?
            }
        };
        let deleted = async {
            if delete.is_empty() {
                Ok(())
            } else {
                self.delete_acls.call(delete.clone()).await?
            }
        };
        let (created, deleted) = futures::join!(created, deleted);
        let principal = model::principal(kafka_name);
        self.record(kafka_name, |cached| {
            let bindings = cached.acls.entry(principal.clone()).or_default();
            if created.is_ok() {
                bindings.extend(create);
            }
            if deleted.is_ok() {
                for binding in &delete {
                    bindings.remove(binding);
                }
            }
            if bindings.is_empty() {
                cached.acls.remove(&principal);
            }
        });
        created.and(deleted)
    }

    /// Sets and removes quotas of `kafka_name`.
    pub async fn change_quotas(
        &self,
        kafka_name: &str,
        changes: BTreeMap<String, Option<f64>>,
    ) -> Result<(), UserError> {
        if changes.is_empty() {
            return Ok(());
        }
        let alteration = QuotaAlteration {
            entity: QuotaEntity::from([(USER_ENTITY.to_owned(), Some(kafka_name.to_owned()))]),
            changes: changes.clone(),
        };
        self.quotas.call(alteration).await??;
        self.record(kafka_name, |cached| {
            let values = cached.quotas.entry(kafka_name.to_owned()).or_default();
            for (key, value) in changes {
                match value {
                    Some(value) => values.insert(key, value),
                    None => values.remove(&key),
                };
            }
            if values.is_empty() {
                cached.quotas.remove(kafka_name);
            }
        });
        Ok(())
    }

    /// Creates or replaces the SCRAM-SHA-512 credential of `kafka_name`.
    pub async fn upsert_scram(&self, kafka_name: &str, password: &str) -> Result<(), UserError> {
        self.scram
            .call(ScramCredentialChange::Upsert {
                user: kafka_name.to_owned(),
                password: password.to_owned(),
                iterations: SCRAM_ITERATIONS,
            })
            .await??;
        self.record(kafka_name, |cached| {
            cached.scram.insert(kafka_name.to_owned());
            cached
                .passwords
                .insert(kafka_name.to_owned(), fingerprint(password));
        });
        Ok(())
    }

    /// Removes the SCRAM credential of `kafka_name`; one that does not exist counts as
    /// removed.
    pub async fn delete_scram(&self, kafka_name: &str) -> Result<(), UserError> {
        self.scram
            .call(ScramCredentialChange::Delete {
                user: kafka_name.to_owned(),
                mechanism: ScramMechanism::ScramSha512,
            })
            .await??;
        self.record(kafka_name, |cached| {
            cached.scram.remove(kafka_name);
            cached.passwords.remove(kafka_name);
        });
        Ok(())
    }

    /// Removes every ACL binding, quota and SCRAM credential of `kafka_name` that the caches
    /// know of; sends nothing when there are none.
    pub async fn remove_all(&self, kafka_name: &str) -> Result<(), UserError> {
        let acls = self.acls(kafka_name);
        let quotas = self.quotas(kafka_name);
        let acl_changes = AclChanges {
            create: Vec::new(),
            delete: acls.into_iter().collect(),
        };
        let quota_changes = quotas.into_keys().map(|key| (key, None)).collect();
        let scram = async {
            if self.has_scram(kafka_name) {
                self.delete_scram(kafka_name).await
            } else {
                Ok(())
            }
        };
        let acls = async {
            if acl_changes.is_empty() || !self.context.acls_supported {
                Ok(())
            } else {
                self.change_acls(kafka_name, acl_changes).await
            }
        };
        let (acls, quotas, scram) =
            futures::join!(acls, self.change_quotas(kafka_name, quota_changes), scram);
        acls.and(quotas).and(scram)
    }

    /// Applies `change` to the caches and marks `kafka_name` as written in this epoch.
    fn record(&self, kafka_name: &str, change: impl FnOnce(&mut Cached)) {
        let mut cached = self.context.cached();
        change(&mut cached);
        let epoch = cached.epoch;
        cached.written.insert(kafka_name.to_owned(), epoch);
    }
}

/// The user of a quota entity that names only a user (not the default user).
fn user_of_entity(entity: &QuotaEntity) -> Option<String> {
    if entity.len() != 1 {
        return None;
    }
    entity.get(USER_ENTITY).cloned().flatten()
}

/// A fingerprint of a password, kept instead of the password itself.
fn fingerprint(password: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    password.hash(&mut hasher);
    hasher.finish()
}

fn kafka_error(error: &AdminError) -> UserError {
    UserError::kafka("writing users to Kafka", error.clone())
}

/// Kafka's answer lacked what was asked for.
fn missing_answer(what: String) -> UserError {
    kafka_error(&AdminError::Protocol(what))
}

/// One outcome per item from per-entry results laid out in item order, `sizes[i]` entries
/// for item `i`; an item fails with the first of its entries that failed.
fn per_item_in_order<T>(
    sizes: &[usize],
    results: Result<Vec<ItemResult<T>>, AdminError>,
) -> Vec<Result<(), UserError>> {
    let results = match results {
        Ok(results) => results,
        Err(error) => return sizes.iter().map(|_| Err(kafka_error(&error))).collect(),
    };
    let mut entries = results.into_iter();
    sizes
        .iter()
        .map(|size| {
            let mut outcome = Ok(());
            for _ in 0..*size {
                match entries.next() {
                    Some(Ok(_)) => {}
                    Some(Err(error)) => {
                        if outcome.is_ok() {
                            outcome = Err(kafka_error(&error));
                        }
                    }
                    None => {
                        outcome = Err(missing_answer(
                            "Kafka answered for fewer entries than were sent".to_owned(),
                        ));
                    }
                }
            }
            outcome
        })
        .collect()
}

async fn create_acls_batch(
    context: Arc<Context>,
    items: Vec<Vec<AclBinding>>,
) -> Vec<Result<(), UserError>> {
    context.requests.count(CREATE_ACLS);
    let sizes: Vec<usize> = items.iter().map(Vec::len).collect();
    let bindings: Vec<AclBinding> = items.into_iter().flatten().collect();
    per_item_in_order(&sizes, context.admin.create_acls(&bindings).await)
}

async fn delete_acls_batch(
    context: Arc<Context>,
    items: Vec<Vec<AclBinding>>,
) -> Vec<Result<(), UserError>> {
    context.requests.count(DELETE_ACLS);
    let sizes: Vec<usize> = items.iter().map(Vec::len).collect();
    let filters: Vec<AclBindingFilter> =
        items.iter().flatten().map(AclBinding::to_filter).collect();
    per_item_in_order(&sizes, context.admin.delete_acls(&filters).await)
}

async fn quotas_batch(
    context: Arc<Context>,
    items: Vec<QuotaAlteration>,
) -> Vec<Result<(), UserError>> {
    context.requests.count(ALTER_QUOTAS);
    let sizes = vec![1; items.len()];
    per_item_in_order(
        &sizes,
        context.admin.alter_client_quotas(&items, false).await,
    )
}

async fn scram_batch(
    context: Arc<Context>,
    items: Vec<ScramCredentialChange>,
) -> Vec<Result<(), UserError>> {
    context.requests.count(ALTER_SCRAM);
    // Kafka refuses a request that names a user twice: later changes of a user wait for
    // the next request.
    let mut outcomes: Vec<Option<Result<(), UserError>>> = vec![None; items.len()];
    let mut pending: Vec<usize> = (0..items.len()).collect();
    while !pending.is_empty() {
        let mut seen = BTreeSet::new();
        let (now, later): (Vec<usize>, Vec<usize>) = pending
            .iter()
            .partition(|index| seen.insert(items[**index].user().to_owned()));
        let changes: Vec<ScramCredentialChange> =
            now.iter().map(|index| items[*index].clone()).collect();
        let results = context.admin.alter_user_scram_credentials(&changes).await;
        for index in &now {
            let user = items[*index].user();
            outcomes[*index] = Some(match &results {
                Err(error) => Err(kafka_error(error)),
                Ok(results) => match results.get(user) {
                    Some(Ok(())) => Ok(()),
                    // Deleting a credential that does not exist: nothing left to delete.
                    Some(Err(AdminError::Kafka {
                        error: ResponseError::ResourceNotFound,
                        ..
                    })) if matches!(items[*index], ScramCredentialChange::Delete { .. }) => Ok(()),
                    Some(Err(error)) => Err(kafka_error(error)),
                    None => Err(missing_answer(format!(
                        "Kafka did not answer for the SCRAM credential of {user}"
                    ))),
                },
            });
        }
        pending = later;
        if !pending.is_empty() {
            context.requests.count(ALTER_SCRAM);
        }
    }
    outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or_else(|| Err(UserError::Internal("no outcome".into()))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_user_entities_are_users() {
        let user = QuotaEntity::from([("user".to_owned(), Some("alice".to_owned()))]);
        assert_eq!(user_of_entity(&user).as_deref(), Some("alice"));
        let default = QuotaEntity::from([("user".to_owned(), None)]);
        assert_eq!(user_of_entity(&default), None);
        let mixed = QuotaEntity::from([
            ("user".to_owned(), Some("alice".to_owned())),
            ("client-id".to_owned(), Some("c".to_owned())),
        ]);
        assert_eq!(user_of_entity(&mixed), None);
    }

    #[test]
    fn entries_map_back_to_their_items() {
        let results: Result<Vec<ItemResult<()>>, AdminError> = Ok(vec![
            Ok(()),
            Ok(()),
            Err(AdminError::Protocol("refused".into())),
            Ok(()),
        ]);
        let outcomes = per_item_in_order(&[2, 1, 1], results);
        assert!(outcomes[0].is_ok());
        assert!(
            matches!(&outcomes[1], Err(error @ UserError::Kafka { .. }) if error.to_string().contains("refused"))
        );
        assert!(outcomes[2].is_ok());
        let failed: Result<Vec<ItemResult<()>>, AdminError> =
            Err(AdminError::Protocol("down".into()));
        assert!(
            per_item_in_order(&[1, 3], failed)
                .iter()
                .all(Result::is_err)
        );
        assert_eq!(fingerprint("a"), fingerprint("a"));
        assert_ne!(fingerprint("a"), fingerprint("b"));
    }
}
