//! The plan itself, free of I/O: the operator's own model and rolling decisions run on what
//! was read from the cluster, and the outcome compared with what runs.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;
use serde_json::Value;
use strimzi_cluster_model::model::KafkaCluster;
use strimzi_cluster_model::model::config::options::Properties;
use strimzi_cluster_model::model::desired::DesiredObjects;
use strimzi_cluster_model::quorum::{self, ConfiguredQuorum};
use strimzi_cluster_model::rolling::config_diff::{
    NodeConfiguration, StaticChange, static_changes,
};
use strimzi_cluster_model::rolling::reload::{
    NEW_KEY_NEEDS_RESTART, ReloadOutlook, reload_outlook,
};
use strimzi_cluster_model::rolling::{self, NodeToRoll, RestartReason, RollClock};
use strimzi_kafka_model::{ConfigEntry, ConfigSource};

/// What applying the change would do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The Kafka's namespace.
    pub namespace: String,
    /// The Kafka.
    pub kafka: String,
    /// Why the operator would refuse the change (the `NotReady` condition it would report);
    /// nothing else is planned then.
    pub refused: Option<Note>,
    /// The warnings the operator would report (its `Warning` conditions).
    pub warnings: Vec<Note>,
    /// What the CA step would do (renewals, key replacements).
    pub certificate_authorities: Vec<String>,
    /// The objects that would be created, changed or deleted.
    pub objects: Vec<ObjectChange>,
    /// Pods of new nodes, created.
    pub nodes_added: Vec<String>,
    /// Pods of removed nodes, deleted (the operator first checks that their brokers hold no
    /// partition replicas).
    pub nodes_removed: Vec<String>,
    /// The pods that would restart, in the order the operator restarts them.
    pub restarts: Vec<PlannedRestart>,
    /// The pods that would load new certificates without a restart.
    pub reloads: Vec<PlannedRestart>,
    /// The options the operator would set on the running brokers, without a restart.
    pub live_changes: Vec<LiveChange>,
    /// What the plan cannot know offline.
    pub unknown: Vec<String>,
}

/// A reason and a message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    /// The stable reason (as in conditions and Events).
    pub reason: String,
    /// What it means.
    pub message: String,
}

/// An object that would change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObjectChange {
    /// `create`, `update` or `delete`.
    pub action: &'static str,
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// For an update, the fields that change (`spec.pods[0].metadata.annotations`, or a
    /// ConfigMap's changed lines); Secret data is named by key only, never shown.
    pub changes: Vec<String>,
}

/// A pod that would restart (or reload).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedRestart {
    /// The pod.
    pub pod: String,
    /// Its node ID.
    pub node_id: i32,
    /// `controller`, `broker` or `controller,broker`.
    pub roles: String,
    /// Why, as the operator's Events say it: the reason (`PodHasOldRevision`) and the
    /// sentence.
    pub reasons: Vec<Note>,
    /// More about it: the static options its restart also applies, or why it restarts
    /// instead of reloading.
    pub note: Option<String>,
}

/// An option set on the running brokers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LiveChange {
    /// The option.
    pub option: String,
    /// Its value now (`None`: unset).
    pub from: Option<String>,
    /// Its value then (`None`: removed).
    pub to: Option<String>,
}

/// What the plan compares the desired objects with.
#[derive(Clone, Debug, Default)]
pub struct Running {
    /// The cluster's pods by name.
    pub pods: BTreeMap<String, Pod>,
    /// Each node's `server.config` as its ConfigMap holds it now, by pod name.
    pub server_configs: BTreeMap<String, String>,
    /// The objects as the API server has them, by kind and name.
    pub objects: BTreeMap<(String, String), Value>,
    /// The kinds listed completely (by the component's labels), whose objects that are not
    /// desired would be deleted.
    pub pruned_kinds: BTreeSet<String>,
    /// Objects that could not be read, by kind and name, with why.
    pub unreadable: BTreeMap<(String, String), String>,
}

