//! The data the admin operations take and return, free of wire-format details.

use std::collections::BTreeMap;

use crate::error::AdminError;

/// Result of one resource in a batch operation.
pub type ItemResult<T> = Result<T, AdminError>;

/// A broker of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerNode {
    /// The node id.
    pub id: i32,
    /// Advertised host of the listener connected to.
    pub host: String,
    /// Advertised port.
    pub port: i32,
    /// The rack, if set.
    pub rack: Option<String>,
}

impl BrokerNode {
    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// What `describe_cluster` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterDescription {
    /// The cluster id.
    pub cluster_id: String,
    /// The node clients send controller requests to.
    pub controller_id: i32,
    /// Every registered broker.
    pub brokers: Vec<BrokerNode>,
}

/// One partition of a topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionDescription {
    /// The partition number.
    pub partition: i32,
    /// The leader, `-1` when none.
    pub leader: i32,
    /// All replicas, preferred leader first.
    pub replicas: Vec<i32>,
    /// In-sync replicas.
    pub isr: Vec<i32>,
}

/// A topic as the brokers see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicDescription {
    /// The topic name.
    pub name: String,
    /// The topic id.
    pub topic_id: uuid::Uuid,
    /// Whether Kafka owns the topic (such as `__consumer_offsets`).
    pub internal: bool,
    /// Partitions ordered by number.
    pub partitions: Vec<PartitionDescription>,
}

/// A topic to create.
#[derive(Clone, Debug, PartialEq)]
pub struct NewTopic {
    /// The topic name.
    pub name: String,
    /// Partition count; `None` takes the broker default.
    pub partitions: Option<i32>,
    /// Replication factor; `None` takes the broker default.
    pub replication_factor: Option<i16>,
    /// Topic configs to set.
    pub configs: BTreeMap<String, String>,
}

impl NewTopic {
    /// A topic with broker-default partitions and replication factor and no configs.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            partitions: None,
            replication_factor: None,
            configs: BTreeMap::new(),
        }
    }
}

/// A topic that was (or would be, when only validating) created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreatedTopic {
    /// The topic id (nil when only validating).
    pub topic_id: uuid::Uuid,
    /// Partition count.
    pub partitions: i32,
    /// Replication factor.
    pub replication_factor: i16,
}

/// The kind of resource configs belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConfigResourceType {
    /// A topic (name: topic name).
    Topic,
    /// A broker (name: node id; empty for the cluster-wide default).
    Broker,
}

impl ConfigResourceType {
    /// The type's code in Kafka's protocol.
    pub fn code(self) -> i8 {
        match self {
            Self::Topic => 2,
            Self::Broker => 4,
        }
    }
}

/// A resource that has configs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConfigResource {
    /// Topic or broker.
    pub resource_type: ConfigResourceType,
    /// Topic name or broker id.
    pub name: String,
}

impl ConfigResource {
    /// The configs of topic `name`.
    pub fn topic(name: impl Into<String>) -> Self {
        Self {
            resource_type: ConfigResourceType::Topic,
            name: name.into(),
        }
    }

    /// The configs of broker `id`.
    pub fn broker(id: i32) -> Self {
        Self {
            resource_type: ConfigResourceType::Broker,
            name: id.to_string(),
        }
    }

    /// The cluster-wide defaults of every broker (the broker resource with an empty name).
    pub fn broker_defaults() -> Self {
        Self {
            resource_type: ConfigResourceType::Broker,
            name: String::new(),
        }
    }
}

/// Where the value of a config comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// Set on the topic (by us or someone else).
    DynamicTopic,
    /// Set dynamically for one broker.
    DynamicBroker,
    /// Set dynamically as the default of all brokers.
    DynamicDefaultBroker,
    /// From the broker's properties file.
    StaticBroker,
    /// Kafka's built-in default.
    Default,
    /// Set dynamically for a broker logger.
    DynamicBrokerLogger,
    /// Anything else Kafka reports.
    Unknown,
}

