//! Which operator acts on a resource that more than one operator watches: two cluster
//! operators (with other settings, or watching the same namespace from different lease
//! namespaces) would otherwise both act on one Kafka and undo each other's work, rolling its
//! pods again and again.
//!
//! Each resource has a claim: a `coordination.k8s.io/v1` Lease in its namespace, owned by it,
//! whose holder is the operator that acts on it. The holder writes the Lease once, when it
//! first claims the resource; while nobody contends, nothing is written again. Another
//! operator that finds the claim held marks itself as the contender (two annotations of the
//! Lease) and does not act. The holder sees the mark at its next reconciliation and stops
//! acting too, acknowledging the mark by renewing its claim, so that both say there is a
//! conflict. When one of them stops, the other notices that the part of the Lease the stopped
//! one renewed stays the same for a whole claim duration: a holder clears the stale mark and
//! acts again; a contender takes the claim over (the holder had that long to answer its mark)
//! and acts.
//!
//! Liveness is measured on this process's clock, from when it first saw each part of the
//! Lease as it is (as client-go's leader election does), never by comparing another
//! machine's timestamps with ours. [`decide`] is the pure decision; [`Claims`] reads and
//! writes the Lease.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::{Client, Resource, ResourceExt};
use tokio::time::Instant;

use crate::api_error::ApiCallError;

/// The annotation of a claim Lease naming the operator that contends for the claim.
pub const CONTENDER_ANNOTATION: &str = "strimzi-rs/contender";

/// The annotation of a claim Lease with the time the contender last renewed its mark
/// (RFC 3339, for people; liveness is measured on each operator's own clock).
pub const CONTENDER_RENEW_TIME_ANNOTATION: &str = "strimzi-rs/contender-renew-time";

/// Reading or writing a claim Lease failed.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ClaimError(#[from] pub ApiCallError);

impl crate::ErrorReason for ClaimError {
    fn reason(&self) -> &'static str {
        "OperatorClaimFailed"
    }
}

/// What a claim Lease says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimRecord {
    /// The operator that acts on the resource.
    pub holder: Option<String>,
    /// When the holder last renewed its claim, as it wrote it.
    pub holder_renewed: Option<String>,
    /// The operator that found the claim held and contends for it.
    pub contender: Option<String>,
    /// When the contender last renewed its mark, as it wrote it.
    pub contender_renewed: Option<String>,
}

impl ClaimRecord {
    /// The record of `lease`.
    pub fn of(lease: &Lease) -> Self {
        let spec = lease.spec.as_ref();
        let annotation = |key: &str| lease.annotations().get(key).cloned();
        Self {
            holder: spec
                .and_then(|spec| spec.holder_identity.clone())
                .filter(|holder| !holder.is_empty()),
            holder_renewed: spec
                .and_then(|spec| spec.renew_time.as_ref())
                .map(|time| time.0.to_string()),
            contender: annotation(CONTENDER_ANNOTATION).filter(|contender| !contender.is_empty()),
            contender_renewed: annotation(CONTENDER_RENEW_TIME_ANNOTATION),
        }
    }

    fn holder_part(&self) -> (Option<String>, Option<String>) {
        (self.holder.clone(), self.holder_renewed.clone())
    }

    fn contender_part(&self) -> (Option<String>, Option<String>) {
        (self.contender.clone(), self.contender_renewed.clone())
    }
}

/// How long this process has seen each part of a claim's record unchanged, and how long it
/// has contended for the claim.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quiet {
    /// Since the holder or its renewal time last changed.
    pub holder: Duration,
    /// Since the contender or its renewal time last changed.
    pub contender: Duration,
    /// Since this process first found the claim held by another operator and marked itself
    /// the contender; `None` while it does not contend.
    pub contending: Option<Duration>,
}

/// What this operator does with a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It acts on the resource.
    Act,
    /// Another operator claims the resource too: neither acts.
    Conflict {
        /// The operators involved, the holder first.
        operators: [String; 2],
    },
}

/// What is written to the claim Lease before the verdict holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimWrite {
    /// Create the Lease, held by this operator.
    Create,
    /// Make this operator the holder and remove any contender mark.
    TakeOver,
    /// Renew this operator's claim, answering a contender.
    Renew,
    /// Remove a contender mark that is no longer renewed.
    ClearContender,
    /// Mark (or renew the mark of) this operator as the contender.
    Contend,
}

/// The claim's duration and how often the live parties renew their part of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimTiming {
    /// How long a part of the Lease must stay unchanged before its writer counts as stopped.
    pub duration: Duration,
}

