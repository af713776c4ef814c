//! The KafkaTopic reconciler: makes the Kafka topic match the resource (create, add
//! partitions, alter configs, change the replication factor step by step), refuses what it
//! does not support, settles which of several KafkaTopics naming one topic manages it, and
//! deletes the topic when its KafkaTopic goes.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::Store;
use kube::{Api, Client, ResourceExt};
use strimzi_api::common::Condition;
use strimzi_api::topic::{KafkaTopic, KafkaTopicStatus};
use strimzi_api::{annotations, finalizers};
use strimzi_operator_common::api_error::ApiCallError;
use strimzi_operator_common::controller::{Reconciled, Reconciler};
use strimzi_operator_common::ownership::{self, Claim};
use strimzi_operator_common::status;

use crate::error::TopicError;
use crate::kafka::TopicKafka;
use crate::model::{self, AlterableConfigs, DesiredTopic};
use crate::replication::{self, ReplicationChanger};

/// Reason of the warning about configs that may not be altered.
pub const INVALID_CONFIG: &str = "InvalidConfig";
/// How soon a topic whose replication factor is changing is looked at again.
pub const REPLICAS_CHANGE_RECHECK: Duration = Duration::from_secs(3);
/// How long the deletion of a topic may take while its namespace is being deleted, before
/// the topic is left in Kafka so that the namespace can go.
pub const TERMINATING_NAMESPACE_GRACE: Duration = Duration::from_secs(10);

/// Reconciles KafkaTopics against Kafka.
pub struct TopicReconciler {
    kafka: TopicKafka,
    replication: ReplicationChanger,
    client: Client,
    /// Every watched KafkaTopic, to find other resources naming the same topic.
    resources: Vec<Store<DeserializeGuard<KafkaTopic>>>,
    use_finalizers: bool,
    alterable: AlterableConfigs,
}

impl TopicReconciler {
    /// A reconciler using `kafka`, changing replication factors with `replication`, looking
    /// for conflicts among `resources`.
    pub fn new(
        kafka: TopicKafka,
        replication: ReplicationChanger,
        client: Client,
        resources: Vec<Store<DeserializeGuard<KafkaTopic>>>,
        use_finalizers: bool,
        alterable: AlterableConfigs,
    ) -> Self {
        Self {
            kafka,
            replication,
            client,
            resources,
            use_finalizers,
            alterable,
        }
    }

    /// `Err(ResourceConflict)` when another KafkaTopic manages topic `name`.
    fn check_owner(&self, resource: &KafkaTopic, name: &str) -> Result<(), TopicError> {
        let me = ownership::key(&resource.metadata);
        let claims = ownership::rival_claims(
            &self.resources,
            &me,
            |other| is_managed(other) && other.topic_name() == Some(name),
            |other| claim(other, name),
        );
        match ownership::owner(&claims) {
            Some(owner) if owner.key != me => Err(TopicError::ResourceConflict(format!(
                "Managed by {}",
                owner.reference()
            ))),
            _ => Ok(()),
        }
    }

    /// Whether the namespace of `resource` is being deleted.
    async fn namespace_terminating(&self, resource: &KafkaTopic) -> Result<bool, TopicError> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        let name = resource.namespace().unwrap_or_default();
        let namespace = namespaces.get_opt(&name).await.map_err(|error| {
            TopicError::Kubernetes(Arc::new(ApiCallError::of::<Namespace>(
                "get", "", &name, error,
            )))
        })?;
        Ok(namespace.is_none_or(|namespace| namespace.metadata.deletion_timestamp.is_some()))
    }
}

/// Whether the operator manages the topic of `resource` (no `strimzi.io/managed: "false"`).
pub fn is_managed(resource: &KafkaTopic) -> bool {
    resource
        .annotations()
        .get(annotations::MANAGED)
        .is_none_or(|value| !value.eq_ignore_ascii_case("false"))
}

/// The claim of `resource` on topic `name`: `Ready` for it when its status names it.
fn claim(resource: &KafkaTopic, name: &str) -> Claim {
    let ready = resource.status.as_ref().is_some_and(|status| {
        status.topic_name.as_deref() == Some(name)
            && ownership::is_ready(status.conditions.iter().flatten())
    });
    Claim::of(&resource.metadata, ready)
}

impl Reconciler for TopicReconciler {
    type Resource = KafkaTopic;
    type Status = KafkaTopicStatus;
    type Error = TopicError;

