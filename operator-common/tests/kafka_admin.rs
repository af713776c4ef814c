//! The admin client against the real test broker: every operation on the PLAINTEXT,
//! SASL_SCRAM and mTLS listeners, and what rdkafka (an independent client) sees of it.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kafka_protocol::error::ResponseError;
use strimzi_operator_common::kafka::*;
use strimzi_tests::kafka::{ADMIN_PASSWORD, ADMIN_USER, KafkaBroker, TLS_ADMIN_USER};
use strimzi_tests::layout::log_dir;

fn broker() -> &'static KafkaBroker {
    static BROKER: OnceLock<KafkaBroker> = OnceLock::new();
    BROKER.get_or_init(|| {
        let logs = log_dir("kafka-admin").unwrap();
        KafkaBroker::start(&logs).unwrap_or_else(|error| panic!("{error}"))
    })
}

/// Settings for `listener` (`plain`, `scram`, `tls`) as the listener's super user.
fn config(listener: &str) -> AdminConfig {
    let bootstrap = &broker().listener(listener).unwrap().bootstrap;
    let mut config = AdminConfig::plaintext(bootstrap);
    match listener {
        "scram" => {
            config.security_protocol = SecurityProtocol::SaslPlaintext;
            config.sasl = Some(SaslConfig::Password(SaslCredentials {
                mechanism: SaslMechanism::ScramSha512,
                username: ADMIN_USER.to_owned(),
                password: ADMIN_PASSWORD.to_owned(),
            }));
        }
        "tls" => {
            let certificate = broker().client_certificate(TLS_ADMIN_USER).unwrap();
            config.security_protocol = SecurityProtocol::Ssl;
            config.tls = Some(TlsConfig {
                ca_pem: broker().ca_pem(),
                client_identity_pem: Some(format!("{}{}", certificate.cert, certificate.key)),
                verify_hostname: true,
            });
        }
        _ => {}
    }
    config
}

fn admin(listener: &str) -> AdminClient {
    AdminClient::new(config(listener)).unwrap()
}

fn names(prefix: &str, suffixes: &[&str]) -> Vec<String> {
    suffixes.iter().map(|s| format!("{prefix}-{s}")).collect()
}

fn kafka_error<T: std::fmt::Debug>(result: &ItemResult<T>) -> ResponseError {
    match result {
        Err(AdminError::Kafka { error, .. }) => *error,
        other => panic!("expected a Kafka error, got {other:?}"),
    }
}

