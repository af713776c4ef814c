//! Invalid documents are refused with an error that names the failing field's path.

use strimzi_api::document::{DocumentError, from_yaml};
use strimzi_api::resource::{ResourceError, StrimziResource};

/// One invalid document: what is wrong, the YAML, the path the error must name and a
/// fragment of the message.
struct Case {
    what: &'static str,
    yaml: &'static str,
    path: &'static str,
    message: &'static str,
}

const CASES: &[Case] = &[
    Case {
        what: "unknown listener type",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata: {name: c}
spec:
  kafka:
    listeners:
      - {name: plain, port: 9092, type: internal, tls: false}
      - {name: ext, port: 9094, type: hostport, tls: false}
"#,
        path: "spec.kafka.listeners[1].type",
        message: "unknown variant `hostport`",
    },
    Case {
        what: "listener port as text",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata: {name: c}
spec:
  kafka:
    listeners: [{name: plain, port: "ninety", type: internal, tls: false}]
"#,
        path: "spec.kafka.listeners[0].port",
        message: "invalid type: string",
    },
    Case {
        what: "listener without tls",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata: {name: c}
spec:
  kafka:
    listeners: [{name: plain, port: 9092, type: internal}]
"#,
        path: "spec.kafka.listeners[0].tls",
        message: "missing field `tls`",
    },
    Case {
        what: "Kafka without listeners",
        yaml: "apiVersion: kafka.strimzi.io/v1\nkind: Kafka\nmetadata: {name: c}\nspec: {kafka: {}}\n",
        path: "spec.kafka.listeners",
        message: "missing field `listeners`",
    },
    Case {
        what: "unknown listener authentication type",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata: {name: c}
spec:
  kafka:
    listeners:
      - {name: tls, port: 9093, type: internal, tls: true, authentication: {type: kerberos}}
"#,
        path: "spec.kafka.listeners[0].authentication",
        message: "unknown variant `kerberos`",
    },
    Case {
        what: "wrong type inside a union variant",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: Kafka
metadata: {name: c}
spec:
  kafka:
    listeners:
      - {name: tls, port: 9093, type: internal, tls: true, authentication: {type: custom, sasl: "maybe"}}
"#,
        path: "spec.kafka.listeners[0].authentication.sasl",
        message: "invalid type: string",
    },
    Case {
        what: "bad value in a pod set's pod template",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata: {name: p}
spec:
  replicas: 3
  roles: [broker]
  storage: {type: ephemeral}
  template: {pod: {terminationGracePeriodSeconds: soon}}
"#,
        path: "spec.template.pod.terminationGracePeriodSeconds",
        message: "invalid type: string",
    },
    Case {
        what: "unknown node pool role",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata: {name: p}
spec: {replicas: 3, roles: [broker, zookeeper], storage: {type: ephemeral}}
"#,
        path: "spec.roles[1]",
        message: "unknown variant `zookeeper`",
    },
    Case {
        what: "JBOD volume id as text",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaNodePool
metadata: {name: p}
spec:
  replicas: 3
  roles: [broker]
  storage: {type: jbod, volumes: [{id: zero, type: persistent-claim, size: 10Gi}]}
"#,
        path: "spec.storage.volumes[0].id",
        message: "invalid type: string",
    },
    Case {
        what: "node pool without storage",
        yaml: "apiVersion: kafka.strimzi.io/v1\nkind: KafkaNodePool\nmetadata: {name: p}\nspec: {replicas: 1, roles: [broker]}\n",
        path: "spec.storage",
        message: "missing field `storage`",
    },
    Case {
        what: "topic partitions as text",
        yaml: "apiVersion: kafka.strimzi.io/v1\nkind: KafkaTopic\nmetadata: {name: t}\nspec: {partitions: three}\n",
        path: "spec.partitions",
        message: "invalid type: string",
    },
    Case {
        what: "unknown ACL operation",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaUser
metadata: {name: u}
spec:
  authentication: {type: tls}
  authorization:
    type: simple
    acls: [{resource: {type: topic, name: orders}, operations: [Read, Scribble]}]
"#,
        path: "spec.authorization.acls[0].operations[1]",
        message: "unknown variant `Scribble`",
    },
    Case {
        what: "user authentication without type",
        yaml: "apiVersion: kafka.strimzi.io/v1\nkind: KafkaUser\nmetadata: {name: u}\nspec: {authentication: {}}\n",
        path: "spec.authentication.type",
        message: "missing field `type`",
    },
    Case {
        what: "connector state misspelt",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaConnector
metadata: {name: k}
spec: {class: org.example.Source, state: pause}
"#,
        path: "spec.state",
        message: "unknown variant `pause`",
    },
    Case {
        what: "Connect without groupId",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaConnect
metadata: {name: k}
spec:
  replicas: 1
  bootstrapServers: c-kafka-bootstrap:9092
  configStorageTopic: configs
  offsetStorageTopic: offsets
  statusStorageTopic: status
"#,
        path: "spec.groupId",
        message: "missing field `groupId`",
    },
    Case {
        what: "unknown client authentication type",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaBridge
metadata: {name: b}
spec:
  replicas: 1
  bootstrapServers: c-kafka-bootstrap:9092
  authentication: {type: oauth}
"#,
        path: "spec.authentication",
        message: "unknown variant `oauth`",
    },
    Case {
        what: "unknown rebalance mode",
        yaml: "apiVersion: kafka.strimzi.io/v1\nkind: KafkaRebalance\nmetadata: {name: r}\nspec: {mode: half}\n",
        path: "spec.mode",
        message: "unknown variant `half`",
    },
    Case {
        what: "MirrorMaker 2 mirror without source",
        yaml: r#"
apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
metadata: {name: m}
spec:
  replicas: 1
  target: {alias: t, bootstrapServers: "t:9092", groupId: g, configStorageTopic: c, offsetStorageTopic: o, statusStorageTopic: s}
  mirrors: [{topicsPattern: ".*"}]
"#,
        path: "spec.mirrors[0].source",
        message: "missing field `source`",
    },
    Case {
        what: "pod set pods not a list",
        yaml: "apiVersion: core.strimzi.io/v1\nkind: StrimziPodSet\nmetadata: {name: s}\nspec: {selector: {}, pods: {}}\n",
        path: "spec.pods",
        message: "invalid type: map",
    },
];

#[test]
fn invalid_documents_name_the_field() {
    let mut wrong = Vec::new();
    for case in CASES {
        let document: serde_json::Value = from_yaml(case.yaml).expect("fixture is valid YAML");
        match StrimziResource::from_value(document) {
            Err(ResourceError::Document(DocumentError::InvalidField { path, message })) => {
                if path != case.path || !message.contains(case.message) {
                    wrong.push(format!(
                        "{}: got `{path}`: {message}; expected `{}`: …{}…",
                        case.what, case.path, case.message
                    ));
                }
            }
            other => wrong.push(format!("{}: not refused by field: {other:?}", case.what)),
        }
    }
    println!("checked {} invalid documents", CASES.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn error_messages_read_well() {
    let error = from_yaml::<strimzi_api::topic::KafkaTopic>(
        "apiVersion: kafka.strimzi.io/v1\nkind: KafkaTopic\nmetadata: {name: t}\nspec: {replicas: x}\n",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid field `spec.replicas`: invalid type: string \"x\", expected i32"
    );
    assert!(matches!(
        from_yaml::<strimzi_api::topic::KafkaTopic>("spec: [unclosed"),
        Err(DocumentError::Syntax(_))
    ));
}
