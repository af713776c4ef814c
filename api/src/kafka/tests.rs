use serde_json::{Value, json};

use super::*;
use crate::document::{DocumentError, from_value};
use crate::test_support::{invalid_path, round_trip};

fn kafka_with(kafka_spec: Value) -> Value {
    json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": "my-cluster", "namespace": "kafka"},
        "spec": {"kafka": kafka_spec},
    })
}

#[test]
fn minimal_kafka_round_trips() {
    let document = kafka_with(json!({
        "listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}],
    }));
    let kafka = round_trip::<Kafka>(&document);
    let listener = &kafka.spec.kafka.listeners[0];
    assert_eq!(listener.r#type, KafkaListenerType::Internal);
    assert!(!listener.tls);
    assert!(kafka.spec.entity_operator.is_none());
}

#[test]
fn every_listener_type_and_authentication_round_trips() {
    let document = kafka_with(json!({
        "version": "4.3.1",
        "metadataVersion": "4.3-IV0",
        "listeners": [
            {"name": "plain", "port": 9092, "type": "internal", "tls": false,
             "configuration": {"useServiceDnsDomain": true}},
            {"name": "tls", "port": 9093, "type": "cluster-ip", "tls": true,
             "authentication": {"type": "tls"}},
            {"name": "route", "port": 9094, "type": "route", "tls": true,
             "authentication": {"type": "scram-sha-512"},
             "configuration": {"bootstrap": {"host": "bootstrap.example.com"}}},
            {"name": "tlsroute", "port": 9095, "type": "tlsroute", "tls": true,
             "configuration": {"parentRefs": [{"kind": "Gateway", "group": "gateway.networking.k8s.io",
                 "name": "gw", "namespace": "infra", "port": 443, "sectionName": "tls"}]}},
            {"name": "lb", "port": 9096, "type": "loadbalancer", "tls": true,
             "authentication": {"type": "custom", "sasl": true,
                 "listenerConfig": {"sasl.enabled.mechanisms": "OAUTHBEARER", "connections.max.reauth.ms": 3600}},
             "configuration": {
                 "brokerCertChainAndKey": {"secretName": "cert", "certificate": "tls.crt", "key": "tls.key"},
                 "class": "lb-class",
                 "externalTrafficPolicy": "Local",
                 "loadBalancerSourceRanges": ["10.0.0.0/8"],
                 "bootstrap": {"loadBalancerIP": "1.2.3.4", "annotations": {"a": "b"}, "labels": {"c": "d"},
                     "alternativeNames": ["kafka.example.com"]},
                 "brokers": [{"broker": 0, "loadBalancerIP": "1.2.3.5", "advertisedHost": "b0", "advertisedPort": 443}],
                 "ipFamilyPolicy": "PreferDualStack",
                 "ipFamilies": ["IPv4", "IPv6"],
                 "createBootstrapService": false,
                 "finalizers": ["service.kubernetes.io/load-balancer-cleanup"],
                 "maxConnections": 100,
                 "maxConnectionCreationRate": 10,
                 "publishNotReadyAddresses": true,
                 "allocateLoadBalancerNodePorts": false}},
            {"name": "np", "port": 9097, "type": "nodeport", "tls": false,
             "configuration": {
                 "preferredNodePortAddressType": "InternalDNS",
                 "bootstrap": {"nodePort": 32100, "externalIPs": ["5.6.7.8"]},
                 "brokers": [{"broker": 1, "nodePort": 32101, "externalIPs": ["5.6.7.9"]}]},
             "networkPolicyPeers": [{"podSelector": {"matchLabels": {"app": "client"}}},
                 {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]},
            {"name": "ing", "port": 9098, "type": "ingress", "tls": true,
             "configuration": {
                 "class": "nginx",
                 "hostTemplate": "broker-{nodeId}.example.com",
                 "advertisedHostTemplate": "{nodePodName}.example.com",
                 "advertisedPortTemplate": "{nodeId} + 30000",
                 "perBrokerAnnotationsTemplate": {"dns": "{nodePodName}"},
                 "perBrokerLabelsTemplate": {"node": "{nodeId}"},
                 "bootstrap": {"host": "bootstrap.example.com"},
                 "brokers": [{"broker": 0, "host": "broker-0.example.com"}]}},
        ],
    }));
    let kafka = round_trip::<Kafka>(&document);
    let listeners = &kafka.spec.kafka.listeners;
    let types: Vec<_> = listeners.iter().map(|listener| listener.r#type).collect();
    assert_eq!(types.len(), KafkaListenerType::ALL.len());
    for listener_type in KafkaListenerType::ALL {
        assert!(types.contains(&listener_type), "{listener_type} missing");
        let parsed: KafkaListenerType =
            serde_json::from_value(json!(listener_type.as_str())).expect("as_str is the JSON name");
        assert_eq!(parsed, listener_type);
    }
    assert!(KafkaListenerType::NodePort.is_external());
    assert!(!KafkaListenerType::ClusterIp.is_external());
    assert_eq!(
        listeners[1].authentication,
        Some(KafkaListenerAuthentication::Tls(
            KafkaListenerAuthenticationTls {}
        ))
    );
    let Some(KafkaListenerAuthentication::Custom(custom)) = &listeners[4].authentication else {
        panic!("custom authentication expected");
    };
    assert_eq!(custom.sasl, Some(true));
    let configuration = listeners[4].configuration.as_ref().expect("configuration");
    assert_eq!(
        configuration.external_traffic_policy,
        Some(ExternalTrafficPolicy::Local)
    );
    assert_eq!(
        configuration
            .bootstrap
            .as_ref()
            .and_then(|b| b.load_balancer_ip.as_deref()),
        Some("1.2.3.4")
    );
}

#[test]
fn cluster_wide_options_and_unions_round_trip() {
    let mut document = kafka_with(json!({
        "listeners": [{"name": "tls", "port": 9093, "type": "internal", "tls": true}],
        "config": {"min.insync.replicas": 2, "auto.create.topics.enable": false},
        "authorization": {"type": "simple", "superUsers": ["CN=admin"]},
        "rack": {"type": "topology-label", "topologyKey": "topology.kubernetes.io/zone"},
        "brokerRackInitImage": "init:latest",
        "livenessProbe": {"initialDelaySeconds": 15, "timeoutSeconds": 5},
        "readinessProbe": {"periodSeconds": 10},
        "jvmOptions": {"-Xms": "1g", "-Xmx": "2g"},
        "jmxOptions": {"authentication": {"type": "password"}},
        "metricsConfig": {"type": "jmxPrometheusExporter",
            "valueFrom": {"configMapKeyRef": {"name": "metrics", "key": "kafka.yaml"}}},
        "logging": {"type": "inline", "loggers": {"rootLogger.level": "INFO"}},
        "template": {
            "pod": {"metadata": {"labels": {"a": "b"}}, "terminationGracePeriodSeconds": 60},
            "bootstrapService": {"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv6"]},
            "brokersService": {"metadata": {"annotations": {"x": "y"}}},
            "externalBootstrapService": {"metadata": {"labels": {"l": "1"}}},
            "perPodService": {},
            "externalBootstrapRoute": {},
            "perPodRoute": {},
            "externalBootstrapIngress": {},
            "perPodIngress": {},
            "persistentVolumeClaim": {},
            "podDisruptionBudget": {"maxUnavailable": 0},
            "kafkaContainer": {"env": [{"name": "A", "value": "1"}]},
            "initContainer": {},
            "clusterCaCert": {},
            "serviceAccount": {},
            "jmxSecret": {},
            "clusterRoleBinding": {},
            "podSet": {"metadata": {"labels": {"p": "s"}}},
        },
        "tieredStorage": {"type": "custom", "remoteStorageManager": {
            "className": "com.example.Rsm", "classPath": "/opt/rsm/*", "config": {"bucket": "kafka"}}},
        "quotas": {"type": "kafka", "producerByteRate": 1_000_000, "consumerByteRate": 2_000_000,
            "requestPercentage": 50, "controllerMutationRate": 10},
    }));
    let spec = document["spec"].as_object_mut().expect("spec object");
    spec.insert(
        "entityOperator".into(),
        json!({
            "topicOperator": {"watchedNamespace": "topics", "reconciliationIntervalMs": 60000,
                "startupProbe": {"failureThreshold": 30}, "resources": {"requests": {"cpu": "100m"}},
                "logging": {"type": "external", "valueFrom": {"configMapKeyRef": {"name": "log", "key": "log4j2.properties"}}},
                "jvmOptions": {"gcLoggingEnabled": false}},
            "userOperator": {"secretPrefix": "kafka-", "image": "uo:latest"},
            "template": {"deployment": {"deploymentStrategy": "Recreate"}, "pod": {},
                "topicOperatorContainer": {}, "userOperatorContainer": {}, "serviceAccount": {},
                "podDisruptionBudget": {}, "entityOperatorRole": {}, "topicOperatorRoleBinding": {},
                "userOperatorRoleBinding": {}},
        }),
    );
    spec.insert(
        "clusterCa".into(),
        json!({"generateCertificateAuthority": false, "validityDays": 1000, "renewalDays": 60,
            "certificateExpirationPolicy": "replace-key", "generateSecretOwnerReference": false}),
    );
    spec.insert("clientsCa".into(), json!({}));
    spec.insert(
        "cruiseControl".into(),
        json!({
            "image": "cc:latest",
            "resources": {"limits": {"memory": "1Gi"}},
            "brokerCapacity": {"cpu": "1.5", "inboundNetwork": "10000KiB/s", "outboundNetwork": "10MiB/s",
                "overrides": [{"brokers": [0, 1], "cpu": "2000m"}]},
            "config": {"cpu.balance.threshold": 1.1},
            "metricsConfig": {"type": "jmxPrometheusExporter",
                "valueFrom": {"configMapKeyRef": {"name": "m", "key": "cc.yaml"}}},
            "apiUsers": {"type": "hashLoginService",
                "valueFrom": {"secretKeyRef": {"name": "cc-users", "key": "users"}}},
            "autoRebalance": [{"mode": "add-brokers", "template": {"name": "add"}}, {"mode": "remove-brokers"}],
            "template": {"apiService": {"ipFamilies": ["IPv4"]}, "cruiseControlContainer": {}},
        }),
    );
    spec.insert(
        "kafkaExporter".into(),
        json!({"topicRegex": ".*", "groupRegex": "app-.*", "groupExcludeRegex": "tmp-.*",
            "topicExcludeRegex": "__.*", "logging": "debug", "enableSaramaLogging": true,
            "showAllOffsets": false, "template": {"container": {}, "deployment": {}}}),
    );
    spec.insert(
        "maintenanceTimeWindows".into(),
        json!(["* * 0-1 ? * SUN,MON,TUE,WED,THU *"]),
    );
    let kafka = round_trip::<Kafka>(&document);

    let cluster = &kafka.spec.kafka;
    let authorization = cluster.authorization.as_ref().expect("authorization");
    assert_eq!(authorization.super_users(), ["CN=admin".to_owned()]);
    assert!(matches!(cluster.quotas, Some(QuotasPlugin::Kafka(_))));
    assert!(matches!(
        cluster.tiered_storage,
        Some(TieredStorage::Custom(_))
    ));
    let cluster_ca = kafka.spec.cluster_ca.as_ref().expect("cluster CA");
    assert!(!cluster_ca.generates_certificate_authority());
    assert_eq!(
        cluster_ca.certificate_expiration_policy_or_default(),
        CertificateExpirationPolicy::ReplaceKey
    );
    let clients_ca = kafka.spec.clients_ca.as_ref().expect("clients CA");
    assert_eq!(clients_ca.validity_days_or_default(), 365);
    assert_eq!(clients_ca.renewal_days_or_default(), 30);
    let cruise_control = kafka.spec.cruise_control.as_ref().expect("cruise control");
    assert!(matches!(
        cruise_control.api_users,
        Some(ApiUsers::HashLoginService(_))
    ));
    let modes: Vec<_> = cruise_control
        .auto_rebalance
        .iter()
        .flatten()
        .map(|entry| entry.mode.as_str())
        .collect();
    assert_eq!(modes, ["add-brokers", "remove-brokers"]);
}

#[test]
fn other_union_variants_round_trip() {
    let document = kafka_with(json!({
        "listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}],
        "authorization": {"type": "custom", "authorizerClass": "com.example.Authorizer",
            "superUsers": ["User:admin"], "supportsAdminApi": true},
        "quotas": {"type": "strimzi", "producerByteRate": 100, "consumerByteRate": 200,
            "minAvailableBytesPerVolume": 1_000_000_000_i64, "excludedPrincipals": ["User:admin"]},
        "metricsConfig": {"type": "strimziMetricsReporter", "values": {"allowList": ["kafka_server.*"]}},
    }));
    let kafka = round_trip::<Kafka>(&document);
    let Some(KafkaAuthorization::Custom(custom)) = &kafka.spec.kafka.authorization else {
        panic!("custom authorization expected");
    };
    assert_eq!(custom.supports_admin_api, Some(true));
    assert_eq!(
        kafka
            .spec
            .kafka
            .authorization
            .as_ref()
            .map(|a| a.super_users().len()),
        Some(1)
    );
    let Some(QuotasPlugin::Strimzi(strimzi)) = &kafka.spec.kafka.quotas else {
        panic!("strimzi quotas expected");
    };
    assert_eq!(strimzi.min_available_bytes_per_volume, Some(1_000_000_000));

    let ratio = kafka_with(json!({
        "listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}],
        "quotas": {"type": "strimzi", "minAvailableRatioPerVolume": 0.1},
    }));
    round_trip::<Kafka>(&ratio);
}

#[test]
fn status_round_trips() {
    let mut document = kafka_with(json!({
        "listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}],
    }));
    document["status"] = json!({
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}],
        "observedGeneration": 3,
        "listeners": [{"name": "plain",
            "addresses": [{"host": "my-cluster-kafka-bootstrap.kafka.svc", "port": 9092}],
            "bootstrapServers": "my-cluster-kafka-bootstrap.kafka.svc:9092",
            "certificates": ["-----BEGIN CERTIFICATE-----"]}],
        "kafkaNodePools": [{"name": "broker"}, {"name": "controller"}],
        "clusterId": "abc",
        "operatorLastSuccessfulVersion": "1.2.0",
        "kafkaVersion": "4.3.1",
        "kafkaMetadataVersion": "4.3-IV0",
        "autoRebalance": {"state": "RebalanceOnScaleUp", "lastTransitionTime": "2025-01-01T00:00:00Z",
            "modes": [{"mode": "add-brokers", "brokers": [3, 4]}]},
        "clusterSecurity": {"anything": {"goes": true}},
    });
    let kafka = round_trip::<Kafka>(&document);
    let status = kafka.status.as_ref().expect("status");
    assert_eq!(status.observed_generation, Some(3));
    assert_eq!(
        status.auto_rebalance.as_ref().and_then(|a| a.state),
        Some(KafkaAutoRebalanceState::RebalanceOnScaleUp)
    );
}

