//! The contract from both sides at once: the Cruise Control objects our cluster operator
//! renders for a Kafka (ConfigMap, Secrets, the Deployment's environment, the certificate its
//! cluster CA issues) are laid out as the Deployment mounts them, the stand-in starts from
//! them, and the operator's own client reaches it as the rebalance controller does (HTTPS
//! checked against the cluster CA for the Service's name, `rebalance-operator`'s password from
//! the rendered Secret).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "../../../cluster-operator/tests/model_support/mod.rs"]
mod model_support;
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use strimzi_api::kafka::Kafka;
use strimzi_api::node_pool::KafkaNodePool;
use strimzi_certificate_manager::authority::{CaAction, CaKind};
use strimzi_certificate_manager::leaf::IssueContext;
use strimzi_cluster_operator::model::components::cruise_control::CruiseControlInputs;
use strimzi_cluster_operator::model::components::{
    ComponentCertificateRequest, certificate_requests,
};
use strimzi_cluster_operator::model::desired::issue_certificate;
use strimzi_cluster_operator::model::{ModelInput, resolve};
use strimzi_cruise_control_standin::config::{self, Paths, Role};
use strimzi_cruise_control_standin::model::{Broker, Cluster, Partition};
use strimzi_cruise_control_standin::service::{StandIn, now_ms};
use strimzi_operator_common::cruise_control::{
    Credentials, CruiseControlClient, ProposalAnswer, ProposalOptions, ProposalRequest,
    ProposalScope,
};
use strimzi_operator_common::http_client::{Server, ServerTls};
use strimzi_operator_common::kafka::{HostResolution, SecurityProtocol, TlsConfig};
use support::fake_admin::FakeAdmin;

/// Where the Deployment mounts each volume, relative to a root standing in for `/`.
const MOUNTS: [(&str, &str); 3] = [
    (
        "c-cruise-control-config",
        "opt/cruise-control/custom-config",
    ),
    ("c-cruise-control-certs", "etc/cruise-control/cc-certs"),
    ("c-cruise-control-api", "opt/cruise-control/api-auth-config"),
];

fn write_all(dir: &Path, files: impl IntoIterator<Item = (String, Vec<u8>)>) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