/// The node IDs of the running pods labelled as controllers.
fn running_controllers(running: &Running) -> BTreeSet<i32> {
    running
        .pods
        .iter()
        .filter(|(_, pod)| {
            pod.metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(strimzi_api::labels::CONTROLLER_ROLE))
                .is_some_and(|role| role == "true")
        })
        .filter_map(|(name, _)| name.rsplit('-').next()?.parse().ok())
        .collect()
}

/// What the operator's quorum step would decide, as far as it can be told offline (Kafka
/// is not asked): `Ok(None)` for a quorum whose configuration stays as Strimzi writes it,
/// `Ok(Some(voters))` for a dynamic one (asked for with `dynamic_requested`, or changing),
/// whose nodes list `voters` (each controller also itself) and restart for none of them, and
/// the refusal of a static quorum's controller change.
pub fn quorum_outlook(
    cluster: &KafkaCluster,
    dynamic_requested: bool,
    running: &Running,
) -> Result<Option<BTreeSet<i32>>, Note> {
    let running_controllers = running_controllers(running);
    let listed: Vec<BTreeSet<i32>> = running
        .server_configs
        .values()
        .filter_map(|config| quorum::listed_voter_ids(config))
        .collect();
    let desired: BTreeSet<i32> = cluster.controllers().map(|node| node.node_id).collect();
    match quorum::configured_quorum(&running_controllers, &listed, &desired, dynamic_requested) {
        ConfiguredQuorum::Unchanged => Ok(None),
        ConfiguredQuorum::ControllersChange => {
            match quorum::static_change_refusal(&running_controllers, &desired, false) {
                Some(refusal) => Err(Note {
                    reason: refusal.reason.to_owned(),
                    message: format!(
                        "{refusal} (unless the quorum is dynamic already, kraft.version 1 finalized without the annotation: the plan does not ask Kafka)"
                    ),
                }),
                None => Ok(None),
            }
        }
        ConfiguredQuorum::Dynamic { listed_by_all } if listed_by_all.is_empty() => {
            Ok(Some(running_controllers))
        }
        ConfiguredQuorum::Dynamic { listed_by_all } => Ok(Some(listed_by_all)),
    }
}

/// The options of `kafka.spec.kafka.config` the operator applies to running brokers.
pub fn dynamic_options(cluster: &KafkaCluster) -> BTreeMap<String, String> {
    cluster.dynamic_configuration().into_iter().collect()
}

/// The changes of the options set on running brokers, from `before` to `after`.
pub fn live_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<LiveChange> {
    before
        .keys()
        .chain(after.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|key| before.get(*key) != after.get(*key))
        .map(|key| LiveChange {
            option: key.clone(),
            from: before.get(key).cloned(),
            to: after.get(key).cloned(),
        })
        .collect()
}

/// The reason of one restart cause, as an Event gives it.
fn note_of(reason: &RestartReason) -> Note {
    Note {
        reason: reason.name().to_owned(),
        message: reason.explanation(),
    }
}

/// `node` as planned: its reasons, `extra` after them, and a `note`.
fn planned(node: &NodeToRoll, extra: Option<Note>, note: Option<String>) -> PlannedRestart {
    let roles = match (node.controller, node.broker) {
        (true, true) => "controller,broker",
        (true, false) => "controller",
        _ => "broker",
    };
    PlannedRestart {
        pod: node.pod.clone(),
        node_id: node.node_id,
        roles: roles.to_owned(),
        reasons: node.reasons.iter().map(note_of).chain(extra).collect(),
        note,
    }
}

/// The options of `running` (a node's `server.config` now) as the node describes them: from
/// its configuration file; and each option of `desired` that `running` lacks as Kafka
/// describes an option left at its default, whose value is not known offline.
fn described_from_file(running: &str, desired: &str) -> Vec<ConfigEntry> {
    let file = Properties::parse(running);
    let entry = |name: &str, value: Option<&str>, source| ConfigEntry {
        name: name.to_owned(),
        value: value.map(str::to_owned),
        source,
        read_only: true,
        sensitive: false,
    };
    let mut described: Vec<ConfigEntry> = file
        .entries()
        .iter()
        .map(|(name, value)| entry(name, Some(value), ConfigSource::StaticBroker))
        .collect();
    described.extend(
        Properties::parse(desired)
            .entries()
            .iter()
            .filter(|(name, _)| file.get(name).is_none())
            .map(|(name, _)| entry(name, None, ConfigSource::Default)),
    );
    described
}

