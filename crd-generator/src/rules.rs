//! CEL rules (`x-kubernetes-validations`) of two origins, attached side by side:
//!
//! - [`STRIMZI_RULES`], the rules Strimzi 1.2's own CRDs carry. They are part of what those
//!   CRDs accept and refuse, so ours have each of them at the same schema path with the same
//!   expression and message (the coverage check compares them).
//! - [`OWN_RULES`], ours, for checks that Strimzi makes only inside its operator, so that the
//!   API server refuses such specs when they are applied. These are the deliberate places
//!   where our CRDs refuse more than Strimzi's.
//!
//! `BOUNDS` holds the `maxItems`/`maxLength` limits that keep our rules within the API
//! server's CEL cost budget. Rules never compare `self` with `oldSelf` (no transition rules).
//! Every optional field one of our rules reads is guarded by `has(...)`, so that leaving it
//! out never makes the rule fail to evaluate; Strimzi's rack rules do not guard
//! `topologyKey` and `envVarName`, and are kept as they are: a rack that needs one of them and
//! leaves it out is refused because the rule cannot be evaluated.

use serde_json::{Value, json};

use crate::error::CrdError;

/// One CEL rule attached to the schema node at `path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The kind whose schema gets the rule, e.g. `Kafka`.
    pub kind: &'static str,
    /// Dot-separated property names from the root; `[]` steps into list items.
    pub path: &'static str,
    /// The CEL expression; `self` is the node at `path`.
    pub rule: &'static str,
    /// What the API server tells the user when the rule is false.
    pub message: &'static str,
}

/// A rack (`broker.rack` or `client.rack`) taken from a node label, the default type, needs
/// the label's key.
const RACK_TOPOLOGY_KEY: &str =
    r#"(has(self.type) && self.type != "topology-label") || self.topologyKey != """#;
/// A rack taken from an environment variable needs the variable's name.
const RACK_ENV_VAR_NAME: &str = "has(self.type) == false || self.type != \"environment-variable\" \
    || self.envVarName != \"\"";
/// Prometheus JMX Exporter metrics need the ConfigMap key holding the exporter's
/// configuration.
const JMX_EXPORTER_CONFIG: &str = "self.type != 'jmxPrometheusExporter' || has(self.valueFrom)";

/// The rack rules of a kind with a `rack` at `path`.
const fn rack_rules(kind: &'static str, path: &'static str) -> [Rule; 2] {
    [
        Rule {
            kind,
            path,
            rule: RACK_TOPOLOGY_KEY,
            message: "topologyKey property is required",
        },
        Rule {
            kind,
            path,
            rule: RACK_ENV_VAR_NAME,
            message: "envVarName property is required",
        },
    ]
}

/// The JMX Prometheus Exporter rule of a kind with a `metricsConfig` at `path`.
const fn jmx_exporter_rule(kind: &'static str, path: &'static str) -> Rule {
    Rule {
        kind,
        path,
        rule: JMX_EXPORTER_CONFIG,
        message: "valueFrom property is required",
    }
}

/// Strimzi 1.2's own rules, in the order of its CRD files: 17 rules, 7 distinct. Expressions
/// and messages are Strimzi's, unchanged, since they are what users of Strimzi's CRDs see.
pub const STRIMZI_RULES: &[Rule] = &[
    rack_rules("Kafka", "spec.kafka.rack")[0],
    rack_rules("Kafka", "spec.kafka.rack")[1],
    jmx_exporter_rule("Kafka", "spec.kafka.metricsConfig"),
    jmx_exporter_rule("Kafka", "spec.cruiseControl.metricsConfig"),
    // Cruise Control cannot expose its metrics through the Strimzi Metrics Reporter.
    Rule {
        kind: "Kafka",
        path: "spec.cruiseControl.metricsConfig",
        rule: "self.type != 'strimziMetricsReporter'",
        message: "value type not supported",
    },
    rack_rules("KafkaConnect", "spec.rack")[0],
    rack_rules("KafkaConnect", "spec.rack")[1],
    jmx_exporter_rule("KafkaConnect", "spec.metricsConfig"),
    // A user certificate's validity and renewal period only apply to `tls` users, whose
    // certificate the user operator issues; they are given both or neither, and the renewal
    // starts before the certificate expires.
    Rule {
        kind: "KafkaUser",
        path: "spec.authentication",
        rule: "self.type == 'tls' || (!has(self.validityDays) && !has(self.renewalDays))",
        message: "'validityDays' and 'renewalDays' can be configured only with 'type: tls'",
    },
    Rule {
        kind: "KafkaUser",
        path: "spec.authentication",
        rule: "self.type != 'tls' || (has(self.renewalDays) == has(self.validityDays))",
        message: "Both 'validityDays' and 'renewalDays' must be set together, or both must be \
            unset.",
    },
    Rule {
        kind: "KafkaUser",
        path: "spec.authentication",
        rule: "self.type != 'tls' || !has(self.renewalDays) || !has(self.validityDays) || \
            self.renewalDays < self.validityDays",
        message: "'renewalDays' must be less than 'validityDays'.",
    },
    rack_rules("KafkaBridge", "spec.rack")[0],
    rack_rules("KafkaBridge", "spec.rack")[1],
    jmx_exporter_rule("KafkaBridge", "spec.metricsConfig"),
    rack_rules("KafkaMirrorMaker2", "spec.rack")[0],
    rack_rules("KafkaMirrorMaker2", "spec.rack")[1],
    jmx_exporter_rule("KafkaMirrorMaker2", "spec.metricsConfig"),
];

