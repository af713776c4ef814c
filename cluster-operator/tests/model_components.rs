//! The entity operator's, Kafka Exporter's and Cruise Control's objects as the model builds
//! them from a Kafka: Strimzi's names, labels, environment, volumes and RBAC, the watched
//! namespace, templates, removal of the containers of an operator left out, Cruise Control's
//! configuration, capacities and API users, and refused input.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/fast_start.rs"]
mod fast_start;
mod model_support;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec};
use model_support::{assert_probe_timings, probe_timings};
use serde_json::{Value, json};
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_certificate_manager::authority::CaAction;
use strimzi_certificate_manager::authority::CaKind;
use strimzi_certificate_manager::leaf::{IssueContext, IssuedCertificate};
use strimzi_cluster_operator::model::components::entity_operator::EntityOperatorInputs;
use strimzi_cluster_operator::model::components::{
    ComponentCertificateRequest, certificate_requests,
};
use strimzi_cluster_operator::model::desired::issue_certificate;
use strimzi_cluster_operator::model::{KafkaCluster, ModelError, ModelInput, resolve};
use time::OffsetDateTime;

/// The Kafka `c` in namespace `kafka` with one dual-role node on ephemeral storage and `spec`
/// merged into its spec, resolved.
fn resolved(spec: Value) -> Result<KafkaCluster, ModelError> {
    resolved_with_pool(
        spec,
        json!({"replicas": 1, "roles": ["controller", "broker"], "storage": {"type": "ephemeral"}}),
    )
}

/// The Kafka `c` in namespace `kafka` with `spec` merged into its spec and one pool `dual`
/// with `pool_spec`, resolved.
fn resolved_with_pool(spec: Value, pool_spec: Value) -> Result<KafkaCluster, ModelError> {
    let mut kafka = json!({
        "apiVersion": "kafka.strimzi.io/v1", "kind": "Kafka",
        "metadata": {"name": "c", "namespace": "kafka", "uid": "u-1"},
        "spec": {"kafka": {"listeners": [{"name": "tls", "port": 9093, "type": "internal", "tls": true}]}},
    });
    for (key, value) in spec.as_object().unwrap() {
        kafka["spec"][key] = value.clone();
    }
    let kafka: Kafka = serde_json::from_value(kafka).unwrap();
    let pool: KafkaNodePool = serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
        "metadata": {"name": "dual", "namespace": "kafka", "labels": {"strimzi.io/cluster": "c"}},
        "spec": pool_spec,
    }))
    .unwrap();
    resolve(&ModelInput {
        kafka: &kafka,
        pools: &[pool],
        cluster_id: "id",
        metadata_version_in_use: None,
        config: &model_support::default_model_config(),
    })
}

/// Every component certificate the cluster asks for, issued by a fresh cluster CA, by Secret.
fn certificates(cluster: &KafkaCluster) -> BTreeMap<String, IssuedCertificate> {
    let ca = model_support::ecdsa_ca(CaKind::Cluster, "c");
    let context = IssueContext {
        now: OffsetDateTime::now_utc(),
        window_open: true,
        ca_action: &CaAction::Keep,
        trust_pending: false,
    };
    certificate_requests(cluster, &BTreeMap::new())
        .into_iter()
        .map(
            |ComponentCertificateRequest {
                 secret_name,
                 request,
             }| {
                let (_, issued) = issue_certificate(&ca, &request, &context).unwrap();
                (secret_name, issued)
            },
        )
        .collect()
}

fn env(container: &Container) -> BTreeMap<String, String> {
    container
        .env
        .iter()
        .flatten()
        .filter_map(|var| Some((var.name.clone(), var.value.clone()?)))
        .collect()
}

