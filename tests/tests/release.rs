//! The release command, `deploy/release.sh`, run here with our operator image moved to another
//! registry (`--image-repository`) and a small operator image archive that `oci.py` packs for
//! the test (`--image-archive`: the real image is built by the images' provisioning, and this
//! program needs no test environment). Every artifact must be there and nothing else:
//! `SHA256SUMS` lists them all and `sha256sum -c` verifies it; each single-file manifest parses
//! as YAML documents equal to its bundle's files, in order; every reference to our operator
//! image names the new repository and Strimzi's images are untouched; the chart package holds
//! `Chart.yaml` at the workspace version and values that compose our image at the new
//! repository; `skopeo` reads the image archive both as a docker archive and as an OCI archive.
//! Also: a second run gives the same bytes, the command refuses to run without a changelog
//! section for the version and on bad input, and `oci.py`'s own unit tests (`test_oci.py`).
//!
//! The chart package is linted and rendered with `helm` by `deploy/helm/check-chart.sh`, which
//! CI runs once helm is built.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;
use strimzi_tests::command_line::run_ok;
use strimzi_tests::layout::parse_versions;
use strimzi_tests::reference::workspace_root;

/// The workspace version, which every crate inherits: the release's version.
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Where the release puts our operator image in this test.
const REPOSITORY: &str = "registry.example.com/team/strimzi-rs-operator";
const IMAGE_VERSIONS: &str = include_str!("../testenv/images/versions.env");

/// Our operator image as the sources name it (`OPERATOR_IMAGE_REPOSITORY:<version>`).
fn source_image() -> String {
    let repository = parse_versions(IMAGE_VERSIONS)["OPERATOR_IMAGE_REPOSITORY"];
    format!("{repository}:{VERSION}")
}

fn released_image() -> String {
    format!("{REPOSITORY}:{VERSION}")
}

/// The bundles and the single files the release makes of them.
fn manifests() -> Vec<(String, Vec<PathBuf>)> {
    let files = |bundle: &str, prefix: &str| {
        let dir = workspace_root().join("deploy/install").join(bundle);
        let mut files: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                let name = path.file_name().unwrap().to_string_lossy();
                name.ends_with(".yaml") && name.starts_with(prefix)
            })
            .collect();
        files.sort();
        files
    };
    let mut manifests: Vec<(String, Vec<PathBuf>)> =
        ["cluster-operator", "topic-operator", "user-operator"]
            .into_iter()
            .map(|bundle| {
                (
                    format!("strimzi-{bundle}-{VERSION}.yaml"),
                    files(bundle, ""),
                )
            })
            .collect();
    let crds = files("cluster-operator", "04")
        .into_iter()
        .filter(|path| path.to_string_lossy().contains("-Crd-"))
        .collect();
    manifests.push((format!("strimzi-crds-{VERSION}.yaml"), crds));
    manifests
}

fn chart_archive() -> String {
    format!("strimzi-kafka-operator-helm-3-chart-{VERSION}.tgz")
}

fn image_archive() -> String {
    format!("strimzi-rs-operator-image-{VERSION}.tar")
}

/// Runs a command; its output, whatever its status.
fn output(command: &mut Command) -> Output {
    command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"))
}

/// Runs a command that must succeed; its standard output.
fn run(command: &mut Command) -> String {
    let what = format!("{command:?}");
    let result = run_ok(&what, command.stdin(Stdio::null()));
    String::from_utf8_lossy(&result.stdout).into_owned()
}

/// `skopeo`, which the Debian packages of `tests/testenv/install.sh --packages` bring.
fn skopeo() -> Command {
    let found = Command::new("skopeo").arg("--version").output();
    assert!(
        found.is_ok_and(|found| found.status.success()),
        "skopeo not found: apt-get install -y skopeo (bash tests/testenv/install.sh --packages installs it)"
    );
    Command::new("skopeo")
}

