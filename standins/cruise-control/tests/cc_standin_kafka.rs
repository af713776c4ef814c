//! The stand-in against real Kafka brokers of the test environment:
//!
//! * one broker over **mutual TLS** with certificates mounted as in the pod (the stand-in's
//!   certificate, the cluster CA): windows from its own sampling, the sample store topics,
//!   proposals on a single broker, and the executor's admin calls (a reassignment, throttles
//!   set and removed) as far as one broker allows;
//! * a **three-node cluster** (plaintext): `remove_broker`, `add_broker`, a replication
//!   factor change and a rebalance that really move replicas, through our operator's client.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use strimzi_cruise_control_standin::executor::{self, ExecutionOptions};
use strimzi_cruise_control_standin::model::{Movement, Proposal};
use strimzi_cruise_control_standin::service::{Execution, StandIn, TaskStatus, UserTask, now_ms};
use strimzi_operator_common::cruise_control::{
    Credentials, CruiseControlClient, CruiseControlError, ProposalAnswer, ProposalOptions,
    ProposalRequest, ProposalScope,
};
use strimzi_operator_common::http_client::Server;
use strimzi_operator_common::kafka::{
    AdminClient, AdminConfig, ConfigResource, HostResolution, KafkaAdmin, NewTopic,
};
use strimzi_tests::certs::TestCa;
use strimzi_tests::kafka::{KafkaBroker, KafkaCluster, TLS_ADMIN_USER};
use strimzi_tests::layout::log_dir;
use support::{PASSWORD, Pod, USER, eventually};

/// Short windows, one-partition sample topics, quick progress checks.
const FAST: [(&str, &str); 6] = [
    ("partition.metrics.window.ms", "2000"),
    ("metric.sampling.interval.ms", "500"),
    ("execution.progress.check.interval.ms", "500"),
    ("partition.sample.store.topic.partition.count", "1"),
    ("broker.sample.store.topic.partition.count", "1"),
    ("webserver.ssl.enable", "false"),
];

fn plain_pod(brokers: &[i32], bootstrap: &str) -> Pod {
    let mut pod = Pod::new(
        TestCa::new("cluster-ca").unwrap(),
        brokers,
        &FAST,
        bootstrap,
    );
    pod.env
        .insert("STRIMZI_CC_API_SSL_ENABLED".into(), "false".into());
    pod
}

async fn serve(
    standin: Arc<StandIn>,
) -> (
    CruiseControlClient,
    tokio::task::JoinHandle<Result<(), String>>,
) {
    let (port, server) = support::serve(standin).await;
    let client = CruiseControlClient::new(
        Server {
            host: "127.0.0.1".into(),
            port,
            tls: None,
            host_resolution: HostResolution::System,
        },
        Some(Credentials {
            user: USER.into(),
            password: PASSWORD.into(),
        }),
        Duration::from_secs(60),
    );
    (client, server)
}

/// A proposal once the load monitor has a window.
async fn propose(
    client: &CruiseControlClient,
    request: &ProposalRequest,
    dry_run: bool,
) -> (String, i64) {
    let answer = eventually("a proposal", 120, async || {
        match client.request_proposal(request, dry_run).await {
            Err(CruiseControlError::NotEnoughData { .. }) => None,
            other => Some(other.unwrap()),
        }
    })
    .await;
    match answer {
        ProposalAnswer::Ready { task_id, result } => (
            task_id.unwrap(),
            result.summary.num_replica_movements.unwrap(),
        ),
        other => panic!("{other:?}"),
    }
}

async fn completed(client: &CruiseControlClient, task: &str) {
    let status = eventually("the execution", 240, async || {
        let task = client.user_task(task).await.unwrap().unwrap();
        matches!(
            task.status,
            strimzi_operator_common::cruise_control::TaskStatus::Completed
                | strimzi_operator_common::cruise_control::TaskStatus::CompletedWithError
        )
        .then_some(task.status)
    })
    .await;
    assert_eq!(
        status,
        strimzi_operator_common::cruise_control::TaskStatus::Completed
    );
}