#[test]
fn the_entity_operator_is_built_as_strimzi_builds_it() {
    let mut cluster = resolved(json!({
        "entityOperator": {
            "topicOperator": {"watchedNamespace": "topics", "reconciliationIntervalMs": 60000},
            "userOperator": {"secretPrefix": "kafka-",
                             "logging": {"type": "inline", "loggers": {"rootLogger.level": "debug"}}},
            "template": {"pod": {"metadata": {"labels": {"team": "a"}}},
                         "topicOperatorContainer": {"env": [{"name": "EXTRA", "value": "1"}]}},
        },
    }))
    .unwrap();
    cluster.config.entity_operator_watched_namespace_enabled = true;
    let issued = certificates(&cluster);
    assert_eq!(
        issued.keys().collect::<Vec<_>>(),
        [
            "c-entity-topic-operator-certs",
            "c-entity-user-operator-certs"
        ]
    );
    let eo = cluster
        .entity_operator(&EntityOperatorInputs {
            cluster_ca_cert_generation: 3,
            cluster_ca_key_generation: 1,
            topic_operator_certificate: issued.get("c-entity-topic-operator-certs"),
            user_operator_certificate: issued.get("c-entity-user-operator-certs"),
        })
        .unwrap()
        .unwrap();
    let deployment = &eo.deployment;
    assert_eq!(
        deployment.metadata.name.as_deref(),
        Some("c-entity-operator")
    );
    let labels = deployment.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["strimzi.io/name"], "c-entity-operator");
    assert_eq!(labels["strimzi.io/component-type"], "entity-operator");
    let spec = deployment.spec.as_ref().unwrap();
    assert_eq!(
        spec.strategy.as_ref().unwrap().type_.as_deref(),
        Some("Recreate")
    );
    let pod = spec.template.spec.as_ref().unwrap();
    let pod_meta = spec.template.metadata.as_ref().unwrap();
    assert_eq!(pod_meta.labels.as_ref().unwrap()["team"], "a");
    let annotations = pod_meta.annotations.as_ref().unwrap();
    assert_eq!(annotations["strimzi.io/cluster-ca-cert-generation"], "3");
    assert!(
        annotations["strimzi.io/server-cert-hash"].contains('-'),
        "both thumbprints"
    );
    assert_eq!(
        pod.service_account_name.as_deref(),
        Some("c-entity-operator")
    );
    let volumes: Vec<&str> = pod
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(
        volumes,
        [
            "entity-topic-operator-metrics-and-logging",
            "strimzi-to-tmp",
            "eto-certs",
            "entity-user-operator-metrics-and-logging",
            "strimzi-uo-tmp",
            "euo-certs",
            "cluster-ca-certs",
        ]
    );
    let [topic, user] = pod.containers.as_slice() else {
        panic!("two containers: {:?}", pod.containers);
    };
    assert_eq!(topic.name, "topic-operator");
    assert_eq!(
        topic.args.as_deref(),
        Some(&["/opt/strimzi/bin/topic_operator_run.sh".to_owned()][..])
    );
    let topic_env = env(topic);
    assert_eq!(topic_env["STRIMZI_NAMESPACE"], "topics");
    assert_eq!(
        topic_env["STRIMZI_KAFKA_BOOTSTRAP_SERVERS"],
        "c-kafka-bootstrap:9091"
    );
    assert_eq!(topic_env["STRIMZI_RESOURCE_LABELS"], "strimzi.io/cluster=c");
    assert_eq!(
        topic_env["STRIMZI_FULL_RECONCILIATION_INTERVAL_MS"],
        "60000"
    );
    assert_eq!(topic_env["STRIMZI_TLS_ENABLED"], "true");
    assert_eq!(topic_env["EXTRA"], "1");
    assert!(topic.startup_probe.is_some());
    let mounts = |container: &Container| -> Vec<(String, String)> {
        container
            .volume_mounts
            .iter()
            .flatten()
            .map(|mount| (mount.name.clone(), mount.mount_path.clone()))
            .collect()
    };
    let expected = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, path)| ((*name).to_owned(), (*path).to_owned()))
            .collect()
    };
    assert_eq!(
        mounts(topic),
        expected(&[
            ("strimzi-to-tmp", "/tmp"),
            (
                "entity-topic-operator-metrics-and-logging",
                "/opt/topic-operator/custom-config/"
            ),
            ("eto-certs", "/etc/eto-certs/"),
            ("cluster-ca-certs", "/etc/tls-sidecar/cluster-ca-certs/"),
        ])
    );
    assert_eq!(
        mounts(user),
        expected(&[
            ("strimzi-uo-tmp", "/tmp"),
            (
                "entity-user-operator-metrics-and-logging",
                "/opt/user-operator/custom-config/"
            ),
            ("euo-certs", "/etc/euo-certs/"),
            ("cluster-ca-certs", "/etc/tls-sidecar/cluster-ca-certs/"),
        ])
    );
    assert_eq!(user.name, "user-operator");
    assert_eq!(user.ports.as_ref().unwrap()[0].container_port, 8081);
    let user_env = env(user);
    assert_eq!(user_env["STRIMZI_NAMESPACE"], "kafka");
    assert_eq!(user_env["STRIMZI_CA_CERT_NAME"], "c-clients-ca-cert");
    assert_eq!(user_env["STRIMZI_CA_KEY_NAME"], "c-clients-ca");
    assert_eq!(
        user_env["STRIMZI_EO_KEY_SECRET_NAME"],
        "c-entity-user-operator-certs"
    );
    assert_eq!(user_env["STRIMZI_SECRET_PREFIX"], "kafka-");
    assert_eq!(user_env["STRIMZI_ACLS_ADMIN_API_SUPPORTED"], "false");
    assert_eq!(user_env["STRIMZI_LOG_LEVEL"], "DEBUG");
    assert!(!topic_env.contains_key("STRIMZI_LOG_LEVEL"));

    // RBAC: the Role in both namespaces (owned only in the Kafka's), the topic operator's
    // binding in both, the user operator's in the Kafka's namespace.
    let placed = |metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        (
            metadata.namespace.clone().unwrap(),
            metadata.name.clone().unwrap(),
            metadata.owner_references.is_some(),
        )
    };
    let roles: Vec<_> = eo.roles.iter().map(|role| placed(&role.metadata)).collect();
    assert_eq!(
        roles,
        [
            ("kafka".to_owned(), "c-entity-operator".to_owned(), true),
            ("topics".to_owned(), "c-entity-operator".to_owned(), false),
        ]
    );
    let bindings: Vec<_> = eo
        .role_bindings
        .iter()
        .map(|binding| placed(&binding.metadata))
        .collect();
    assert_eq!(
        bindings,
        [
            (
                "kafka".to_owned(),
                "c-entity-topic-operator-role".to_owned(),
                true
            ),
            (
                "topics".to_owned(),
                "c-entity-topic-operator-role".to_owned(),
                false
            ),
            (
                "kafka".to_owned(),
                "c-entity-user-operator-role".to_owned(),
                true
            ),
        ]
    );
    let secrets: Vec<_> = eo
        .secrets
        .iter()
        .map(|secret| {
            let data = secret.data.as_ref().unwrap();
            (
                secret.metadata.name.clone().unwrap(),
                data.contains_key("entity-operator.crt")
                    && data.contains_key("entity-operator.key"),
            )
        })
        .collect();
    assert_eq!(
        secrets,
        [
            ("c-entity-topic-operator-certs".to_owned(), true),
            ("c-entity-user-operator-certs".to_owned(), true),
        ]
    );
    let config_maps: Vec<_> = eo
        .config_maps
        .iter()
        .map(|cm| cm.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        config_maps,
        [
            "c-entity-topic-operator-config",
            "c-entity-user-operator-config"
        ]
    );
    assert!(eo.network_policy.is_some());
}

