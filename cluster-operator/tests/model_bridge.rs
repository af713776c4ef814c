//! The objects of a KafkaBridge: Strimzi's examples, the configuration file the bridge's
//! start script reads, the pod's mounts and environment, and the spec sections that change
//! them.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/fast_start.rs"]
mod fast_start;
mod model_support;

use k8s_openapi::api::core::v1::{Container, PodSpec};
use serde_json::json;
use strimzi_api::annotations;
use strimzi_api::bridge::KafkaBridge;
use strimzi_cluster_operator::model::bridge::{self, BridgeInputs, BridgeObjects};
use strimzi_cluster_operator::model::client_security::SecretsData;
use strimzi_cluster_operator::model::{ModelConfig, ModelError};
use strimzi_tests::reference::{reference_examples_dir, yaml_files};

fn bridge(spec: serde_json::Value) -> KafkaBridge {
    serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaBridge",
        "metadata": {"name": "my-bridge", "namespace": "kafka", "uid": "0b1c",
                     "labels": {"team": "a"}},
        "spec": spec,
    }))
    .unwrap()
}

fn build(bridge: &KafkaBridge) -> Result<BridgeObjects, ModelError> {
    build_with(bridge, &model_support::default_model_config())
}

fn build_with(bridge: &KafkaBridge, config: &ModelConfig) -> Result<BridgeObjects, ModelError> {
    bridge::build(BridgeInputs {
        bridge,
        config,
        external_logging: None,
        metrics_rules: None,
        secrets_digest: "",
        trusted_certificate_secrets: &model_support::trusted_secrets(bridge.spec.tls.as_ref()),
    })
}

fn properties(objects: &BridgeObjects) -> String {
    objects.config_map.data.as_ref().unwrap()["application.properties"].clone()
}

fn pod_spec(objects: &BridgeObjects) -> &PodSpec {
    objects
        .deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
}

fn container(objects: &BridgeObjects) -> &Container {
    &pod_spec(objects).containers[0]
}

fn env(container: &Container, name: &str) -> Option<String> {
    container
        .env
        .iter()
        .flatten()
        .find(|var| var.name == name)
        .and_then(|var| var.value.clone())
}

#[test]
fn strimzi_bridge_examples_build() {
    let dir = reference_examples_dir().join("bridge");
    let mut seen = 0;
    for path in yaml_files(&dir) {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut example: KafkaBridge = serde_yaml_ng::from_str(&text).unwrap();
        example.metadata.namespace = Some("kafka".to_owned());
        let objects = build(&example).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let port = example
            .spec
            .http
            .as_ref()
            .and_then(|http| http.port)
            .unwrap();
        assert_eq!(
            objects.deployment.metadata.name.as_deref(),
            Some("my-bridge-bridge")
        );
        assert_eq!(
            objects.service.metadata.name.as_deref(),
            Some("my-bridge-bridge-service")
        );
        assert_eq!(
            objects
                .service
                .spec
                .as_ref()
                .unwrap()
                .ports
                .as_ref()
                .unwrap()[0]
                .port,
            port
        );
        let text = properties(&objects);
        assert!(
            text.contains("kafka.bootstrap.servers=my-cluster-kafka-bootstrap:9092\n"),
            "{text}"
        );
        assert!(text.contains(&format!("http.port={port}\n")), "{text}");
        if example.spec.http.as_ref().unwrap().tls.is_some() {
            // The HTTPS example: the server certificate is read from its mounted Secret.
            assert!(text.contains("http.ssl.enable=true\n"), "{text}");
            assert!(
                text.contains("http.ssl.certificate.location=/opt/strimzi/bridge-certs/my-bridge-cert-secret/cert.crt\n"),
                "{text}"
            );
            let mounts = container(&objects).volume_mounts.clone().unwrap();
            assert!(
                mounts
                    .iter()
                    .any(|mount| mount.mount_path
                        == "/opt/strimzi/bridge-certs/my-bridge-cert-secret")
            );
            assert_eq!(bridge::secret_keys(&example.spec).len(), 2);
        }
        seen += 1;
    }
    assert!(seen >= 2, "no KafkaBridge examples in {}", dir.display());
}

