//! Names of the Kubernetes objects an operator creates for a custom resource, as Strimzi names
//! them. Clients rely on these (e.g. `<cluster>-kafka-bootstrap:9092`), so they must not change.

/// Secret holding the cluster CA certificate (`ca.crt`, `ca.p12`, `ca.password`).
pub fn cluster_ca_cert_secret(cluster: &str) -> String {
    format!("{cluster}-cluster-ca-cert")
}

/// Secret holding the cluster CA private key (`ca.key`).
pub fn cluster_ca_key_secret(cluster: &str) -> String {
    format!("{cluster}-cluster-ca")
}

/// Secret holding the clients CA certificate.
pub fn clients_ca_cert_secret(cluster: &str) -> String {
    format!("{cluster}-clients-ca-cert")
}

/// Secret holding the clients CA private key.
pub fn clients_ca_key_secret(cluster: &str) -> String {
    format!("{cluster}-clients-ca")
}

/// Secret with the certificate the cluster operator uses to talk to the cluster.
pub fn cluster_operator_certs_secret(cluster: &str) -> String {
    format!("{cluster}-cluster-operator-certs")
}

/// Lease in the Kafka's namespace naming the cluster operator that acts on the Kafka (ours
/// alone: Strimzi's operator makes no such Lease).
pub fn cluster_operator_claim_lease(cluster: &str) -> String {
    format!("{cluster}-cluster-operator-claim")
}

/// Base name of the Kafka component: ServiceAccount, PodDisruptionBudget and `strimzi.io/name`.
pub fn kafka_component(cluster: &str) -> String {
    format!("{cluster}-kafka")
}

/// StrimziPodSet of one node pool.
pub fn pool_pod_set(cluster: &str, pool: &str) -> String {
    format!("{cluster}-{pool}")
}

/// Pod (and its per-node ConfigMap and certificate Secret) of one Kafka node.
pub fn kafka_pod(cluster: &str, pool: &str, node_id: i32) -> String {
    format!("{cluster}-{pool}-{node_id}")
}

/// Service that clients inside Kubernetes use to bootstrap.
pub fn bootstrap_service(cluster: &str) -> String {
    format!("{cluster}-kafka-bootstrap")
}

/// Bootstrap address of the conventional plain listener on port 9092.
pub fn plain_bootstrap_address(cluster: &str) -> String {
    format!("{}:9092", bootstrap_service(cluster))
}

/// Bootstrap address of the conventional TLS listener on port 9093.
pub fn tls_bootstrap_address(cluster: &str) -> String {
    format!("{}:9093", bootstrap_service(cluster))
}

/// Headless Service that gives each Kafka pod a stable DNS name.
pub fn brokers_service(cluster: &str) -> String {
    format!("{cluster}-kafka-brokers")
}

/// Bootstrap Service of an external (or `cluster-ip`) listener.
pub fn external_bootstrap_service(cluster: &str, listener: &str) -> String {
    format!("{cluster}-kafka-{listener}-bootstrap")
}

/// Per-node Service of an external (or `cluster-ip`) listener.
pub fn per_node_service(cluster: &str, pool: &str, listener: &str, node_id: i32) -> String {
    format!("{cluster}-{pool}-{listener}-{node_id}")
}

/// Secret with the JMX user name and password of the Kafka pods.
pub fn kafka_jmx_secret(cluster: &str) -> String {
    format!("{cluster}-kafka-jmx")
}

/// `strimzi-<namespace>-<cluster>-kafka-init`: the ClusterRoleBinding that lets the Kafka
/// pods' init container read the Kubernetes node they run on (cluster-scoped, hence the
/// namespace in the name).
pub fn kafka_init_cluster_role_binding(namespace: &str, cluster: &str) -> String {
    init_cluster_role_binding(namespace, &kafka_component(cluster))
}

/// `strimzi-<namespace>-<component>-init`: the ClusterRoleBinding that lets the init container
/// of the pods of `component` (`<name>-kafka`, `<name>-connect`, `<name>-mirrormaker2`,
/// `<name>-bridge`) read the Kubernetes node they run on.
pub fn init_cluster_role_binding(namespace: &str, component: &str) -> String {
    format!("strimzi-{namespace}-{component}-init")
}

/// NetworkPolicy that opens the Kafka listeners.
pub fn kafka_network_policy(cluster: &str) -> String {
    format!("{cluster}-network-policy-kafka")
}

