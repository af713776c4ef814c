//! The Connect model's tests, with the settings of an operator configured from its
//! environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use strimzi_api::annotations;
use strimzi_api::connect::KafkaConnect;

use crate::config::ClusterOperatorConfig;
use crate::model::ModelConfig;
use crate::model::client_security::matches_pattern;
use crate::model::connect::*;
use crate::model::meta::StringMap;

fn config() -> ModelConfig {
    ClusterOperatorConfig::from_lookup(|name| match name {
        "STRIMZI_OPERATOR_NAMESPACE" => Some("strimzi".to_owned()),
        "STRIMZI_NAMESPACE" => Some("*".to_owned()),
        _ => None,
    })
    .unwrap()
    .model
}

fn connect(yaml: &str) -> ConnectCluster {
    let mut resource: KafkaConnect = serde_yaml_ng::from_str(yaml).unwrap();
    resource.metadata.namespace = Some("ns".to_owned());
    resource.metadata.uid = Some("uid-1".to_owned());
    ConnectCluster::from_kafka_connect(&resource, &config()).unwrap()
}

const TLS_CONNECT: &str = r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaConnect
metadata:
  name: my-connect
  labels: {team: a}
spec:
  version: 4.3.1
  replicas: 2
  bootstrapServers: my-cluster-kafka-bootstrap:9093
  groupId: my-group
  configStorageTopic: my-configs
  statusStorageTopic: my-status
  offsetStorageTopic: my-offsets
  tls:
    trustedCertificates:
      - secretName: my-cluster-cluster-ca-cert
        pattern: "*.crt"
  authentication:
    type: scram-sha-512
    username: my-user
    passwordSecret: {secretName: my-user, password: password}
  config:
    config.storage.replication.factor: -1
    ssl.keystore.location: /nope
"#;

fn ca_inputs() -> ConnectInputs {
    ConnectInputs {
        trusted_certificate_secrets: BTreeMap::from([(
            "my-cluster-cluster-ca-cert".to_owned(),
            BTreeMap::from([
                ("ca.crt".to_owned(), ByteString(b"PEM".to_vec())),
                ("ca.p12".to_owned(), ByteString(b"P12".to_vec())),
            ]),
        )]),
        ..ConnectInputs::default()
    }
}

#[test]
fn worker_configuration_has_strimzis_sections() {
    let cluster = connect(TLS_CONNECT);
    let (text, warnings) = cluster.worker_configuration().unwrap();
    for line in [
        "bootstrap.servers=my-cluster-kafka-bootstrap:9093",
        "ssl.truststore.certificates=${strimzisecrets:ns/my-connect-connect-tls-trusted-certs:ca.crt}",
        "admin.ssl.truststore.type=PEM",
        "sasl.mechanism=SCRAM-SHA-512",
        "consumer.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"my-user\" password=\"${strimzisecrets:ns/my-user:password}\";",
        "config.providers=strimzienv,strimzifile,strimzidir,strimzisecrets",
        "group.id=my-group",
        "offset.storage.topic=my-offsets",
        "config.storage.replication.factor=-1",
        "key.converter=org.apache.kafka.connect.json.JsonConverter",
        "rest.advertised.host.name=${strimzienv:ADVERTISED_HOSTNAME}",
        "rest.advertised.port=8083",
        "plugin.path=/opt/kafka/plugins",
        "security.protocol=SASL_SSL",
        "producer.security.protocol=SASL_SSL",
    ] {
        assert!(
            text.lines().any(|candidate| candidate == line),
            "missing {line} in\n{text}"
        );
    }
    assert!(!text.contains("/nope"));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("ssl.keystore.location"));
}