#[test]
fn wrong_enum_value_names_the_field() {
    let document = kafka_with(json!({
        "listeners": [
            {"name": "plain", "port": 9092, "type": "internal", "tls": false},
            {"name": "ext", "port": 9094, "type": "external", "tls": false},
        ],
    }));
    assert_eq!(
        invalid_path::<Kafka>(document),
        "spec.kafka.listeners[1].type"
    );

    let document = kafka_with(json!({
        "listeners": [{"name": "np", "port": 9094, "type": "nodeport", "tls": false,
            "configuration": {"preferredNodePortAddressType": "Elsewhere"}}],
    }));
    assert_eq!(
        invalid_path::<Kafka>(document),
        "spec.kafka.listeners[0].configuration.preferredNodePortAddressType"
    );
}

#[test]
fn wrong_union_type_names_the_field() {
    let document = kafka_with(json!({
        "listeners": [{"name": "tls", "port": 9093, "type": "internal", "tls": true,
            "authentication": {"type": "oauth"}}],
    }));
    let error = from_value::<Kafka>(document).expect_err("oauth was removed");
    let DocumentError::InvalidField { path, message } = error else {
        panic!("unexpected error {error}");
    };
    assert_eq!(path, "spec.kafka.listeners[0].authentication");
    assert!(message.contains("oauth"), "{message}");

    let document = kafka_with(json!({
        "listeners": [{"name": "plain", "port": 9092, "type": "internal", "tls": false}],
        "authorization": {"type": "opa"},
    }));
    assert_eq!(invalid_path::<Kafka>(document), "spec.kafka.authorization");
}

#[test]
fn missing_required_fields_are_rejected() {
    let document = kafka_with(json!({
        "listeners": [{"name": "plain", "port": 9092, "type": "internal"}],
    }));
    assert_eq!(
        invalid_path::<Kafka>(document),
        "spec.kafka.listeners[0].tls"
    );
}

#[test]
fn schema_carries_bounds_and_union_types() {
    let schema = serde_json::to_value(schemars::schema_for!(KafkaSpec)).expect("schema");
    let text = schema.to_string();
    for expected in [
        r#""minimum":9092"#,
        "^[a-z0-9]{1,11}$",
        "scram-sha-512",
        "cluster-ip",
        "hashLoginService",
        "^[0-9]+([KMG]i?)?B/s$",
        "x-kubernetes-preserve-unknown-fields",
    ] {
        assert!(text.contains(expected), "schema lacks {expected}");
    }
    // Free-form maps are optional like every other `Option` field.
    assert_eq!(
        schema["$defs"]["KafkaClusterSpec"]["required"],
        json!(["listeners"])
    );
    let status = serde_json::to_value(schemars::schema_for!(KafkaStatus)).expect("schema");
    assert!(status.get("required").is_none(), "{status}");
}
