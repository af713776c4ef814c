//! The install bundles under `deploy/install/` as a user applies them: their documents with
//! the documented namespace edit, and the facts the checks compare with the code (the
//! Deployment's environment, image and command; the roles' rules).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::Value;

use crate::reference::workspace_root;

/// The namespace the bundles' bindings name until the user edits them (as in Strimzi).
pub const PLACEHOLDER_NAMESPACE: &str = "myproject";

/// One bundle folder's documents, in file order.
#[derive(Clone, Debug)]
pub struct Bundle {
    /// The folder.
    pub dir: PathBuf,
    /// Each file's name and its document.
    pub documents: Vec<(String, Value)>,
}

/// The folder of the bundle `name` (`cluster-operator`, `topic-operator`, `user-operator`).
pub fn bundle_dir(name: &str) -> PathBuf {
    workspace_root().join("deploy/install").join(name)
}

/// The Helm chart, `deploy/helm/strimzi-kafka-operator`.
pub fn helm_chart_dir() -> PathBuf {
    workspace_root().join("deploy/helm/strimzi-kafka-operator")
}

impl Bundle {
    /// Reads `deploy/install/<name>`: one document per `.yaml` file, sorted by name.
    ///
    /// # Panics
    /// When the folder or a file cannot be read or parsed.
    pub fn load(name: &str) -> Self {
        let dir = bundle_dir(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
            .map(|entry| {
                entry
                    .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
                    .path()
            })
            .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
            .collect();
        files.sort();
        let documents = files
            .iter()
            .map(|path| {
                let text = read(path);
                let document: Value = serde_yaml_ng::from_str(&text)
                    .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
                (file_name(path), document)
            })
            .collect();
        Self { dir, documents }
    }

    /// The documents with the edit the install guide asks for: every `namespace:` of the
    /// bindings' subjects set to `namespace`.
    pub fn for_namespace(&self, namespace: &str) -> Vec<Value> {
        self.documents
            .iter()
            .map(|(_, document)| {
                let mut document = document.clone();
                if let Some(subjects) = document.get_mut("subjects").and_then(Value::as_array_mut) {
                    for subject in subjects {
                        if subject.get("namespace").is_some() {
                            subject["namespace"] = Value::from(namespace);
                        }
                    }
                }
                document
            })
            .collect()
    }

    /// The documents of `kind`.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.documents
            .iter()
            .map(|(_, document)| document)
            .filter(move |document| document["kind"] == kind)
    }

    /// The file holding the object `kind`/`name`.
    pub fn file_of(&self, kind: &str, name: &str) -> Option<&str> {
        self.documents
            .iter()
            .find(|(_, document)| document["kind"] == kind && document["metadata"]["name"] == name)
            .map(|(file, _)| file.as_str())
    }

    /// The bundle's only Deployment.
    ///
    /// # Panics
    /// Unless there is exactly one, and it parses.
    pub fn deployment(&self) -> Deployment {
        let deployments: Vec<&Value> = self.of_kind("Deployment").collect();
        assert_eq!(
            deployments.len(),
            1,
            "{}: one Deployment",
            self.dir.display()
        );
        serde_json::from_value(deployments[0].clone())
            .unwrap_or_else(|error| panic!("{}: Deployment: {error}", self.dir.display()))
    }

    /// Every rule of the bundle's Roles and ClusterRoles, with the role's kind and name.
    pub fn rules(&self) -> Vec<(String, PolicyRule)> {
        let mut rules = Vec::new();
        for (_, document) in &self.documents {
            let kind = document["kind"].as_str().unwrap_or_default();
            if kind != "Role" && kind != "ClusterRole" {
                continue;
            }
            let name = document["metadata"]["name"].as_str().unwrap_or_default();
            for rule in document["rules"].as_array().into_iter().flatten() {
                let rule: PolicyRule = serde_json::from_value(rule.clone())
                    .unwrap_or_else(|error| panic!("{kind} {name}: {error}"));
                rules.push((format!("{kind}/{name}"), rule));
            }
        }
        rules
    }
}

/// The first container's environment as the pod would see it: plain values as written, and
/// values from the downward API (`metadata.namespace`, `metadata.name`) as `namespace` and
/// `pod`.
///
/// # Panics
/// When a variable takes its value from anything else.
pub fn container_environment(
    deployment: &Deployment,
    namespace: &str,
    pod: &str,
) -> BTreeMap<String, String> {
    let container = &deployment_spec_containers(deployment)[0];
    container
        .env
        .iter()
        .flatten()
        .map(|variable| {
            let value = match (&variable.value, &variable.value_from) {
                (value, None) => value.clone().unwrap_or_default(),
                (None, Some(source)) => match source
                    .field_ref
                    .as_ref()
                    .map(|field| field.field_path.as_str())
                {
                    Some("metadata.namespace") => namespace.to_owned(),
                    Some("metadata.name") => pod.to_owned(),
                    other => panic!("{}: unexpected source {other:?}", variable.name),
                },
                (Some(_), Some(_)) => panic!("{}: both value and valueFrom", variable.name),
            };
            (variable.name.clone(), value)
        })
        .collect()
}

/// The containers of a Deployment's pod template.
///
/// # Panics
/// When the Deployment has no pod spec.
pub fn deployment_spec_containers(
    deployment: &Deployment,
) -> &[k8s_openapi::api::core::v1::Container] {
    &deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.template.spec.as_ref())
        .unwrap_or_else(|| panic!("a Deployment without a pod spec"))
        .containers
}

