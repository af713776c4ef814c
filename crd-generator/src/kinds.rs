//! One entry per custom resource kind: where its CRD comes from and what Strimzi's CRD has
//! beyond the schema (file name, printer columns, scale subresource).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceSubresourceScale, JSONSchemaProps,
};
use kube::CustomResourceExt;
use strimzi_api::{bridge, connect, connector, kafka, mirror_maker2, node_pool, pod_set};
use strimzi_api::{labels, rebalance, topic, user};

use crate::error::CrdError;
use crate::{embedded, rules, structural};

/// A generated CRD and the file it is written to, e.g. `040-Crd-kafka.yaml`.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedCrd {
    /// File name under `deploy/crds`, the same as Strimzi's.
    pub file_name: &'static str,
    /// The CustomResourceDefinition, ready to apply.
    pub crd: CustomResourceDefinition,
}

/// A printer column: `kubectl get` shows it.
struct Column {
    name: &'static str,
    type_: &'static str,
    json_path: &'static str,
    description: &'static str,
    priority: Option<i32>,
}

/// What Strimzi's CRD of one kind has beyond the derived schema.
struct Kind {
    kind: &'static str,
    file_name: &'static str,
    derive: fn() -> CustomResourceDefinition,
    /// Paths whose `required` list comes from an embedded Kubernetes type (see [`embedded`]).
    kubernetes_required: fn() -> Result<BTreeSet<String>, serde_json::Error>,
    description: &'static str,
    columns: &'static [Column],
    /// The scale subresource, for kinds with a number of replicas (or tasks).
    scale: Option<Scale>,
}

/// Paths of the scale subresource.
struct Scale {
    spec_replicas: &'static str,
    status_replicas: &'static str,
    label_selector: Option<&'static str>,
}

/// The usual scale subresource of kinds with `spec.replicas`.
const REPLICAS_SCALE: Option<Scale> = Some(Scale {
    spec_replicas: ".spec.replicas",
    status_replicas: ".status.replicas",
    label_selector: Some(".status.labelSelector"),
});

/// A column shown by default.
const fn column(
    name: &'static str,
    type_: &'static str,
    json_path: &'static str,
    description: &'static str,
) -> Column {
    Column {
        name,
        type_,
        json_path,
        description,
        priority: None,
    }
}

/// Status of the `Ready` condition, the first thing users look for.
const READY: Column = column(
    "Ready",
    "string",
    ".status.conditions[?(@.type==\"Ready\")].status",
    "Whether the resource is reconciled and ready",
);

/// The `strimzi.io/cluster` label: which cluster a resource belongs to.
const fn cluster_label(description: &'static str) -> Column {
    column(
        "Cluster",
        "string",
        ".metadata.labels.strimzi\\.io/cluster",
        description,
    )
}

/// `spec.replicas`.
const fn desired_replicas(description: &'static str) -> Column {
    column("Desired replicas", "integer", ".spec.replicas", description)
}