/// This test program's scratch folder (in cargo's target folder), emptied once per process.
fn scratch() -> &'static Path {
    static SCRATCH: OnceLock<PathBuf> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-test");
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// A one-file operator image under the sources' name, packed as build-images.sh packs images.
fn small_image() -> &'static Path {
    static IMAGE: OnceLock<PathBuf> = OnceLock::new();
    IMAGE.get_or_init(|| {
        let dir = scratch().join("image");
        fs::create_dir_all(dir.join("root")).unwrap();
        fs::write(dir.join("root/hello"), "hello\n").unwrap();
        fs::write(
            dir.join("config.json"),
            r#"{"User": "1001", "Cmd": ["/hello"]}"#,
        )
        .unwrap();
        run(Command::new("tar")
            .args([
                "--create",
                "--file=layer.tar",
                "--directory=root",
                "--owner=0",
            ])
            .args(["--group=0", "--numeric-owner", "--mtime=@0", "hello"])
            .current_dir(&dir));
        let digest = run(Command::new("sha256sum").arg("layer.tar").current_dir(&dir));
        run(Command::new("gzip")
            .args(["-n", "layer.tar"])
            .current_dir(&dir));
        run(Command::new("python3")
            .arg(workspace_root().join("tests/testenv/images/oci.py"))
            .args(["pack", "--layer", "layer.tar.gz", "--config", "config.json"])
            .args(["--diff-id", &format!("sha256:{}", &digest[..64])])
            .args(["--name", &source_image(), "--arch", "amd64"])
            .args(["--created", "2026-01-01T00:00:00Z", "--out", "image.tar"])
            .current_dir(&dir));
        dir.join("image.tar")
    })
}

/// The `kubectl-strimzi` binary the test build made (the plugin's own tests need it, so
/// `cargo test --workspace` builds it).
fn plugin_binary() -> PathBuf {
    let binary = strimzi_tests::binaries::binaries_dir().join("kubectl-strimzi");
    assert!(
        binary.exists(),
        "{} is missing: run this program with `cargo test --workspace`, which builds it",
        binary.display()
    );
    binary
}

fn plugin_archive() -> String {
    format!("kubectl-strimzi-{VERSION}-linux-amd64.tar.gz")
}

fn krew_manifest() -> String {
    format!("strimzi-krew-{VERSION}.yaml")
}

/// Where the test's release is downloaded from.
const DOWNLOAD_URL: &str = "https://downloads.example.com/strimzi-rs";

/// `release.sh` with the test's repository, image and plugin binary, into `out`; its
/// standard output.
fn run_release(out: &Path) -> String {
    run(Command::new("bash")
        .arg(workspace_root().join("deploy/release.sh"))
        .arg("--out")
        .arg(out)
        .args(["--image-repository", REPOSITORY, "--image-archive"])
        .arg(small_image())
        .arg("--plugin-binary")
        .arg(plugin_binary())
        .args(["--download-url", DOWNLOAD_URL]))
}

/// The release folder, written once per test process.
fn release() -> &'static Path {
    static RELEASE: OnceLock<PathBuf> = OnceLock::new();
    RELEASE.get_or_init(|| {
        let out = scratch().join("release");
        eprintln!("release.sh:\n{}", run_release(&out));
        out
    })
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The YAML documents of a text, empty ones left out.
fn documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| Value::deserialize(document).unwrap())
        .filter(|document| !document.is_null())
        .collect()
}

/// The chart package unpacked (once per process).
fn unpacked_chart() -> &'static Path {
    static CHART: OnceLock<PathBuf> = OnceLock::new();
    CHART.get_or_init(|| {
        let dir = scratch().join("chart");
        fs::create_dir_all(&dir).unwrap();
        run(Command::new("tar")
            .arg("-xzf")
            .arg(release().join(chart_archive()))
            .arg("-C")
            .arg(&dir));
        dir
    })
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut files = BTreeSet::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_owned());
            }
        }
    }
    files
}

#[test]
fn every_artifact_is_written_and_sha256sums_verifies_them() {
    let mut expected: BTreeSet<String> = manifests().into_iter().map(|(name, _)| name).collect();
    expected.extend([
        chart_archive(),
        image_archive(),
        plugin_archive(),
        krew_manifest(),
    ]);
    let written: BTreeSet<String> = fs::read_dir(release())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut with_sums = expected.clone();
    with_sums.insert("SHA256SUMS".to_owned());
    assert_eq!(written, with_sums, "the release folder's files");
    let listed: BTreeSet<String> = read(&release().join("SHA256SUMS"))
        .lines()
        .map(|line| line.split_once("  ").unwrap().1.to_owned())
        .collect();
    assert_eq!(listed, expected, "the files SHA256SUMS lists");
    let checked = run(Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(release()));
    assert_eq!(checked.lines().count(), expected.len(), "{checked}");
}