#[test]
fn an_entity_operator_without_the_user_operator_has_one_container() {
    let cluster = resolved(json!({"entityOperator": {"topicOperator": {}}})).unwrap();
    let issued = certificates(&cluster);
    let eo = cluster
        .entity_operator(&EntityOperatorInputs {
            cluster_ca_cert_generation: 0,
            cluster_ca_key_generation: 0,
            topic_operator_certificate: issued.get("c-entity-topic-operator-certs"),
            user_operator_certificate: None,
        })
        .unwrap()
        .unwrap();
    let pod = eo.deployment.spec.unwrap().template.spec.unwrap();
    assert_eq!(pod.containers.len(), 1);
    assert_eq!(eo.role_bindings.len(), 1);
    assert_eq!(eo.secrets.len(), 1);
    let none = resolved(json!({"entityOperator": {}})).unwrap();
    assert!(
        none.entity_operator(&EntityOperatorInputs {
            cluster_ca_cert_generation: 0,
            cluster_ca_key_generation: 0,
            topic_operator_certificate: None,
            user_operator_certificate: None,
        })
        .unwrap()
        .is_none()
    );
}

#[test]
fn kafka_exporter_runs_the_kafka_images_script_with_its_settings() {
    let cluster = resolved(json!({"kafkaExporter": {
        "topicRegex": "orders.*", "groupExcludeRegex": "^console", "logging": "debug",
        "showAllOffsets": false,
        "template": {"deployment": {"deploymentStrategy": "Recreate"}},
    }}))
    .unwrap();
    let issued = certificates(&cluster);
    let exporter = cluster
        .kafka_exporter(issued.get("c-kafka-exporter-certs"), 2, 0)
        .unwrap();
    assert_eq!(
        exporter.secret.metadata.name.as_deref(),
        Some("c-kafka-exporter-certs")
    );
    assert!(
        exporter
            .secret
            .data
            .as_ref()
            .unwrap()
            .contains_key("kafka-exporter.crt")
    );
    let spec = exporter.deployment.spec.unwrap();
    assert_eq!(spec.strategy.unwrap().type_.as_deref(), Some("Recreate"));
    let pod = spec.template.spec.unwrap();
    let container = &pod.containers[0];
    assert_eq!(container.name, "c-kafka-exporter");
    assert_eq!(
        container.image.as_deref(),
        Some(cluster.version.image.as_str())
    );
    assert_eq!(
        container.args.as_deref(),
        Some(&["/opt/kafka-exporter/kafka_exporter_run.sh".to_owned()][..])
    );
    let vars = env(container);
    assert_eq!(
        vars["KAFKA_EXPORTER_KAFKA_SERVER"],
        "c-kafka-bootstrap:9091"
    );
    assert_eq!(vars["KAFKA_EXPORTER_TOPIC_REGEX"], "orders.*");
    assert_eq!(vars["KAFKA_EXPORTER_GROUP_REGEX"], ".*");
    assert_eq!(vars["KAFKA_EXPORTER_GROUP_EXCLUDE_REGEX"], "^console");
    assert_eq!(vars["KAFKA_EXPORTER_LOGGING"], "1");
    assert_eq!(vars["KAFKA_EXPORTER_OFFSET_SHOW_ALL"], "false");
    assert_eq!(
        vars["KAFKA_EXPORTER_KAFKA_VERSION"],
        cluster.version.version
    );
    let mounts: Vec<(&str, &str)> = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|mount| (mount.name.as_str(), mount.mount_path.as_str()))
        .collect();
    assert!(mounts.contains(&("cluster-ca-certs", "/etc/kafka-exporter/cluster-ca-certs/")));
    let trust = pod
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == "cluster-ca-certs")
        .unwrap();
    assert_eq!(
        trust.secret.as_ref().unwrap().secret_name.as_deref(),
        Some("c-trustbundle")
    );
}