#[test]
fn objects_carry_strimzis_names_labels_and_owner() {
    let cluster = connect(TLS_CONNECT);
    let objects = cluster.objects(&ca_inputs()).unwrap();
    let labels = objects.pod_set.metadata.labels.clone().unwrap();
    assert_eq!(labels["strimzi.io/cluster"], "my-connect");
    assert_eq!(labels["strimzi.io/kind"], "KafkaConnect");
    assert_eq!(labels["strimzi.io/name"], "my-connect-connect");
    assert_eq!(labels["app.kubernetes.io/name"], "kafka-connect");
    assert_eq!(labels["team"], "a");
    assert_eq!(
        objects.pod_set.metadata.owner_references.clone().unwrap()[0].uid,
        "uid-1"
    );
    assert_eq!(
        objects.api_service.metadata.name.as_deref(),
        Some("my-connect-connect-api")
    );
    assert_eq!(
        objects
            .headless_service
            .spec
            .as_ref()
            .unwrap()
            .cluster_ip
            .as_deref(),
        Some("None")
    );
    assert_eq!(
        objects.config_map.metadata.name.as_deref(),
        Some("my-connect-connect-config")
    );
    let data = objects.config_map.data.as_ref().unwrap();
    assert!(data.contains_key("kafka-connect.properties"));
    assert!(data["log4j2.properties"].contains("logger.reflections.level=ERROR"));
    let trusted = objects.trusted_certificates.unwrap();
    assert_eq!(
        trusted.data.unwrap(),
        BTreeMap::from([("ca.crt".to_owned(), ByteString(b"PEM\n".to_vec()))])
    );
    assert_eq!(
        objects.role.metadata.name.as_deref(),
        Some("my-connect-connect")
    );
    assert_eq!(
        objects.role_binding.metadata.name.as_deref(),
        Some("my-connect-connect-role")
    );
    let rule = &objects.role.rules.unwrap()[0];
    assert_eq!(
        rule.resource_names.clone().unwrap(),
        vec!["my-connect-connect-tls-trusted-certs", "my-user"]
    );
    assert_eq!(
        objects.role_binding.subjects.unwrap()[0].name,
        "my-connect-connect"
    );
    assert_eq!(
        objects
            .pod_disruption_budget
            .unwrap()
            .spec
            .unwrap()
            .min_available,
        Some(IntOrString::Int(1))
    );
    assert!(objects.network_policy.is_some());
    assert!(build::ConnectBuild::of(&cluster).unwrap().is_none());
}

#[test]
fn pods_run_the_start_script_with_their_configuration() {
    let cluster = connect(TLS_CONNECT);
    let objects = cluster.objects(&ca_inputs()).unwrap();
    let pods: Vec<Pod> = objects
        .pod_set
        .spec
        .pods
        .iter()
        .map(|entry| serde_json::from_value(serde_json::to_value(entry).unwrap()).unwrap())
        .collect();
    assert_eq!(pods.len(), 2);
    let pod = &pods[1];
    assert_eq!(pod.metadata.name.as_deref(), Some("my-connect-connect-1"));
    let spec = pod.spec.as_ref().unwrap();
    assert_eq!(spec.subdomain.as_deref(), Some("my-connect-connect"));
    assert_eq!(spec.hostname.as_deref(), Some("my-connect-connect-1"));
    let container = &spec.containers[0];
    assert_eq!(
        container.image.as_deref(),
        Some("quay.io/strimzi/kafka:1.2.0-kafka-4.3.1")
    );
    assert_eq!(
        container.args.clone().unwrap(),
        vec!["/opt/kafka/kafka_connect_run.sh"]
    );
    let mounts: Vec<(String, String)> = container
        .volume_mounts
        .clone()
        .unwrap()
        .into_iter()
        .map(|mount| (mount.name, mount.mount_path))
        .collect();
    assert!(mounts.contains(&(
        "kafka-metrics-and-logging".to_owned(),
        "/opt/kafka/custom-config/".to_owned()
    )));
    let annotations = pod.metadata.annotations.as_ref().unwrap();
    assert!(annotations.contains_key(annotations::REVISION));
    assert!(annotations.contains_key(annotations::CONFIGURATION_HASH));
    assert!(annotations.contains_key(annotations::AUTH_HASH));
}

#[test]
fn a_changed_certificate_or_configuration_changes_the_revision() {
    let cluster = connect(TLS_CONNECT);
    let revision = |objects: &ConnectObjects| {
        serde_json::to_value(&objects.pod_set.spec.pods[0]).unwrap()["metadata"]["annotations"]
            [annotations::REVISION]
            .clone()
    };
    let first = revision(&cluster.objects(&ca_inputs()).unwrap());
    assert_eq!(first, revision(&cluster.objects(&ca_inputs()).unwrap()));
    let mut renewed = ca_inputs();
    renewed
        .trusted_certificate_secrets
        .get_mut("my-cluster-cluster-ca-cert")
        .unwrap()
        .insert("ca.crt".to_owned(), ByteString(b"NEW".to_vec()));
    assert_ne!(first, revision(&cluster.objects(&renewed).unwrap()));
    let mut changed = cluster.clone();
    changed.spec.group_id = "other".to_owned();
    assert_ne!(first, revision(&changed.objects(&ca_inputs()).unwrap()));
}