/// Every kind, in the order of Strimzi's file names.
const KINDS: &[Kind] = &[
    Kind {
        kind: "Kafka",
        file_name: "040-Crd-kafka.yaml",
        derive: kafka::Kafka::crd,
        kubernetes_required: embedded::kubernetes_required::<kafka::Kafka>,
        description: "A Kafka cluster in KRaft mode: its listeners, configuration, security, \
            certificate authorities and the operators and tools deployed with it. The nodes \
            themselves are described by KafkaNodePool resources.",
        columns: &[
            READY,
            column(
                "Warnings",
                "string",
                ".status.conditions[?(@.type==\"Warning\")].status",
                "Whether the last reconciliation raised warnings",
            ),
            column(
                "Kafka version",
                "string",
                ".status.kafkaVersion",
                "Kafka version the cluster runs",
            ),
            column(
                "Metadata version",
                "string",
                ".status.kafkaMetadataVersion",
                "KRaft metadata version the cluster uses",
            ),
        ],
        scale: None,
    },
    Kind {
        kind: "KafkaConnect",
        file_name: "041-Crd-kafkaconnect.yaml",
        derive: connect::KafkaConnect::crd,
        kubernetes_required: embedded::kubernetes_required::<connect::KafkaConnect>,
        description: "A Kafka Connect cluster: its workers, how they reach Kafka, and the \
            connector plugins they run.",
        columns: &[
            desired_replicas("Number of Connect workers asked for"),
            READY,
        ],
        scale: REPLICAS_SCALE,
    },
    Kind {
        kind: "StrimziPodSet",
        file_name: "042-Crd-strimzipodset.yaml",
        derive: pod_set::StrimziPodSet::crd,
        kubernetes_required: embedded::kubernetes_required::<pod_set::StrimziPodSet>,
        description: "A set of pods managed by the operator, each with its own definition; \
            created by the cluster operator, not by users.",
        columns: &[
            column("Pods", "integer", ".status.pods", "Pods in the set"),
            column(
                "Ready Pods",
                "integer",
                ".status.readyPods",
                "Pods in the set that are ready",
            ),
            column(
                "Current Pods",
                "integer",
                ".status.currentPods",
                "Pods in the set that run their current definition",
            ),
            column(
                "Age",
                "date",
                ".metadata.creationTimestamp",
                "Time since the set was created",
            ),
        ],
        scale: None,
    },
    Kind {
        kind: "KafkaTopic",
        file_name: "043-Crd-kafkatopic.yaml",
        derive: topic::KafkaTopic::crd,
        kubernetes_required: embedded::kubernetes_required::<topic::KafkaTopic>,
        description: "A Kafka topic: its partitions, replication factor and configuration.",
        columns: &[
            cluster_label("Kafka cluster the topic is in"),
            column(
                "Partitions",
                "integer",
                ".spec.partitions",
                "Number of partitions asked for",
            ),
            column(
                "Replication factor",
                "integer",
                ".spec.replicas",
                "Number of replicas of each partition asked for",
            ),
            READY,
        ],
        scale: None,
    },
    Kind {
        kind: "KafkaUser",
        file_name: "044-Crd-kafkauser.yaml",
        derive: user::KafkaUser::crd,
        kubernetes_required: embedded::kubernetes_required::<user::KafkaUser>,
        description: "A Kafka user: how it authenticates, what it may do, and its quotas.",
        columns: &[
            cluster_label("Kafka cluster the user is for"),
            column(
                "Authentication",
                "string",
                ".spec.authentication.type",
                "How the user authenticates",
            ),
            column(
                "Authorization",
                "string",
                ".spec.authorization.type",
                "How the user's rights are set",
            ),
            READY,
        ],
        scale: None,
    },
    Kind {
        kind: "KafkaNodePool",
        file_name: "045-Crd-kafkanodepool.yaml",
        derive: node_pool::KafkaNodePool::crd,
        kubernetes_required: embedded::kubernetes_required::<node_pool::KafkaNodePool>,
        description: "A group of Kafka nodes with the same roles, storage and resources, \
            belonging to the Kafka cluster named by its `strimzi.io/cluster` label.",
        columns: &[
            desired_replicas("Number of nodes asked for"),
            column(
                "Roles",
                "string",
                ".status.roles",
                "Roles the pool's nodes take",
            ),
            column(
                "NodeIds",
                "string",
                ".status.nodeIds",
                "Node IDs of the pool's nodes",
            ),
        ],
        scale: REPLICAS_SCALE,
    },
    Kind {
        kind: "KafkaBridge",
        file_name: "046-Crd-kafkabridge.yaml",
        derive: bridge::KafkaBridge::crd,
        kubernetes_required: embedded::kubernetes_required::<bridge::KafkaBridge>,
        description: "An HTTP bridge that lets HTTP clients produce to and consume from Kafka.",
        columns: &[
            desired_replicas("Number of bridge pods asked for"),
            Column {
                name: "Bootstrap Servers",
                type_: "string",
                json_path: ".spec.bootstrapServers",
                description: "Kafka bootstrap addresses the bridge connects to",
                priority: Some(1),
            },
            READY,
        ],
        scale: REPLICAS_SCALE,
    },
    Kind {
        kind: "KafkaConnector",
        file_name: "047-Crd-kafkaconnector.yaml",
        derive: connector::KafkaConnector::crd,
        kubernetes_required: embedded::kubernetes_required::<connector::KafkaConnector>,
        description: "A connector running in the Kafka Connect cluster named by its \
            `strimzi.io/cluster` label.",
        columns: &[
            cluster_label("Kafka Connect cluster the connector runs in"),
            column(
                "Connector class",
                "string",
                ".spec.class",
                "Java class implementing the connector",
            ),
            column(
                "Max Tasks",
                "integer",
                ".spec.tasksMax",
                "Largest number of tasks the connector may run",
            ),
            READY,
        ],
        scale: Some(Scale {
            spec_replicas: ".spec.tasksMax",
            status_replicas: ".status.tasksMax",
            label_selector: None,
        }),
    },
    Kind {
        kind: "KafkaMirrorMaker2",
        file_name: "048-Crd-kafkamirrormaker2.yaml",
        derive: mirror_maker2::KafkaMirrorMaker2::crd,
        kubernetes_required: embedded::kubernetes_required::<mirror_maker2::KafkaMirrorMaker2>,
        description: "A MirrorMaker 2 deployment that copies topics, consumer group offsets \
            and ACLs from source Kafka clusters into a target cluster.",
        columns: &[
            desired_replicas("Number of MirrorMaker 2 workers asked for"),
            READY,
        ],
        scale: REPLICAS_SCALE,
    },
    Kind {
        kind: "KafkaRebalance",
        file_name: "049-Crd-kafkarebalance.yaml",
        derive: rebalance::KafkaRebalance::crd,
        kubernetes_required: embedded::kubernetes_required::<rebalance::KafkaRebalance>,
        description: "A request to Cruise Control to compute, and on approval carry out, a \
            redistribution of partition replicas in a Kafka cluster.",
        columns: &[
            cluster_label("Kafka cluster to rebalance"),
            column(
                "Template",
                "string",
                ".metadata.annotations.strimzi\\.io/rebalance-template",
                "Whether the resource is only a template for automatic rebalances",
            ),
            column(
                "Status",
                "string",
                ".status.conditions[*].type",
                "State of the rebalance",
            ),
        ],
        scale: None,
    },
];