/// The contract of CONTRACT.md section 6 from both sides: the exporter stand-in
/// (`standins/kafka-exporter`), run without arguments as the pod's start script, turns the
/// container's environment into flags it accepts, and the files it reads lie in the mounted
/// Secrets with the formats it checks.
#[test]
fn the_kafka_exporter_stand_in_runs_with_the_pods_environment_and_files() {
    use strimzi_kafka_exporter_standin::config::{
        POD_CA_FILE, POD_CERT_FILE, POD_KEY_FILE, parse_args, pod_arguments,
    };
    use strimzi_kafka_exporter_standin::tls::{PemKind, check_pem};
    let cluster = resolved(json!({"kafkaExporter": {
        "topicRegex": "orders.*", "groupRegex": "^(a|b) c$", "groupExcludeRegex": "^console",
        "logging": "debug", "showAllOffsets": false,
    }}))
    .unwrap();
    let issued = certificates(&cluster);
    let exporter = cluster
        .kafka_exporter(issued.get("c-kafka-exporter-certs"), 2, 0)
        .unwrap();
    let pod = exporter.deployment.spec.unwrap().template.spec.unwrap();
    let container = &pod.containers[0];
    let vars = env(container);
    let args = pod_arguments(&|name| vars.get(name).cloned()).unwrap();
    let config = parse_args(&args).unwrap();
    assert_eq!(config.servers, ["c-kafka-bootstrap:9091"]);
    assert_eq!(config.bind_address(), "0.0.0.0:9404");
    assert!(config.filters.group("a c") && !config.filters.group("a"));
    assert!(config.filters.topic("orders-1") && !config.filters.topic("payments"));
    assert!(!config.filters.group("console-consumer-1"));
    assert!(!config.show_all_offsets);
    assert_eq!(config.verbosity, 1);
    // Each file the stand-in reads is a key of a mounted Secret, in the format it checks.
    let mounted = |file: &str| -> (String, String) {
        let mount = container
            .volume_mounts
            .iter()
            .flatten()
            .find(|mount| file.starts_with(&mount.mount_path))
            .unwrap_or_else(|| panic!("{file} is not under a mount"));
        let volume = pod
            .volumes
            .iter()
            .flatten()
            .find(|volume| volume.name == mount.name)
            .unwrap();
        let secret = volume.secret.as_ref().unwrap().secret_name.clone().unwrap();
        (secret, file[mount.mount_path.len()..].to_owned())
    };
    assert_eq!(
        mounted(POD_CA_FILE),
        ("c-trustbundle".to_owned(), "cluster-ca.crt".to_owned())
    );
    let data = exporter.secret.data.unwrap();
    for (file, kind) in [
        (POD_CERT_FILE, PemKind::Certificates),
        (POD_KEY_FILE, PemKind::PrivateKey),
    ] {
        let (secret, key) = mounted(file);
        assert_eq!(secret, "c-kafka-exporter-certs");
        let text = String::from_utf8(data[&key].0.clone()).unwrap();
        check_pem("--tls.*-file", file, &text, kind).unwrap();
    }
}

#[test]
fn bad_component_input_is_refused_naming_the_field() {
    let refused = |spec: Value| match resolved(spec) {
        Err(ModelError::InvalidConfiguration(message)) => message,
        other => panic!("not refused: {:?}", other.map(|cluster| cluster.name)),
    };
    let message =
        refused(json!({"entityOperator": {"topicOperator": {"watchedNamespace": "Not_Valid"}}}));
    assert!(
        message.contains("spec.entityOperator.topicOperator.watchedNamespace"),
        "{message}"
    );
    let message = refused(json!({"entityOperator": {"userOperator": {
        "logging": {"type": "inline", "loggers": {"rootLogger.level": "LOUD"}}}}}));
    assert!(
        message.contains("spec.entityOperator.userOperator.logging"),
        "{message}"
    );
    let message = refused(json!({"kafkaExporter": {"logging": "verbose"}}));
    assert!(message.contains("spec.kafkaExporter.logging"), "{message}");
    assert!(resolved(json!({"kafkaExporter": {"logging": "trace"}})).is_ok());
}

/// Three brokers on JBOD (two volumes) with 2 CPUs each, and `spec` merged into the Kafka.
fn three_brokers(spec: Value) -> Result<KafkaCluster, ModelError> {
    resolved_with_pool(
        spec,
        json!({
            "replicas": 3, "roles": ["controller", "broker"],
            "resources": {"requests": {"cpu": "2", "memory": "2Gi"}},
            "storage": {"type": "jbod", "volumes": [
                {"id": 0, "type": "persistent-claim", "size": "100Gi", "kraftMetadata": "shared"},
                {"id": 1, "type": "ephemeral", "sizeLimit": "10Gi"},
            ]},
        }),
    )
}

fn secret_text(secret: &k8s_openapi::api::core::v1::Secret, key: &str) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()[key].0.clone()).unwrap()
}