#[test]
fn each_manifest_is_its_bundles_files_as_yaml_documents() {
    let (old, new) = (source_image(), released_image());
    for (name, files) in manifests() {
        let released = read(&release().join(&name));
        let sources: Vec<String> = files
            .iter()
            .map(|file| read(file).replace(&old, &new))
            .collect();
        assert_eq!(
            released,
            sources.join("---\n"),
            "{name}: the bundle's files in order, `---` between them"
        );
        let released_documents = documents(&released);
        assert_eq!(released_documents.len(), files.len(), "{name}: documents");
        for ((document, source), file) in released_documents.iter().zip(&sources).zip(&files) {
            assert_eq!(
                document,
                &serde_yaml_ng::from_str::<Value>(source).unwrap(),
                "{name}: the document of {}",
                file.display()
            );
            assert!(document["kind"].is_string(), "{name}: {}", file.display());
        }
    }
}

#[test]
fn the_image_repository_changes_every_operator_image_reference_and_no_strimzi_one() {
    let (old, new) = (source_image(), released_image());
    let source_repository = old.rsplit_once(':').unwrap().0;
    for (name, files) in manifests() {
        let released = read(&release().join(&name));
        let sources: String = files.iter().map(|file| read(file)).collect();
        assert_eq!(
            released.matches(&new).count(),
            sources.matches(&old).count(),
            "{name}: references to our image"
        );
        assert!(!released.contains(source_repository), "{name}");
        assert_eq!(
            released.matches("quay.io/strimzi").count(),
            sources.matches("quay.io/strimzi").count(),
            "{name}: references to Strimzi's images"
        );
        for deployment in documents(&released)
            .iter()
            .filter(|document| document["kind"] == "Deployment")
        {
            for container in deployment["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
            {
                assert_eq!(container["image"], new.as_str(), "{name}");
                for variable in container["env"].as_array().into_iter().flatten() {
                    if variable["name"] == "STRIMZI_DEFAULT_KAFKA_INIT_IMAGE" {
                        assert_eq!(variable["value"], new.as_str(), "{name}");
                    }
                }
            }
        }
    }

    // The chart: its four operator images, composed from the values as its templates compose
    // them (registry, repository and name joined with `/`, empty ones left out; the tag, whose
    // empty default is the chart's appVersion).
    let chart = unpacked_chart().join("strimzi-kafka-operator");
    let values: Value = serde_yaml_ng::from_str(&read(&chart.join("values.yaml"))).unwrap();
    let metadata: Value = serde_yaml_ng::from_str(&read(&chart.join("Chart.yaml"))).unwrap();
    let defaults = &values["operatorImageDefaults"];
    let part = |image: &Value, key: &str| {
        let own = image[key].as_str().unwrap_or_default();
        if own.is_empty() {
            defaults[key].as_str().unwrap_or_default().to_owned()
        } else {
            own.to_owned()
        }
    };
    for image in [
        &values["image"],
        &values["kafkaInit"]["image"],
        &values["topicOperator"]["image"],
        &values["userOperator"]["image"],
    ] {
        let path: Vec<String> = [
            part(image, "registry"),
            part(image, "repository"),
            image["name"].as_str().unwrap().to_owned(),
        ]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
        let tag = match part(image, "tag") {
            tag if tag.is_empty() => metadata["appVersion"].as_str().unwrap().to_owned(),
            tag => tag,
        };
        assert_eq!(format!("{}:{tag}", path.join("/")), new, "{image}");
    }
    let source_chart = workspace_root().join("deploy/helm/strimzi-kafka-operator");
    for file in files_under(&source_chart) {
        let (source, packed) = (read(&source_chart.join(&file)), read(&chart.join(&file)));
        assert!(!packed.contains(source_repository), "{}", file.display());
        assert_eq!(
            packed.matches("quay.io/strimzi").count(),
            source.matches("quay.io/strimzi").count(),
            "{}: references to Strimzi's images",
            file.display()
        );
        if file != Path::new("values.yaml") {
            assert_eq!(packed, source.replace(&old, &new), "{}", file.display());
        }
    }
}

#[test]
fn the_chart_package_holds_the_chart_at_the_workspace_version() {
    let listing = run(Command::new("tar")
        .arg("-tzf")
        .arg(release().join(chart_archive())));
    assert!(
        listing
            .lines()
            .all(|entry| entry.starts_with("strimzi-kafka-operator/")),
        "one top folder, as helm packs a chart:\n{listing}"
    );
    let chart = unpacked_chart().join("strimzi-kafka-operator");
    let metadata: Value = serde_yaml_ng::from_str(&read(&chart.join("Chart.yaml"))).unwrap();
    assert_eq!(metadata["name"], "strimzi-kafka-operator");
    assert_eq!(metadata["version"], VERSION);
    assert_eq!(metadata["appVersion"], VERSION);
    assert_eq!(
        files_under(&chart),
        files_under(&workspace_root().join("deploy/helm/strimzi-kafka-operator")),
        "the chart's files"
    );
}

#[test]
fn skopeo_reads_the_image_archive_as_a_docker_archive_and_as_an_oci_archive() {
    let archive = release().join(image_archive());
    let archive = archive.to_str().unwrap();
    let new = released_image();
    let index: Value = serde_json::from_str(&run(Command::new("tar").args([
        "-xOf",
        archive,
        "index.json",
    ])))
    .unwrap();
    let manifest_digest = index["manifests"][0]["digest"].as_str().unwrap();
    let source_index: Value = serde_json::from_str(&run(Command::new("tar")
        .arg("-xOf")
        .arg(small_image())
        .arg("index.json")))
    .unwrap();
    assert_eq!(
        manifest_digest, source_index["manifests"][0]["digest"],
        "renaming keeps the image's blobs and digest"
    );

    // The docker archive, looked up by its RepoTags: docker-archive sources report the layers
    // by their uncompressed digests, the config's diff_ids.
    let docker_reference = format!("docker-archive:{archive}:{new}");
    let docker: Value =
        serde_json::from_str(&run(skopeo().args(["inspect", &docker_reference]))).unwrap();
    let config: Value = serde_json::from_str(&run(skopeo().args([
        "inspect",
        "--config",
        &docker_reference,
    ])))
    .unwrap();
    assert_eq!(docker["Layers"], config["rootfs"]["diff_ids"]);
    assert_eq!(config["config"]["User"], "1001");
    // The OCI archive, looked up by the index's ref.name annotation (the tag).
    let oci_reference = format!("oci-archive:{archive}:{VERSION}");
    let oci: Value =
        serde_json::from_str(&run(skopeo().args(["inspect", &oci_reference]))).unwrap();
    assert_eq!(oci["Digest"], manifest_digest);
    // Copying each reads every blob and checks its digest.
    for (what, reference) in [("docker", docker_reference), ("oci", oci_reference)] {
        let copy = scratch().join(format!("copy-{what}"));
        run(skopeo()
            .args(["copy", "--quiet", &reference])
            .arg(format!("dir:{}", copy.display())));
    }
    // containerd reads the index's annotation as the image's name.
    assert_eq!(
        index["manifests"][0]["annotations"]["io.containerd.image.name"],
        new.as_str()
    );
}

#[test]
fn the_same_sources_and_image_give_the_same_release() {
    let again = scratch().join("again");
    run_release(&again);
    assert_eq!(
        read(&again.join("SHA256SUMS")),
        read(&release().join("SHA256SUMS"))
    );
}

/// Runs `release.sh` with arguments that must make it stop: its exit status and its one line.
fn refusal(workspace: &Path, args: &[&str]) -> (i32, String) {
    let result = output(
        Command::new("bash")
            .arg(workspace.join("deploy/release.sh"))
            .args(args),
    );
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("release.sh: "), "{stderr}");
    (result.status.code().unwrap(), stderr)
}

