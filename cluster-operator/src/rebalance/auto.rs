//! The KafkaRebalances of automatic rebalancing (`spec.cruiseControl.autoRebalance` of a
//! Kafka), as Strimzi makes them when brokers are added or are to be removed: for the Kafka
//! reconciler, which creates them, follows their state and deletes them. Pure.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use strimzi_api::kafka::KafkaAutoRebalanceMode;
use strimzi_api::rebalance::{KafkaRebalance, KafkaRebalanceMode, KafkaRebalanceSpec};
use strimzi_api::{annotations, labels, naming};

use super::state::State;

/// The finalizer on an automatic rebalance: the Kafka reconciler removes it once it no longer
/// follows the rebalance, so that the rebalance is not lost while it still matters.
pub const AUTO_REBALANCING_FINALIZER: &str = "strimzi.io/auto-rebalancing";

/// The KafkaRebalance that moves replicas onto the added brokers, or off the brokers to be
/// removed, of Kafka `cluster` in `namespace`: named `<cluster>-auto-rebalancing-<mode>`,
/// labelled for the cluster, approved automatically, with the finalizer
/// [`AUTO_REBALANCING_FINALIZER`], and the spec of `template` (the KafkaRebalance the
/// auto-rebalance configuration names, if any) with the mode and `brokers` set.
pub fn auto_rebalance(
    namespace: &str,
    cluster: &str,
    mode: KafkaAutoRebalanceMode,
    brokers: Vec<i32>,
    template: Option<&KafkaRebalanceSpec>,
) -> KafkaRebalance {
    let spec = KafkaRebalanceSpec {
        mode: Some(match mode {
            KafkaAutoRebalanceMode::AddBrokers => KafkaRebalanceMode::AddBrokers,
            KafkaAutoRebalanceMode::RemoveBrokers => KafkaRebalanceMode::RemoveBrokers,
        }),
        brokers: Some(brokers),
        ..template.cloned().unwrap_or_default()
    };
    KafkaRebalance {
        metadata: ObjectMeta {
            name: Some(naming::auto_rebalancing_kafka_rebalance(
                cluster,
                mode.as_str(),
            )),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                labels::CLUSTER.to_owned(),
                cluster.to_owned(),
            )])),
            annotations: Some(BTreeMap::from([(
                annotations::REBALANCE_AUTO_APPROVAL.to_owned(),
                "true".to_owned(),
            )])),
            finalizers: Some(vec![AUTO_REBALANCING_FINALIZER.to_owned()]),
            ..ObjectMeta::default()
        },
        spec,
        status: None,
    }
}

/// Whether `rebalance` is a template (`strimzi.io/rebalance-template: "true"`): the
/// configuration of automatic rebalances, never reconciled itself.
pub fn is_template(rebalance: &KafkaRebalance) -> bool {
    annotations::is_true(
        rebalance.metadata.annotations.as_ref(),
        annotations::REBALANCE_TEMPLATE,
    )
}

/// The state `rebalance` is in, as its status says.
pub fn state_of(rebalance: &KafkaRebalance) -> State {
    State::of(rebalance.status.as_ref()).0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use strimzi_api::common::Condition;
    use strimzi_api::rebalance::KafkaRebalanceStatus;

    #[test]
    fn an_auto_rebalance_takes_the_template_spec_with_its_mode_and_brokers() {
        let template = KafkaRebalanceSpec {
            mode: Some(KafkaRebalanceMode::Full),
            brokers: Some(vec![9]),
            goals: Some(vec!["RackAwareGoal".to_owned()]),
            skip_hard_goal_check: Some(true),
            ..KafkaRebalanceSpec::default()
        };
        let rebalance = auto_rebalance(
            "kafka",
            "my-cluster",
            KafkaAutoRebalanceMode::AddBrokers,
            vec![3, 4],
            Some(&template),
        );
        assert_eq!(
            rebalance.metadata.name.as_deref(),
            Some("my-cluster-auto-rebalancing-add-brokers")
        );
        assert_eq!(rebalance.metadata.namespace.as_deref(), Some("kafka"));
        assert_eq!(
            rebalance.metadata.labels.as_ref().unwrap()[labels::CLUSTER],
            "my-cluster"
        );
        assert!(annotations::is_true(
            rebalance.metadata.annotations.as_ref(),
            annotations::REBALANCE_AUTO_APPROVAL
        ));
        assert_eq!(
            rebalance.metadata.finalizers,
            Some(vec![AUTO_REBALANCING_FINALIZER.to_owned()])
        );
        assert_eq!(rebalance.spec.mode, Some(KafkaRebalanceMode::AddBrokers));
        assert_eq!(rebalance.spec.brokers, Some(vec![3, 4]));
        assert_eq!(rebalance.spec.goals, template.goals);
        assert_eq!(rebalance.spec.skip_hard_goal_check, Some(true));
        assert!(!is_template(&rebalance));
        assert_eq!(state_of(&rebalance), State::New);

        let plain = auto_rebalance(
            "kafka",
            "c",
            KafkaAutoRebalanceMode::RemoveBrokers,
            vec![5],
            None,
        );
        assert_eq!(plain.spec.mode, Some(KafkaRebalanceMode::RemoveBrokers));
        assert_eq!(plain.spec.goals, None);
    }

    #[test]
    fn templates_and_states_are_read_from_the_resource() {
        let mut rebalance =
            auto_rebalance("ns", "c", KafkaAutoRebalanceMode::AddBrokers, vec![1], None);
        rebalance.metadata.annotations.as_mut().unwrap().insert(
            annotations::REBALANCE_TEMPLATE.to_owned(),
            "true".to_owned(),
        );
        assert!(is_template(&rebalance));
        rebalance.status = Some(KafkaRebalanceStatus {
            conditions: Some(vec![Condition {
                r#type: Some("Rebalancing".to_owned()),
                status: Some("True".to_owned()),
                ..Condition::default()
            }]),
            ..KafkaRebalanceStatus::default()
        });
        assert_eq!(state_of(&rebalance), State::Rebalancing);
    }
}