#[test]
fn a_missing_trusted_certificate_secret_is_named() {
    let cluster = connect(TLS_CONNECT);
    let error = cluster.validate(&ConnectInputs::default()).unwrap_err();
    assert!(
        error.to_string().contains("my-cluster-cluster-ca-cert"),
        "{error}"
    );
}

#[test]
fn an_unsupported_version_is_refused() {
    let mut resource: KafkaConnect = serde_yaml_ng::from_str(TLS_CONNECT).unwrap();
    resource.spec.version = Some("2.0.0".to_owned());
    let error = ConnectCluster::from_kafka_connect(&resource, &config()).unwrap_err();
    assert_eq!(error.reason(), "UnsupportedKafkaVersionException");
}

#[test]
fn patterns_match_like_globs() {
    assert!(matches_pattern("*.crt", "ca.crt"));
    assert!(matches_pattern("ca.crt", "ca.crt"));
    assert!(matches_pattern("*", "anything"));
    assert!(matches_pattern("a*b*c", "axxbyyc"));
    assert!(!matches_pattern("*.crt", "ca.p12"));
}

/// A KafkaConnect `built` with a build of two plugins, a push Secret and `output` merged into
/// its output, under the operator configured by `variables`.
fn built(output: serde_json::Value, variables: &[(&str, &str)]) -> ConnectCluster {
    let mut resource: KafkaConnect = serde_yaml_ng::from_str(
        r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaConnect
metadata: {name: built, namespace: ns, uid: uid-1}
spec:
  replicas: 1
  bootstrapServers: b:9092
  groupId: g
  configStorageTopic: c
  statusStorageTopic: s
  offsetStorageTopic: o
  build:
    output: {type: docker, image: "registry.example/connect:1", pushSecret: push}
    plugins:
      - name: file
        artifacts:
          - {type: maven, group: org.apache.kafka, artifact: connect-file, version: 4.3.1}
          - {type: tgz, url: "https://example.com/a.tgz", sha512sum: abc}
"#,
    )
    .unwrap();
    let spec_output = &mut resource.spec.build.as_mut().unwrap().output;
    let mut merged = serde_json::to_value(&*spec_output).unwrap();
    merged
        .as_object_mut()
        .unwrap()
        .extend(output.as_object().unwrap().clone());
    *spec_output = serde_json::from_value(merged).unwrap();
    let config = ClusterOperatorConfig::from_lookup(|name| {
        variables
            .iter()
            .find(|(variable, _)| *variable == name)
            .map(|(_, value)| (*value).to_owned())
            .or_else(|| (name == "STRIMZI_NAMESPACE").then(|| "*".to_owned()))
    })
    .unwrap()
    .model;
    ConnectCluster::from_kafka_connect(&resource, &config).unwrap()
}