#[test]
fn objects_carry_strimzi_labels_owner_and_discovery() {
    let objects = build(&bridge(json!({
        "replicas": 2, "bootstrapServers": "my-cluster-kafka-bootstrap:9092"
    })))
    .unwrap();
    let labels = objects.deployment.metadata.labels.clone().unwrap();
    for (key, value) in [
        ("strimzi.io/cluster", "my-bridge"),
        ("strimzi.io/kind", "KafkaBridge"),
        ("strimzi.io/name", "my-bridge-bridge"),
        ("strimzi.io/component-type", "kafka-bridge"),
        ("app.kubernetes.io/name", "kafka-bridge"),
        ("app.kubernetes.io/instance", "my-bridge"),
        ("app.kubernetes.io/managed-by", "strimzi-cluster-operator"),
        ("team", "a"),
    ] {
        assert_eq!(labels.get(key).map(String::as_str), Some(value), "{key}");
    }
    for owners in [
        &objects.deployment.metadata.owner_references,
        &objects.service.metadata.owner_references,
        &objects.config_map.metadata.owner_references,
        &objects.service_account.metadata.owner_references,
        &objects
            .pod_disruption_budget
            .as_ref()
            .unwrap()
            .metadata
            .owner_references,
    ] {
        let owner = &owners.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("KafkaBridge", "my-bridge")
        );
    }
    assert_eq!(objects.deployment.spec.as_ref().unwrap().replicas, Some(2));
    let service = &objects.service;
    assert_eq!(
        service
            .metadata
            .labels
            .as_ref()
            .unwrap()
            .get("strimzi.io/discovery")
            .map(String::as_str),
        Some("true")
    );
    let discovery: serde_json::Value = serde_json::from_str(
        &service.metadata.annotations.as_ref().unwrap()["strimzi.io/discovery"],
    )
    .unwrap();
    assert_eq!(
        discovery,
        json!([{"port": 8080, "tls": false, "auth": "none", "protocol": "http"}])
    );
    assert_eq!(
        service
            .spec
            .as_ref()
            .unwrap()
            .selector
            .as_ref()
            .unwrap()
            .get("strimzi.io/name")
            .map(String::as_str),
        Some("my-bridge-bridge")
    );
    let container = container(&objects);
    assert_eq!(
        container.image.as_deref(),
        Some("quay.io/strimzi/kafka-bridge:1.1.0")
    );
    assert_eq!(
        container.args.as_deref(),
        Some(&["/opt/strimzi/bin/docker/kafka_bridge_run.sh".to_owned()][..])
    );
    let mounts = container.volume_mounts.clone().unwrap();
    assert!(
        mounts
            .iter()
            .any(|mount| mount.mount_path == "/opt/strimzi/custom-config/")
    );
    assert!(mounts.iter().any(|mount| mount.mount_path == "/tmp"));
    assert_eq!(
        bridge::url(&bridge(
            json!({"replicas": 1, "bootstrapServers": "b:9092"})
        )),
        "http://my-bridge-bridge-service.kafka.svc:8080"
    );
    let pdb = objects
        .pod_disruption_budget
        .as_ref()
        .unwrap()
        .spec
        .as_ref()
        .unwrap();
    assert_eq!(
        pdb.max_unavailable,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1))
    );
}