fn scope(scope: ProposalScope) -> ProposalRequest {
    ProposalRequest {
        scope,
        options: ProposalOptions::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_broker_over_mutual_tls() {
    let logs = log_dir("cc-standin-tls").unwrap();
    let broker = tokio::task::spawn_blocking(move || KafkaBroker::start(&logs))
        .await
        .unwrap()
        .unwrap_or_else(|error| panic!("{error}"));
    let bootstrap = broker.listener("tls").unwrap().bootstrap.clone();
    let pod = plain_pod(&[1], &bootstrap);
    // The stand-in's certificate is one the broker's CA signed; the cluster CA is the broker's.
    let identity = broker.client_certificate(TLS_ADMIN_USER).unwrap();
    std::fs::write(
        pod.paths.cc_certs_dir.join("cruise-control.crt"),
        &identity.cert,
    )
    .unwrap();
    std::fs::write(
        pod.paths.cc_certs_dir.join("cruise-control.key"),
        &identity.key,
    )
    .unwrap();
    std::fs::write(pod.paths.cluster_ca_dir.join("ca.crt"), broker.ca_pem()).unwrap();
    let settings = pod.load().unwrap();
    let admin = Arc::new(AdminClient::new(settings.kafka.clone()).unwrap());
    let standin = StandIn::new(settings, admin.clone());
    let (client, server) = serve(standin.clone()).await;

    // The sampler reaches Kafka over TLS and creates the sample store topics.
    eventually("the sample store topics", 120, async || {
        let topics = admin.list_topics().await.ok()?;
        topics
            .contains(&"strimzi.cruisecontrol.modeltrainingsamples".to_owned())
            .then_some(())
    })
    .await;
    let created = admin
        .create_topics(
            &[NewTopic {
                partitions: Some(3),
                replication_factor: Some(1),
                ..NewTopic::new("orders")
            }],
            false,
        )
        .await
        .unwrap();
    assert!(created.values().all(Result::is_ok), "{created:?}");
    let full = scope(ProposalScope::Full {
        rebalance_disk: false,
        concurrent_intra_broker_partition_movements: None,
    });
    let (_, moves) = propose(&client, &full, true).await;
    assert_eq!(moves, 0, "one broker: nothing to move");
    // Removing the only broker cannot be done. Its answer needs valid metrics windows too,
    // which a sampler held back by a loaded machine may not have yet, as Cruise Control's
    // `NotEnoughValidWindowsException`: asked again until the answer is about the broker.
    let remove = scope(ProposalScope::RemoveBrokers(vec![1]));
    let error = eventually(
        "an answer to removing the only broker",
        120,
        async || match client.request_proposal(&remove, true).await {
            Err(CruiseControlError::NotEnoughData { .. }) => None,
            other => Some(other.unwrap_err()),
        },
    )
    .await;
    assert!(error.to_string().contains("only 0 can take"), "{error}");

    // The executor's calls against the broker: a reassignment onto the same replica and a
    // throttle, set then removed.
    let node = admin.describe_cluster().await.unwrap().brokers[0].id;
    let proposal = Proposal {
        movements: vec![Movement {
            topic: "orders".into(),
            partition: 0,
            old_replicas: vec![node],
            new_replicas: vec![node],
            old_leader: node,
            size_bytes: 0,
        }],
    };
    let id = "e2e-task".to_owned();
    standin.put_task(UserTask {
        id: id.clone(),
        request_url: "POST /kafkacruisecontrol/rebalance?dryrun=false".into(),
        client: "127.0.0.1".into(),
        start_ms: now_ms(),
        status: TaskStatus::InExecution,
        answer: None,
        finished_ms: None,
    });
    assert!(standin.begin_execution(Execution {
        task_id: id.clone(),
        reason: "test (Client: 127.0.0.1, Date: 2026-11-29T00:00:00Z)".into(),
        total: 1,
        finished: 0,
        in_progress: 0,
        total_bytes: 0,
        finished_bytes: 0,
        stop_requested: false,
    }));
    executor::execute(
        standin.clone(),
        id.clone(),
        proposal,
        ExecutionOptions {
            movements_per_broker: 5,
            throttle: Some(10_000_000),
        },
    )
    .await;
    assert_eq!(standin.task(&id).unwrap().status, TaskStatus::Completed);
    assert!(standin.execution().is_none());
    let configs = admin
        .describe_configs(&[
            ConfigResource::broker(node),
            ConfigResource::topic("orders"),
        ])
        .await
        .unwrap();
    for (resource, entries) in configs {
        let entries = entries.unwrap();
        let throttled = entries
            .iter()
            .filter(|entry| {
                entry.name.contains("throttled")
                    && entry.value.as_deref().is_some_and(|v| !v.is_empty())
            })
            .filter(|entry| {
                matches!(
                    entry.source,
                    strimzi_operator_common::kafka::ConfigSource::DynamicBroker
                        | strimzi_operator_common::kafka::ConfigSource::DynamicTopic
                )
            })
            .map(|entry| entry.name.clone())
            .collect::<Vec<_>>();
        assert!(
            throttled.is_empty(),
            "throttle left on {resource:?}: {throttled:?}"
        );
    }
    server.abort();
}

/// Produces `count` records of 4 KiB to `topic`; how many were acknowledged.
fn produce(bootstrap: &str, topic: &str, count: usize) -> usize {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let producer: BaseProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .create()
        .unwrap();
    let value = vec![b'x'; 4096];
    for index in 0..count {
        let key = index.to_string();
        let mut record = BaseRecord::to(topic).key(&key).payload(&value);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((_, returned)) => {
                    record = returned;
                    producer.poll(Duration::from_millis(50));
                }
            }
        }
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(60)).unwrap();
    count - producer.in_flight_count() as usize
}