async fn topics_and_partitions(admin: &AdminClient, prefix: &str) {
    let [a, b, missing] = <[String; 3]>::try_from(names(prefix, &["a", "b", "missing"])).unwrap();
    let cluster = admin.describe_cluster().await.unwrap();
    assert_eq!(cluster.brokers.len(), 1);
    assert_eq!(cluster.brokers[0].id, 1);
    assert!(!cluster.cluster_id.is_empty());

    let mut topic_a = NewTopic::new(&a);
    topic_a.partitions = Some(3);
    topic_a.replication_factor = Some(1);
    topic_a
        .configs
        .insert("retention.ms".into(), "123456".into());
    let validated = admin
        .create_topics(std::slice::from_ref(&topic_a), true)
        .await
        .unwrap();
    assert_eq!(validated[&a].as_ref().unwrap().partitions, 3);
    let absent = admin
        .describe_topics(std::slice::from_ref(&a))
        .await
        .unwrap();
    assert_eq!(
        kafka_error(&absent[&a]),
        ResponseError::UnknownTopicOrPartition
    );

    let created = admin
        .create_topics(&[topic_a.clone(), NewTopic::new(&b)], false)
        .await
        .unwrap();
    assert_eq!(created.len(), 2);
    assert!(!created[&a].as_ref().unwrap().topic_id.is_nil());
    assert_eq!(created[&b].as_ref().unwrap().partitions, 1);
    let again = admin.create_topics(&[topic_a], false).await.unwrap();
    assert_eq!(kafka_error(&again[&a]), ResponseError::TopicAlreadyExists);

    // The created topic reaches the broker's metadata a moment later.
    eventually("the created topic to be described", || async {
        admin
            .describe_topics(std::slice::from_ref(&a))
            .await
            .is_ok_and(|described| described[&a].is_ok())
    })
    .await;
    let described = admin
        .describe_topics(&[a.clone(), missing.clone()])
        .await
        .unwrap();
    let description = described[&a].as_ref().unwrap();
    assert_eq!(description.topic_id, created[&a].as_ref().unwrap().topic_id);
    assert_eq!(description.partitions.len(), 3);
    for partition in &description.partitions {
        assert_eq!(
            (partition.leader, &partition.replicas, &partition.isr),
            (1, &vec![1], &vec![1])
        );
    }
    assert_eq!(
        kafka_error(&described[&missing]),
        ResponseError::UnknownTopicOrPartition
    );
    let listed = admin.list_topics().await.unwrap();
    assert!(listed.contains(&a) && listed.contains(&b), "{listed:?}");

    let grown = admin
        .create_partitions(&BTreeMap::from([(a.clone(), 5)]), false)
        .await
        .unwrap();
    grown[&a].as_ref().unwrap();
    let shrunk = admin
        .create_partitions(&BTreeMap::from([(a.clone(), 2)]), false)
        .await
        .unwrap();
    assert_eq!(kafka_error(&shrunk[&a]), ResponseError::InvalidPartitions);
    eventually(&format!("{a} has 5 partitions"), || async {
        let described = admin
            .describe_topics(std::slice::from_ref(&a))
            .await
            .unwrap();
        described[&a]
            .as_ref()
            .is_ok_and(|d| d.partitions.len() == 5)
    })
    .await;

    let deleted = admin
        .delete_topics(&[a.clone(), b.clone(), missing.clone()])
        .await
        .unwrap();
    deleted[&a].as_ref().unwrap();
    deleted[&b].as_ref().unwrap();
    assert_eq!(
        kafka_error(&deleted[&missing]),
        ResponseError::UnknownTopicOrPartition
    );
    eventually(&format!("{a} is gone"), || async {
        let described = admin
            .describe_topics(std::slice::from_ref(&a))
            .await
            .unwrap();
        described[&a].is_err()
    })
    .await;
}

/// Waits until `check` holds (metadata reaches brokers asynchronously), failing after 30 s.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(Instant::now() < deadline, "not true within 30 s: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn entry<'a>(entries: &'a [ConfigEntry], name: &str) -> &'a ConfigEntry {
    entries
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no config {name}"))
}