/// The CRD files of `deploy/crds` by CRD name, for comparing a bundle's copies byte for byte.
pub fn generated_crds() -> BTreeMap<String, (String, String)> {
    let dir = workspace_root().join("deploy/crds");
    let mut crds = BTreeMap::new();
    for entry in
        std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
    {
        let path = entry
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .path();
        let name = file_name(&path);
        if !name.starts_with("04") {
            continue;
        }
        let text = read(&path);
        let document: Value = serde_yaml_ng::from_str(&text)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let crd_name = document["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        crds.insert(crd_name, (name, text));
    }
    crds
}

/// The checks every bundle passes whatever its operator: no wildcard in any rule, every
/// binding refers to a role of the bundle, every CRD identical to its generated file, the
/// image as given, and the program one that `deploy/docker/build-root.sh` puts in the image.
/// Returns the problems found.
pub fn common_problems(bundle: &Bundle, image: &str, program: &str) -> Vec<String> {
    let mut problems = rule_problems(bundle);
    let generated = generated_crds();
    for crd in bundle.of_kind("CustomResourceDefinition") {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        let file = bundle
            .file_of("CustomResourceDefinition", name)
            .unwrap_or_default();
        match generated.get(name) {
            Some((_, text)) if *text == read(&bundle.dir.join(file)) => {}
            Some((generated_file, _)) => problems.push(format!(
                "{file} differs from deploy/crds/{generated_file}: copy it again"
            )),
            None => problems.push(format!("{file}: no CRD {name} in deploy/crds")),
        }
    }
    let deployment = bundle.deployment();
    let container = &deployment_spec_containers(&deployment)[0];
    if container.image.as_deref() != Some(image) {
        problems.push(format!(
            "the Deployment runs {:?}, not {image}",
            container.image
        ));
    }
    let command = container.args.clone().unwrap_or_default();
    if command != [program] {
        problems.push(format!("the Deployment starts {command:?}, not {program}"));
    }
    let image_script = read(&workspace_root().join("deploy/docker/build-root.sh"));
    if !image_script.contains(&format!("\"$root{program}\"")) {
        problems.push(format!(
            "deploy/docker/build-root.sh does not place {program}"
        ));
    }
    problems
}

/// The problems of a bundle's roles and bindings: a wildcard or non-resource URL in a rule,
/// or a binding to a role the bundle lacks.
pub fn rule_problems(bundle: &Bundle) -> Vec<String> {
    let mut problems = Vec::new();
    for (role, rule) in bundle.rules() {
        let lists = [
            ("verbs", Some(&rule.verbs)),
            ("resources", rule.resources.as_ref()),
            ("apiGroups", rule.api_groups.as_ref()),
        ];
        for (field, values) in lists {
            if values.is_some_and(|values| values.iter().any(|value| value.contains('*'))) {
                problems.push(format!("{role}: a wildcard in {field}"));
            }
        }
        if rule.non_resource_urls.is_some() {
            problems.push(format!("{role}: nonResourceURLs"));
        }
    }
    for kind in ["RoleBinding", "ClusterRoleBinding"] {
        for binding in bundle.of_kind(kind) {
            let role_kind = binding["roleRef"]["kind"].as_str().unwrap_or_default();
            let role = binding["roleRef"]["name"].as_str().unwrap_or_default();
            if bundle.file_of(role_kind, role).is_none() {
                problems.push(format!(
                    "{kind} {}: refers to {role_kind} {role}, which the bundle lacks",
                    binding["metadata"]["name"]
                ));
            }
        }
    }
    problems
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs an operator's configuration reader (`parse`, given a variable lookup) on
/// `environment` and returns its result with the variables it never asked for: set in a
/// manifest, but without effect.
pub fn read_environment<T>(
    environment: &BTreeMap<String, String>,
    parse: impl FnOnce(&dyn Fn(&str) -> Option<String>) -> T,
) -> (T, Vec<String>) {
    let asked = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let lookup = |name: &str| {
        asked.borrow_mut().insert(name.to_owned());
        environment.get(name).cloned()
    };
    let result = parse(&lookup);
    let asked = asked.into_inner();
    let unread = environment
        .keys()
        .filter(|name| !asked.contains(*name))
        .cloned()
        .collect();
    (result, unread)
}

/// Loads bundle `name`, fails on any of [`common_problems`] (with `image` and `program`), and
/// reads its Deployment's environment with the operator's configuration reader `parse`,
/// failing when it refuses it or leaves a variable unread. Returns the bundle and the
/// configuration.
///
/// # Panics
/// On any problem found.
pub fn checked_bundle<T, E: std::fmt::Debug>(
    name: &str,
    image: &str,
    program: &str,
    parse: impl FnOnce(&dyn Fn(&str) -> Option<String>) -> Result<T, E>,
) -> (Bundle, T) {
    let bundle = Bundle::load(name);
    let problems = common_problems(&bundle, image, program);
    assert!(problems.is_empty(), "{name}: {problems:#?}");
    let environment = container_environment(
        &bundle.deployment(),
        PLACEHOLDER_NAMESPACE,
        &format!("{name}-5d9f-x"),
    );
    let (config, unread) = read_environment(&environment, parse);
    assert!(unread.is_empty(), "{name}: set but never read: {unread:?}");
    let config = config
        .unwrap_or_else(|error| panic!("{name}: the operator refuses its environment: {error:?}"));
    (bundle, config)
}