/// The end offset of each partition of `topic`.
async fn end_offsets(bootstrap: &str, topic: &str, partitions: i32) -> Vec<i64> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let bootstrap = bootstrap.to_owned();
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .create()
            .unwrap();
        (0..partitions)
            .map(|partition| {
                consumer
                    .fetch_watermarks(&topic, partition, Duration::from_secs(30))
                    .unwrap()
                    .1
            })
            .collect()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_brokers_really_move_replicas() {
    let logs = log_dir("cc-standin-cluster").unwrap();
    let cluster = tokio::task::spawn_blocking(move || KafkaCluster::start(3, &logs))
        .await
        .unwrap()
        .unwrap_or_else(|error| panic!("{error}"));
    let pod = plain_pod(&[1, 2, 3], cluster.bootstrap());
    let mut settings = pod.load().unwrap();
    // The local cluster speaks plaintext only; everything else is as in the pod.
    settings.kafka = AdminConfig::plaintext(cluster.bootstrap());
    let admin = Arc::new(AdminClient::new(settings.kafka.clone()).unwrap());
    let standin = StandIn::new(settings, admin.clone());
    let (client, server) = serve(standin.clone()).await;
    let created = admin
        .create_topics(
            &[NewTopic {
                partitions: Some(6),
                replication_factor: Some(1),
                ..NewTopic::new("moving")
            }],
            false,
        )
        .await
        .unwrap();
    assert!(created.values().all(Result::is_ok), "{created:?}");
    // `None` while the broker asked has not seen the new topic (UnknownTopicOrPartition).
    let replicas_on = async |broker: i32| -> Option<usize> {
        let topics = admin.describe_topics(&["moving".to_owned()]).await.unwrap();
        let topic = topics["moving"].as_ref().ok()?;
        Some(
            topic
                .partitions
                .iter()
                .filter(|p| p.replicas.contains(&broker))
                .count(),
        )
    };
    eventually("the topic on every broker", 60, async || {
        let on = [
            replicas_on(1).await,
            replicas_on(2).await,
            replicas_on(3).await,
        ];
        (on.into_iter().sum::<Option<usize>>() == Some(6)).then_some(())
    })
    .await;
    // Data to move: 3000 records of 4 KiB (about 12 MiB).
    let bootstrap = cluster.bootstrap().to_owned();
    let produced = tokio::task::spawn_blocking(move || produce(&bootstrap, "moving", 3000))
        .await
        .unwrap();
    assert_eq!(produced, 3000);
    let offsets_before = end_offsets(cluster.bootstrap(), "moving", 6).await;
    assert_eq!(offsets_before.iter().sum::<i64>(), 3000);
    // The sizes reach the model once the brokers report them.
    eventually("replica sizes", 60, async || {
        let described = standin.describe().await.ok()?;
        (described
            .partitions
            .iter()
            .filter(|p| p.topic == "moving")
            .map(|p| p.size_bytes)
            .sum::<u64>()
            > 10 << 20)
            .then_some(())
    })
    .await;

    // Scale-down: every replica off broker 3 (with its data).
    let remove = scope(ProposalScope::RemoveBrokers(vec![3]));
    let answer = eventually("a proposal with data", 120, async || {
        match client.request_proposal(&remove, true).await {
            Err(CruiseControlError::NotEnoughData { .. }) => None,
            other => Some(other.unwrap()),
        }
    })
    .await;
    let ProposalAnswer::Ready { result, .. } = answer else {
        panic!("{answer:?}");
    };
    assert!(
        result.summary.data_to_move_mb.unwrap() >= 2,
        "{:?}",
        result.summary_json
    );
    let (task, moves) = propose(&client, &remove, false).await;
    assert!(moves > 0);
    completed(&client, &task).await;
    // The brokers' metadata follows the controller's shortly after the reassignment ends.
    eventually("no replica on broker 3", 60, async || {
        (replicas_on(3).await == Some(0)).then_some(())
    })
    .await;

    // Scale-up: broker 3 gets its share back.
    let (task, moves) = propose(&client, &scope(ProposalScope::AddBrokers(vec![3])), false).await;
    assert!(moves > 0);
    completed(&client, &task).await;
    eventually("a replica on broker 3", 60, async || {
        (replicas_on(3).await >= Some(1)).then_some(())
    })
    .await;

    // Replication factor 1 -> 2: each partition on two distinct brokers.
    let answer = client
        .change_replication_factor("^moving$", 2)
        .await
        .unwrap();
    let ProposalAnswer::Ready {
        task_id: Some(task),
        ..
    } = answer
    else {
        panic!("{answer:?}");
    };
    completed(&client, &task).await;
    let distinct_replicas = async || -> Vec<usize> {
        let topics = admin.describe_topics(&["moving".to_owned()]).await.unwrap();
        let topic = topics["moving"].as_ref().unwrap();
        topic
            .partitions
            .iter()
            .map(|p| p.replicas.iter().collect::<BTreeSet<_>>().len())
            .collect()
    };
    eventually("two replicas of each partition", 60, async || {
        (distinct_replicas().await == vec![2; 6]).then_some(())
    })
    .await;
    // Balanced by replica counts afterwards: a full rebalance has at most a little to do.
    let full = scope(ProposalScope::Full {
        rebalance_disk: false,
        concurrent_intra_broker_partition_movements: None,
    });
    let (task, _) = propose(&client, &full, false).await;
    completed(&client, &task).await;
    let (_, moves) = propose(&client, &full, true).await;
    assert_eq!(moves, 0, "balanced after the rebalance");
    // Every record is still there, at the same offsets.
    assert_eq!(
        end_offsets(cluster.bootstrap(), "moving", 6).await,
        offsets_before
    );
    server.abort();
}