#[test]
fn scram_over_tls_reads_the_password_and_certificates_through_the_secret_provider() {
    let objects = build(&bridge(json!({
        "replicas": 1,
        "bootstrapServers": "my-cluster-kafka-bootstrap:9093",
        "tls": {"trustedCertificates": [{"secretName": "my-cluster-cluster-ca-cert", "certificate": "ca.crt"}]},
        "authentication": {"type": "scram-sha-512", "username": "my-user",
                           "passwordSecret": {"secretName": "my-user", "password": "password"}},
        "producer": {"config": {"acks": 1, "ssl.protocol": "TLSv1.3", "sasl.mechanism": "PLAIN"}},
        "consumer": {"config": {"auto.offset.reset": "earliest", "group.id": "mine"}},
    })))
    .unwrap();
    let text = properties(&objects);
    for line in [
        "kafka.security.protocol=SASL_SSL",
        "kafka.ssl.truststore.type=PEM",
        "kafka.ssl.truststore.certificates=${strimzisecrets:kafka/my-bridge-bridge-tls-trusted-certs:ca.crt}",
        "kafka.sasl.mechanism=SCRAM-SHA-512",
        "kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"my-user\" password=\"${strimzisecrets:kafka/my-user:password}\";",
        "kafka.config.providers=strimzienv,strimzifile,strimzidir,strimzisecrets",
        "kafka.config.providers.strimzisecrets.class=io.strimzi.kafka.KubernetesSecretConfigProvider",
        "kafka.producer.acks=1",
        "kafka.producer.ssl.protocol=TLSv1.3",
        "kafka.consumer.auto.offset.reset=earliest",
        "http.consumer.enabled=true",
        "http.producer.enabled=true",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
    assert!(!text.contains("kafka.producer.sasl.mechanism"), "{text}");
    assert!(!text.contains("group.id"), "{text}");
    let reasons: Vec<&str> = objects.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "ForbiddenConfigurationOption",
            "ForbiddenConfigurationOption"
        ]
    );
    // No Secret is mounted: the operator gathers the trusted certificates in a Secret of
    // its own and lets the pods read it and the password's through a Role.
    let mounts = container(&objects).volume_mounts.clone().unwrap();
    assert!(
        mounts
            .iter()
            .all(|mount| !mount.mount_path.starts_with("/opt/strimzi/bridge-")),
        "{mounts:?}"
    );
    let trusted = objects.trusted_certificates.as_ref().unwrap();
    assert_eq!(
        trusted.metadata.name.as_deref(),
        Some("my-bridge-bridge-tls-trusted-certs")
    );
    assert_eq!(
        trusted.data.as_ref().unwrap()["ca.crt"].0,
        b"PEM my-cluster-cluster-ca-cert\n"
    );
    assert_eq!(
        objects.role.metadata.name.as_deref(),
        Some("my-bridge-bridge")
    );
    assert_eq!(
        objects.role.rules.as_ref().unwrap()[0].resource_names,
        Some(vec![
            "my-bridge-bridge-tls-trusted-certs".to_owned(),
            "my-user".to_owned()
        ])
    );
    assert_eq!(
        objects.role_binding.metadata.name.as_deref(),
        Some("my-bridge-bridge-role")
    );
    assert_eq!(objects.role_binding.role_ref.name, "my-bridge-bridge");
    assert_eq!(
        objects.role_binding.subjects.as_ref().unwrap()[0].name,
        "my-bridge-bridge"
    );
    let keys = bridge::secret_keys(&bridge(json!({
        "replicas": 1, "bootstrapServers": "b:9093",
        "tls": {"trustedCertificates": [{"secretName": "ca", "certificate": "ca.crt"}]},
        "authentication": {"type": "tls",
                           "certificateAndKey": {"secretName": "u", "certificate": "user.crt", "key": "user.key"}},
    }))
    .spec);
    let named: Vec<(&str, &str)> = keys
        .iter()
        .map(|k| (k.secret.as_str(), k.key.as_str()))
        .collect();
    assert_eq!(named, [("u", "user.crt"), ("u", "user.key")]);
}

#[test]
fn the_secrets_digest_rolls_the_pods() {
    let config = model_support::default_model_config();
    let resource = bridge(json!({"replicas": 1, "bootstrapServers": "b:9092"}));
    let annotations = |digest: &str| {
        bridge::build(BridgeInputs {
            bridge: &resource,
            config: &config,
            external_logging: None,
            metrics_rules: None,
            secrets_digest: digest,
            trusted_certificate_secrets: &SecretsData::new(),
        })
        .unwrap()
        .deployment
        .spec
        .unwrap()
        .template
        .metadata
        .unwrap()
        .annotations
        .unwrap()
    };
    assert!(!annotations("").contains_key(annotations::AUTH_HASH));
    assert_eq!(annotations("ab12")[annotations::AUTH_HASH], "ab12");
    assert!(annotations("").contains_key(annotations::CONFIGURATION_HASH));
}