/// Our own rules, by kind: each refuses something Strimzi's CRDs accept and its operator
/// reports later.
pub const OWN_RULES: &[Rule] = &[
    // Kafka: the listeners as a whole.
    Rule {
        kind: "Kafka",
        path: "spec.kafka.listeners",
        rule: "self.all(l, self.exists_one(o, o.name == l.name))",
        message: "listener names must be unique: two listeners have the same name",
    },
    Rule {
        kind: "Kafka",
        path: "spec.kafka.listeners",
        rule: "self.all(l, self.exists_one(o, o.port == l.port))",
        message: "listener ports must be unique: two listeners use the same port",
    },
    // Kafka: each listener on its own.
    Rule {
        kind: "Kafka",
        path: "spec.kafka.listeners[]",
        rule: "self.tls || !(self.type in ['route', 'tlsroute', 'ingress'])",
        message: "route, tlsroute and ingress listeners only work with encryption: set tls \
            to true",
    },
    Rule {
        kind: "Kafka",
        path: "spec.kafka.listeners[]",
        rule: "self.tls || !has(self.authentication) || self.authentication.type != 'tls'",
        message: "authentication type tls (client certificates) needs a listener with tls: true",
    },
    Rule {
        kind: "Kafka",
        path: "spec.kafka.listeners[]",
        rule: "!(self.port in [9404, 9999])",
        message: "ports 9404 and 9999 are kept for metrics and JMX; a listener cannot use them",
    },
    Rule {
        kind: "Kafka",
        path: "spec.kafka.listeners[]",
        rule: "self.type != 'ingress' || (has(self.configuration) \
            && has(self.configuration.bootstrap) && has(self.configuration.bootstrap.host))",
        message: "an ingress listener needs configuration.bootstrap.host, the host name of \
            its bootstrap Ingress",
    },
    // KafkaNodePool: roles.
    Rule {
        kind: "KafkaNodePool",
        path: "spec.roles",
        rule: "self.size() > 0",
        message: "a node pool needs at least one role: broker, controller or both",
    },
    Rule {
        kind: "KafkaNodePool",
        path: "spec.roles",
        rule: "self.all(r, self.exists_one(o, o == r))",
        message: "a role may be listed only once",
    },
    // KafkaNodePool: storage.
    Rule {
        kind: "KafkaNodePool",
        path: "spec.storage",
        rule: "self.type != 'jbod' || (has(self.volumes) && self.volumes.size() > 0)",
        message: "jbod storage needs at least one volume",
    },
    Rule {
        kind: "KafkaNodePool",
        path: "spec.storage",
        rule: "self.type != 'jbod' || !has(self.volumes) || self.volumes.all(v, has(v.id))",
        message: "every volume of jbod storage needs an id",
    },
    Rule {
        kind: "KafkaNodePool",
        path: "spec.storage",
        rule: "self.type != 'jbod' || !has(self.volumes) || self.volumes.all(v, !has(v.id) \
            || self.volumes.exists_one(o, has(o.id) && o.id == v.id))",
        message: "the volumes of jbod storage need different ids",
    },
    Rule {
        kind: "KafkaNodePool",
        path: "spec.storage",
        rule: "self.type != 'jbod' || !has(self.volumes) || self.volumes.filter(v, \
            has(v.kraftMetadata) && v.kraftMetadata == 'shared').size() <= 1",
        message: "only one volume of jbod storage may set kraftMetadata: shared",
    },
    Rule {
        kind: "KafkaNodePool",
        path: "spec.storage",
        rule: "self.type != 'persistent-claim' || has(self.size)",
        message: "persistent-claim storage needs a size, such as 100Gi",
    },
    Rule {
        kind: "KafkaNodePool",
        path: "spec.storage.volumes[]",
        rule: "self.type != 'persistent-claim' || has(self.size)",
        message: "a persistent-claim volume needs a size, such as 100Gi",
    },
];