#[test]
fn cruise_control_is_deployed_from_the_kafka_image_with_strimzis_files() {
    use strimzi_cluster_operator::model::components::cruise_control::CruiseControlInputs;
    let cluster = three_brokers(json!({
        "entityOperator": {"topicOperator": {}},
        "cruiseControl": {
            "config": {"partition.metrics.window.ms": 10000, "bootstrap.servers": "elsewhere:9092",
                       "self.healing.goals": "com.linkedin.kafka.cruisecontrol.analyzer.goals.RackAwareGoal",
                       "webserver.ssl.enable": true},
            "brokerCapacity": {"inboundNetwork": "20000KiB/s",
                               "overrides": [{"brokers": [1], "cpu": "500m", "outboundNetwork": "1MiB/s"}]},
        },
    }))
    .unwrap();
    let issued = certificates(&cluster);
    let certificate = issued.get("c-cruise-control-certs").expect("a certificate");
    let names = certificate.certificate.dns_names();
    for name in [
        "c-cruise-control",
        "c-cruise-control.kafka.svc",
        "c-cruise-control.kafka.svc.cluster.local",
        "localhost",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    let inputs = CruiseControlInputs {
        certificate: Some(certificate),
        cluster_ca_cert_generation: 3,
        cluster_ca_key_generation: 1,
        api_secret: None,
        topic_operator_api_secret: None,
        user_api_users: Some("viewer: pw,VIEWER\n"),
        metrics: None,
    };
    let objects = cluster.cruise_control(&inputs).unwrap();

    // The server configuration: defaults, the user's allowed options, nothing forbidden.
    let data = objects.config_map.data.as_ref().unwrap();
    assert_eq!(
        objects.config_map.metadata.name.as_deref(),
        Some("c-cruise-control-config")
    );
    let server = &data["cruisecontrol.properties"];
    assert!(
        server.contains("partition.metrics.window.ms=10000\n"),
        "{server}"
    );
    assert!(server.contains("webserver.auth.credentials.file=/opt/cruise-control/api-auth-config/cruise-control.authFile\n"));
    assert!(server.contains("metric.reporter.topic=strimzi.cruisecontrol.metrics\n"));
    assert!(
        server
            .contains("hard.goals=com.linkedin.kafka.cruisecontrol.analyzer.goals.RackAwareGoal,")
    );
    assert!(
        !server.contains("elsewhere"),
        "a forbidden option passed: {server}"
    );
    assert!(
        !server.contains("self.healing"),
        "self-healing is the operator's: {server}"
    );
    let warnings: Vec<String> = cluster
        .all_warnings()
        .into_iter()
        .map(|w| w.message)
        .collect();
    assert!(
        warnings.iter().any(|w| w.contains("\"bootstrap.servers\"")),
        "{warnings:?}"
    );

    // Capacities per broker: JBOD log directories in MiB, overrides before common values,
    // the pool's CPU request otherwise.
    let capacity: Value = serde_json::from_str(&data["capacity.json"]).unwrap();
    let brokers = capacity["brokerCapacities"].as_array().unwrap();
    assert_eq!(brokers.len(), 3);
    let broker =
        |id: i64| brokers.iter().find(|b| b["brokerId"] == id).unwrap()["capacity"].clone();
    assert_eq!(
        broker(0)["DISK"]["/var/lib/kafka/data-0/kafka-log0"],
        "102400.0"
    );
    assert_eq!(
        broker(0)["DISK"]["/var/lib/kafka/data-1/kafka-log0"],
        "10240.0"
    );
    assert_eq!(broker(0)["CPU"]["num.cores"], "2.0");
    assert_eq!(broker(1)["CPU"]["num.cores"], "0.5");
    assert_eq!(broker(0)["NW_IN"], "20000.0");
    assert_eq!(broker(1)["NW_OUT"], "1024.0");
    assert_eq!(broker(2)["NW_OUT"], "10000.0");

    // API users: the operators' own, the topic operator's (in its own Secret too) and the
    // user's.
    let api = objects
        .secrets
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some("c-cruise-control-api"))
        .unwrap();
    let auth = secret_text(api, "cruise-control.authFile");
    let rebalance_password = secret_text(api, "rebalance-operator.password");
    assert!(auth.contains(&format!("rebalance-operator: {rebalance_password},ADMIN\n")));
    assert!(auth.contains("healthcheck: "));
    assert!(auth.contains("viewer: pw,VIEWER\n"));
    let to_api = objects
        .secrets
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some("c-entity-topic-operator-cc-api"))
        .unwrap();
    assert_eq!(
        secret_text(to_api, "topic-operator.apiAdminName"),
        "topic-operator"
    );
    let to_password = secret_text(to_api, "topic-operator.apiAdminPassword");
    assert!(auth.contains(&format!("topic-operator: {to_password},ADMIN\n")));
    // The next build keeps the passwords.
    let again = cluster
        .cruise_control(&CruiseControlInputs {
            api_secret: Some(api),
            topic_operator_api_secret: Some(to_api),
            ..inputs
        })
        .unwrap();
    let api_again = again
        .secrets
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some("c-cruise-control-api"))
        .unwrap();
    assert_eq!(secret_text(api_again, "cruise-control.authFile"), auth);

    // The Deployment runs the image's script with the variables its scripts read.
    let pod = objects
        .deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .clone()
        .unwrap();
    let container = &pod.containers[0];
    assert_eq!(container.name, "c-cruise-control");
    assert_eq!(
        container.image.as_deref(),
        Some(cluster.version.image.as_str())
    );
    assert_eq!(
        container.args.as_deref(),
        Some(&["/opt/cruise-control/cruise_control_run.sh".to_owned()][..])
    );
    let vars = env(container);
    assert_eq!(
        vars["STRIMZI_KAFKA_BOOTSTRAP_SERVERS"],
        "c-kafka-bootstrap:9091"
    );
    assert_eq!(vars["STRIMZI_CC_API_SSL_ENABLED"], "true");
    assert_eq!(vars["STRIMZI_CC_API_AUTH_ENABLED"], "true");
    assert_eq!(vars["API_HEALTHCHECK_USERNAME"], "healthcheck");
    assert_eq!(vars["API_PORT"], "9090");
    assert_eq!(vars["API_HEALTHCHECK_PATH"], "/kafkacruisecontrol/state");
    assert_eq!(vars["KAFKA_HEAP_OPTS"], "-Xms128M");
    let mounts: BTreeMap<&str, &str> = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|mount| (mount.name.as_str(), mount.mount_path.as_str()))
        .collect();
    assert_eq!(mounts["cc-certs"], "/etc/cruise-control/cc-certs/");
    assert_eq!(
        mounts["cluster-ca-certs"],
        "/etc/cruise-control/cluster-ca-certs/"
    );
    assert_eq!(
        mounts["api-auth-config"],
        "/opt/cruise-control/api-auth-config/"
    );
    assert_eq!(mounts["config"], "/opt/cruise-control/custom-config/");
    let probe = container.readiness_probe.as_ref().unwrap();
    assert_eq!(
        probe.exec.as_ref().unwrap().command.as_deref(),
        Some(&["/opt/cruise-control/cruise_control_healthcheck.sh".to_owned()][..])
    );
    let annotations = objects
        .deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .metadata
        .as_ref()
        .unwrap()
        .annotations
        .clone()
        .unwrap();
    assert!(annotations.contains_key("strimzi.io/server-configuration-hash"));
    assert!(annotations.contains_key("strimzi.io/capacity-configuration-hash"));
    assert_eq!(annotations["strimzi.io/cluster-ca-cert-generation"], "3");

    // The REST API Service and who may reach it.
    let service = objects.service.spec.as_ref().unwrap();
    assert_eq!(
        objects.service.metadata.name.as_deref(),
        Some("c-cruise-control")
    );
    assert_eq!(service.ports.as_ref().unwrap()[0].port, 9090);
    let policy = objects
        .network_policy
        .as_ref()
        .unwrap()
        .spec
        .clone()
        .unwrap();
    let peers = policy.ingress.unwrap()[0].from.clone().unwrap();
    assert_eq!(
        peers.len(),
        2,
        "the cluster operator and the entity operator"
    );

    // The topic operator learns where Cruise Control is.
    let eo = cluster
        .entity_operator(&EntityOperatorInputs {
            cluster_ca_cert_generation: 0,
            cluster_ca_key_generation: 0,
            topic_operator_certificate: issued.get("c-entity-topic-operator-certs"),
            user_operator_certificate: None,
        })
        .unwrap()
        .unwrap();
    let to = &eo
        .deployment
        .spec
        .unwrap()
        .template
        .spec
        .unwrap()
        .containers[0];
    let to_vars = env(to);
    assert_eq!(to_vars["STRIMZI_CRUISE_CONTROL_ENABLED"], "true");
    assert_eq!(
        to_vars["STRIMZI_CRUISE_CONTROL_HOSTNAME"],
        "c-cruise-control.kafka.svc"
    );
    assert!(
        to.volume_mounts
            .iter()
            .flatten()
            .any(|mount| mount.mount_path == "/etc/eto-cc-api/")
    );
}