impl ClaimTiming {
    /// Timing for an operator that reconciles every resource at least every
    /// `full_reconciliation_interval`: a holder sees a contender's mark within one interval
    /// and renews its claim from then on, so the claim lasts two.
    pub fn for_interval(full_reconciliation_interval: Duration) -> Self {
        Self {
            duration: full_reconciliation_interval.saturating_mul(2),
        }
    }

    /// How often a party in a conflict renews its part and looks again.
    pub fn renew_period(&self) -> Duration {
        self.duration / 4
    }
}

/// What operator `me` does with a resource whose claim is `record` (`None`: no Lease yet),
/// its parts quiet for `quiet`; and what it writes first.
pub fn decide(
    me: &str,
    record: Option<&ClaimRecord>,
    quiet: Quiet,
    timing: ClaimTiming,
) -> (Verdict, Option<ClaimWrite>) {
    let Some(record) = record else {
        return (Verdict::Act, Some(ClaimWrite::Create));
    };
    let stopped = |quiet: Duration| quiet >= timing.duration;
    let due = |quiet: Duration| quiet >= timing.renew_period();
    match record.holder.as_deref() {
        None => (Verdict::Act, Some(ClaimWrite::TakeOver)),
        Some(holder) if holder == me => match record.contender.as_deref() {
            Some(contender) if contender != me && !stopped(quiet.contender) => (
                Verdict::Conflict {
                    operators: [me.to_owned(), contender.to_owned()],
                },
                due(quiet.holder).then_some(ClaimWrite::Renew),
            ),
            Some(_) => (Verdict::Act, Some(ClaimWrite::ClearContender)),
            None => (Verdict::Act, None),
        },
        Some(holder) => {
            if quiet.contending.is_some_and(stopped) && stopped(quiet.holder) {
                return (Verdict::Act, Some(ClaimWrite::TakeOver));
            }
            let marked = record.contender.as_deref() == Some(me) && !due(quiet.contender);
            (
                Verdict::Conflict {
                    operators: [holder.to_owned(), me.to_owned()],
                },
                (!marked).then_some(ClaimWrite::Contend),
            )
        }
    }
}

/// What this process saw of one claim, and since when.
#[derive(Debug, Clone)]
struct Seen {
    holder: (Option<String>, Option<String>),
    holder_since: Instant,
    contender: (Option<String>, Option<String>),
    contender_since: Instant,
    contending_since: Option<Instant>,
}

impl Seen {
    fn new(record: &ClaimRecord, now: Instant) -> Self {
        Self {
            holder: record.holder_part(),
            holder_since: now,
            contender: record.contender_part(),
            contender_since: now,
            contending_since: None,
        }
    }

    /// Notes `record` as seen at `now`: a part that changed is quiet from now on.
    fn observe(&mut self, record: &ClaimRecord, now: Instant) {
        if self.holder != record.holder_part() {
            self.holder = record.holder_part();
            self.holder_since = now;
        }
        if self.contender != record.contender_part() {
            self.contender = record.contender_part();
            self.contender_since = now;
        }
    }

    fn quiet(&self, now: Instant) -> Quiet {
        Quiet {
            holder: now.duration_since(self.holder_since),
            contender: now.duration_since(self.contender_since),
            contending: self.contending_since.map(|since| now.duration_since(since)),
        }
    }
}

/// The claims of one operator: its identity, the claims' timing and what it saw of each.
pub struct Claims {
    client: Client,
    identity: String,
    timing: ClaimTiming,
    seen: Mutex<HashMap<String, Seen>>,
}

impl std::fmt::Debug for Claims {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Claims")
            .field("identity", &self.identity)
            .field("timing", &self.timing)
            .finish_non_exhaustive()
    }
}