impl ConfigSource {
    /// The source of Kafka's protocol code `code`.
    pub fn from_code(code: i8) -> Self {
        match code {
            1 => Self::DynamicTopic,
            2 => Self::DynamicBroker,
            3 => Self::DynamicDefaultBroker,
            4 => Self::StaticBroker,
            5 => Self::Default,
            6 => Self::DynamicBrokerLogger,
            _ => Self::Unknown,
        }
    }
}

/// One config of a resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigEntry {
    /// The config name.
    pub name: String,
    /// The value; `None` when sensitive or unset.
    pub value: Option<String>,
    /// Where the value comes from.
    pub source: ConfigSource,
    /// Whether it cannot be changed.
    pub read_only: bool,
    /// Whether the value is hidden.
    pub sensitive: bool,
}

/// One change of an incremental config alteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AlterConfigOp {
    /// Set `name` to `value`.
    Set {
        /// The config name.
        name: String,
        /// The new value.
        value: String,
    },
    /// Remove `name`, reverting to the inherited value.
    Delete {
        /// The config name.
        name: String,
    },
}

/// A partition reassignment in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionReassignment {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The current replica set.
    pub replicas: Vec<i32>,
    /// Replicas being added.
    pub adding: Vec<i32>,
    /// Replicas being removed.
    pub removing: Vec<i32>,
}

/// The size of one replica in one log directory of a broker (DescribeLogDirs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaLogSize {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The log directory holding it.
    pub log_dir: String,
    /// Its size on disk in bytes.
    pub size_bytes: i64,
    /// Whether it is the future replica of a move between log directories.
    pub future: bool,
}

/// A reassignment to start (`Some(replicas)`) or cancel (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReassignmentChange {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The target replicas, or `None` to cancel a reassignment in progress.
    pub replicas: Option<Vec<i32>>,
}

/// Declares an enum with Kafka's `i8` codes.
macro_rules! kafka_codes {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $code:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Kafka's code.
            pub fn code(self) -> i8 {
                match self {
                    $(Self::$variant => $code,)*
                }
            }

            /// The value for Kafka's `code`.
            pub fn from_code(code: i8) -> Result<Self, AdminError> {
                match code {
                    $($code => Ok(Self::$variant),)*
                    _ => Err(AdminError::Protocol(format!(
                        "unknown {} code {code}",
                        stringify!($name)
                    ))),
                }
            }
        }
    };
}

kafka_codes!(
    /// The kind of resource an ACL protects.
    AclResourceType {
        /// Matches every type (filters only).
        Any = 1,
        /// A topic.
        Topic = 2,
        /// A consumer group.
        Group = 3,
        /// The cluster.
        Cluster = 4,
        /// A transactional id.
        TransactionalId = 5,
        /// A delegation token.
        DelegationToken = 6,
        /// A user.
        User = 7,
    }
);

kafka_codes!(
    /// How an ACL's resource name matches.
    PatternType {
        /// Matches every pattern type (filters only).
        Any = 1,
        /// Matches literal and prefixed bindings that apply to the name (filters only).
        Match = 2,
        /// The exact name (or `*`).
        Literal = 3,
        /// Every name with this prefix.
        Prefixed = 4,
    }
);

kafka_codes!(
    /// An operation an ACL allows or denies.
    AclOperation {
        /// Matches every operation (filters only).
        Any = 1,
        /// Every operation.
        All = 2,
        /// Read.
        Read = 3,
        /// Write.
        Write = 4,
        /// Create.
        Create = 5,
        /// Delete.
        Delete = 6,
        /// Alter.
        Alter = 7,
        /// Describe.
        Describe = 8,
        /// Cluster action.
        ClusterAction = 9,
        /// Describe configs.
        DescribeConfigs = 10,
        /// Alter configs.
        AlterConfigs = 11,
        /// Idempotent write.
        IdempotentWrite = 12,
        /// Create delegation tokens.
        CreateTokens = 13,
        /// Describe delegation tokens.
        DescribeTokens = 14,
    }
);