/// The reason of a restart for static options `changes`, naming them; those newly set are
/// compared with Kafka's default when the operator checks the running node, which the plan
/// cannot know.
fn static_reason(changes: &[StaticChange]) -> Note {
    let names = |newly_set: bool| -> Vec<&str> {
        changes
            .iter()
            .filter(|change| change.running.is_none() == newly_set)
            .map(|change| change.name.as_str())
            .collect()
    };
    let mut message = RestartReason::ConfigChangeRequiresRestart.explanation();
    let (changed, newly_set) = (names(false), names(true));
    if !changed.is_empty() {
        message.push_str(&format!(": {}", changed.join(", ")));
    }
    if !newly_set.is_empty() {
        message.push_str(&format!(
            "{} newly set: {} (no restart if the value is Kafka's default)",
            if changed.is_empty() { ":" } else { ";" },
            newly_set.join(", ")
        ));
    }
    Note {
        reason: RestartReason::ConfigChangeRequiresRestart.name().to_owned(),
        message,
    }
}

/// The static options each node's restart would change, by pod: its desired `server.config`
/// compared with the one its ConfigMap holds now ([`static_changes`]).
fn static_reasons(
    cluster: &KafkaCluster,
    desired: &DesiredObjects,
    running: &Running,
) -> BTreeMap<String, Note> {
    cluster
        .nodes()
        .filter_map(|node| {
            let now = running.server_configs.get(&node.pod_name)?;
            let then = desired.server_configs.get(&node.pod_name)?;
            let described = described_from_file(now, then);
            let changes = static_changes(&NodeConfiguration {
                node_id: node.node_id,
                controller: node.is_controller(),
                kafka_version: &cluster.version.version,
                desired: then,
                described: &described,
                dynamic_quorum: cluster.quorum_voters.is_some(),
            });
            (!changes.is_empty()).then(|| (node.pod_name, static_reason(&changes)))
        })
        .collect()
}

/// The restarts and reloads the rolling step would carry out once the desired objects are
/// applied, as it decides them: the nodes whose pods differ from their desired pods
/// ([`rolling::nodes_to_roll`]), those of them that reload certificates instead
/// ([`reload_outlook`], unless `reload_certificates` is off), then the nodes whose static
/// options differ ([`static_changes`], compared with the options their ConfigMap holds now:
/// the ones they run once the last roll is done). Restarts in the roller's order; the active
/// controller is not known offline, so controllers come in node-ID order.
pub fn restarts(
    cluster: &KafkaCluster,
    desired: &DesiredObjects,
    running: &Running,
    clock: RollClock,
    trusted_cluster_ca_certificates: usize,
    reload_certificates: bool,
) -> (Vec<PlannedRestart>, Vec<PlannedRestart>) {
    let mut statics = static_reasons(cluster, desired, running);
    let mut restarting = Vec::new();
    let mut notes: BTreeMap<String, String> = BTreeMap::new();
    let mut reloads = Vec::new();
    for node in rolling::nodes_to_roll(cluster, &desired.pods, &running.pods, clock) {
        let (Some(pod), Some(desired_pod)) =
            (running.pods.get(&node.pod), desired.pods.get(&node.pod))
        else {
            continue;
        };
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        let outlook = reload_outlook(
            &node,
            &annotations,
            desired_pod,
            trusted_cluster_ca_certificates,
        );
        // A node whose static options change restarts (after its reload, when it reloads).
        match (outlook, statics.remove(&node.pod)) {
            (ReloadOutlook::Reload, None) if reload_certificates => {
                reloads.push(planned(&node, None, None));
                continue;
            }
            (ReloadOutlook::RestartWhileKeyReplaced, None) if reload_certificates => {
                notes.insert(node.pod.clone(), NEW_KEY_NEEDS_RESTART.to_owned());
            }
            (_, Some(options)) => {
                notes.insert(
                    node.pod.clone(),
                    format!("its restart also applies {}", options.message),
                );
            }
            (_, None) => {}
        }
        restarting.push(node);
    }
    let mut static_only = BTreeMap::new();
    for node in cluster.nodes() {
        if let Some(reason) = statics.remove(&node.pod_name) {
            static_only.insert(node.pod_name.clone(), reason);
            restarting.push(NodeToRoll {
                pod: node.pod_name.clone(),
                node_id: node.node_id,
                controller: node.is_controller(),
                broker: node.is_broker(),
                reasons: Vec::new(),
            });
        }
    }
    let restarts = rolling::rolling_order(restarting, None)
        .iter()
        .map(|node| planned(node, static_only.remove(&node.pod), notes.remove(&node.pod)))
        .collect();
    (restarts, reloads)
}