#[test]
fn the_release_refuses_to_run_without_a_changelog_section_for_its_version() {
    // A workspace of the files the release reads before anything else.
    let workspace = scratch().join("workspace");
    for file in [
        "Cargo.toml",
        "deploy/release.sh",
        "deploy/workspace-version.sh",
        "tests/testenv/images/versions.env",
    ] {
        let copy = workspace.join(file);
        fs::create_dir_all(copy.parent().unwrap()).unwrap();
        fs::copy(workspace_root().join(file), copy).unwrap();
    }
    let out = scratch().join("refused");
    let args = ["--out", out.to_str().unwrap(), "--without-image"];
    let expected = format!("CHANGELOG.md has no section for {VERSION}");
    let (status, message) = refusal(&workspace, &args);
    assert_eq!(status, 1);
    assert!(message.contains(&expected), "{message}");
    fs::write(
        workspace.join("CHANGELOG.md"),
        format!("# Changelog\n\n## [Unreleased]\n\nAbout {VERSION}.\n\n## [0.0.1] - 2020-01-01\n"),
    )
    .unwrap();
    let (status, message) = refusal(&workspace, &args);
    assert_eq!(status, 1);
    assert!(message.contains(&expected), "{message}");
    assert!(!out.exists(), "nothing written");
}