kafka_codes!(
    /// Whether an ACL allows or denies.
    AclPermission {
        /// Matches both (filters only).
        Any = 1,
        /// Deny.
        Deny = 2,
        /// Allow.
        Allow = 3,
    }
);

/// One access control entry bound to a resource pattern.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclBinding {
    /// The resource type.
    pub resource_type: AclResourceType,
    /// The resource name (or `*`).
    pub resource_name: String,
    /// Literal or prefixed.
    pub pattern_type: PatternType,
    /// The principal, such as `User:alice`.
    pub principal: String,
    /// The host, `*` for any.
    pub host: String,
    /// The operation.
    pub operation: AclOperation,
    /// Allow or deny.
    pub permission: AclPermission,
}

impl AclBinding {
    /// A filter that matches exactly this binding.
    pub fn to_filter(&self) -> AclBindingFilter {
        AclBindingFilter {
            resource_type: self.resource_type,
            resource_name: Some(self.resource_name.clone()),
            pattern_type: self.pattern_type,
            principal: Some(self.principal.clone()),
            host: Some(self.host.clone()),
            operation: self.operation,
            permission: self.permission,
        }
    }
}

/// Selects ACL bindings; `None` and the `Any` variants match everything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AclBindingFilter {
    /// The resource type.
    pub resource_type: AclResourceType,
    /// The resource name.
    pub resource_name: Option<String>,
    /// The pattern type.
    pub pattern_type: PatternType,
    /// The principal.
    pub principal: Option<String>,
    /// The host.
    pub host: Option<String>,
    /// The operation.
    pub operation: AclOperation,
    /// The permission.
    pub permission: AclPermission,
}

impl AclBindingFilter {
    /// Matches every binding.
    pub fn any() -> Self {
        Self {
            resource_type: AclResourceType::Any,
            resource_name: None,
            pattern_type: PatternType::Any,
            principal: None,
            host: None,
            operation: AclOperation::Any,
            permission: AclPermission::Any,
        }
    }

    /// Matches every binding of `principal`.
    pub fn for_principal(principal: impl Into<String>) -> Self {
        Self {
            principal: Some(principal.into()),
            ..Self::any()
        }
    }
}

/// A SCRAM mechanism credentials are stored for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScramMechanism {
    /// SCRAM-SHA-256.
    ScramSha256,
    /// SCRAM-SHA-512 (the one Strimzi uses).
    ScramSha512,
}

impl ScramMechanism {
    /// The mechanism's code in Kafka's protocol.
    pub fn code(self) -> i8 {
        match self {
            Self::ScramSha256 => 1,
            Self::ScramSha512 => 2,
        }
    }

    /// The mechanism of Kafka's protocol code `code`.
    pub fn from_code(code: i8) -> Result<Self, AdminError> {
        match code {
            1 => Ok(Self::ScramSha256),
            2 => Ok(Self::ScramSha512),
            _ => Err(AdminError::Protocol(format!(
                "unknown SCRAM mechanism {code}"
            ))),
        }
    }
}

/// A stored SCRAM credential (its secret is never returned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScramCredentialInfo {
    /// The mechanism.
    pub mechanism: ScramMechanism,
    /// PBKDF2 iterations.
    pub iterations: i32,
}

/// A change to one user's SCRAM credentials.
#[derive(Clone, PartialEq, Eq)]
pub enum ScramCredentialChange {
    /// Create or replace the SCRAM-SHA-512 credential of `user` (salted client-side).
    Upsert {
        /// The user name.
        user: String,
        /// The password.
        password: String,
        /// PBKDF2 iterations (at least 4096).
        iterations: i32,
    },
    /// Remove the credential of `user` for `mechanism`.
    Delete {
        /// The user name.
        user: String,
        /// The mechanism.
        mechanism: ScramMechanism,
    },
}