/// How many changed fields of one object are listed; the rest are counted.
const LISTED_FIELDS: usize = 12;

/// The objects that applying `desired` would create, change or delete, compared with
/// `running` (server-side apply of whole objects: a field the operator does not set is not a
/// difference).
pub fn object_changes(
    desired: &DesiredObjects,
    running: &Running,
) -> (Vec<ObjectChange>, Vec<String>) {
    let mut changes = Vec::new();
    let mut unknown = Vec::new();
    let mut desired_names: BTreeSet<(String, String)> = BTreeSet::new();
    for manifest in desired.manifests() {
        let kind = manifest
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let name = manifest
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let key = (kind.clone(), name.clone());
        desired_names.insert(key.clone());
        if let Some(why) = running.unreadable.get(&key) {
            unknown.push(format!("whether {kind} {name} changes: {why}"));
            continue;
        }
        let Some(live) = running.objects.get(&key) else {
            changes.push(ObjectChange {
                action: "create",
                kind,
                name,
                changes: Vec::new(),
            });
            continue;
        };
        let mut fields = Vec::new();
        differences(&manifest, live, "", &kind, &mut fields);
        if fields.len() > LISTED_FIELDS {
            let more = fields.len() - LISTED_FIELDS;
            fields.truncate(LISTED_FIELDS);
            fields.push(format!("... and {more} more"));
        }
        if !fields.is_empty() {
            changes.push(ObjectChange {
                action: "update",
                kind,
                name,
                changes: fields,
            });
        }
    }
    for (kind, name) in running.objects.keys() {
        if running.pruned_kinds.contains(kind)
            && !desired_names.contains(&(kind.clone(), name.clone()))
        {
            changes.push(ObjectChange {
                action: "delete",
                kind: kind.clone(),
                name: name.clone(),
                changes: Vec::new(),
            });
        }
    }
    (changes, unknown)
}

/// Appends to `out` the fields of `desired` (at `path`, of an object of `kind`) whose value
/// `live` does not have: a ConfigMap's text values as their changed lines, a Secret's data by
/// key only.
fn differences(desired: &Value, live: &Value, path: &str, kind: &str, out: &mut Vec<String>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (desired, live) {
        (Value::Null, _) => {}
        (Value::Object(wanted), Value::Object(have)) => {
            for (key, value) in wanted {
                if kind == "Secret" && path == "data" {
                    if have.get(key) != Some(value) {
                        out.push(format!("data.{key} (value not shown)"));
                    }
                    continue;
                }
                differences(
                    value,
                    have.get(key).unwrap_or(&Value::Null),
                    &join(key),
                    kind,
                    out,
                );
            }
        }
        (Value::Array(wanted), Value::Array(have)) if wanted.len() == have.len() => {
            for (index, (value, had)) in wanted.iter().zip(have).enumerate() {
                differences(value, had, &format!("{path}[{index}]"), kind, out);
            }
        }
        (Value::String(wanted), Value::String(have))
            if kind == "ConfigMap" && path.starts_with("data.") && wanted != have =>
        {
            out.push(format!("{path}:"));
            out.extend(changed_lines(have, wanted));
        }
        (wanted, have) if !same_scalar(wanted, have) => out.push(path.to_owned()),
        _ => {}
    }
}