#[test]
fn http_cors_logging_metrics_jvm_and_tracing() {
    let config = model_support::default_model_config();
    let resource = bridge(json!({
        "replicas": 1, "bootstrapServers": "b:9092",
        "http": {"port": 8090, "cors": {"allowedOrigins": ["https://a.example"], "allowedMethods": ["GET", "POST"]}},
        "consumer": {"enabled": false, "timeoutSeconds": 60},
        "logging": {"type": "inline", "loggers": {"logger.bridge.level": "DEBUG"}},
        "metricsConfig": {"type": "jmxPrometheusExporter",
                          "valueFrom": {"configMapKeyRef": {"name": "bridge-metrics", "key": "metrics-config.yml"}}},
        "jvmOptions": {"-Xmx": "256m", "-XX": {"UseG1GC": "true"}, "gcLoggingEnabled": true},
        "resources": {"limits": {"memory": "512Mi"}},
        "tracing": {"type": "opentelemetry"},
        "template": {"bridgeContainer": {"env": [{"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel:4317"}]},
                     "deployment": {"deploymentStrategy": "Recreate"}},
    }));
    assert_eq!(
        bridge::metrics_reference(&resource.spec).map(|key| key.name.as_str()),
        Some("bridge-metrics")
    );
    let objects = bridge::build(BridgeInputs {
        bridge: &resource,
        config: &config,
        external_logging: None,
        metrics_rules: Some("lowercaseOutputName: true\nrules:\n- pattern: kafka.(.*)\n"),
        secrets_digest: "",
        trusted_certificate_secrets: &model_support::trusted_secrets(resource.spec.tls.as_ref()),
    })
    .unwrap();
    let data = objects.config_map.data.clone().unwrap();
    let text = &data["application.properties"];
    for line in [
        "http.port=8090",
        "http.cors.enabled=true",
        "http.cors.allowedOrigins=https://a.example",
        "http.cors.allowedMethods=GET,POST",
        "http.consumer.enabled=false",
        "http.timeoutSeconds=60",
        "bridge.metrics=jmxPrometheusExporter",
        "bridge.metrics.exporter.config.path=/opt/strimzi/custom-config/metrics-config.json",
        "bridge.tracing=opentelemetry",
        "bridge.id=my-bridge",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
    let metrics: serde_json::Value = serde_json::from_str(&data["metrics-config.json"]).unwrap();
    assert_eq!(metrics["lowercaseOutputName"], json!(true));
    let logging = &data["log4j2.properties"];
    assert!(
        logging.contains("logger.bridge.level = DEBUG\n"),
        "{logging}"
    );
    assert!(
        logging.contains("logger.bridge.name = io.strimzi.kafka.bridge\n"),
        "{logging}"
    );
    assert!(
        logging.contains("logger.healthy.level = WARN\n"),
        "{logging}"
    );
    assert!(!logging.contains("logger.bridge.level = INFO"), "{logging}");
    let container = container(&objects);
    assert_eq!(
        env(container, "KAFKA_HEAP_OPTS").as_deref(),
        Some("-Xmx256m")
    );
    assert_eq!(
        env(container, "STRIMZI_JAVA_OPTS").as_deref(),
        Some("-XX:+UseG1GC")
    );
    assert_eq!(
        env(container, "STRIMZI_GC_LOG_ENABLED").as_deref(),
        Some("true")
    );
    assert_eq!(
        env(container, "OTEL_SERVICE_NAME").as_deref(),
        Some("my-bridge-bridge")
    );
    assert_eq!(
        env(container, "OTEL_EXPORTER_OTLP_ENDPOINT").as_deref(),
        Some("http://otel:4317")
    );
    let ports: Vec<(Option<&str>, i32)> = container
        .ports
        .iter()
        .flatten()
        .map(|port| (port.name.as_deref(), port.container_port))
        .collect();
    assert_eq!(
        ports,
        [(Some("rest-api"), 8090), (Some("management"), 8081)]
    );
    let probe = container
        .readiness_probe
        .as_ref()
        .unwrap()
        .http_get
        .as_ref()
        .unwrap();
    assert_eq!(probe.path.as_deref(), Some("/ready"));
    assert_eq!(
        objects
            .deployment
            .spec
            .as_ref()
            .unwrap()
            .strategy
            .as_ref()
            .unwrap()
            .type_
            .as_deref(),
        Some("Recreate")
    );
}

#[test]
fn bad_input_is_refused_with_the_field_named() {
    let bad_metrics = bridge(json!({"replicas": 1, "bootstrapServers": "b:9092"}));
    let config = model_support::default_model_config();
    let error = bridge::build(BridgeInputs {
        bridge: &bad_metrics,
        config: &config,
        external_logging: None,
        metrics_rules: Some("rules: [unclosed"),
        secrets_digest: "",
        trusted_certificate_secrets: &SecretsData::new(),
    })
    .unwrap_err();
    assert_eq!(error.reason(), "InvalidConfigurationException");
    let missing_ca = bridge(json!({"replicas": 1, "bootstrapServers": "b:9093",
        "tls": {"trustedCertificates": [{"secretName": "ca", "pattern": "*.crt"}]}}));
    let error = bridge::build(BridgeInputs {
        bridge: &missing_ca,
        config: &config,
        external_logging: None,
        metrics_rules: None,
        secrets_digest: "",
        trusted_certificate_secrets: &SecretsData::new(),
    })
    .unwrap_err();
    assert_eq!(error.reason(), "InvalidConfigurationException");
    assert!(
        error
            .to_string()
            .contains("Secret ca with trusted certificates"),
        "{error}"
    );
    for (spec, field) in [
        (
            json!({"replicas": 1, "bootstrapServers": "b:9092",
                   "authentication": {"type": "scram-sha-512", "username": "u"}}),
            "passwordSecret",
        ),
        (
            json!({"replicas": 1, "bootstrapServers": "b:9092",
                   "authentication": {"type": "tls",
                       "certificateAndKey": {"secretName": "u", "certificate": "c", "key": "k"}}}),
            "spec.tls",
        ),
    ] {
        let error = build(&bridge(spec)).unwrap_err();
        assert_eq!(error.reason(), "InvalidConfigurationException");
        assert!(error.to_string().contains(field), "{error}");
    }
}

#[test]
fn options_the_operator_sets_are_left_out_with_a_warning() {
    let objects = build(&bridge(json!({
        "replicas": 1, "bootstrapServers": "b:9093",
        "tls": {"trustedCertificates": [{"secretName": "ca", "certificate": "ca.crt"}]},
        "authentication": {"type": "custom", "sasl": true, "config": {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            "bootstrap.servers": "elsewhere:9092",
        }},
        "http": {"port": 8443,
                 "tls": {"certificateAndKey": {"secretName": "http", "certificate": "tls.crt", "key": "tls.key"},
                         "config": {"ssl.enabled.protocols": "TLSv1.3", "ssl.keystore.type": "JKS"}}},
        "config": {"bridge.executor.pool.size": 8, "bridge.id": "other", "kafka.acks": "all", "http.port": 1},
    })))
    .unwrap();
    let text = properties(&objects);
    for line in [
        "kafka.security.protocol=SASL_SSL",
        "kafka.sasl.mechanism=OAUTHBEARER",
        "http.ssl.enabled.protocols=TLSv1.3",
        "bridge.executor.pool.size=8",
        "bridge.id=my-bridge",
        "http.port=8443",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
    for left_out in [
        "elsewhere",
        "JKS",
        "bridge.id=other",
        "kafka.acks",
        "http.port=1",
    ] {
        assert!(!text.contains(left_out), "{left_out} in\n{text}");
    }
    let sections: Vec<&str> = objects
        .warnings
        .iter()
        .map(|warning| warning.message.split(':').next().unwrap())
        .collect();
    assert_eq!(
        sections,
        [
            "spec.config",
            "spec.config",
            "spec.config",
            "spec.authentication.config",
            "spec.http.tls.config"
        ]
    );
}

#[test]
fn a_topology_label_rack_gives_the_consumers_the_nodes_rack() {
    let objects = build(&bridge(json!({
        "replicas": 1,
        "bootstrapServers": "my-cluster-kafka-bootstrap:9092",
        "http": {"port": 8080},
        "rack": {"topologyKey": "topology.kubernetes.io/zone"},
        "clientRackInitImage": "example.org/init:1",
    })))
    .unwrap();
    assert!(
        properties(&objects)
            .contains("kafka.consumer.client.rack=${strimzidir:/opt/strimzi/init:rack.id}\n")
    );
    let binding = objects.init_cluster_role_binding.as_ref().unwrap();
    assert_eq!(
        binding.metadata.name.as_deref(),
        Some("strimzi-kafka-my-bridge-bridge-init")
    );
    assert_eq!(binding.metadata.namespace, None);
    assert_eq!(binding.metadata.owner_references, None);
    assert_eq!(
        binding.metadata.labels.as_ref().unwrap()["strimzi.io/kind"],
        "KafkaBridge"
    );
    assert_eq!(binding.role_ref.name, "strimzi-kafka-client");
    let subject = &binding.subjects.as_ref().unwrap()[0];
    assert_eq!(
        (subject.name.as_str(), subject.namespace.as_deref()),
        ("my-bridge-bridge", Some("kafka"))
    );
    let pod = pod_spec(&objects);
    let init = &pod.init_containers.as_ref().unwrap()[0];
    assert_eq!(init.image.as_deref(), Some("example.org/init:1"));
    assert_eq!(
        init.args.as_deref(),
        Some(&["/opt/strimzi/bin/kafka_init_run.sh".to_owned()][..])
    );
    assert_eq!(
        env(init, "RACK_TOPOLOGY_KEY").as_deref(),
        Some("topology.kubernetes.io/zone")
    );
    assert_eq!(
        env(init, "INIT_FOLDER").as_deref(),
        Some("/opt/strimzi/init")
    );
    assert!(init.env.iter().flatten().any(|var| {
        var.name == "NODE_NAME"
            && var
                .value_from
                .as_ref()
                .and_then(|from| from.field_ref.as_ref())
                .is_some_and(|field| field.field_path == "spec.nodeName")
    }));
    for container in [init, container(&objects)] {
        assert!(
            container
                .volume_mounts
                .iter()
                .flatten()
                .any(|mount| mount.name == "rack-volume" && mount.mount_path == "/opt/strimzi/init"),
            "{}",
            container.name
        );
    }
    let requirement = &pod
        .affinity
        .as_ref()
        .and_then(|affinity| affinity.node_affinity.as_ref())
        .and_then(|affinity| {
            affinity
                .required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .unwrap()
        .node_selector_terms[0]
        .match_expressions
        .as_ref()
        .unwrap()[0];
    assert_eq!(requirement.key, "topology.kubernetes.io/zone");
    assert_eq!(requirement.operator, "Exists");
}

#[test]
fn an_environment_variable_rack_reads_the_variable_without_init_container() {
    let objects = build(&bridge(json!({
        "replicas": 1,
        "bootstrapServers": "my-cluster-kafka-bootstrap:9092",
        "http": {"port": 8080},
        "rack": {"type": "environment-variable", "envVarName": "ZONE"},
    })))
    .unwrap();
    assert!(properties(&objects).contains("kafka.consumer.client.rack=${strimzienv:ZONE}\n"));
    assert!(objects.init_cluster_role_binding.is_none());
    let pod = pod_spec(&objects);
    assert!(pod.init_containers.is_none());
    assert!(objects.warnings.is_empty(), "{:?}", objects.warnings);
}

/// `STRIMZI_POD_DISRUPTION_BUDGET_GENERATION=false`: no PodDisruptionBudget.
#[test]
fn no_pod_disruption_budget_when_their_generation_is_off() {
    let mut config = model_support::default_model_config();
    config.pod_disruption_budget_generation = false;
    let objects = build_with(
        &bridge(json!({"replicas": 1, "bootstrapServers": "b:9092"})),
        &config,
    )
    .unwrap();
    assert!(objects.pod_disruption_budget.is_none());
}

/// The operator's proxy and FIPS variables reach the bridge and its rack init container.
#[test]
fn the_operators_proxy_and_fips_variables_reach_the_bridge_containers() {
    let mut config = model_support::default_model_config();
    config.shared_env = model_support::shared_env().into();
    let objects = build_with(
        &bridge(json!({
            "replicas": 1, "bootstrapServers": "b:9092",
            "rack": {"topologyKey": "topology.kubernetes.io/zone"},
        })),
        &config,
    )
    .unwrap();
    let pod = pod_spec(&objects);
    model_support::assert_shared_env(&pod.containers[0]);
    model_support::assert_shared_env(&pod.init_containers.as_ref().unwrap()[0]);
}

/// What the real-node tests' fast start (`support/fast_start.rs`) asks of a bridge reaches its
/// container: the heap, the fast-start flags added to the JVM's own (the bridge's script sets
/// no G1 flags), readiness checked from 2 s every 2 s, and Strimzi's liveness probe.
#[test]
fn a_fast_start_sets_jvm_flags_and_readiness_and_leaves_liveness_as_strimzi_has_it() {
    use fast_start::{FAST_START_FLAGS, fast_start_jvm, http_readiness_probe};
    use model_support::assert_probe_timings;
    let objects = build(&bridge(json!({
        "replicas": 1, "bootstrapServers": "b:9092",
        "jvmOptions": fast_start_jvm("128m", "256m"),
        "readinessProbe": http_readiness_probe(),
    })))
    .unwrap();
    let container = container(&objects);
    assert_eq!(
        env(container, "KAFKA_HEAP_OPTS").as_deref(),
        Some("-Xms128m -Xmx256m")
    );
    assert_eq!(
        env(container, "STRIMZI_JAVA_OPTS").as_deref(),
        Some(FAST_START_FLAGS)
    );
    assert_probe_timings(
        container,
        (Some(2), Some(2), Some(5)),
        (Some(15), None, Some(5)),
    );
}
