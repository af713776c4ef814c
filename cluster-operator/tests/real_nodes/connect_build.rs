//! KafkaConnect's `spec.build` on the real-node environment, as Strimzi 1.2 builds on
//! Kubernetes: a Buildah builder pod (the environment's Buildah image under Strimzi's name)
//! builds `FROM` the Kafka image in the environment's registry, downloads the plugins' `jar`,
//! `tgz`, `zip` and `other` artifacts from a file server inside the node network, checks their
//! checksums, resolves a `maven` artifact in a first stage on the Maven builder image (pushed to
//! the registry, given by `STRIMZI_DEFAULT_MAVEN_BUILDER`) through a Maven repository on that
//! file server, pushes to the registry, and the workers run the pushed image by digest.
//!
//! One cluster for every check: an artifact with a wrong checksum fails the build with a
//! `ConnectBuildFailed` condition; fixed, the build pushes and the worker runs the image, whose
//! plugin (Kafka's FileStream connectors, which the Kafka image leaves off the class path) a
//! KafkaConnector runs; an option unrelated to the build changes the workers without a build;
//! changed artifacts (the connectors now a `maven` artifact) build again and roll the worker,
//! the connector running on what Maven resolved; `strimzi.io/force-rebuild` on the
//! StrimziPodSet builds once more and is removed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::connect::{connector_in_state, named_connect_ready};
use super::env;
use crate::support::fast_start::{fast_start_jvm, http_readiness_probe};
use crate::support::real_nodes::{delete_when_done, small_ephemeral_cluster};
use crate::support::{apply, ready, wait_for_within};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use sha2::{Digest, Sha512};
use strimzi_api::connect::KafkaConnect;
use strimzi_api::pod_set::StrimziPodSet;
use strimzi_tests::nodes::{image_version, images_dir};
use strimzi_tests::process::{Lifetime, ManagedProcess, ProcessSpec};
use strimzi_tests::registry::LocalRegistry;

const CLUSTER: &str = "cb";
const CONNECT: &str = "cb-connect";
/// The worker, the only pod of the Connect cluster.
const WORKER: &str = "cb-connect-connect-0";
/// A build, from the builder pod's start to its push, takes about 100 s on this machine
/// (most of it Buildah's `vfs` copies of the Kafka image); the roll after it comes on top.
const BUILD_WAIT: Duration = Duration::from_secs(600);

/// The plugin artifacts the file server offers, with their SHA-512 sums.
struct Artifacts {
    base_url: String,
    dir: tempfile::TempDir,
}

impl Artifacts {
    /// The URL and SHA-512 sum of artifact `name`.
    fn artifact(&self, name: &str) -> (String, String) {
        let bytes = std::fs::read(self.dir.path().join(name)).unwrap();
        (
            format!("{}/{name}", self.base_url),
            format!("{:x}", Sha512::digest(&bytes)),
        )
    }
}

/// Where the test's KafkaConnect takes Kafka's FileStream connectors from.
#[derive(Clone, Copy)]
enum FileConnectors {
    /// The `connect-file` jar, a `jar` artifact.
    Jar,
    /// The same module as a `maven` artifact (`MAVEN_TEST_ARTIFACT`), resolved with its
    /// dependencies in the Maven builder stage through the file server's Maven repository.
    Maven,
}

/// Writes the artifacts into a folder of their own: Kafka's `connect-file` jar (from the
/// image build's Maven libraries), two versions of a `tgz` plugin, a `zip` and a plain file;
/// and links the image build's Maven repository for the `maven` artifact there as `maven/`.
fn write_artifacts(dir: &Path) {
    std::os::unix::fs::symlink(
        images_dir().join("stages/maven-repo/repository"),
        dir.join("maven"),
    )
    .unwrap();
    let jar = format!("connect-file-{}.jar", image_version("KAFKA_VERSION"));
    let libs = images_dir().join(format!(
        "stages/kafka-dist-{}/libs",
        image_version("KAFKA_VERSION")
    ));
    std::fs::copy(libs.join(&jar), dir.join("connect-file.jar"))
        .unwrap_or_else(|error| panic!("{}: {error}", libs.join(&jar).display()));
    for version in ["v1", "v2"] {
        let content = dir.join(format!("content-{version}"));
        std::fs::create_dir_all(&content).unwrap();
        std::fs::write(content.join("README"), format!("extras {version}\n")).unwrap();
        run(Command::new("tar")
            .arg("-czf")
            .arg(dir.join(format!("extras-{version}.tgz")))
            .arg("-C")
            .arg(&content)
            .arg("README"));
    }
    std::fs::write(dir.join("notes.txt"), "a note\n").unwrap();
    run(Command::new("python3")
        .args(["-m", "zipfile", "-c"])
        .arg(dir.join("notes.zip"))
        .arg(dir.join("notes.txt")));
}