#[test]
fn cruise_control_input_that_cannot_work_is_refused() {
    let refused = |result: Result<KafkaCluster, ModelError>| match result {
        Err(ModelError::InvalidConfiguration(message)) => message,
        other => panic!("not refused: {:?}", other.map(|cluster| cluster.name)),
    };
    assert!(refused(resolved(json!({"cruiseControl": {}}))).contains("at least two Kafka brokers"));
    assert!(
        refused(three_brokers(
            json!({"cruiseControl": {"brokerCapacity": {"cpu": "many"}}})
        ))
        .contains("CPU capacity")
    );
}

/// The pod spec of a component's Deployment.
/// The pods of the entity operator's and Kafka Exporter's Deployments of `cluster`, with the
/// certificates `issued` for them (at CA generations 0).
fn entity_operator_and_exporter_pods(
    cluster: &KafkaCluster,
    issued: &BTreeMap<String, IssuedCertificate>,
) -> (PodSpec, PodSpec) {
    let exporter = cluster
        .kafka_exporter(issued.get("c-kafka-exporter-certs"), 0, 0)
        .unwrap();
    (
        deployment_pod(entity_operator_deployment(cluster, issued)),
        deployment_pod(exporter.deployment),
    )
}

/// The entity operator's Deployment of `cluster`, with the certificates `issued` for it (at
/// CA generations 0).
fn entity_operator_deployment(
    cluster: &KafkaCluster,
    issued: &BTreeMap<String, IssuedCertificate>,
) -> k8s_openapi::api::apps::v1::Deployment {
    cluster
        .entity_operator(&EntityOperatorInputs {
            cluster_ca_cert_generation: 0,
            cluster_ca_key_generation: 0,
            topic_operator_certificate: issued.get("c-entity-topic-operator-certs"),
            user_operator_certificate: issued.get("c-entity-user-operator-certs"),
        })
        .unwrap()
        .unwrap()
        .deployment
}

/// The pod of Cruise Control's Deployment of `cluster`, with the certificate `issued` for it
/// (at CA generations 0, no API users, no metrics).
fn cruise_control_pod(
    cluster: &KafkaCluster,
    issued: &BTreeMap<String, IssuedCertificate>,
) -> PodSpec {
    use strimzi_cluster_operator::model::components::cruise_control::CruiseControlInputs;
    let cruise_control = cluster
        .cruise_control(&CruiseControlInputs {
            certificate: issued.get("c-cruise-control-certs"),
            cluster_ca_cert_generation: 0,
            cluster_ca_key_generation: 0,
            api_secret: None,
            topic_operator_api_secret: None,
            user_api_users: None,
            metrics: None,
        })
        .unwrap();
    deployment_pod(cruise_control.deployment)
}

fn deployment_pod(deployment: k8s_openapi::api::apps::v1::Deployment) -> PodSpec {
    deployment.spec.unwrap().template.spec.unwrap()
}