/// Whether two values are equal, a number and its text counting as equal (the API server
/// keeps some numbers as strings).
fn same_scalar(wanted: &Value, have: &Value) -> bool {
    let text = |value: &Value| match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    };
    wanted == have || (text(wanted).is_some() && text(wanted) == text(have))
}

/// The lines of `after` not in `before` (`+ line`) and of `before` not in `after`
/// (`- line`), in the texts' order.
fn changed_lines(before: &str, after: &str) -> Vec<String> {
    // A last line without its newline is the same line.
    let ended = |text: &str| {
        let mut text = text.to_owned();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    };
    let (before, after) = (ended(before), ended(after));
    similar::TextDiff::from_lines(&before, &after)
        .iter_all_changes()
        .filter_map(|change| {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => "-",
                similar::ChangeTag::Insert => "+",
                similar::ChangeTag::Equal => return None,
            };
            Some(format!("  {sign} {}", change.value().trim_end()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_the_operator_sets_differ_secret_values_are_never_shown() {
        let mut out = Vec::new();
        let desired = json!({
            "metadata": {"labels": {"a": "1"}},
            "data": {"tls.key": "bmV3", "tls.crt": "c2FtZQ=="},
        });
        let live = json!({
            "metadata": {"labels": {"a": "1", "extra": "kept"}, "uid": "x"},
            "data": {"tls.key": "b2xk", "tls.crt": "c2FtZQ=="},
        });
        differences(&desired, &live, "", "Secret", &mut out);
        assert_eq!(out, ["data.tls.key (value not shown)"]);
        assert!(!out.concat().contains("bmV3"));
    }

    #[test]
    fn a_config_map_shows_its_changed_lines_and_numbers_match_their_text() {
        let mut out = Vec::new();
        differences(
            &json!({"data": {"server.config": "a=1\nb=2\n"}, "spec": {"port": 9092}}),
            &json!({"data": {"server.config": "a=1\nb=3"}, "spec": {"port": "9092"}}),
            "",
            "ConfigMap",
            &mut out,
        );
        assert_eq!(out, ["data.server.config:", "  - b=3", "  + b=2"]);
    }

    #[test]
    fn live_changes_list_set_changed_and_removed_options() {
        let before = BTreeMap::from([
            ("a".to_owned(), "1".to_owned()),
            ("b".to_owned(), "2".to_owned()),
        ]);
        let after = BTreeMap::from([
            ("b".to_owned(), "3".to_owned()),
            ("c".to_owned(), "4".to_owned()),
        ]);
        let options: Vec<(String, Option<String>, Option<String>)> = live_changes(&before, &after)
            .into_iter()
            .map(|change| (change.option, change.from, change.to))
            .collect();
        assert_eq!(
            options,
            [
                ("a".to_owned(), Some("1".to_owned()), None),
                ("b".to_owned(), Some("2".to_owned()), Some("3".to_owned())),
                ("c".to_owned(), None, Some("4".to_owned())),
            ]
        );
    }

    #[test]
    fn newly_set_static_options_are_told_apart() {
        let change = |name: &str, running: Option<&str>| StaticChange {
            name: name.to_owned(),
            running: running.map(str::to_owned),
            desired: Some("x".to_owned()),
        };
        let reason = static_reason(&[change("a", Some("1")), change("b", None)]);
        assert_eq!(reason.reason, "ConfigChangeRequiresRestart");
        assert!(
            reason
                .message
                .ends_with(": a; newly set: b (no restart if the value is Kafka's default)"),
            "{}",
            reason.message
        );
        // Options the file has are described from it; those it lacks are Kafka's defaults.
        let described = described_from_file("a=1\n", "a=2\nb=3\n");
        assert_eq!(described.len(), 2);
        assert_eq!(described[0].source, ConfigSource::StaticBroker);
        assert_eq!(
            (described[1].name.as_str(), &described[1].value),
            ("b", &None)
        );
        assert_eq!(described[1].source, ConfigSource::Default);
    }
}
