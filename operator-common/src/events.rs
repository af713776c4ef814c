//! Kubernetes Events for what users must notice (a pod restarted, a rule rejected, a
//! reconciliation failed), published through one recorder shared by an operator's
//! controllers.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// Publishing an Event failed.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The API server refused the Event or could not be reached.
    #[error("publishing Event {reason} for {kind} {namespace}/{name}: {source}")]
    Publish {
        /// Reason of the Event.
        reason: String,
        /// Kind of the object the Event is about.
        kind: String,
        /// Namespace of the object.
        namespace: String,
        /// Name of the object.
        name: String,
        /// The client error.
        source: kube::Error,
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

/// The shared Event recorder of one operator; cloned freely.
#[derive(Clone)]
pub struct EventPublisher {
    recorder: Recorder,
}

impl std::fmt::Debug for EventPublisher {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("EventPublisher")
    }
}

impl EventPublisher {
    /// Events reported by `controller` (the operator's name), from replica `instance`.
    pub fn new(client: Client, controller: &str, instance: Option<String>) -> Self {
        let reporter = Reporter {
            controller: controller.to_owned(),
            instance,
        };
        Self {
            recorder: Recorder::new(client, reporter),
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
    /// and `note` a sentence for people. Repeated Events are merged into a series.
    pub async fn publish(
        &self,
        regarding: &ObjectReference,
        severity: Severity,
        reason: &str,
        action: &str,
        note: &str,
    ) -> Result<(), EventError> {
        let event = Event {
            type_: match severity {
                Severity::Normal => EventType::Normal,
                Severity::Warning => EventType::Warning,
            },
            reason: reason.to_owned(),
            // The Events API limits notes to 1 kB.
            note: Some(note.chars().take(1000).collect()),
            action: action.to_owned(),
            secondary: None,
        };
        self.recorder
            .publish(&event, regarding)
            .await
            .map_err(|source| EventError::Publish {
                reason: reason.to_owned(),
                kind: regarding.kind.clone().unwrap_or_default(),
                namespace: regarding.namespace.clone().unwrap_or_default(),
                name: regarding.name.clone().unwrap_or_default(),
                source,
            })
    }
}