/// What the real-node tests' fast start (`support/fast_start.rs`) asks of the Kafka nodes,
/// the entity operator, Kafka Exporter and Cruise Control reaches their containers: the heap
/// and the fast-start flags with no G1 flag left, the quicker readiness and startup probes,
/// and Strimzi's liveness probes untouched.
#[test]
fn a_fast_start_sets_jvm_flags_and_readiness_and_leaves_liveness_as_strimzi_has_it() {
    use fast_start::{
        FAST_START_FLAGS, fast_start_jvm, http_readiness_probe, kafka_node_readiness_probe,
        topic_operator_startup_probe,
    };
    use strimzi_cluster_operator::model::nodes::pods::PodInputs;
    let cluster = resolved_with_pool(
        json!({
            "kafka": {
                "listeners": [{"name": "tls", "port": 9093, "type": "internal", "tls": true}],
                "readinessProbe": kafka_node_readiness_probe(),
            },
            "entityOperator": {
                "topicOperator": {"startupProbe": topic_operator_startup_probe(),
                                  "readinessProbe": http_readiness_probe()},
                "userOperator": {"readinessProbe": http_readiness_probe()},
            },
            "kafkaExporter": {"readinessProbe": http_readiness_probe()},
            "cruiseControl": {"jvmOptions": fast_start_jvm("256m", "512m")},
        }),
        json!({"replicas": 3, "roles": ["controller", "broker"], "storage": {"type": "ephemeral"},
               "jvmOptions": fast_start_jvm("256m", "512m")}),
    )
    .unwrap();
    let jvm_flags = |container: &Container| {
        let env = env(container);
        assert!(
            env.values().all(|value| !value.contains("G1")),
            "{}: {env:?}",
            container.name
        );
        (
            env.get("KAFKA_HEAP_OPTS").cloned(),
            env.get("KAFKA_JVM_PERFORMANCE_OPTS").cloned(),
        )
    };
    let fast_start = (
        Some("-Xms256m -Xmx512m".to_owned()),
        Some(FAST_START_FLAGS.to_owned()),
    );

    // Kafka nodes: readiness from 5 s every 3 s; liveness as Strimzi's (15 s, 5 s, and
    // Kubernetes' 10 s period).
    let pod_sets = cluster.pod_sets(&PodInputs::default());
    let pods: Vec<_> = pod_sets
        .iter()
        .flat_map(|set| set.spec.pod_list().unwrap())
        .collect();
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let kafka = &pod.spec.as_ref().unwrap().containers[0];
        assert_eq!(jvm_flags(kafka), fast_start, "{}", kafka.name);
        assert_probe_timings(
            kafka,
            (Some(5), Some(3), Some(5)),
            (Some(15), None, Some(5)),
        );
    }

    // Cruise Control: the same flags; its probes are the test's own business.
    let issued = certificates(&cluster);
    let pod = cruise_control_pod(&cluster, &issued);
    assert_eq!(jvm_flags(&pod.containers[0]), fast_start);

    // The entity operator's two operators and Kafka Exporter: readiness from 2 s every 2 s,
    // the topic operator's start-up checked every 2 s for Strimzi's two minutes, liveness
    // as Strimzi's.
    let (eo_pod, exporter_pod) = entity_operator_and_exporter_pods(&cluster, &issued);
    let probed: Vec<&Container> = eo_pod
        .containers
        .iter()
        .chain(&exporter_pod.containers)
        .collect();
    assert_eq!(probed.len(), 3);
    for container in probed {
        let strimzi_timeout = container.liveness_probe.as_ref().unwrap().timeout_seconds;
        assert_eq!(
            probe_timings(container.readiness_probe.as_ref()),
            (Some(2), Some(2), strimzi_timeout),
            "{}",
            container.name
        );
        assert_eq!(
            container.liveness_probe.as_ref().unwrap().period_seconds,
            None,
            "{}",
            container.name
        );
    }
    let startup = eo_pod.containers[0].startup_probe.as_ref().unwrap();
    assert_eq!(
        (startup.period_seconds, startup.failure_threshold),
        (Some(2), Some(60))
    );
}

/// The operator's proxy and FIPS variables reach the entity operator's two containers, Kafka
/// Exporter and Cruise Control.
#[test]
fn the_operators_proxy_and_fips_variables_reach_every_component_container() {
    // Cruise Control needs two brokers at least.
    let mut cluster = resolved_with_pool(
        json!({
            "entityOperator": {"topicOperator": {}, "userOperator": {}},
            "kafkaExporter": {},
            "cruiseControl": {},
        }),
        json!({"replicas": 2, "roles": ["controller", "broker"], "storage": {"type": "ephemeral"}}),
    )
    .unwrap();
    cluster.config.shared_env = model_support::shared_env().into();
    let issued = certificates(&cluster);
    let (eo_pod, exporter_pod) = entity_operator_and_exporter_pods(&cluster, &issued);
    let containers: Vec<Container> = [eo_pod, exporter_pod, cruise_control_pod(&cluster, &issued)]
        .into_iter()
        .flat_map(|pod| pod.containers)
        .collect();
    assert_eq!(containers.len(), 4);
    for container in &containers {
        model_support::assert_shared_env(container);
    }
}