fn run(command: &mut Command) {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{command:?}: {output:?}");
}

/// A file server for `dir` inside the node network, where builder pods reach it at the first
/// node's address; stopped when dropped.
fn file_server(dir: &Path) -> (ManagedProcess, String) {
    let network = env().network().expect("a real-node environment");
    let address = network.node_ip(0);
    let port = network
        .enter(|| {
            std::net::TcpListener::bind((address, 0))
                .and_then(|listener| listener.local_addr())
                .map(|bound| bound.port())
        })
        .unwrap()
        .unwrap();
    let server = ManagedProcess::start(
        &ProcessSpec::new("plugin-files", "python3", env().log_dir())
            .launched_by(network.daemon_prefix())
            .args([
                "-m".to_owned(),
                "http.server".to_owned(),
                port.to_string(),
                format!("--bind={address}"),
                format!("--directory={}", dir.display()),
            ]),
        Lifetime::Tied,
    )
    .unwrap();
    let socket = std::net::SocketAddr::from((address, port));
    server
        .wait_ready(Duration::from_secs(30), || {
            network
                .enter(|| std::net::TcpStream::connect_timeout(&socket, Duration::from_secs(1)))
                .map_err(|error| error.to_string())?
                .map(|_| ())
                .map_err(|error| error.to_string())
        })
        .unwrap();
    (server, format!("http://{socket}"))
}

/// What every version of the test's KafkaConnect shares: where it builds `FROM`, where it
/// pushes, and the artifacts it downloads.
struct BuildSetup {
    client: Client,
    ns: String,
    base: String,
    output: String,
    artifacts: Artifacts,
}

impl BuildSetup {
    /// The KafkaConnect `FROM` the registry's Kafka image, pushing to the registry, with the
    /// `extras` plugin's `tgz` of `extras` and its `zip` checked against `zip_sum`, and the
    /// worker options `extra_config` beside the replication factors of a one-broker cluster.
    fn connect(
        &self,
        file_connectors: FileConnectors,
        extras: &str,
        zip_sum: &str,
        extra_config: Value,
    ) -> Value {
        let artifacts = &self.artifacts;
        let file_connectors = match file_connectors {
            FileConnectors::Jar => {
                let (url, sum) = artifacts.artifact("connect-file.jar");
                json!({"type": "jar", "url": url, "sha512sum": sum})
            }
            FileConnectors::Maven => {
                let mut coordinates = image_version("MAVEN_TEST_ARTIFACT").split(':');
                json!({
                    "type": "maven",
                    "group": coordinates.next(),
                    "artifact": coordinates.next(),
                    "version": coordinates.next(),
                    "mirrors": [{"url": format!("{}/maven/", artifacts.base_url)}],
                })
            }
        };
        let (tgz_url, tgz_sum) = artifacts.artifact(extras);
        let (zip_url, _) = artifacts.artifact("notes.zip");
        let (note_url, note_sum) = artifacts.artifact("notes.txt");
        let mut config = json!({
            "config.storage.replication.factor": -1,
            "offset.storage.replication.factor": -1,
            "status.storage.replication.factor": -1,
        });
        config
            .as_object_mut()
            .unwrap()
            .extend(extra_config.as_object().unwrap().clone());
        json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaConnect",
            "metadata": {
                "name": CONNECT,
                "annotations": {"strimzi.io/use-connector-resources": "true"},
            },
            "spec": {
                "replicas": 1,
                "image": self.base,
                "bootstrapServers": format!("{CLUSTER}-kafka-bootstrap:9092"),
                "groupId": "build-group",
                "configStorageTopic": "build-configs",
                "statusStorageTopic": "build-status",
                "offsetStorageTopic": "build-offsets",
                "jvmOptions": fast_start_jvm("256m", "384m"),
                "readinessProbe": http_readiness_probe(),
                "config": config,
                "build": {
                    "output": {
                        "type": "docker",
                        "image": self.output,
                        // The environment's registry speaks plain HTTP.
                        "additionalBuildOptions": ["--tls-verify=false"],
                        "additionalPushOptions": ["--tls-verify=false"],
                    },
                    "plugins": [
                        {"name": "file-connectors", "artifacts": [file_connectors]},
                        {"name": "extras", "artifacts": [
                            {"type": "tgz", "url": tgz_url, "sha512sum": tgz_sum},
                            {"type": "zip", "url": zip_url, "sha512sum": zip_sum},
                            {"type": "other", "url": note_url, "sha512sum": note_sum,
                             "fileName": "note.txt"},
                        ]},
                    ],
                },
            },
        })
    }

    /// Applies [`Self::connect`].
    async fn apply_connect(
        &self,
        file_connectors: FileConnectors,
        extras: &str,
        zip_sum: &str,
        extra_config: Value,
    ) {
        apply(
            &self.client,
            &self.ns,
            &self.connect(file_connectors, extras, zip_sum, extra_config),
        )
        .await;
    }
}