#[test]
fn a_build_runs_buildah_with_the_dockerfile_the_push_secret_and_the_options() {
    let cluster = built(
        serde_json::json!({"additionalBuildOptions": ["--retry=2"], "additionalPushOptions": ["--tls-verify=false"]}),
        &[],
    );
    let image_build = build::ConnectBuild::of(&cluster).unwrap().unwrap();
    let config_map = image_build.dockerfile_config_map();
    assert_eq!(
        config_map.metadata.name.as_deref(),
        Some("built-connect-dockerfile")
    );
    let text = &config_map.data.unwrap()[build::DOCKERFILE_KEY];
    assert!(text.starts_with("####"));
    assert!(text.contains("FROM quay.io/strimzi/maven-builder:1.2.0 AS downloadArtifacts"));
    assert!(text.contains("FROM quay.io/strimzi/kafka:1.2.0-kafka-4.3.1"));
    assert!(text.contains(
        "'https://repo1.maven.org/maven2/org/apache/kafka/connect-file/4.3.1/connect-file-4.3.1.pom'"
    ));
    assert!(text.contains("'sha512sum' '--check'"));
    assert_eq!(
        image_build.revision(),
        format!(
            "{}{}",
            crate::model::config::hash_stub(text),
            crate::model::config::hash_stub("registry.example/connect:1")
        )
    );
    let labels = config_map.metadata.labels.unwrap();
    assert_eq!(labels["strimzi.io/name"], "built-connect-build");
    assert_eq!(labels["strimzi.io/component-type"], "kafka-connect-build");
    assert_eq!(labels["strimzi.io/cluster"], "built");

    let pod = image_build.builder_pod();
    assert_eq!(pod.metadata.name.as_deref(), Some("built-connect-build"));
    assert_eq!(
        pod.metadata.annotations.as_ref().unwrap()["strimzi.io/connect-build-revision"],
        image_build.revision()
    );
    let spec = pod.spec.as_ref().unwrap();
    assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
    assert_eq!(
        spec.service_account_name.as_deref(),
        Some("built-connect-build")
    );
    let container = &spec.containers[0];
    assert_eq!(container.name, "built-connect-build");
    assert_eq!(
        container.image.as_deref(),
        Some(build::DEFAULT_BUILDAH_IMAGE)
    );
    let args = container.args.as_ref().unwrap();
    assert_eq!(args[..2], ["/bin/bash".to_owned(), "-ec".to_owned()]);
    assert_eq!(
        args[2],
        "buildah build --file=/dockerfile/Dockerfile --tag=registry.example/connect:1 \
         --storage-driver=vfs '--retry=2'\n\
         buildah push --storage-driver=vfs --digestfile=/tmp/digest '--tls-verify=false' \
         registry.example/connect:1\n\
         echo \"$(buildah images --storage-driver=vfs --format '{{.Name}}' \
         registry.example/connect:1)@$(cat /tmp/digest)\" > /dev/termination-log"
    );
    let mounts: Vec<(&str, &str)> = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|mount| (mount.name.as_str(), mount.mount_path.as_str()))
        .collect();
    assert_eq!(
        mounts,
        [
            ("dockerfile", "/dockerfile"),
            ("docker-credentials", "/build/.docker"),
            ("var-tmp", "/var/tmp")
        ]
    );
    let env = container.env.as_ref().unwrap();
    assert_eq!(env[0].name, "REGISTRY_AUTH_FILE");
    assert_eq!(env[0].value.as_deref(), Some("/build/.docker/config.json"));
    let secret = spec.volumes.as_ref().unwrap()[1].secret.as_ref().unwrap();
    assert_eq!(secret.secret_name.as_deref(), Some("push"));
    assert_eq!(secret.items.as_ref().unwrap()[0].key, ".dockerconfigjson");
}

#[test]
fn with_the_buildah_gate_off_kaniko_builds_and_its_own_options_are_checked() {
    let cluster = built(
        serde_json::json!({"additionalBuildOptions": ["--skip-tls-verify"]}),
        &[("STRIMZI_FEATURE_GATES", "-UseConnectBuildWithBuildah")],
    );
    let pod = build::ConnectBuild::of(&cluster)
        .unwrap()
        .unwrap()
        .builder_pod();
    let container = &pod.spec.as_ref().unwrap().containers[0];
    assert_eq!(
        container.image.as_deref(),
        Some(build::DEFAULT_KANIKO_EXECUTOR_IMAGE)
    );
    assert_eq!(
        container.args.as_ref().unwrap(),
        &[
            "--dockerfile=/dockerfile/Dockerfile",
            "--image-name-with-digest-file=/dev/termination-log",
            "--destination=registry.example/connect:1",
            "--skip-tls-verify"
        ]
    );
    assert_eq!(
        container.volume_mounts.as_ref().unwrap()[1].mount_path,
        "/kaniko/.docker"
    );
    // A Buildah option is not one of Kaniko's.
    let cluster = built(
        serde_json::json!({"additionalBuildOptions": ["--tls-verify=false"]}),
        &[("STRIMZI_FEATURE_GATES", "-UseConnectBuildWithBuildah")],
    );
    let error = build::ConnectBuild::of(&cluster).unwrap_err();
    assert_eq!(error.reason(), "InvalidResourceException");
}

#[test]
fn a_build_is_refused_under_the_restricted_profile_and_for_the_specs_own_image() {
    let cluster = built(
        serde_json::json!({}),
        &[("STRIMZI_POD_SECURITY_PROVIDER_CLASS", "restricted")],
    );
    let error = build::ConnectBuild::of(&cluster).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("not available under the restricted security profile"),
        "{error}"
    );
    let mut cluster = built(serde_json::json!({}), &[]);
    cluster.spec.image = Some("registry.example/connect:1".to_owned());
    let error = build::ConnectBuild::of(&cluster).unwrap_err();
    assert_eq!(
        error.to_string(),
        "KafkaConnect .spec.image cannot be the same as .spec.build.output.image"
    );
}