/// `STRIMZI_ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED` false (the default): an operator
/// watching another namespace than the Kafka's refuses the entity operator, which gets no
/// certificate; its own namespace is fine. The Kafka itself still resolves, so its nodes are
/// reconciled. With the setting on, the other namespace is watched.
#[test]
fn watching_another_namespace_needs_the_operator_to_allow_it() {
    let inputs = EntityOperatorInputs {
        cluster_ca_cert_generation: 0,
        cluster_ca_key_generation: 0,
        topic_operator_certificate: None,
        user_operator_certificate: None,
    };
    for section in ["topicOperator", "userOperator"] {
        let mut cluster = resolved(json!({
            "entityOperator": {section: {"watchedNamespace": "elsewhere"}},
        }))
        .unwrap();
        let refusal = cluster.entity_operator(&inputs).unwrap_err();
        assert_eq!(refusal.reason(), "InvalidConfigurationException");
        let message = refusal.to_string();
        for part in [
            format!("spec.entityOperator.{section}.watchedNamespace is elsewhere"),
            "STRIMZI_ENTITY_OPERATOR_WATCHED_NAMESPACE_ENABLED=true".to_owned(),
        ] {
            assert!(message.contains(&part), "{message}");
        }
        assert!(certificate_requests(&cluster, &BTreeMap::new()).is_empty());

        cluster.config.entity_operator_watched_namespace_enabled = true;
        let objects = cluster.entity_operator(&inputs).unwrap().unwrap();
        assert!(
            objects
                .roles
                .iter()
                .any(|role| role.metadata.namespace.as_deref() == Some("elsewhere"))
        );
        assert_eq!(certificate_requests(&cluster, &BTreeMap::new()).len(), 1);
    }
    let own = resolved(json!({
        "entityOperator": {"topicOperator": {"watchedNamespace": "kafka"},
                           "userOperator": {}},
    }))
    .unwrap();
    assert!(own.entity_operator(&inputs).unwrap().is_some());
}

/// The containers Strimzi's alert rules watch through cAdvisor's `container_last_seen` have
/// the names the rules look for: the cluster operator's in the install bundle (which the Helm
/// chart renders unchanged, as `deploy/helm/check-chart.sh` checks), the topic and user
/// operators' in the entity operator's pod (whose names match the rules' `.+-entity-operator-.+`).
#[test]
fn the_containers_strimzis_alert_rules_watch_have_the_names_they_look_for() {
    use strimzi_tests::prometheus::{
        run_rule_test, strimzi_alert, strimzi_rule_containers, strimzi_rule_file,
    };
    assert_eq!(
        strimzi_rule_containers("prometheus-strimzi-cluster-operator-rules.yaml"),
        ["strimzi-cluster-operator"]
    );
    assert_eq!(
        strimzi_rule_containers("prometheus-strimzi-entity-operator-rules.yaml"),
        ["topic-operator", "user-operator"]
    );
    let operator = strimzi_tests::bundle::Bundle::load("cluster-operator").deployment();
    let operator_containers: Vec<String> = deployment_pod(operator)
        .containers
        .into_iter()
        .map(|container| container.name)
        .collect();
    assert_eq!(operator_containers, ["strimzi-cluster-operator"]);
    let cluster =
        resolved(json!({"entityOperator": {"topicOperator": {}, "userOperator": {}}})).unwrap();
    let eo = entity_operator_deployment(&cluster, &certificates(&cluster));
    // A pod of a Deployment is named `<deployment>-<template hash>-<suffix>`.
    let eo_pod = format!("{}-5d8f9c7b6-x2k4q", eo.metadata.name.clone().unwrap());
    let eo_containers: Vec<String> = deployment_pod(eo)
        .containers
        .into_iter()
        .map(|container| container.name)
        .collect();
    assert_eq!(eo_containers, ["topic-operator", "user-operator"]);

    // cAdvisor's series of those containers, seen up to the last minute, keep every rule
    // quiet; without them, each rule fires.
    let rule_files = [
        (
            "cluster-operator.yaml",
            strimzi_rule_file("prometheus-strimzi-cluster-operator-rules.yaml"),
        ),
        (
            "entity-operator.yaml",
            strimzi_rule_file("prometheus-strimzi-entity-operator-rules.yaml"),
        ),
    ];
    // Each alert with the file it is in and the container it watches.
    let watched = [
        (
            "ClusterOperatorContainerDown",
            "prometheus-strimzi-cluster-operator-rules.yaml",
            &operator_containers[0],
        ),
        (
            "TopicOperatorContainerDown",
            "prometheus-strimzi-entity-operator-rules.yaml",
            &eo_containers[0],
        ),
        (
            "UserOperatorContainerDown",
            "prometheus-strimzi-entity-operator-rules.yaml",
            &eo_containers[1],
        ),
    ];
    let alerts = |firing: bool| -> Value {
        let cases: Vec<Value> = watched
            .iter()
            .map(|(alert, file, container)| {
                let fired = firing.then(|| strimzi_alert(file, alert, &[("container", container)]));
                json!({"eval_time": "10m", "alertname": alert, "exp_alerts": fired.into_iter().collect::<Vec<_>>()})
            })
            .collect();
        json!({"alert_rule_test": cases})
    };
    // container_last_seen is the time the container was last seen, in seconds.
    let seen = |container: &str, pod: &str| {
        json!({
            "series": format!("container_last_seen{{container=\"{container}\",pod=\"{pod}\"}}"),
            "values": "0+60x10",
        })
    };
    let series = vec![
        seen(
            &operator_containers[0],
            "strimzi-cluster-operator-6b7f5d9c8-q7w2e",
        ),
        seen(&eo_containers[0], &eo_pod),
        seen(&eo_containers[1], &eo_pod),
    ];
    run_rule_test(&rule_files, series, alerts(false)).unwrap();
    run_rule_test(&rule_files, Vec::new(), alerts(true)).unwrap();
}