impl ScramCredentialChange {
    /// The user the change applies to.
    pub fn user(&self) -> &str {
        match self {
            Self::Upsert { user, .. } | Self::Delete { user, .. } => user,
        }
    }
}

impl std::fmt::Debug for ScramCredentialChange {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Upsert {
                user, iterations, ..
            } => formatter
                .debug_struct("Upsert")
                .field("user", user)
                .field("iterations", iterations)
                .finish_non_exhaustive(),
            Self::Delete { user, mechanism } => formatter
                .debug_struct("Delete")
                .field("user", user)
                .field("mechanism", mechanism)
                .finish(),
        }
    }
}

/// A quota entity: entity type (`user`, `client-id`, `ip`) to name, `None` for the default.
pub type QuotaEntity = BTreeMap<String, Option<String>>;

/// How a quota filter component matches names of one entity type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuotaMatch {
    /// Exactly this name.
    Exact(String),
    /// The default entity of the type.
    Default,
    /// Any name, including the default.
    Any,
}

/// One component of a quota filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotaFilterComponent {
    /// `user`, `client-id` or `ip`.
    pub entity_type: String,
    /// How names match.
    pub matching: QuotaMatch,
}

/// A change to the quotas of one entity.
#[derive(Clone, Debug, PartialEq)]
pub struct QuotaAlteration {
    /// The entity.
    pub entity: QuotaEntity,
    /// Quota key (such as `producer_byte_rate`) to new value; `None` removes it.
    pub changes: BTreeMap<String, Option<f64>>,
}

/// One member of the metadata quorum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuorumReplica {
    /// The node id.
    pub replica_id: i32,
    /// The ID of its metadata log directory (all zeros where the quorum is static, or
    /// from a Kafka too old to tell); a voter is the pair of ID and directory.
    pub directory_id: uuid::Uuid,
    /// Its log end offset.
    pub log_end_offset: i64,
    /// When the leader last heard from it (ms since the epoch, `-1` if unknown).
    pub last_fetch_timestamp: i64,
    /// When it last caught up (ms since the epoch, `-1` if unknown).
    pub last_caught_up_timestamp: i64,
}

/// A member of a dynamic metadata quorum: a node and its metadata log directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QuorumMember {
    /// The node id.
    pub node_id: i32,
    /// The ID of its metadata log directory.
    pub directory_id: uuid::Uuid,
}

/// Where a voter takes requests: a controller listener's name, host and port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoterEndpoint {
    /// The listener name, e.g. `CONTROLPLANE-9090`.
    pub listener: String,
    /// The host name.
    pub host: String,
    /// The port.
    pub port: u16,
}

/// The KRaft metadata quorum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuorumInfo {
    /// The leader controller.
    pub leader_id: i32,
    /// The leader epoch.
    pub leader_epoch: i32,
    /// The high watermark of the metadata log.
    pub high_watermark: i64,
    /// Voters.
    pub voters: Vec<QuorumReplica>,
    /// Observers (brokers).
    pub observers: Vec<QuorumReplica>,
}

/// Finalized and supported feature levels, such as `metadata.version`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureMetadata {
    /// Feature name to finalized level.
    pub finalized: BTreeMap<String, i16>,
    /// Feature name to the (min, max) levels the broker supports.
    pub supported: BTreeMap<String, (i16, i16)>,
    /// Epoch of the finalized levels, if known.
    pub finalized_epoch: Option<i64>,
}

/// How a feature may change level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureUpgradeType {
    /// Only raise the level.
    Upgrade,
    /// Lower the level keeping metadata.
    SafeDowngrade,
    /// Lower the level, possibly losing metadata.
    UnsafeDowngrade,
}

/// A change of one feature's finalized level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureUpdate {
    /// The feature, such as `metadata.version`.
    pub feature: String,
    /// The new level (0 removes the feature).
    pub max_version_level: i16,
    /// Upgrade or downgrade.
    pub upgrade_type: FeatureUpgradeType,
}