#[test]
fn the_release_refuses_bad_input_in_one_line() {
    let root = workspace_root();
    let out = scratch().join("bad-input");
    let out = out.to_str().unwrap();
    for (args, status, expected) in [
        (vec!["--publish"], 2, "unknown argument '--publish'"),
        (vec!["--out"], 2, "--out needs a value"),
        (
            vec!["--image-archive", "x.tar", "--without-image"],
            2,
            "exclude each other",
        ),
        (
            vec![
                "--out",
                out,
                "--image-repository",
                "registry.example.com/team/op:1.0",
            ],
            1,
            "is not an image repository",
        ),
        (
            vec!["--out", out, "--image-repository", "Team/Operator"],
            1,
            "is not an image repository",
        ),
        (
            vec!["--out", out, "--image-archive", "/nonexistent/image.tar"],
            1,
            "no such file",
        ),
    ] {
        let (code, message) = refusal(root, &args);
        assert_eq!(code, status, "{args:?}: {message}");
        assert!(message.contains(expected), "{args:?}: {message}");
    }
    assert!(!Path::new(out).exists(), "nothing written");
}

/// `oci.py`'s unit tests (`tests/testenv/images/test_oci.py`), on a tiny synthetic image.
#[test]
fn the_image_packers_unit_tests_pass() {
    let result = output(
        Command::new("python3")
            .args(["-m", "unittest", "discover", "-v", "-p", "test_*.py", "-s"])
            .arg(workspace_root().join("tests/testenv/images"))
            .env("PYTHONDONTWRITEBYTECODE", "1"),
    );
    let report = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{report}");
    assert!(report.contains("\nOK"), "{report}");
    assert!(!report.contains("Ran 0 tests"), "{report}");
}

#[test]
fn the_kubectl_plugin_is_packed_with_its_man_page_and_a_krew_manifest_naming_its_digest() {
    let dir = scratch().join("plugin");
    fs::create_dir_all(&dir).unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(release().join(plugin_archive()))
        .arg("-C")
        .arg(&dir));
    let files: BTreeSet<String> = files_under(&dir)
        .iter()
        .map(|path| path.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files,
        ["LICENSE", "kubectl-strimzi", "kubectl-strimzi.1"]
            .map(str::to_owned)
            .into(),
    );
    let version = run(Command::new(dir.join("kubectl-strimzi")).arg("--version"));
    assert_eq!(version.trim(), format!("kubectl-strimzi {VERSION}"));
    let man = read(&dir.join("kubectl-strimzi.1"));
    assert!(
        man.starts_with(".ie") || man.contains(".TH kubectl-strimzi"),
        "{man}"
    );
    for command in [
        "plan",
        "status",
        "certs",
        "support-bundle",
        "roll",
        "rebalance",
    ] {
        assert!(
            man.contains(&format!(".TH kubectl-strimzi-{command}")),
            "the man page has no page of {command}"
        );
    }
    let manifest = &documents(&read(&release().join(krew_manifest())))[0];
    assert_eq!(manifest["kind"], "Plugin");
    assert_eq!(manifest["metadata"]["name"], "strimzi");
    assert_eq!(manifest["spec"]["version"], format!("v{VERSION}"));
    let platform = &manifest["spec"]["platforms"][0];
    assert_eq!(
        platform["uri"],
        format!("{DOWNLOAD_URL}/{}", plugin_archive()).as_str()
    );
    let digest = run(Command::new("sha256sum").arg(release().join(plugin_archive())));
    assert_eq!(platform["sha256"], &digest[..64]);
    assert_eq!(platform["bin"], "kubectl-strimzi");
    assert_eq!(platform["selector"]["matchLabels"]["arch"], "amd64");
    let text = read(&release().join(krew_manifest()));
    for placeholder in ["VERSION", "HOMEPAGE", "URI", "SHA256", "ARCH"] {
        assert!(
            !text.contains(placeholder),
            "{placeholder} left in:\n{text}"
        );
    }
}