/// PersistentVolumeClaim of a pod's only volume (`persistent-claim` storage).
pub fn data_claim(pod: &str) -> String {
    format!("data-{pod}")
}

/// PersistentVolumeClaim of one JBOD volume of a pod.
pub fn jbod_data_claim(volume_id: i32, pod: &str) -> String {
    format!("data-{volume_id}-{pod}")
}

/// Deployment running the topic and user operators.
pub fn entity_operator_deployment(cluster: &str) -> String {
    format!("{cluster}-entity-operator")
}

/// Secret with the topic operator's client certificate.
pub fn entity_topic_operator_secret(cluster: &str) -> String {
    format!("{cluster}-entity-topic-operator-certs")
}

/// Secret with the user operator's client certificate.
pub fn entity_user_operator_secret(cluster: &str) -> String {
    format!("{cluster}-entity-user-operator-certs")
}

/// Deployment (and Service) of Cruise Control.
pub fn cruise_control(cluster: &str) -> String {
    format!("{cluster}-cruise-control")
}

/// Secret with Cruise Control's certificate for its REST API and its Kafka client
/// (`cruise-control.crt`, `cruise-control.key`).
pub fn cruise_control_certs_secret(cluster: &str) -> String {
    format!("{cluster}-cruise-control-certs")
}

/// Secret with the REST API users of Cruise Control: the credentials file Cruise Control reads
/// and the passwords of the operators' own API users.
pub fn cruise_control_api_secret(cluster: &str) -> String {
    format!("{cluster}-cruise-control-api")
}

/// ConfigMap with Cruise Control's server configuration, capacity file, logging and metrics.
pub fn cruise_control_config_map(cluster: &str) -> String {
    format!("{cluster}-cruise-control-config")
}

/// Secret with the topic operator's own Cruise Control API user
/// (`topic-operator.apiAdminName`, `topic-operator.apiAdminPassword`).
pub fn entity_topic_operator_cc_api_secret(cluster: &str) -> String {
    format!("{cluster}-entity-topic-operator-cc-api")
}

/// The KafkaRebalance the operator creates to rebalance `cluster` after scaling, `mode` being
/// `add-brokers` or `remove-brokers`.
pub fn auto_rebalancing_kafka_rebalance(cluster: &str, mode: &str) -> String {
    format!("{cluster}-auto-rebalancing-{mode}")
}

/// Deployment of the Kafka Exporter.
pub fn kafka_exporter(cluster: &str) -> String {
    format!("{cluster}-kafka-exporter")
}

/// Pods of a KafkaConnect cluster and their StrimziPodSet.
pub fn connect_component(connect: &str) -> String {
    format!("{connect}-connect")
}

/// Service exposing the Kafka Connect REST API.
pub fn connect_api_service(connect: &str) -> String {
    format!("{connect}-connect-api")
}

/// Pods of a KafkaMirrorMaker2 cluster and their StrimziPodSet.
pub fn mirror_maker2_component(name: &str) -> String {
    format!("{name}-mirrormaker2")
}

/// Service exposing the MirrorMaker 2 Connect REST API.
pub fn mirror_maker2_api_service(name: &str) -> String {
    format!("{name}-mirrormaker2-api")
}

/// Deployment of a KafkaBridge.
pub fn bridge_deployment(bridge: &str) -> String {
    format!("{bridge}-bridge")
}

/// Service exposing a KafkaBridge's HTTP API.
pub fn bridge_service(bridge: &str) -> String {
    format!("{bridge}-bridge-service")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_strimzi() {
        assert_eq!(
            bootstrap_service("my-cluster"),
            "my-cluster-kafka-bootstrap"
        );
        assert_eq!(plain_bootstrap_address("c"), "c-kafka-bootstrap:9092");
        assert_eq!(
            kafka_pod("my-cluster", "brokers", 3),
            "my-cluster-brokers-3"
        );
        assert_eq!(cluster_ca_cert_secret("c"), "c-cluster-ca-cert");
        assert_eq!(
            auto_rebalancing_kafka_rebalance("c", "add-brokers"),
            "c-auto-rebalancing-add-brokers"
        );
        assert_eq!(jbod_data_claim(0, "c-b-1"), "data-0-c-b-1");
        assert_eq!(
            external_bootstrap_service("c", "ext"),
            "c-kafka-ext-bootstrap"
        );
    }
}
