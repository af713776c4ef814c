//! Kubernetes Events for what users must notice (a pod restarted, a rule rejected, a
//! reconciliation failed), published through one recorder shared by an operator's
//! controllers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};

use crate::api_error::{ApiCallError, object_name};

/// Publishing an Event failed.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The API server refused the Event or could not be reached.
    #[error("publishing Event {reason}: {source}")]
    Publish {
        /// Reason of the Event.
        reason: String,
        /// The request that failed, naming the object the Event is about.
        #[source]
        source: ApiCallError,
    },
}

impl crate::ErrorReason for EventError {
    fn reason(&self) -> &'static str {
        "EventPublishError"
    }
}

/// How serious an Event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Something happened as planned, e.g. a pod was restarted for a new certificate.
    Normal,
    /// Something needs the user's attention, e.g. a failed reconciliation.
    Warning,
}

/// How long a published Event is remembered: the same Event again within this time is
/// counted in its series instead of being created anew.
const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);

/// What makes two Events the same one happening again: the note included, so that Events
/// that say different things (two brokers unregistered, two failures) are all kept.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct EventKey {
    type_: &'static str,
    reason: String,
    action: String,
    note: String,
    regarding: (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    ),
}

/// The shared Event recorder of one operator; cloned freely.
///
/// Events are written with the `events.k8s.io/v1` API. Unlike kube's `Recorder`, which
/// merges Events of the same reason about the same object whatever their notes, only an
/// Event identical to one published within [`SERIES_WINDOW`] is merged into its series.
#[derive(Clone)]
pub struct EventPublisher {
    client: Client,
    controller: String,
    instance: String,
    published: Arc<Mutex<HashMap<EventKey, K8sEvent>>>,
}

impl std::fmt::Debug for EventPublisher {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("EventPublisher")
    }
}

impl EventPublisher {
    /// Events reported by `controller` (the operator's name), from replica `instance`.
    pub fn new(client: Client, controller: &str, instance: Option<String>) -> Self {
        Self {
            client,
            controller: controller.to_owned(),
            instance: instance.unwrap_or_else(|| controller.to_owned()),
            published: Arc::default(),
        }
    }

    /// [`Self::publish`], logging a failure instead of returning it: for Events that report
    /// what an operator did, which must not fail the work they report.
    pub async fn publish_logged(
        &self,
        regarding: &ObjectReference,
        severity: Severity,
        reason: &str,
        action: &str,
        note: &str,
    ) {
        if let Err(error) = self
            .publish(regarding, severity, reason, action, note)
            .await
        {
            tracing::warn!(%error, reason, "publishing an Event");
        }
    }

    /// Publishes an Event about `regarding`: `reason` is a CamelCase word (an error's stable
    /// reason for failures), `action` what the operator did (`Reconcile`, `RestartPod`, ...)
    /// and `note` a sentence for people. The same Event again is counted in its series.
    pub async fn publish(
        &self,
        regarding: &ObjectReference,
        severity: Severity,
        reason: &str,
        action: &str,
        note: &str,
    ) -> Result<(), EventError> {
        let now = Timestamp::now();
        // The Events API limits notes to 1 kB.
        let note: String = note.chars().take(1000).collect();
        let key = EventKey {
            type_: match severity {
                Severity::Normal => "Normal",
                Severity::Warning => "Warning",
            },
            reason: reason.to_owned(),
            action: action.to_owned(),
            note,
            regarding: (
                regarding.kind.clone(),
                regarding.namespace.clone(),
                regarding.name.clone(),
                regarding.uid.clone(),
            ),
        };
        let repeated = {
            let mut published = self
                .published
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            published
                .retain(|_, event| last_seen(event).is_some_and(|at| at + SERIES_WINDOW > now));
            published.get(&key).cloned()
        };
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        let failed = |source| EventError::Publish {
            reason: reason.to_owned(),
            source: ApiCallError::new(
                "write",
                format!(
                    "Event for {}",
                    object_name(
                        regarding.kind.as_deref().unwrap_or_default(),
                        namespace,
                        regarding.name.as_deref().unwrap_or_default()
                    )
                ),
                source,
            ),
        };
        let event = match repeated {
            Some(mut event) => {
                event.series = Some(EventSeries {
                    count: event.series.as_ref().map_or(2, |series| series.count + 1),
                    last_observed_time: MicroTime(now),
                });
                let patch = serde_json::json!({"series": event.series});
                events
                    .patch(
                        &event.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(&patch),
                    )
                    .await
                    .map_err(failed)?;
                event
            }
            None => {
                let event = self.new_event(&key, regarding, now);
                events
                    .create(&PostParams::default(), &event)
                    .await
                    .map_err(failed)?
            }
        };
        self.published
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, event);
        Ok(())
    }

    /// A first Event for `key` about `regarding`, at `now`.
    fn new_event(&self, key: &EventKey, regarding: &ObjectReference, now: Timestamp) -> K8sEvent {
        K8sEvent {
            metadata: ObjectMeta {
                name: Some(format!(
                    "{}.{:x}",
                    regarding.name.as_deref().unwrap_or(&self.controller),
                    now.as_nanosecond()
                )),
                namespace: regarding.namespace.clone(),
                ..ObjectMeta::default()
            },
            action: Some(key.action.clone()),
            reason: Some(key.reason.clone()),
            note: Some(key.note.clone()),
            type_: Some(key.type_.to_owned()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            ..K8sEvent::default()
        }
    }
}

/// When `event` last happened.
fn last_seen(event: &K8sEvent) -> Option<Timestamp> {
    event
        .series
        .as_ref()
        .map(|series| series.last_observed_time.0)
        .or_else(|| event.event_time.as_ref().map(|time| time.0))
}