#[tokio::test]
async fn the_stand_in_starts_from_what_our_operator_renders_and_our_client_reaches_it() {
    // A Kafka with Cruise Control as the real-node test configures it, three brokers.
    let kafka: Kafka = serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1", "kind": "Kafka",
        "metadata": {"name": "c", "namespace": "kafka", "uid": "u-1"},
        "spec": {
            "kafka": {"listeners": [{"name": "tls", "port": 9093, "type": "internal", "tls": true}]},
            "entityOperator": {"topicOperator": {}},
            "cruiseControl": {"config": {
                "partition.metrics.window.ms": 10000,
                "num.partition.metrics.windows": 1,
                "metric.sampling.interval.ms": 10000,
                "min.valid.partition.ratio": 0.5,
                "execution.progress.check.interval.ms": 2000,
            }},
        },
    }))
    .unwrap();
    let pool: KafkaNodePool = serde_json::from_value(json!({
        "apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
        "metadata": {"name": "dual", "namespace": "kafka", "labels": {"strimzi.io/cluster": "c"}},
        "spec": {"replicas": 3, "roles": ["controller", "broker"],
                 "storage": {"type": "jbod", "volumes": [
                     {"id": 0, "type": "persistent-claim", "size": "100Gi", "kraftMetadata": "shared"}]}},
    }))
    .unwrap();
    let cluster = resolve(&ModelInput {
        kafka: &kafka,
        pools: &[pool],
        cluster_id: "id",
        metadata_version_in_use: None,
        config: &model_support::default_model_config(),
    })
    .unwrap();
    let ca = model_support::ecdsa_ca(CaKind::Cluster, "c");
    let context = IssueContext {
        now: time::OffsetDateTime::now_utc(),
        window_open: true,
        ca_action: &CaAction::Keep,
        trust_pending: false,
    };
    let issued: BTreeMap<String, _> = certificate_requests(&cluster, &BTreeMap::new())
        .into_iter()
        .map(
            |ComponentCertificateRequest {
                 secret_name,
                 request,
             }| {
                (
                    secret_name,
                    issue_certificate(&ca, &request, &context).unwrap().1,
                )
            },
        )
        .collect();
    let objects = cluster
        .cruise_control(&CruiseControlInputs {
            certificate: issued.get("c-cruise-control-certs"),
            cluster_ca_cert_generation: 0,
            cluster_ca_key_generation: 0,
            api_secret: None,
            topic_operator_api_secret: None,
            user_api_users: Some("viewer: pw,VIEWER\n"),
            metrics: None,
        })
        .unwrap();

    // The pod's file system under a temporary root.
    let root = tempfile::tempdir().unwrap();
    let config_map = objects.config_map.data.clone().unwrap();
    write_all(
        &root.path().join(MOUNTS[0].1),
        config_map
            .into_iter()
            .map(|(name, text)| (name, text.into_bytes())),
    );
    for secret in &objects.secrets {
        let name = secret.metadata.name.clone().unwrap();
        if let Some((_, mount)) = MOUNTS.iter().find(|(volume, _)| *volume == name) {
            write_all(
                &root.path().join(mount),
                secret
                    .data
                    .clone()
                    .unwrap()
                    .into_iter()
                    .map(|(key, bytes)| (key, bytes.0)),
            );
        }
    }
    write_all(
        &root.path().join("etc/cruise-control/cluster-ca-certs"),
        [("ca.crt".to_owned(), ca.certificate().to_pem().into_bytes())],
    );
    // The credentials file's path is absolute in the configuration: point it into the root.
    let properties = root
        .path()
        .join(MOUNTS[0].1)
        .join("cruisecontrol.properties");
    let text = std::fs::read_to_string(&properties).unwrap();
    assert!(text.contains("webserver.auth.credentials.file=/opt/cruise-control/api-auth-config/cruise-control.authFile"));
    std::fs::write(
        &properties,
        text.replace(
            "=/opt/cruise-control/",
            &format!("={}/opt/cruise-control/", root.path().display()),
        ),
    )
    .unwrap();
    let container = &objects
        .deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0];
    let env: BTreeMap<String, String> = container
        .env
        .iter()
        .flatten()
        .filter_map(|var| Some((var.name.clone(), var.value.clone()?)))
        .collect();
    let paths = Paths {
        config_dir: root.path().join(MOUNTS[0].1),
        cc_certs_dir: root.path().join(MOUNTS[1].1),
        cluster_ca_dir: root.path().join("etc/cruise-control/cluster-ca-certs"),
    };
    // The mounts the stand-in reads are the ones the Deployment has.
    let mounts: Vec<String> = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|mount| mount.mount_path.trim_end_matches('/').to_owned())
        .collect();
    for path in [
        "/opt/cruise-control/custom-config",
        "/etc/cruise-control/cc-certs",
        "/etc/cruise-control/cluster-ca-certs",
        "/opt/cruise-control/api-auth-config",
    ] {
        assert!(mounts.iter().any(|m| m == path), "{path} not in {mounts:?}");
    }
    assert_eq!(
        Paths::default().config_dir,
        Path::new("/opt/cruise-control/custom-config")
    );

    let settings = config::load(|name| env.get(name).cloned(), &paths).unwrap();
    assert_eq!(settings.kafka.bootstrap_servers, ["c-kafka-bootstrap:9091"]);
    assert_eq!(settings.kafka.security_protocol, SecurityProtocol::Ssl);
    assert_eq!(settings.goals.supported.len(), 17);
    assert_eq!(settings.goals.hard.len(), 6);
    assert_eq!(settings.windows.window, Duration::from_secs(10));
    assert_eq!(settings.capacities.0.len(), 3);
    let users = settings.api.users.clone().unwrap();
    let role = |name: &str| users.iter().find(|u| u.name == name).map(|u| u.role);
    assert_eq!(role("rebalance-operator"), Some(Role::Admin));
    assert_eq!(role("topic-operator"), Some(Role::Admin));
    assert_eq!(role("healthcheck"), Some(Role::User));
    assert_eq!(role("viewer"), Some(Role::Viewer));
    assert!(settings.api.tls.is_some());

    // Serve it on an in-memory cluster of the three brokers and call it as the operator does.
    let brokers: Vec<i32> = settings.capacities.0.keys().copied().collect();
    let fake = Cluster {
        brokers: brokers
            .iter()
            .map(|id| {
                (
                    *id,
                    Broker {
                        rack: None,
                        host: format!("c-dual-{id}"),
                    },
                )
            })
            .collect(),
        partitions: (0..6)
            .map(|partition| Partition {
                topic: "orders".into(),
                partition,
                replicas: vec![brokers[0]],
                leader: brokers[0],
                size_bytes: 0,
            })
            .collect(),
    };
    let standin = StandIn::new(settings, Arc::new(FakeAdmin::new(fake, 1)));
    let window = standin.settings.windows.window.as_millis() as u64;
    standin.record_sample(now_ms() - window, 6);
    let (port, server) = support::serve(standin).await;
    let api_secret = objects
        .secrets
        .iter()
        .find(|s| s.metadata.name.as_deref() == Some("c-cruise-control-api"))
        .unwrap();
    let password = String::from_utf8(
        api_secret.data.as_ref().unwrap()["rebalance-operator.password"]
            .0
            .clone(),
    )
    .unwrap();
    let client = CruiseControlClient::new(
        Server {
            host: "127.0.0.1".into(),
            port,
            tls: Some(ServerTls {
                config: TlsConfig {
                    ca_pem: ca.certificate().to_pem(),
                    client_identity_pem: None,
                    verify_hostname: true,
                },
                server_name: "c-cruise-control.kafka.svc".into(),
            }),
            host_resolution: HostResolution::System,
        },
        Some(Credentials {
            user: "rebalance-operator".into(),
            password,
        }),
        Duration::from_secs(30),
    );
    let answer = client
        .request_proposal(
            &ProposalRequest {
                scope: ProposalScope::Full {
                    rebalance_disk: false,
                    concurrent_intra_broker_partition_movements: None,
                },
                options: ProposalOptions::default(),
            },
            true,
        )
        .await
        .unwrap();
    let ProposalAnswer::Ready { result, .. } = answer else {
        panic!("{answer:?}");
    };
    assert_eq!(result.summary.num_replica_movements, Some(4));
    assert_eq!(
        client.executor_state().await.unwrap().state,
        "NO_TASK_IN_PROGRESS"
    );
    server.abort();
}