async fn configs(admin: &AdminClient, prefix: &str) {
    let topic = format!("{prefix}-configs");
    let mut new_topic = NewTopic::new(&topic);
    new_topic
        .configs
        .insert("retention.ms".into(), "123456".into());
    admin.create_topics(&[new_topic], false).await.unwrap()[&topic]
        .as_ref()
        .unwrap();
    eventually(&format!("{topic} is visible"), || async {
        let described = admin
            .describe_topics(std::slice::from_ref(&topic))
            .await
            .unwrap();
        described[&topic].is_ok()
    })
    .await;
    let resource = ConfigResource::topic(&topic);
    let broker = ConfigResource::broker(1);
    let described = admin
        .describe_configs(&[resource.clone(), broker.clone()])
        .await
        .unwrap();
    let topic_configs = described[&resource].as_ref().unwrap();
    let retention = entry(topic_configs, "retention.ms");
    assert_eq!(retention.value.as_deref(), Some("123456"));
    assert_eq!(retention.source, ConfigSource::DynamicTopic);
    assert_eq!(
        entry(topic_configs, "cleanup.policy").source,
        ConfigSource::Default
    );
    let broker_configs = described[&broker].as_ref().unwrap();
    assert_eq!(
        entry(broker_configs, "num.io.threads").source,
        ConfigSource::StaticBroker
    );

    let changes = BTreeMap::from([(
        resource.clone(),
        vec![
            AlterConfigOp::Set {
                name: "segment.ms".into(),
                value: "7200000".into(),
            },
            AlterConfigOp::Delete {
                name: "retention.ms".into(),
            },
        ],
    )]);
    admin
        .incremental_alter_configs(&changes, true)
        .await
        .unwrap()[&resource]
        .as_ref()
        .unwrap();
    let unchanged = admin
        .describe_configs(std::slice::from_ref(&resource))
        .await
        .unwrap();
    assert_eq!(
        entry(unchanged[&resource].as_ref().unwrap(), "retention.ms").source,
        ConfigSource::DynamicTopic
    );
    admin
        .incremental_alter_configs(&changes, false)
        .await
        .unwrap()[&resource]
        .as_ref()
        .unwrap();
    // The broker applies the change from the metadata log a moment after the controller
    // accepted it (longer on a loaded machine): described again for up to 30 s.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let altered = loop {
        let described = admin
            .describe_configs(std::slice::from_ref(&resource))
            .await
            .unwrap();
        let applied = entry(described[&resource].as_ref().unwrap(), "retention.ms").source
            == ConfigSource::Default;
        if applied || tokio::time::Instant::now() > deadline {
            break described;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let altered = altered[&resource].as_ref().unwrap();
    assert_eq!(entry(altered, "retention.ms").source, ConfigSource::Default);
    assert_eq!(
        entry(altered, "segment.ms").value.as_deref(),
        Some("7200000")
    );
    assert_eq!(
        entry(altered, "segment.ms").source,
        ConfigSource::DynamicTopic
    );
    let bad = BTreeMap::from([(
        resource.clone(),
        vec![AlterConfigOp::Set {
            name: "retention.ms".into(),
            value: "soon".into(),
        }],
    )]);
    let refused = admin.incremental_alter_configs(&bad, false).await.unwrap();
    assert_eq!(
        kafka_error(&refused[&resource]),
        ResponseError::InvalidConfig
    );

    let reassign = admin
        .alter_partition_reassignments(&[ReassignmentChange {
            topic: topic.clone(),
            partition: 0,
            replicas: Some(vec![1]),
        }])
        .await
        .unwrap();
    reassign[&(topic.clone(), 0)].as_ref().unwrap();
    let ongoing = admin.list_partition_reassignments(None).await.unwrap();
    assert!(ongoing.iter().all(|r| r.replicas == vec![1]), "{ongoing:?}");
    let to_missing = admin
        .alter_partition_reassignments(&[ReassignmentChange {
            topic: topic.clone(),
            partition: 0,
            replicas: Some(vec![42]),
        }])
        .await
        .unwrap();
    assert!(to_missing[&(topic.clone(), 0)].is_err());
    admin.delete_topics(&[topic]).await.unwrap();
}

async fn acls(admin: &AdminClient, prefix: &str) {
    let principal = format!("User:{prefix}-acl-user");
    let read = AclBinding {
        resource_type: AclResourceType::Topic,
        resource_name: format!("{prefix}-acl-"),
        pattern_type: PatternType::Prefixed,
        principal: principal.clone(),
        host: "*".into(),
        operation: AclOperation::Read,
        permission: AclPermission::Allow,
    };
    let describe = AclBinding {
        operation: AclOperation::Describe,
        ..read.clone()
    };
    let created = admin
        .create_acls(&[read.clone(), describe.clone()])
        .await
        .unwrap();
    assert!(created.iter().all(Result::is_ok), "{created:?}");
    let filter = AclBindingFilter::for_principal(&principal);
    let mut expected = vec![read.clone(), describe.clone()];
    expected.sort();
    // ACL changes reach the broker's authorizer asynchronously, through the metadata log.
    let described = |wanted: Vec<AclBinding>| {
        let filter = filter.clone();
        async move {
            let mut found = admin.describe_acls(&filter).await.unwrap();
            found.sort();
            found == wanted
        }
    };
    eventually("both ACLs are described", || described(expected.clone())).await;
    let deleted = admin.delete_acls(&[read.to_filter()]).await.unwrap();
    assert_eq!(deleted[0].as_ref().unwrap(), &vec![read.clone()]);
    eventually("only the Describe ACL remains", || {
        described(vec![describe.clone()])
    })
    .await;
    admin
        .delete_acls(std::slice::from_ref(&filter))
        .await
        .unwrap();
    eventually("no ACL remains", || described(Vec::new())).await;
}

async fn scram_credentials(admin: &AdminClient, prefix: &str) {
    let user = format!("{prefix}-scram-user");
    let upsert = ScramCredentialChange::Upsert {
        user: user.clone(),
        password: "p4ssw0rd".into(),
        iterations: 4096,
    };
    admin.alter_user_scram_credentials(&[upsert]).await.unwrap()[&user]
        .as_ref()
        .unwrap();
    let expected = vec![ScramCredentialInfo {
        mechanism: ScramMechanism::ScramSha512,
        iterations: 4096,
    }];
    eventually("the credential is described", || async {
        let described = admin
            .describe_user_scram_credentials(Some(std::slice::from_ref(&user)))
            .await
            .unwrap();
        described[&user].as_ref().ok() == Some(&expected)
    })
    .await;
    let all = admin.describe_user_scram_credentials(None).await.unwrap();
    assert!(
        all.contains_key(&user) && all.contains_key(ADMIN_USER),
        "{all:?}"
    );
    let too_few = ScramCredentialChange::Upsert {
        user: user.clone(),
        password: "x".into(),
        iterations: 10,
    };
    assert_eq!(
        admin
            .alter_user_scram_credentials(&[too_few])
            .await
            .unwrap_err()
            .reason(),
        "KafkaInvalidRequest"
    );
    let delete = ScramCredentialChange::Delete {
        user: user.clone(),
        mechanism: ScramMechanism::ScramSha512,
    };
    admin.alter_user_scram_credentials(&[delete]).await.unwrap()[&user]
        .as_ref()
        .unwrap();
    eventually("the deleted credential is not found", || async {
        let gone = admin
            .describe_user_scram_credentials(Some(std::slice::from_ref(&user)))
            .await
            .unwrap();
        gone[&user].is_err()
    })
    .await;
    let gone = admin
        .describe_user_scram_credentials(Some(std::slice::from_ref(&user)))
        .await
        .unwrap();
    assert_eq!(kafka_error(&gone[&user]), ResponseError::ResourceNotFound);
}

async fn quotas(admin: &AdminClient, prefix: &str) {
    let user = format!("{prefix}-quota-user");
    let entity = QuotaEntity::from([("user".to_owned(), Some(user.clone()))]);
    let filter = [QuotaFilterComponent {
        entity_type: "user".into(),
        matching: QuotaMatch::Exact(user.clone()),
    }];
    let set = QuotaAlteration {
        entity: entity.clone(),
        changes: BTreeMap::from([
            ("producer_byte_rate".to_owned(), Some(1024.0)),
            ("request_percentage".to_owned(), Some(55.0)),
        ]),
    };
    let results = admin.alter_client_quotas(&[set], false).await.unwrap();
    assert!(results[0].is_ok(), "{results:?}");
    let expected = vec![(
        entity.clone(),
        BTreeMap::from([
            ("producer_byte_rate".to_owned(), 1024.0),
            ("request_percentage".to_owned(), 55.0),
        ]),
    )];
    eventually("the quota is described", || async {
        admin.describe_client_quotas(&filter, true).await.unwrap() == expected
    })
    .await;
    let remove = QuotaAlteration {
        entity,
        changes: BTreeMap::from([
            ("producer_byte_rate".to_owned(), None),
            ("request_percentage".to_owned(), None),
        ]),
    };
    admin.alter_client_quotas(&[remove], false).await.unwrap()[0]
        .as_ref()
        .unwrap();
    eventually("the quota is removed", || async {
        admin
            .describe_client_quotas(&filter, true)
            .await
            .unwrap()
            .is_empty()
    })
    .await;
}

async fn quorum_and_features(admin: &AdminClient) {
    let quorum = admin.describe_metadata_quorum().await.unwrap();
    assert_eq!(quorum.leader_id, 1);
    assert_eq!(
        quorum
            .voters
            .iter()
            .map(|v| v.replica_id)
            .collect::<Vec<_>>(),
        vec![1]
    );
    assert!(quorum.high_watermark > 0);
    let features = admin.describe_features().await.unwrap();
    let level = features.finalized["metadata.version"];
    let (min, max) = features.supported["metadata.version"];
    assert!(min <= level && level <= max, "{features:?}");
    let same = FeatureUpdate {
        feature: "metadata.version".into(),
        max_version_level: level,
        upgrade_type: FeatureUpgradeType::Upgrade,
    };
    admin.update_features(&[same], true).await.unwrap()["metadata.version"]
        .as_ref()
        .unwrap();
    let beyond = FeatureUpdate {
        feature: "metadata.version".into(),
        max_version_level: max + 1,
        upgrade_type: FeatureUpgradeType::Upgrade,
    };
    let refused = admin.update_features(&[beyond], true).await;
    assert!(
        refused
            .as_ref()
            .map_or(true, |results| results["metadata.version"].is_err()),
        "{refused:?}"
    );
    // The combined node is the one registered broker, unfenced; unregistering a node that
    // never was registered is no error.
    let registered = admin.registered_brokers().await.unwrap();
    assert_eq!(registered, BTreeMap::from([(1, false)]));
    admin.unregister_broker(4711).await.unwrap();
}

async fn every_operation(listener: &str) {
    let admin = admin(listener);
    let prefix = format!("ops-{listener}");
    topics_and_partitions(&admin, &prefix).await;
    configs(&admin, &prefix).await;
    acls(&admin, &prefix).await;
    scram_credentials(&admin, &prefix).await;
    quotas(&admin, &prefix).await;
    quorum_and_features(&admin).await;
}

#[tokio::test]
async fn a_node_describes_its_own_configuration_on_its_controller_listener() {
    let admin = AdminClient::new(AdminConfig::plaintext(broker().controller_listener())).unwrap();
    let entries = admin.describe_own_configs(1).await.unwrap();
    let roles = entry(&entries, "process.roles");
    assert_eq!(roles.value.as_deref(), Some("broker,controller"));
    assert_eq!(roles.source, ConfigSource::StaticBroker);
    assert!(entry(&entries, "node.id").read_only);
}

#[tokio::test]
async fn every_operation_works_on_the_plaintext_listener() {
    every_operation("plain").await;
}

#[tokio::test]
async fn every_operation_works_on_the_scram_listener() {
    every_operation("scram").await;
}

#[tokio::test]
async fn every_operation_works_on_the_mtls_listener() {
    every_operation("tls").await;
}

/// rdkafka settings for the SCRAM listener as `user`.
fn rdkafka_scram(user: &str, password: &str) -> rdkafka::ClientConfig {
    let mut config = rdkafka::ClientConfig::new();
    config
        .set(
            "bootstrap.servers",
            &broker().listener("scram").unwrap().bootstrap,
        )
        .set("security.protocol", "SASL_PLAINTEXT")
        .set("sasl.mechanism", "SCRAM-SHA-512")
        .set("sasl.username", user)
        .set("sasl.password", password)
        .set("message.timeout.ms", "5000");
    config
}

/// Whether `user` can fetch metadata over the SCRAM listener with rdkafka.
async fn rdkafka_authenticates(user: &str, password: &str) -> bool {
    let config = rdkafka_scram(user, password);
    tokio::task::spawn_blocking(move || {
        use rdkafka::producer::Producer;
        let producer: rdkafka::producer::BaseProducer = config.create().unwrap();
        producer
            .client()
            .fetch_metadata(None, Duration::from_secs(5))
            .is_ok()
    })
    .await
    .unwrap()
}

/// Produces one record to `topic` as `user` with rdkafka; the delivery error, if any.
async fn rdkafka_produce(user: &str, password: &str, topic: &str) -> Result<(), String> {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = rdkafka_scram(user, password).create().unwrap();
    producer
        .send(
            FutureRecord::<(), str>::to(topic).payload("hello"),
            Duration::from_secs(5),
        )
        .await
        .map(|_| ())
        .map_err(|(error, _)| error.to_string())
}

#[tokio::test]
async fn a_scram_user_created_by_the_client_authenticates_with_rdkafka() {
    let admin = admin("plain");
    let user = "kafka-rd-scram-user";
    assert!(!rdkafka_authenticates(user, "rd-password").await);
    let upsert = ScramCredentialChange::Upsert {
        user: user.into(),
        password: "rd-password".into(),
        iterations: 8192,
    };
    admin.alter_user_scram_credentials(&[upsert]).await.unwrap()[user]
        .as_ref()
        .unwrap();
    eventually("rdkafka authenticates as the new user", || {
        rdkafka_authenticates(user, "rd-password")
    })
    .await;
    assert!(!rdkafka_authenticates(user, "another-password").await);
}

#[tokio::test]
async fn an_acl_created_by_the_client_is_enforced_for_rdkafka() {
    let admin = admin("scram");
    let (user, password, topic) = ("kafka-rd-acl-user", "acl-password", "kafka-rd-acl-topic");
    let upsert = ScramCredentialChange::Upsert {
        user: user.into(),
        password: password.into(),
        iterations: 4096,
    };
    admin.alter_user_scram_credentials(&[upsert]).await.unwrap()[user]
        .as_ref()
        .unwrap();
    admin
        .create_topics(&[NewTopic::new(topic)], false)
        .await
        .unwrap()[topic]
        .as_ref()
        .unwrap();
    eventually("rdkafka authenticates as the ACL user", || {
        rdkafka_authenticates(user, password)
    })
    .await;
    let denied = rdkafka_produce(user, password, topic).await.unwrap_err();
    assert!(denied.contains("uthoriz"), "{denied}");

    let bindings: Vec<AclBinding> = [AclOperation::Write, AclOperation::Describe]
        .into_iter()
        .map(|operation| AclBinding {
            resource_type: AclResourceType::Topic,
            resource_name: topic.into(),
            pattern_type: PatternType::Literal,
            principal: format!("User:{user}"),
            host: "*".into(),
            operation,
            permission: AclPermission::Allow,
        })
        .collect();
    let created = admin.create_acls(&bindings).await.unwrap();
    assert!(created.iter().all(Result::is_ok), "{created:?}");
    eventually("rdkafka may write once the ACL exists", || async {
        rdkafka_produce(user, password, topic).await.is_ok()
    })
    .await;

    let deleted = admin
        .delete_acls(&[AclBindingFilter::for_principal(format!("User:{user}"))])
        .await
        .unwrap();
    assert_eq!(deleted[0].as_ref().unwrap().len(), 2);
    eventually("rdkafka is denied again once the ACL is gone", || async {
        rdkafka_produce(user, password, topic).await.is_err()
    })
    .await;
}

#[tokio::test]
async fn with_ip_addresses_only_a_host_name_fails_at_once_and_an_address_connects() {
    let mut config = AdminConfig::plaintext("my-cluster-kafka-bootstrap.kafka.svc:9091");
    config.host_resolution = HostResolution::IpAddressesOnly;
    let admin = AdminClient::new(config).unwrap();
    let error = admin.describe_cluster().await.unwrap_err();
    assert!(
        matches!(error, AdminError::HostNameNotLookedUp { .. }),
        "{error}"
    );
    assert!(error.is_connection() && !error.is_retriable());
    // The local broker's bootstrap address is an IP address: it is reached.
    let mut config = self::config("plain");
    config.host_resolution = HostResolution::IpAddressesOnly;
    let bootstrap = config.bootstrap_servers[0].clone();
    assert!(
        bootstrap
            .rsplit_once(':')
            .unwrap()
            .0
            .parse::<std::net::IpAddr>()
            .is_ok(),
        "{bootstrap}"
    );
    AdminClient::new(config)
        .unwrap()
        .list_topics()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_unreachable_broker_gives_a_timeout_within_the_bound() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refusing = closed.local_addr().unwrap().to_string();
    drop(closed);
    // Accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_address = silent.local_addr().unwrap().to_string();
    let _accepting = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    for address in [refusing, silent_address] {
        let mut config = AdminConfig::plaintext(&address);
        config.request_timeout = Duration::from_millis(500);
        config.operation_timeout = Duration::from_secs(2);
        let admin = AdminClient::new(config).unwrap();
        let started = Instant::now();
        let error = admin.describe_cluster().await.unwrap_err();
        let elapsed = started.elapsed();
        assert_eq!(error.reason(), "KafkaTimeout", "{address}: {error}");
        assert!(error.is_retriable());
        assert!(
            elapsed < Duration::from_millis(2500),
            "{address}: took {elapsed:?}"
        );
    }
}

#[tokio::test]
async fn a_wrong_sasl_password_gives_an_authentication_error() {
    let mut config = config("scram");
    let Some(SaslConfig::Password(sasl)) = config.sasl.as_mut() else {
        panic!("the scram listener's settings have a password");
    };
    sasl.password = "not-the-password".into();
    let admin = AdminClient::new(config).unwrap();
    let started = Instant::now();
    let error = admin.describe_cluster().await.unwrap_err();
    assert_eq!(error.reason(), "KafkaAuthenticationFailed", "{error}");
    assert!(!error.is_retriable());
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn the_strimzi_variables_configure_mtls_and_scram() {
    let dir = tempfile::tempdir().unwrap();
    let certificate = broker().client_certificate(TLS_ADMIN_USER).unwrap();
    let truststore = dir.path().join("ca.crt");
    let keystore = dir.path().join("user.pem");
    std::fs::write(&truststore, broker().ca_pem()).unwrap();
    std::fs::write(
        &keystore,
        format!("{}{}", certificate.cert, certificate.key),
    )
    .unwrap();
    let tls = [
        (
            "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
            broker().listener("tls").unwrap().bootstrap.clone(),
        ),
        ("STRIMZI_TLS_ENABLED", "true".to_owned()),
        (
            "STRIMZI_TRUSTSTORE_LOCATION",
            truststore.display().to_string(),
        ),
        ("STRIMZI_KEYSTORE_LOCATION", keystore.display().to_string()),
    ];
    let scram = [
        (
            "STRIMZI_KAFKA_BOOTSTRAP_SERVERS",
            broker().listener("scram").unwrap().bootstrap.clone(),
        ),
        ("STRIMZI_SECURITY_PROTOCOL", "SASL_PLAINTEXT".to_owned()),
        ("STRIMZI_SASL_MECHANISM", "scram-sha-512".to_owned()),
        ("STRIMZI_SASL_USERNAME", ADMIN_USER.to_owned()),
        ("STRIMZI_SASL_PASSWORD", ADMIN_PASSWORD.to_owned()),
    ];
    for variables in [&tls[..], &scram[..]] {
        let config = AdminConfig::from_lookup(|name| {
            variables
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.clone())
        })
        .unwrap();
        let admin = AdminClient::new(config).unwrap();
        assert_eq!(admin.describe_cluster().await.unwrap().brokers.len(), 1);
    }
}

/// A TCP proxy in front of the broker whose connections can be cut (fault injection).
struct CuttableProxy {
    address: String,
    links: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    _accept: tokio::task::JoinHandle<()>,
}

impl CuttableProxy {
    async fn start(target: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let links = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let accepted = links.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let target = target.clone();
                accepted.lock().unwrap().push(tokio::spawn(async move {
                    let mut server = tokio::net::TcpStream::connect(target).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }));
            }
        });
        Self {
            address,
            links,
            _accept: accept,
        }
    }

    /// Closes every proxied connection.
    fn cut(&self) -> usize {
        let mut links = self.links.lock().unwrap();
        links.iter().for_each(tokio::task::JoinHandle::abort);
        let cut = links.len();
        links.clear();
        cut
    }
}