/// Annotation of our CRDs naming the release of this workspace that generated them, so that
/// an operator installing its CRDs can tell an older CRD of ours (upgraded) from a newer one
/// or one it did not write (left alone). Not one of Strimzi's.
pub const RELEASE_ANNOTATION: &str = "strimzi-rs/release";

/// The release [`RELEASE_ANNOTATION`] records: this workspace's version.
pub const RELEASE: &str = env!("CARGO_PKG_VERSION");

/// Every CRD, in the order of Strimzi's file names.
pub fn custom_resource_definitions() -> Result<Vec<GeneratedCrd>, CrdError> {
    KINDS.iter().map(Kind::generate).collect()
}

impl Kind {
    fn generate(&self) -> Result<GeneratedCrd, CrdError> {
        let mut crd = (self.derive)();
        crd.metadata.labels = Some(BTreeMap::from([
            ("app".to_owned(), "strimzi".to_owned()),
            (labels::CRD_INSTALL.to_owned(), "true".to_owned()),
        ]));
        crd.metadata.annotations = Some(BTreeMap::from([(
            RELEASE_ANNOTATION.to_owned(),
            RELEASE.to_owned(),
        )]));
        crd.spec.names.list_kind = Some(format!("{}List", self.kind));
        crd.spec.conversion = Some(CustomResourceConversion {
            strategy: "None".to_owned(),
            webhook: None,
        });
        let version = crd
            .spec
            .versions
            .first_mut()
            .ok_or(CrdError::MissingSchema(self.kind))?;
        version.additional_printer_columns =
            Some(self.columns.iter().map(Column::definition).collect());
        if let (Some(scale), Some(subresources)) = (&self.scale, version.subresources.as_mut()) {
            subresources.scale = Some(CustomResourceSubresourceScale {
                spec_replicas_path: scale.spec_replicas.to_owned(),
                status_replicas_path: scale.status_replicas.to_owned(),
                label_selector_path: scale.label_selector.map(str::to_owned),
            });
        }
        let validation = version
            .schema
            .as_mut()
            .ok_or(CrdError::MissingSchema(self.kind))?;
        let derived = validation
            .open_api_v3_schema
            .take()
            .ok_or(CrdError::MissingSchema(self.kind))?;
        let conversion_error = |error: serde_json::Error| CrdError::Schema {
            kind: self.kind,
            message: error.to_string(),
        };
        let mut schema = serde_json::to_value(derived).map_err(conversion_error)?;
        structural::normalize(&mut schema, self.description);
        let kubernetes_required = (self.kubernetes_required)().map_err(conversion_error)?;
        embedded::drop_required(&mut schema, &kubernetes_required);
        rules::apply(self.kind, &mut schema)?;
        validation.open_api_v3_schema =
            Some(serde_json::from_value::<JSONSchemaProps>(schema).map_err(conversion_error)?);
        Ok(GeneratedCrd {
            file_name: self.file_name,
            crd,
        })
    }
}

impl Column {
    fn definition(&self) -> CustomResourceColumnDefinition {
        CustomResourceColumnDefinition {
            name: self.name.to_owned(),
            type_: self.type_.to_owned(),
            json_path: self.json_path.to_owned(),
            description: Some(self.description.to_owned()),
            priority: self.priority,
            format: None,
        }
    }
}