    async fn reconcile(
        &self,
        resource: Arc<KafkaTopic>,
    ) -> Result<Reconciled<KafkaTopicStatus>, TopicError> {
        let previous = resource.status.clone().unwrap_or_default();
        if !is_managed(&resource) {
            return Ok(Reconciled::new(KafkaTopicStatus {
                topic_name: previous.topic_name,
                topic_id: previous.topic_id,
                ..KafkaTopicStatus::default()
            }));
        }
        let desired = DesiredTopic::of(&resource);
        if let Some(managed) = previous.topic_name.as_deref()
            && managed != desired.name
        {
            return Err(TopicError::NotSupported(model::renamed_message(managed)));
        }
        self.check_owner(&resource, &desired.name)?;
        let mut status = KafkaTopicStatus {
            topic_name: Some(desired.name.clone()),
            ..KafkaTopicStatus::default()
        };
        let Some(actual) = self.kafka.describe(&desired.name).await? else {
            status.topic_id = match self.kafka.create(desired.new_topic()).await {
                Ok(id) => Some(id),
                // Created moments ago, and the broker asked has not seen it yet: the next
                // reconciliation compares it.
                Err(TopicError::AlreadyExists(_)) if previous.topic_id.is_some() => {
                    previous.topic_id
                }
                Err(error) => return Err(error),
            };
            return Ok(Reconciled::new(status));
        };
        status.topic_id = Some(actual.topic_id.clone());
        let changes = model::changes(&desired, &actual, &self.alterable);
        let grow = async {
            match changes.partitions {
                Some(total) => self.kafka.grow(&desired.name, total).await,
                None => Ok(()),
            }
        };
        let alter = async {
            if changes.configs.is_empty() {
                Ok(())
            } else {
                self.kafka
                    .alter(&desired.name, changes.configs.clone())
                    .await
            }
        };
        futures::try_join!(grow, alter)?;
        if !changes.unsupported.is_empty() {
            let messages: Vec<String> = changes
                .unsupported
                .iter()
                .map(ToString::to_string)
                .collect();
            return Err(TopicError::NotSupported(messages.join("; ")));
        }
        // A change to follow: asked for, reported as running, or whose throttle is left.
        if changes.replicas.is_some() || previous.replicas_change.is_some() || actual.is_throttled()
        {
            let target = desired.replicas.unwrap_or(actual.replicas);
            status.replicas_change = self
                .replication
                .step(
                    &desired.name,
                    &actual,
                    target,
                    previous.replicas_change.as_ref(),
                )
                .await?;
        }
        let recheck = status
            .replicas_change
            .as_ref()
            .is_some_and(replication::needs_recheck);
        let reconciled = if recheck {
            // Ready while the change runs, as Strimzi reports it; looked at again soon.
            Reconciled::in_state(
                status,
                status::ready(&status::timestamp_now()),
                Some(REPLICAS_CHANGE_RECHECK),
            )
        } else {
            Reconciled::new(status)
        };
        Ok(if changes.not_alterable.is_empty() {
            reconciled
        } else {
            reconciled.warn(
                INVALID_CONFIG,
                &format!(
                    "These spec.config properties are not alterable (STRIMZI_ALTERABLE_TOPIC_CONFIG), so they were left as they are in Kafka: {}",
                    changes.not_alterable.join(", ")
                ),
            )
        })
    }

    fn failure_condition(&self, reason: &str, message: &str, now: &str) -> Condition {
        status::ready_false(reason, message, now)
    }

    fn finalizer(&self) -> Option<&'static str> {
        self.use_finalizers.then_some(finalizers::TOPIC_OPERATOR)
    }

    fn retired_finalizer(&self) -> Option<&'static str> {
        (!self.use_finalizers).then_some(finalizers::TOPIC_OPERATOR)
    }

    async fn cleanup(&self, resource: Arc<KafkaTopic>) -> Result<(), TopicError> {
        if !is_managed(&resource) {
            tracing::info!("unmanaged KafkaTopic deleted; its topic stays in Kafka");
            return Ok(());
        }
        let name = DesiredTopic::of(&resource).name;
        // The topic managed is the one of the status; while the spec names another (a refused
        // rename), neither is deleted, as with Strimzi: the resource stays until the spec is
        // reverted.
        if let Some(managed) = resource
            .status
            .as_ref()
            .and_then(|status| status.topic_name.as_deref())
            && managed != name
        {
            let refused = TopicError::NotSupported(model::renamed_deletion_message(managed, &name));
            if !self.namespace_terminating(&resource).await? {
                return Err(refused);
            }
            // The namespace is going: nobody can revert the spec; both topics stay in Kafka.
            tracing::warn!(%refused, "namespace being deleted; both topics are left in Kafka");
            return Ok(());
        }
        if let Err(conflict) = self.check_owner(&resource, &name) {
            tracing::info!(%conflict, "KafkaTopic deleted; the topic stays for its manager");
            return Ok(());
        }
        if !self.namespace_terminating(&resource).await? {
            return self.kafka.delete(&name).await;
        }
        // The namespace is going: do not hold it up for a Kafka cluster that may be gone.
        let deleted =
            tokio::time::timeout(TERMINATING_NAMESPACE_GRACE, self.kafka.delete(&name)).await;
        match deleted {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => {
                tracing::warn!(topic = name, %error, "namespace being deleted and Kafka failed; the topic is left in Kafka");
                Ok(())
            }
            Err(_) => {
                tracing::warn!(
                    topic = name,
                    "namespace being deleted and Kafka did not answer in time; the topic is left in Kafka"
                );
                Ok(())
            }
        }
    }
}