impl Claims {
    /// The claims of operator `identity` (the same for every replica of one deployment of it).
    pub fn new(client: Client, identity: String, timing: ClaimTiming) -> Self {
        Self {
            client,
            identity,
            timing,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// This operator's identity in claims.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The claims' timing.
    pub fn timing(&self) -> ClaimTiming {
        self.timing
    }

    /// Whether this operator acts on `owner`, whose claim is the Lease `name` in its namespace
    /// (labelled `labels`, owned by `owner`), writing the Lease as [`decide`] says. A Lease
    /// that cannot be read or written is an error: nothing acts on a claim it cannot check.
    pub async fn check<K: Resource<DynamicType = ()>>(
        &self,
        owner: &K,
        name: &str,
        labels: BTreeMap<String, String>,
    ) -> Result<Verdict, ClaimError> {
        let namespace = owner.namespace().unwrap_or_default();
        let api: Api<Lease> = Api::namespaced(self.client.clone(), &namespace);
        let error = |verb| {
            let object = format!("claim Lease {namespace}/{name}");
            move |source| ClaimError(ApiCallError::new(verb, object, source))
        };
        let lease = api.get_opt(name).await.map_err(error("get"))?;
        let key = format!("{namespace}/{name}");
        let now = Instant::now();
        let record = lease.as_ref().map(ClaimRecord::of);
        let (verdict, write) = {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            let quiet = match &record {
                Some(record) => {
                    let seen = seen
                        .entry(key.clone())
                        .and_modify(|seen| seen.observe(record, now))
                        .or_insert_with(|| Seen::new(record, now));
                    seen.quiet(now)
                }
                None => {
                    seen.remove(&key);
                    Quiet::default()
                }
            };
            decide(&self.identity, record.as_ref(), quiet, self.timing)
        };
        let Some(write) = write else {
            return Ok(verdict);
        };
        let written = match lease {
            None => {
                let lease = self.new_lease(owner, name, labels);
                api.create(&PostParams::default(), &lease)
                    .await
                    .map_err(error("create"))?
            }
            Some(lease) => {
                let lease = self.rewrite(lease, write);
                // The resource version read above makes this fail if anyone wrote since.
                api.replace(name, &PostParams::default(), &lease)
                    .await
                    .map_err(error("replace"))?
            }
        };
        let record = ClaimRecord::of(&written);
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let seen = seen
            .entry(key)
            .and_modify(|seen| seen.observe(&record, now))
            .or_insert_with(|| Seen::new(&record, now));
        seen.contending_since = match (write, &verdict) {
            (ClaimWrite::Contend, Verdict::Conflict { .. }) => {
                Some(seen.contending_since.unwrap_or(now))
            }
            _ => None,
        };
        Ok(verdict)
    }

    fn new_lease<K: Resource<DynamicType = ()>>(
        &self,
        owner: &K,
        name: &str,
        labels: BTreeMap<String, String>,
    ) -> Lease {
        let now = MicroTime(jiff::Timestamp::now());
        Lease {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: owner.meta().namespace.clone(),
                labels: Some(labels),
                owner_references: crate::labels::owner_reference(owner).map(|owner| vec![owner]),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.identity.clone()),
                lease_duration_seconds: Some(self.duration_seconds()),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            }),
        }
    }

    /// `lease` with `write` done.
    fn rewrite(&self, mut lease: Lease, write: ClaimWrite) -> Lease {
        let now = jiff::Timestamp::now();
        let annotations = lease.annotations_mut();
        match write {
            ClaimWrite::Contend => {
                annotations.insert(CONTENDER_ANNOTATION.to_owned(), self.identity.clone());
                annotations.insert(CONTENDER_RENEW_TIME_ANNOTATION.to_owned(), now.to_string());
                return lease;
            }
            ClaimWrite::TakeOver | ClaimWrite::ClearContender => {
                annotations.remove(CONTENDER_ANNOTATION);
                annotations.remove(CONTENDER_RENEW_TIME_ANNOTATION);
            }
            ClaimWrite::Create | ClaimWrite::Renew => {}
        }
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if matches!(write, ClaimWrite::TakeOver) {
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        if matches!(write, ClaimWrite::TakeOver | ClaimWrite::Renew) {
            spec.renew_time = Some(MicroTime(now));
            spec.lease_duration_seconds = Some(self.duration_seconds());
        }
        lease
    }

    fn duration_seconds(&self) -> i32 {
        i32::try_from(self.timing.duration.as_secs()).unwrap_or(i32::MAX)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const TIMING: ClaimTiming = ClaimTiming {
        duration: Duration::from_secs(60),
    };

    fn record(holder: Option<&str>, contender: Option<&str>) -> ClaimRecord {
        ClaimRecord {
            holder: holder.map(str::to_owned),
            holder_renewed: holder.map(|_| "2026-11-29T09:00:00Z".to_owned()),
            contender: contender.map(str::to_owned),
            contender_renewed: contender.map(|_| "2026-11-29T09:00:00Z".to_owned()),
        }
    }

    fn quiet(holder: u64, contender: u64, contending: Option<u64>) -> Quiet {
        Quiet {
            holder: Duration::from_secs(holder),
            contender: Duration::from_secs(contender),
            contending: contending.map(Duration::from_secs),
        }
    }

    fn conflict(holder: &str, contender: &str) -> Verdict {
        Verdict::Conflict {
            operators: [holder.to_owned(), contender.to_owned()],
        }
    }

    #[test]
    fn the_first_operator_claims_and_acts_without_writing_again() {
        assert_eq!(
            decide("a", None, Quiet::default(), TIMING),
            (Verdict::Act, Some(ClaimWrite::Create))
        );
        let held = record(Some("a"), None);
        assert_eq!(
            decide("a", Some(&held), quiet(3600, 3600, None), TIMING),
            (Verdict::Act, None)
        );
        let released = record(None, None);
        assert_eq!(
            decide("b", Some(&released), Quiet::default(), TIMING),
            (Verdict::Act, Some(ClaimWrite::TakeOver))
        );
    }

    #[test]
    fn a_second_operator_contends_instead_of_acting_however_old_the_claim() {
        let held = record(Some("a"), None);
        // The holder wrote an hour ago and never since: it may well still be running.
        assert_eq!(
            decide("b", Some(&held), quiet(3600, 3600, None), TIMING),
            (conflict("a", "b"), Some(ClaimWrite::Contend))
        );
        let marked = record(Some("a"), Some("b"));
        assert_eq!(
            decide("b", Some(&marked), quiet(3600, 5, Some(5)), TIMING),
            (conflict("a", "b"), None)
        );
        assert_eq!(
            decide("b", Some(&marked), quiet(3600, 15, Some(15)), TIMING),
            (conflict("a", "b"), Some(ClaimWrite::Contend)),
            "the mark is renewed every quarter of the duration"
        );
    }

    #[test]
    fn the_holder_stops_acting_and_answers_a_live_contender() {
        let marked = record(Some("a"), Some("b"));
        assert_eq!(
            decide("a", Some(&marked), quiet(3600, 0, None), TIMING),
            (conflict("a", "b"), Some(ClaimWrite::Renew))
        );
        assert_eq!(
            decide("a", Some(&marked), quiet(5, 10, None), TIMING),
            (conflict("a", "b"), None)
        );
    }

    #[test]
    fn whoever_is_left_acts_once_the_other_has_stopped_renewing() {
        let marked = record(Some("a"), Some("b"));
        // The contender stopped: the holder clears its mark and acts.
        assert_eq!(
            decide("a", Some(&marked), quiet(20, 60, None), TIMING),
            (Verdict::Act, Some(ClaimWrite::ClearContender))
        );
        // The holder stopped answering: the contender takes over.
        assert_eq!(
            decide("b", Some(&marked), quiet(60, 10, Some(60)), TIMING),
            (Verdict::Act, Some(ClaimWrite::TakeOver))
        );
    }

    #[test]
    fn a_contender_waits_a_whole_duration_from_its_own_mark() {
        let marked = record(Some("a"), Some("b"));
        // The holder has been quiet long, but the contender only just marked itself (or just
        // restarted): the holder has not had its chance to answer yet.
        assert_eq!(
            decide("b", Some(&marked), quiet(3600, 10, Some(10)), TIMING).0,
            conflict("a", "b")
        );
        assert_eq!(
            decide("b", Some(&marked), quiet(3600, 10, None), TIMING).0,
            conflict("a", "b")
        );
        // The holder answered within the duration.
        assert_eq!(
            decide("b", Some(&marked), quiet(30, 10, Some(3600)), TIMING).0,
            conflict("a", "b")
        );
    }

    #[test]
    fn a_third_operator_replaces_a_stale_mark_with_its_own() {
        let marked = record(Some("a"), Some("b"));
        assert_eq!(
            decide("c", Some(&marked), quiet(3600, 3600, None), TIMING),
            (conflict("a", "c"), Some(ClaimWrite::Contend))
        );
    }

    #[test]
    fn quiet_parts_are_measured_from_the_last_change_this_process_saw() {
        let start = Instant::now();
        let marked = record(Some("a"), Some("b"));
        let mut seen = Seen::new(&marked, start);
        let later = start + Duration::from_secs(30);
        let renewed = ClaimRecord {
            holder_renewed: Some("2026-11-29T09:00:30Z".to_owned()),
            ..marked.clone()
        };
        seen.observe(&renewed, later);
        let quiet = seen.quiet(later + Duration::from_secs(5));
        assert_eq!(quiet.holder, Duration::from_secs(5));
        assert_eq!(quiet.contender, Duration::from_secs(35));
        assert_eq!(quiet.contending, None);
    }

    #[test]
    fn the_record_is_read_from_the_lease_spec_and_annotations() {
        let lease = Lease {
            metadata: ObjectMeta {
                annotations: Some(BTreeMap::from([
                    (CONTENDER_ANNOTATION.to_owned(), "b".to_owned()),
                    (
                        CONTENDER_RENEW_TIME_ANNOTATION.to_owned(),
                        "2026-11-29T09:00:00Z".to_owned(),
                    ),
                ])),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some("a".to_owned()),
                renew_time: Some(MicroTime("2026-11-29T09:00:00Z".parse().unwrap())),
                ..LeaseSpec::default()
            }),
        };
        assert_eq!(ClaimRecord::of(&lease), record(Some("a"), Some("b")));
        assert_eq!(ClaimRecord::of(&Lease::default()), ClaimRecord::default());
    }
}