#[test]
fn the_workers_run_the_pushed_image_and_their_set_records_it() {
    let cluster = built(serde_json::json!({}), &[]);
    let inputs = ConnectInputs {
        built: Some(BuiltImage {
            image: "registry.example/connect@sha256:abc".to_owned(),
            revision: "rev".to_owned(),
        }),
        ..ConnectInputs::default()
    };
    let pod_set = cluster.objects(&inputs).unwrap().pod_set;
    let annotations = pod_set.metadata.annotations.as_ref().unwrap();
    assert_eq!(annotations["strimzi.io/connect-build-revision"], "rev");
    assert_eq!(
        annotations["strimzi.io/connect-build-image"],
        "registry.example/connect@sha256:abc"
    );
    let pod = &pod_set.spec.pods[0];
    assert_eq!(
        pod["spec"]["containers"][0]["image"],
        "registry.example/connect@sha256:abc"
    );
    assert_eq!(
        pod["metadata"]["annotations"]["strimzi.io/connect-build-revision"],
        "rev"
    );
}

#[test]
fn plugin_images_are_mounted_read_only_under_the_plugin_path() {
    let mut cluster = connect(TLS_CONNECT);
    cluster.spec.plugins = Some(
        serde_json::from_value(serde_json::json!([{
            "name": "sink",
            "artifacts": [{"type": "image", "reference": "registry.example/sink:1", "pullPolicy": "IfNotPresent"}],
        }]))
        .unwrap(),
    );
    let objects = cluster.objects(&ca_inputs()).unwrap();
    let pod: Pod =
        serde_json::from_value(serde_json::to_value(&objects.pod_set.spec.pods[0]).unwrap())
            .unwrap();
    let spec = pod.spec.unwrap();
    let volume = spec
        .volumes
        .unwrap()
        .into_iter()
        .find(|volume| volume.image.is_some())
        .unwrap();
    let image = volume.image.clone().unwrap();
    assert_eq!(image.reference.as_deref(), Some("registry.example/sink:1"));
    assert_eq!(image.pull_policy.as_deref(), Some("IfNotPresent"));
    let mount = spec.containers[0]
        .volume_mounts
        .clone()
        .unwrap()
        .into_iter()
        .find(|mount| mount.name == volume.name)
        .unwrap();
    assert!(mount.mount_path.starts_with("/opt/kafka/plugins/sink/"));
    assert_eq!(mount.read_only, Some(true));
}

#[test]
fn a_topology_label_rack_adds_the_init_container_its_binding_and_the_affinity() {
    let mut cluster = connect(TLS_CONNECT);
    cluster.spec.rack = Some(
        serde_json::from_value(serde_json::json!({"topologyKey": "topology.kubernetes.io/zone"}))
            .unwrap(),
    );
    let objects = cluster.objects(&ca_inputs()).unwrap();
    let binding = objects.init_cluster_role_binding.unwrap();
    assert_eq!(
        binding.metadata.name.as_deref(),
        Some("strimzi-ns-my-connect-connect-init")
    );
    assert_eq!(binding.metadata.namespace, None);
    assert_eq!(binding.metadata.owner_references, None);
    assert_eq!(
        binding.metadata.labels.as_ref().unwrap()["strimzi.io/kind"],
        "KafkaConnect"
    );
    assert_eq!(binding.role_ref.name, "strimzi-kafka-client");
    let subject = &binding.subjects.unwrap()[0];
    assert_eq!(
        (subject.name.as_str(), subject.namespace.as_deref()),
        ("my-connect-connect", Some("ns"))
    );
    let config = &objects.config_map.data.as_ref().unwrap()[CONNECT_CONFIG_KEY];
    assert!(config.contains("consumer.client.rack=${strimzidir:/opt/kafka/init:rack.id}\n"));
    let pod = cluster.pod(0, &StringMap::new());
    let spec = pod.spec.unwrap();
    let init = &spec.init_containers.as_ref().unwrap()[0];
    assert_eq!(init.name, "kafka-init");
    assert_eq!(
        init.image.as_deref(),
        Some(cluster.config.kafka_init_image.as_str())
    );
    assert_eq!(
        init.args.as_deref(),
        Some(&["/opt/strimzi/bin/kafka_init_run.sh".to_owned()][..])
    );
    let vars: Vec<(String, Option<String>)> = init
        .env
        .iter()
        .flatten()
        .map(|var| (var.name.clone(), var.value.clone()))
        .collect();
    assert_eq!(
        vars,
        [
            ("NODE_NAME".to_owned(), None),
            (
                "RACK_TOPOLOGY_KEY".to_owned(),
                Some("topology.kubernetes.io/zone".to_owned())
            ),
        ]
    );
    let rack_mount = |container: &Container| {
        container
            .volume_mounts
            .iter()
            .flatten()
            .any(|mount| mount.name == "rack-volume" && mount.mount_path == INIT_MOUNT_PATH)
    };
    assert!(rack_mount(init) && rack_mount(&spec.containers[0]));
    assert!(
        spec.volumes
            .iter()
            .flatten()
            .any(|volume| volume.name == "rack-volume" && volume.empty_dir.is_some())
    );
    let terms = spec
        .affinity
        .and_then(|affinity| affinity.node_affinity)
        .and_then(|affinity| affinity.required_during_scheduling_ignored_during_execution)
        .unwrap()
        .node_selector_terms;
    let requirement = &terms[0].match_expressions.as_ref().unwrap()[0];
    assert_eq!(
        (requirement.key.as_str(), requirement.operator.as_str()),
        ("topology.kubernetes.io/zone", "Exists")
    );
}

