//! Label keys and values that Strimzi puts on, and selects by, the objects it manages.

/// Prefix of every Strimzi label and annotation.
pub const STRIMZI_DOMAIN: &str = "strimzi.io/";
/// Prefix of the Kubernetes recommended labels.
pub const KUBERNETES_DOMAIN: &str = "app.kubernetes.io/";

/// The name of the Kafka cluster (or Connect, Bridge, ...) an object belongs to. Node pools,
/// topics and users carry it to say which Kafka they are for.
pub const CLUSTER: &str = "strimzi.io/cluster";
/// The kind of the custom resource that owns an object, e.g. `Kafka`.
pub const KIND: &str = "strimzi.io/kind";
/// The name of the component an object belongs to, e.g. `my-cluster-kafka`.
pub const NAME: &str = "strimzi.io/name";
/// The type of component, independent of the cluster name, e.g. `kafka`.
pub const COMPONENT_TYPE: &str = "strimzi.io/component-type";
/// The KafkaNodePool a Kafka pod belongs to.
pub const POOL_NAME: &str = "strimzi.io/pool-name";
/// `"true"` on Kafka pods of nodes with the broker role.
pub const BROKER_ROLE: &str = "strimzi.io/broker-role";
/// `"true"` on Kafka pods of nodes with the controller role.
pub const CONTROLLER_ROLE: &str = "strimzi.io/controller-role";
/// The kind of controller that manages a pod; `strimzipodset` for pods of a StrimziPodSet.
pub const CONTROLLER: &str = "strimzi.io/controller";
/// The name of the StrimziPodSet that manages a pod.
pub const CONTROLLER_NAME: &str = "strimzi.io/controller-name";
/// `"true"` on Services that clients and tools may discover (the bootstrap Service).
pub const DISCOVERY: &str = "strimzi.io/discovery";
/// `"true"` on CRDs installed as part of Strimzi.
pub const CRD_INSTALL: &str = "strimzi.io/crd-install";
/// On a Kafka node's per-node Service and ConfigMap, and on the pod: the pod's name (a
/// per-node Service selects its one pod with it).
pub const POD_NAME: &str = "strimzi.io/pod-name";
/// Value of [`CONTROLLER`] for pods managed by a StrimziPodSet.
pub const CONTROLLER_STRIMZI_POD_SET: &str = "strimzipodset";

/// Kubernetes recommended label: the application name, which Strimzi sets to the component
/// type (`kafka`, `entity-operator`, `kafka-connect`, ...).
pub const KUBERNETES_NAME: &str = "app.kubernetes.io/name";
/// Kubernetes recommended label: the instance, i.e. the custom resource's name.
pub const KUBERNETES_INSTANCE: &str = "app.kubernetes.io/instance";
/// Kubernetes recommended label: the larger application, `strimzi-<cluster>`.
pub const KUBERNETES_PART_OF: &str = "app.kubernetes.io/part-of";
/// Kubernetes recommended label: the operator that manages the object.
pub const KUBERNETES_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// Whether a label set by a user on a custom resource may be copied to the objects the
/// operator creates: `strimzi.io/` labels are reserved, and `app.kubernetes.io/` labels are
/// set by the operator itself.
pub fn is_propagatable_user_label(key: &str) -> bool {
    !key.starts_with(STRIMZI_DOMAIN) && !key.starts_with(KUBERNETES_DOMAIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_prefixes_are_not_propagated() {
        assert!(is_propagatable_user_label("team"));
        assert!(is_propagatable_user_label("example.com/owner"));
        assert!(!is_propagatable_user_label(CLUSTER));
        assert!(!is_propagatable_user_label(KUBERNETES_INSTANCE));
    }
}