/// The image the worker runs, once a worker that is not `other_than` runs and is ready.
async fn worker_image(client: &Client, ns: &str, other_than: Option<&str>) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    wait_for_within(
        &pods,
        WORKER,
        "the worker to run a new image",
        BUILD_WAIT,
        |pod| {
            let pod = pod?;
            let image = pod.spec.as_ref()?.containers.first()?.image.clone()?;
            let ready = pod
                .status
                .as_ref()?
                .conditions
                .as_ref()?
                .iter()
                .any(|condition| condition.type_ == "Ready" && condition.status == "True");
            (ready
                && pod.metadata.deletion_timestamp.is_none()
                && Some(image.as_str()) != other_than)
                .then_some(image)
        },
    )
    .await
}

/// Asserts that Connect lists Kafka's FileStream source connector, which only a built plugin
/// brings.
fn assert_file_connectors(connect: &KafkaConnect) {
    let classes: Vec<String> = connect
        .status
        .as_ref()
        .and_then(|status| status.connector_plugins.clone())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|plugin| plugin.class)
        .collect();
    assert!(
        classes
            .iter()
            .any(|class| class == "org.apache.kafka.connect.file.FileStreamSourceConnector"),
        "{classes:?}"
    );
}

/// Pushes the archive `archive` of the images folder to `registry` as `strimzi/<name:tag>` of
/// `image` (a `quay.io/strimzi/...` name); the pushed name.
async fn push(registry: &'static LocalRegistry, archive: &str, image: &str) -> String {
    let archive = images_dir().join(archive);
    let name = image.rsplit_once('/').map(|(_, name)| name).unwrap();
    let repository = format!("strimzi/{name}");
    tokio::task::spawn_blocking(move || registry.push_archive(&archive, &repository))
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_connect_build_pushes_an_image_the_workers_run() {
    let _room = super::room_for(super::Weight::Alone).await;
    let env = env();
    let client = env.client().await;
    let ns = env.namespace("connect-build").await;
    let _deleted = delete_when_done(env, &[&ns]);

    // The Kafka image in the environment's registry, for the build's `FROM`, and the Maven
    // builder image, for the first stage of a build with a `maven` artifact.
    let registry = env
        .real_nodes()
        .expect("a real-node environment")
        .registry();
    let pushed = Instant::now();
    let strimzi = image_version("STRIMZI_VERSION");
    let base = push(
        registry,
        &format!("kafka-{strimzi}-{}.oci.tar", image_version("KAFKA_VERSION")),
        image_version("KAFKA_IMAGE"),
    )
    .await;
    let maven_builder = push(
        registry,
        &format!("registry/maven-builder-{strimzi}.oci.tar"),
        image_version("MAVEN_BUILDER_IMAGE"),
    )
    .await;
    println!(
        "figure: the Kafka and Maven builder images pushed to the environment's registry in {:.1}s",
        pushed.elapsed().as_secs_f64()
    );
    // A build runs past the default timeout (5 minutes) when the machine is busy.
    let _operator = super::operator_with(
        &ns,
        &[
            ("STRIMZI_CONNECT_BUILD_TIMEOUT_MS", "900000"),
            ("STRIMZI_DEFAULT_MAVEN_BUILDER", &maven_builder),
        ],
    );
    for document in small_ephemeral_cluster(CLUSTER, "512m") {
        apply(&client, &ns, &document).await;
    }
    let output = format!("{}/{ns}/connect-build:latest", registry.host());

    let artifacts_dir = tempfile::tempdir().unwrap();
    write_artifacts(artifacts_dir.path());
    let (_files, base_url) = file_server(artifacts_dir.path());
    let setup = BuildSetup {
        client: client.clone(),
        ns: ns.clone(),
        base,
        output,
        artifacts: Artifacts {
            base_url,
            dir: artifacts_dir,
        },
    };
    ready(&client, &ns, CLUSTER).await;

    // A wrong checksum: the build fails, and the condition says so.
    let (_, zip_sum) = setup.artifacts.artifact("notes.zip");
    let wrong_sum = "0".repeat(128);
    let connects: Api<KafkaConnect> = Api::namespaced(client.clone(), &ns);
    setup
        .apply_connect(FileConnectors::Jar, "extras-v1.tgz", &wrong_sum, json!({}))
        .await;
    let failure = wait_for_within(
        &connects,
        CONNECT,
        "the build to fail on the checksum",
        BUILD_WAIT,
        |connect| {
            connect?
                .status
                .as_ref()?
                .conditions
                .as_ref()?
                .iter()
                .find(|condition| condition.reason.as_deref() == Some("ConnectBuildFailed"))
                .cloned()
        },
    )
    .await;
    assert_eq!(failure.r#type.as_deref(), Some("NotReady"), "{failure:?}");
    assert!(
        failure
            .message
            .as_deref()
            .is_some_and(|message| message.contains("exited with code")),
        "{failure:?}"
    );

    // Fixed: the build pushes, and the worker runs the pushed image by digest.
    let built = Instant::now();
    setup
        .apply_connect(FileConnectors::Jar, "extras-v1.tgz", &zip_sum, json!({}))
        .await;
    let first = worker_image(&client, &ns, None).await;
    println!(
        "figure: KafkaConnect spec.build (Buildah, 2 plugins, 4 artifacts) fixed to a ready worker on the built image in {:.1}s",
        built.elapsed().as_secs_f64()
    );
    assert!(
        first.starts_with(&format!("{}/{ns}/connect-build@sha256:", registry.host())),
        "{first}"
    );
    assert_file_connectors(&named_connect_ready(&client, &ns, CONNECT).await);

    // A connector of the built plugin runs.
    apply(
        &client,
        &ns,
        &json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaConnector",
            "metadata": {"name": "lines", "labels": {"strimzi.io/cluster": CONNECT}},
            "spec": {
                "class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasksMax": 1,
                "config": {"file": "/etc/hostname", "topic": "lines"},
            },
        }),
    )
    .await;
    connector_in_state(&client, &ns, "lines", "RUNNING").await;

    // An option unrelated to the build: the worker changes, the image does not.
    setup
        .apply_connect(
            FileConnectors::Jar,
            "extras-v1.tgz",
            &zip_sum,
            json!({"offset.flush.interval.ms": 5000}),
        )
        .await;
    let unrelated = named_connect_ready(&client, &ns, CONNECT).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let worker = pods.get(WORKER).await.unwrap();
    assert_eq!(
        worker.spec.unwrap().containers[0].image.as_deref(),
        Some(first.as_str()),
        "no build for a change outside spec.build"
    );
    assert_eq!(unrelated.metadata.generation, Some(3));

    // Changed artifacts (a new `tgz`, the FileStream connectors as a `maven` artifact): a new
    // build with the Maven builder stage, and the worker rolls onto it; the connector runs on
    // the plugin Maven resolved.
    setup
        .apply_connect(
            FileConnectors::Maven,
            "extras-v2.tgz",
            &zip_sum,
            json!({"offset.flush.interval.ms": 5000}),
        )
        .await;
    let second = worker_image(&client, &ns, Some(&first)).await;
    assert!(second.contains("@sha256:"), "{second}");
    assert_file_connectors(&named_connect_ready(&client, &ns, CONNECT).await);
    connector_in_state(&client, &ns, "lines", "RUNNING").await;

    // A forced rebuild (the annotation on the StrimziPodSet, as Strimzi reads it): once, the
    // annotation removed.
    let pod_sets: Api<StrimziPodSet> = Api::namespaced(client.clone(), &ns);
    let pod_set = format!("{CONNECT}-connect");
    pod_sets
        .patch(
            &pod_set,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"strimzi.io/force-rebuild": "true"}}}),
            ),
        )
        .await
        .unwrap();
    let third = worker_image(&client, &ns, Some(&second)).await;
    named_connect_ready(&client, &ns, CONNECT).await;
    let annotations = pod_sets.get(&pod_set).await.unwrap().annotations().clone();
    assert!(
        !annotations.contains_key("strimzi.io/force-rebuild"),
        "{annotations:?}"
    );
    assert_eq!(
        annotations.get("strimzi.io/connect-build-image"),
        Some(&third),
        "{annotations:?}"
    );
    let worker = pods.get(WORKER).await.unwrap();
    assert_eq!(
        worker.spec.unwrap().containers[0].image.as_deref(),
        Some(third.as_str())
    );
    connector_in_state(&client, &ns, "lines", "RUNNING").await;
}