#[test]
fn an_environment_variable_rack_needs_no_init_container() {
    let mut cluster = connect(TLS_CONNECT);
    cluster.spec.rack = Some(
        serde_json::from_value(
            serde_json::json!({"type": "environment-variable", "envVarName": "MY_ZONE"}),
        )
        .unwrap(),
    );
    let objects = cluster.objects(&ca_inputs()).unwrap();
    assert!(objects.init_cluster_role_binding.is_none());
    let config = &objects.config_map.data.as_ref().unwrap()[CONNECT_CONFIG_KEY];
    assert!(config.contains("consumer.client.rack=${strimzienv:MY_ZONE}\n"));
    let spec = cluster.pod(0, &StringMap::new()).spec.unwrap();
    assert!(spec.init_containers.is_none());
    assert!(spec.affinity.is_none());
    let without = connect(TLS_CONNECT).objects(&ca_inputs()).unwrap();
    assert!(without.init_cluster_role_binding.is_none());
    assert!(!without.config_map.data.as_ref().unwrap()[CONNECT_CONFIG_KEY].contains("client.rack"));
}

#[test]
fn authentication_without_credentials_is_refused() {
    let mut cluster = connect(TLS_CONNECT);
    cluster.spec.authentication = Some(
        serde_json::from_value(serde_json::json!({"type": "scram-sha-512", "username": "u"}))
            .unwrap(),
    );
    let error = cluster.validate(&ca_inputs()).unwrap_err();
    assert_eq!(error.reason(), "InvalidConfigurationException");
    assert!(error.to_string().contains("passwordSecret"), "{error}");
}

#[test]
fn jmx_with_a_password_gets_a_secret_kept_once_made() {
    let mut cluster = connect(TLS_CONNECT);
    cluster.spec.jmx_options = Some(
        serde_json::from_value(serde_json::json!({"authentication": {"type": "password"}}))
            .unwrap(),
    );
    let first = cluster.objects(&ca_inputs()).unwrap();
    let secret = first.jmx_secret.clone().unwrap();
    assert_eq!(
        secret.metadata.name.as_deref(),
        Some("my-connect-connect-jmx")
    );
    let again = cluster
        .objects(&ConnectInputs {
            jmx_secret: Some(secret.clone()),
            ..ca_inputs()
        })
        .unwrap();
    assert_eq!(again.jmx_secret.unwrap().data, secret.data);
    let pod: Pod =
        serde_json::from_value(serde_json::to_value(&first.pod_set.spec.pods[0]).unwrap()).unwrap();
    let container = &pod.spec.unwrap().containers[0];
    let vars: Vec<String> = container
        .env
        .clone()
        .unwrap()
        .into_iter()
        .map(|var| var.name)
        .collect();
    for name in [
        "STRIMZI_JMX_ENABLED",
        "STRIMZI_JMX_USERNAME",
        "STRIMZI_JMX_PASSWORD",
    ] {
        assert!(vars.contains(&name.to_owned()), "{vars:?}");
    }
    assert!(
        container
            .ports
            .clone()
            .unwrap()
            .iter()
            .any(|port| port.container_port == JMX_PORT)
    );
    assert!(
        connect(TLS_CONNECT)
            .objects(&ca_inputs())
            .unwrap()
            .jmx_secret
            .is_none()
    );
}

#[test]
fn the_rest_api_url_is_reported_only_while_workers_run() {
    assert_eq!(
        connect(TLS_CONNECT).reported_url().as_deref(),
        Some("http://my-connect-connect-api.ns.svc:8083")
    );
    let stopped = TLS_CONNECT.replace("replicas: 2", "replicas: 0");
    assert_eq!(connect(&stopped).reported_url(), None);
}