/// A `maxItems` or `maxLength` limit on the schema node at `path`.
struct Bound {
    /// The kind whose schema gets the limit.
    kind: &'static str,
    /// The node, written as in [`Rule::path`].
    path: &'static str,
    /// `maxItems` (for lists) or `maxLength` (for strings).
    keyword: &'static str,
    /// The limit.
    value: u64,
}

/// Bounds that keep our rules within budget.
///
/// The API server estimates the worst-case cost of every rule when a CRD is created and
/// refuses the CRD when one rule exceeds the per-expression limit or all rules together
/// exceed the per-CRD limit. For a list without `maxItems` (or a string without `maxLength`)
/// it assumes the largest size a request could hold, so a rule that compares every listener
/// with every other one would be refused outright. Each limit here is far above what a real
/// cluster uses and sits on a node that a rule iterates or compares:
/// - `spec.kafka.listeners`: 100 listeners; the uniqueness rules are quadratic in it, and the
///   per-listener rules run once per item.
/// - `spec.kafka.listeners[].name`: 11 characters, what the name's pattern already allows;
///   the name uniqueness rule compares names, and string comparisons cost by length.
/// - `spec.roles`: 2 entries, since there are two roles and each may be listed once.
/// - `spec.storage.volumes`: 100 JBOD volumes; the id uniqueness rule is quadratic in it.
const BOUNDS: &[Bound] = &[
    Bound {
        kind: "Kafka",
        path: "spec.kafka.listeners",
        keyword: "maxItems",
        value: 100,
    },
    Bound {
        kind: "Kafka",
        path: "spec.kafka.listeners[].name",
        keyword: "maxLength",
        value: 11,
    },
    Bound {
        kind: "KafkaNodePool",
        path: "spec.roles",
        keyword: "maxItems",
        value: 2,
    },
    Bound {
        kind: "KafkaNodePool",
        path: "spec.storage.volumes",
        keyword: "maxItems",
        value: 100,
    },
];

/// Attaches the bounds and rules of `kind` to its schema: Strimzi's rules first, then ours.
pub(crate) fn apply(kind: &'static str, schema: &mut Value) -> Result<(), CrdError> {
    attach(kind, schema, STRIMZI_RULES, &[])?;
    attach(kind, schema, OWN_RULES, BOUNDS)
}

/// Every rule: Strimzi's, then ours.
pub fn all() -> impl Iterator<Item = &'static Rule> {
    STRIMZI_RULES.iter().chain(OWN_RULES)
}

/// Attaches the entries of `bounds` and `rules` that belong to `kind`. A path that names no
/// node, or a bound on a node of the wrong type, is a [`CrdError::RulePath`].
fn attach(
    kind: &'static str,
    schema: &mut Value,
    rules: &'static [Rule],
    bounds: &'static [Bound],
) -> Result<(), CrdError> {
    let no_path = |path: &'static str| CrdError::RulePath { kind, path };
    for bound in bounds.iter().filter(|bound| bound.kind == kind) {
        let node = node_at(schema, bound.path)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| no_path(bound.path))?;
        let expected = if bound.keyword == "maxLength" {
            "string"
        } else {
            "array"
        };
        if node.get("type").and_then(Value::as_str) != Some(expected) {
            return Err(no_path(bound.path));
        }
        node.insert(bound.keyword.to_owned(), Value::from(bound.value));
    }
    for rule in rules.iter().filter(|rule| rule.kind == kind) {
        let node = node_at(schema, rule.path)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| no_path(rule.path))?;
        let validations = node
            .entry("x-kubernetes-validations")
            .or_insert_with(|| json!([]));
        if let Some(validations) = validations.as_array_mut() {
            validations.push(json!({"rule": rule.rule, "message": rule.message}));
        }
    }
    Ok(())
}

/// The schema node at a dot-separated `path` such as `spec.kafka.listeners[]`.
fn node_at<'a>(schema: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut node = schema;
    for segment in path.split('.') {
        let (name, items) = match segment.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (segment, false),
        };
        node = node.get_mut("properties")?.get_mut(name)?;
        if items {
            node = node.get_mut("items")?;
        }
    }
    Some(node)
}

#[cfg(test)]
mod tests;