#[tokio::test]
async fn the_client_reconnects_after_a_connection_breaks() {
    let proxy = CuttableProxy::start(broker().listener("plain").unwrap().bootstrap.clone()).await;
    let admin = AdminClient::new(AdminConfig::plaintext(&proxy.address)).unwrap();
    admin.list_topics().await.unwrap();
    assert_eq!(proxy.cut(), 1);
    // The broken connection is noticed and replaced (by one to an advertised address).
    admin.list_topics().await.unwrap();
    assert_eq!(admin.describe_cluster().await.unwrap().brokers.len(), 1);
}

#[tokio::test]
async fn a_broker_certificate_from_another_ca_is_refused() {
    let other_ca = strimzi_tests::certs::TestCa::new("another-ca").unwrap();
    let mut config = config("tls");
    if let Some(tls) = config.tls.as_mut() {
        tls.ca_pem = other_ca.cert_pem();
    }
    let started = Instant::now();
    let error = AdminClient::new(config)
        .unwrap()
        .describe_cluster()
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "KafkaTlsError", "{error}");
    assert!(error.to_string().contains("UnknownIssuer"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_handshake_reads_the_certificate_a_listener_serves() {
    let tls = &broker().listener("tls").unwrap().bootstrap;
    let served = admin("tls").served_certificate(tls).await.unwrap();
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let expected = CertificateDer::from_pem_slice(broker().server_cert_pem().as_bytes()).unwrap();
    assert_eq!(served, expected.as_ref());
    // Whoever signed it: a client trusting another CA reads it too.
    let mut other_trust = config("tls");
    if let Some(tls) = other_trust.tls.as_mut() {
        tls.ca_pem = strimzi_tests::certs::TestCa::new("another-ca")
            .unwrap()
            .cert_pem();
    }
    let served = AdminClient::new(other_trust)
        .unwrap()
        .served_certificate(tls)
        .await
        .unwrap();
    assert_eq!(served, expected.as_ref());
    // Without TLS settings there is nothing to read with, and the plaintext listener fails
    // the handshake.
    let plain = &broker().listener("plain").unwrap().bootstrap;
    let error = admin("plain").served_certificate(plain).await.unwrap_err();
    assert_eq!(error.reason(), "KafkaTlsError", "{error}");
    let error = admin("tls").served_certificate(plain).await.unwrap_err();
    assert_eq!(error.reason(), "KafkaTlsError", "{error}");
}

#[tokio::test]
async fn a_listener_with_client_authentication_accepts_only_certificates_it_trusts() {
    let tls = &broker().listener("tls").unwrap().bootstrap;
    admin("tls").client_certificate_accepted(tls).await.unwrap();
    // A certificate of another CA is refused, whatever the client trusts.
    let other_ca = strimzi_tests::certs::TestCa::new("another-ca").unwrap();
    let stranger = other_ca.client("stranger", None).unwrap();
    let mut config = config("tls");
    if let Some(tls) = config.tls.as_mut() {
        tls.ca_pem = other_ca.cert_pem();
        tls.client_identity_pem = Some(format!("{}{}", stranger.cert, stranger.key));
    }
    let error = AdminClient::new(config)
        .unwrap()
        .client_certificate_accepted(tls)
        .await
        .unwrap_err();
    assert!(
        matches!(error.reason(), "KafkaTlsError" | "KafkaConnectionError"),
        "{error}"
    );
    let plain = &broker().listener("plain").unwrap().bootstrap;
    let error = admin("plain")
        .client_certificate_accepted(plain)
        .await
        .unwrap_err();
    assert_eq!(error.reason(), "KafkaTlsError", "{error}");
}

#[tokio::test]
async fn replica_sizes_come_from_the_brokers_log_directories() {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let admin = admin("plain");
    let mut topic = NewTopic::new("replica-sizes");
    topic.partitions = Some(2);
    topic.replication_factor = Some(1);
    let created = admin.create_topics(&[topic], false).await.unwrap();
    assert!(created.values().all(Result::is_ok), "{created:?}");
    let producer: FutureProducer = rdkafka::ClientConfig::new()
        .set(
            "bootstrap.servers",
            &broker().listener("plain").unwrap().bootstrap,
        )
        .create()
        .unwrap();
    let value = vec![b'x'; 10_000];
    for _ in 0..20 {
        producer
            .send(
                FutureRecord::<(), [u8]>::to("replica-sizes")
                    .partition(0)
                    .payload(&value),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(error, _)| error.to_string())
            .unwrap();
    }
    let size = |replicas: &[strimzi_operator_common::kafka::ReplicaLogSize], partition: i32| {
        replicas
            .iter()
            .find(|r| r.topic == "replica-sizes" && r.partition == partition)
            .map(|r| (r.size_bytes, r.log_dir.clone(), r.future))
    };
    let replicas = admin.describe_replica_sizes(1).await.unwrap();
    let (written, log_dir, future) = size(&replicas, 0).expect("partition 0 is described");
    assert!(written >= 200_000, "{written} bytes");
    assert!(!log_dir.is_empty());
    assert!(!future);
    assert_eq!(size(&replicas, 1).map(|(bytes, _, _)| bytes), Some(0));
}
