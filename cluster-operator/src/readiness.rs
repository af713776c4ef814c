//! Whether a Deployment the operator runs (the entity operator, Kafka Exporter, Cruise
//! Control, the bridge) is ready: the one readiness check of Deployments.

use k8s_openapi::api::apps::v1::Deployment;

/// The pods `deployment` asks for (1 when unset, as Kubernetes defaults it).
pub fn wanted_replicas(deployment: &Deployment) -> i32 {
    deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.replicas)
        .unwrap_or(1)
}

/// Whether the Deployment's controller has seen its latest spec, exactly `replicas` pods run
/// it and are ready, and no pod of an older definition is still terminating (it may still
/// answer: a Cruise Control of the old configuration refused the first rebalance after a
/// scale-up).
pub fn deployment_ready(deployment: &Deployment, replicas: i32) -> bool {
    deployment.status.as_ref().is_some_and(|status| {
        status.observed_generation.unwrap_or_default()
            >= deployment.metadata.generation.unwrap_or_default()
            && status.updated_replicas.unwrap_or_default() == replicas
            && status.ready_replicas.unwrap_or_default() == replicas
            && status.replicas.unwrap_or_default() == replicas
            && status.terminating_replicas.unwrap_or_default() == 0
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use k8s_openapi::api::apps::v1::DeploymentStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn deployment_of_one(generation: i64, status: serde_json::Value) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "c-entity-operator", "generation": generation},
            "spec": {"replicas": 1, "selector": {}, "template": {}},
            "status": status,
        }))
        .unwrap()
    }

    fn ready_as_asked(deployment: &Deployment) -> bool {
        deployment_ready(deployment, wanted_replicas(deployment))
    }

    #[test]
    fn a_deployment_is_ready_once_its_new_pod_is() {
        let rolled = serde_json::json!({
            "observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
        });
        assert!(ready_as_asked(&deployment_of_one(2, rolled.clone())));
        assert!(!ready_as_asked(&deployment_of_one(3, rolled)));
        let rolling = serde_json::json!({
            "observedGeneration": 2, "replicas": 2, "updatedReplicas": 1, "readyReplicas": 1,
        });
        assert!(!ready_as_asked(&deployment_of_one(2, rolling)));
        let starting =
            serde_json::json!({"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1});
        assert!(!ready_as_asked(&deployment_of_one(2, starting)));
        let old_pod_terminating = serde_json::json!({
            "observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
            "terminatingReplicas": 1,
        });
        assert!(!ready_as_asked(&deployment_of_one(2, old_pod_terminating)));
    }

    fn deployment(generation: i64, observed: i64, replicas: i32, ready: i32) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                generation: Some(generation),
                ..ObjectMeta::default()
            },
            status: Some(DeploymentStatus {
                observed_generation: Some(observed),
                replicas: Some(replicas),
                updated_replicas: Some(replicas),
                ready_replicas: Some(ready),
                ..DeploymentStatus::default()
            }),
            ..Deployment::default()
        }
    }

    #[test]
    fn ready_only_with_every_pod_ready_in_the_current_generation() {
        assert!(deployment_ready(&deployment(2, 2, 2, 2), 2));
        assert!(!deployment_ready(&deployment(2, 2, 2, 1), 2));
        assert!(!deployment_ready(&deployment(3, 2, 2, 2), 2));
        // Scaling down: an extra old pod still runs.
        assert!(!deployment_ready(&deployment(2, 2, 3, 3), 2));
        assert!(deployment_ready(&deployment(1, 1, 0, 0), 0));
        assert!(!deployment_ready(&Deployment::default(), 1));
    }
}
