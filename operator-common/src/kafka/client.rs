//! The [`KafkaAdmin`] trait and [`AdminClient`], its implementation over the Kafka protocol:
//! connection pool, broker discovery, routing and retries.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::MetadataRequest;
use kafka_protocol::protocol::{Request, StrBytes};
use tokio::time::Instant;

use super::config::AdminConfig;
use super::connection::{Connection, Connector, SaslLogin};
use super::error::AdminError;
use super::model::*;
use super::tls;

/// First pause between retries; doubled each time up to [`MAX_BACKOFF`].
const INITIAL_BACKOFF: Duration = Duration::from_millis(100);
/// Longest pause between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Everything the operators ask of Kafka. Batch operations take many resources in one call
/// and return one result per resource.
#[async_trait]
pub trait KafkaAdmin: Send + Sync {
    /// Cluster id, controller and brokers.
    async fn describe_cluster(&self) -> Result<ClusterDescription, AdminError>;
    /// Names of all topics that are not internal, sorted.
    async fn list_topics(&self) -> Result<Vec<String>, AdminError>;
    /// Partitions, replicas, ISR and ids of `topics`.
    async fn describe_topics(
        &self,
        topics: &[String],
    ) -> Result<BTreeMap<String, ItemResult<TopicDescription>>, AdminError>;
    /// Creates `topics` (or only checks that they could be created).
    async fn create_topics(
        &self,
        topics: &[NewTopic],
        validate_only: bool,
    ) -> Result<BTreeMap<String, ItemResult<CreatedTopic>>, AdminError>;
    /// Deletes `topics`.
    async fn delete_topics(
        &self,
        topics: &[String],
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError>;
    /// Raises the partition count of each topic to the given total.
    async fn create_partitions(
        &self,
        totals: &BTreeMap<String, i32>,
        validate_only: bool,
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError>;
    /// Configs of `resources` with where each value comes from.
    async fn describe_configs(
        &self,
        resources: &[ConfigResource],
    ) -> Result<BTreeMap<ConfigResource, ItemResult<Vec<ConfigEntry>>>, AdminError>;
    /// Sets and deletes configs of each resource.
    async fn incremental_alter_configs(
        &self,
        changes: &BTreeMap<ConfigResource, Vec<AlterConfigOp>>,
        validate_only: bool,
    ) -> Result<BTreeMap<ConfigResource, ItemResult<()>>, AdminError>;
    /// Reassignments in progress, of `topics` or of all topics.
    async fn list_partition_reassignments(
        &self,
        topics: Option<&BTreeMap<String, Vec<i32>>>,
    ) -> Result<Vec<PartitionReassignment>, AdminError>;
    /// Starts or cancels reassignments.
    async fn alter_partition_reassignments(
        &self,
        changes: &[ReassignmentChange],
    ) -> Result<BTreeMap<(String, i32), ItemResult<()>>, AdminError>;
    /// ACL bindings matching `filter`.
    async fn describe_acls(&self, filter: &AclBindingFilter)
    -> Result<Vec<AclBinding>, AdminError>;
    /// Creates `bindings`; one result per binding, in order.
    async fn create_acls(&self, bindings: &[AclBinding])
    -> Result<Vec<ItemResult<()>>, AdminError>;
    /// Deletes the bindings matching each filter; per filter, the bindings deleted.
    async fn delete_acls(
        &self,
        filters: &[AclBindingFilter],
    ) -> Result<Vec<ItemResult<Vec<AclBinding>>>, AdminError>;
    /// SCRAM credentials of `users`, or of every user with one.
    async fn describe_user_scram_credentials(
        &self,
        users: Option<&[String]>,
    ) -> Result<BTreeMap<String, ItemResult<Vec<ScramCredentialInfo>>>, AdminError>;
    /// Upserts and deletes SCRAM credentials; one result per user.
    async fn alter_user_scram_credentials(
        &self,
        changes: &[ScramCredentialChange],
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError>;
    /// Quotas of the entities matching all `components`; `strict` leaves out entities
    /// with more entity types than the filter names.
    async fn describe_client_quotas(
        &self,
        components: &[QuotaFilterComponent],
        strict: bool,
    ) -> Result<Vec<(QuotaEntity, BTreeMap<String, f64>)>, AdminError>;
    /// Sets and removes quotas; one result per alteration, in order.
    async fn alter_client_quotas(
        &self,
        alterations: &[QuotaAlteration],
        validate_only: bool,
    ) -> Result<Vec<ItemResult<()>>, AdminError>;
    /// Leader, voters and observers of the KRaft metadata quorum.
    async fn describe_metadata_quorum(&self) -> Result<QuorumInfo, AdminError>;
    /// Finalized and supported feature levels.
    async fn describe_features(&self) -> Result<FeatureMetadata, AdminError>;
    /// Every broker registered with the controllers, fenced ones included: whether each is
    /// fenced, by node id.
    async fn registered_brokers(&self) -> Result<BTreeMap<i32, bool>, AdminError>;
    /// Removes the registration of broker `id`, a node that is gone for good; a broker not
    /// registered is no error.
    async fn unregister_broker(&self, id: i32) -> Result<(), AdminError>;
    /// The replicas broker `broker` holds with their size, in every log directory
    /// (DescribeLogDirs). Not every implementation can tell: the default says so.
    async fn describe_replica_sizes(&self, broker: i32) -> Result<Vec<ReplicaLogSize>, AdminError> {
        Err(AdminError::Protocol(format!(
            "describing the log directories of broker {broker} is not supported"
        )))
    }
    /// Changes finalized feature levels, such as `metadata.version`.
    async fn update_features(
        &self,
        updates: &[FeatureUpdate],
        validate_only: bool,
    ) -> Result<BTreeMap<String, ItemResult<()>>, AdminError>;
    /// Makes `voter`, an observer of a dynamic quorum (`kraft.version` 1) caught up with the
    /// leader, a voter reached at `endpoints`; answers once the new voter set is committed.
    /// Not every implementation can: the default says so.
    async fn add_raft_voter(
        &self,
        voter: &QuorumMember,
        endpoints: &[VoterEndpoint],
    ) -> Result<(), AdminError> {
        let _ = endpoints;
        Err(AdminError::Protocol(format!(
            "adding voter {} is not supported",
            voter.node_id
        )))
    }
    /// Removes `voter` from the voters of a dynamic quorum; answers once the new voter set
    /// is committed. Not every implementation can: the default says so.
    async fn remove_raft_voter(&self, voter: &QuorumMember) -> Result<(), AdminError> {
        Err(AdminError::Protocol(format!(
            "removing voter {} is not supported",
            voter.node_id
        )))
    }
}

/// Which broker a request must go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Any broker.
    Any,
    /// The controller the metadata names (requests a broker forwards in KRaft).
    Controller,
    /// One broker.
    Node(i32),
}

/// What the client knows about the cluster.
#[derive(Debug, Default)]
struct ClusterView {
    brokers: HashMap<i32, String>,
    controller_id: Option<i32>,
}

/// A pure-Rust Kafka admin client: one connection per broker, reconnecting when one breaks.
#[derive(Clone)]
pub struct AdminClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: AdminConfig,
    connector: Connector,
    connections: tokio::sync::Mutex<HashMap<String, Arc<Connection>>>,
    view: RwLock<ClusterView>,
}

impl std::fmt::Debug for AdminClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AdminClient")
            .field("bootstrap_servers", &self.inner.config.bootstrap_servers)
            .field("security_protocol", &self.inner.config.security_protocol)
            .finish_non_exhaustive()
    }
}

impl AdminClient {
    /// A client for `config`. Connects lazily: the first operation bootstraps.
    pub fn new(config: AdminConfig) -> Result<Self, AdminError> {
        let tls = match (&config.tls, config.security_protocol.uses_tls()) {
            (Some(tls_config), true) => Some(tls::connector(tls_config)?),
            (None, true) => {
                return Err(AdminError::InvalidConfig {
                    variable: "STRIMZI_TRUSTSTORE_LOCATION".to_owned(),
                    value: String::new(),
                    allowed: "a trust store when TLS is enabled".to_owned(),
                });
            }
            (_, false) => None,
        };
        let sasl = match (&config.sasl, config.security_protocol.uses_sasl()) {
            (Some(sasl), true) => Some(SaslLogin::new(sasl, config.host_resolution)),
            (None, true) => {
                return Err(AdminError::InvalidConfig {
                    variable: "STRIMZI_SASL_MECHANISM".to_owned(),
                    value: String::new(),
                    allowed: "SASL credentials when SASL is enabled".to_owned(),
                });
            }
            (_, false) => None,
        };
        let connector = Connector {
            tls,
            sasl,
            client_id: config.client_id.clone(),
            timeout: config.request_timeout,
            host_resolution: config.host_resolution,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                connector,
                connections: tokio::sync::Mutex::new(HashMap::new()),
                view: RwLock::new(ClusterView::default()),
            }),
        })
    }

    /// A client configured from the `STRIMZI_*` environment variables.
    pub fn from_env() -> Result<Self, AdminError> {
        Self::new(AdminConfig::from_env()?)
    }

    /// The configuration in use.
    pub fn config(&self) -> &AdminConfig {
        &self.inner.config
    }

    /// The DER of the certificate that the listener at `address` (`host:port`) presents in
    /// a TLS handshake, whoever signed it, for comparing with the one it should serve; the
    /// handshake presents this client's certificate, and no Kafka request is sent. An error
    /// when this client has no TLS settings.
    pub async fn served_certificate(&self, address: &str) -> Result<Vec<u8>, AdminError> {
        let inspecting = self.inspecting_connector(address)?;
        self.inner
            .connector
            .served_certificate(&inspecting, address)
            .await
    }

    /// Whether the listener at `address` (`host:port`) accepts this client's certificate: a
    /// connection presenting it (whatever certificate the listener presents) on which the
    /// listener answers an ApiVersions request; an error says why not. An error when this
    /// client has no TLS settings.
    pub async fn client_certificate_accepted(&self, address: &str) -> Result<(), AdminError> {
        let inspecting = self.inspecting_connector(address)?;
        self.inner
            .connector
            .client_certificate_accepted(&inspecting, address)
            .await
    }

    /// A connector with this client's TLS settings that accepts any server certificate, for
    /// a look at the listener at `address`; an error when this client has no TLS settings.
    fn inspecting_connector(
        &self,
        address: &str,
    ) -> Result<tokio_rustls::TlsConnector, AdminError> {
        let Some(config) = &self.inner.config.tls else {
            return Err(AdminError::Tls(format!(
                "no TLS settings to connect to {address} with"
            )));
        };
        tls::inspecting_connector(config)
    }

    /// Sends `request` once to `target`.
    pub(crate) async fn send<R: Request>(
        &self,
        target: Target,
        request: &R,
    ) -> Result<R::Response, AdminError> {
        let connection = self.connection(target).await?;
        let result = connection.send(request).await;
        if let Err(AdminError::Connection { .. } | AdminError::Timeout { .. }) = &result {
            self.forget(&connection).await;
        }
        result
    }

    /// Sends `request` to `target` until the response passes `check`, retrying retriable
    /// failures (of sending or of `check`) within the operation timeout.
    pub(crate) async fn call<R, C>(
        &self,
        operation: &str,
        target: Target,
        request: &R,
        check: C,
    ) -> Result<R::Response, AdminError>
    where
        R: Request + Sync,
        R::Response: Send,
        C: Fn(&R::Response) -> Result<(), AdminError> + Send + Sync,
    {
        self.retrying(operation, || async {
            let response = self.send(target, request).await?;
            check(&response)?;
            Ok(response)
        })
        .await
    }

    /// Runs `attempt` until it succeeds, fails for good, or the operation timeout passes.
    pub(crate) async fn retrying<T, F, Fut>(
        &self,
        operation: &str,
        mut attempt: F,
    ) -> Result<T, AdminError>
    where
        F: FnMut() -> Fut + Send,
        Fut: Future<Output = Result<T, AdminError>> + Send,
        T: Send,
    {
        let bound = self.inner.config.operation_timeout;
        let deadline = Instant::now() + bound;
        let mut backoff = INITIAL_BACKOFF;
        let timeout = |last: Option<&AdminError>| AdminError::Timeout {
            operation: match last {
                Some(error) => format!("{operation} (last error: {error})"),
                None => operation.to_owned(),
            },
            after: bound,
        };
        loop {
            let error = match tokio::time::timeout_at(deadline, attempt()).await {
                Err(_) => return Err(timeout(None)),
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(error)) if error.is_retriable() => error,
                Ok(Err(error)) => return Err(error),
            };
            tracing::debug!(operation, %error, "retrying Kafka operation");
            if error.is(ResponseError::NotController)
                || matches!(error, AdminError::Connection { .. })
            {
                self.lock_view().controller_id = None;
            }
            if Instant::now() + backoff >= deadline {
                return Err(timeout(Some(&error)));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    fn lock_view(&self) -> std::sync::RwLockWriteGuard<'_, ClusterView> {
        self.inner
            .view
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn forget(&self, connection: &Arc<Connection>) {
        let mut connections = self.inner.connections.lock().await;
        if connections
            .get(connection.address())
            .is_some_and(|known| Arc::ptr_eq(known, connection))
        {
            connections.remove(connection.address());
        }
    }

    async fn connection(&self, target: Target) -> Result<Arc<Connection>, AdminError> {
        let address = match target {
            Target::Any => return self.any_connection().await,
            Target::Controller => self.controller_address().await?,
            Target::Node(id) => self.node_address(id).await?,
        };
        let mut connections = self.inner.connections.lock().await;
        if let Some(connection) = connections.get(&address).filter(|c| !c.is_closed()) {
            return Ok(connection.clone());
        }
        let connection = self.inner.connector.connect(&address).await?;
        connections.insert(address, connection.clone());
        Ok(connection)
    }

    /// An open connection to any broker, else a new one to the first reachable candidate.
    async fn any_connection(&self) -> Result<Arc<Connection>, AdminError> {
        let mut connections = self.inner.connections.lock().await;
        connections.retain(|_, connection| !connection.is_closed());
        if let Some(connection) = connections.values().next() {
            return Ok(connection.clone());
        }
        let mut last_error = None;
        for address in self.candidates() {
            match self.inner.connector.connect(&address).await {
                Ok(connection) => {
                    connections.insert(address, connection.clone());
                    return Ok(connection);
                }
                Err(error @ (AdminError::Connection { .. } | AdminError::Timeout { .. })) => {
                    last_error = Some(error);
                }
                Err(error) => return Err(error),
            }
        }
        Err(last_error.unwrap_or_else(|| AdminError::InvalidConfig {
            variable: "STRIMZI_KAFKA_BOOTSTRAP_SERVERS".to_owned(),
            value: String::new(),
            allowed: "at least one host:port".to_owned(),
        }))
    }

    /// Known brokers first, then the bootstrap servers.
    fn candidates(&self) -> Vec<String> {
        let view = self
            .inner
            .view
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut candidates: Vec<String> = view.brokers.values().cloned().collect();
        candidates.sort();
        for server in &self.inner.config.bootstrap_servers {
            if !candidates.contains(server) {
                candidates.push(server.clone());
            }
        }
        candidates
    }

    async fn controller_address(&self) -> Result<String, AdminError> {
        let known = {
            let view = self.lock_view();
            view.controller_id
                .and_then(|id| view.brokers.get(&id).cloned())
        };
        if let Some(address) = known {
            return Ok(address);
        }
        let cluster = self.refresh_metadata().await?;
        cluster
            .brokers
            .iter()
            .find(|broker| broker.id == cluster.controller_id)
            .map(BrokerNode::address)
            .ok_or_else(|| {
                AdminError::from_code(
                    ResponseError::NotController.code(),
                    Some("no controller known"),
                )
                .unwrap_or_else(|| AdminError::Protocol("no controller".to_owned()))
            })
    }

    async fn node_address(&self, id: i32) -> Result<String, AdminError> {
        if let Some(address) = self.lock_view().brokers.get(&id).cloned() {
            return Ok(address);
        }
        let cluster = self.refresh_metadata().await?;
        cluster
            .brokers
            .iter()
            .find(|broker| broker.id == id)
            .map(BrokerNode::address)
            .ok_or_else(|| {
                AdminError::InvalidRequest(format!("broker {id} is not part of the cluster"))
            })
    }

    /// Asks any broker for the brokers and the controller, and remembers them.
    async fn refresh_metadata(&self) -> Result<ClusterDescription, AdminError> {
        let request = metadata_request(Some(Vec::new()));
        let connection = self.any_connection().await?;
        let response = connection.send(&request).await;
        if response.is_err() {
            self.forget(&connection).await;
        }
        let response = response?;
        AdminError::check(response.error_code, None)?;
        let cluster = ClusterDescription {
            cluster_id: response
                .cluster_id
                .as_ref()
                .map(|id| id.to_string())
                .unwrap_or_default(),
            controller_id: response.controller_id.0,
            brokers: response
                .brokers
                .iter()
                .map(|broker| BrokerNode {
                    id: broker.node_id.0,
                    host: broker.host.to_string(),
                    port: broker.port,
                    rack: broker.rack.as_ref().map(|rack| rack.to_string()),
                })
                .collect(),
        };
        let mut view = self.lock_view();
        view.brokers = cluster
            .brokers
            .iter()
            .map(|broker| (broker.id, broker.address()))
            .collect();
        view.controller_id = Some(cluster.controller_id);
        Ok(cluster)
    }

    pub(crate) async fn cluster(&self) -> Result<ClusterDescription, AdminError> {
        self.retrying("describe cluster", || self.refresh_metadata())
            .await
    }
}

/// `StrBytes` of a string.
pub(crate) fn text(value: &str) -> StrBytes {
    StrBytes::from_string(value.to_owned())
}

/// `Ok` or the error for a per-item code.
pub(crate) fn item(code: i16, message: Option<&StrBytes>) -> ItemResult<()> {
    AdminError::check(code, message.map(|m| m.as_str()))
}

/// Bounds a timeout for Kafka's `timeout_ms` fields.
pub(crate) fn timeout_ms(timeout: Duration) -> i32 {
    i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX)
}

/// A Metadata request for `topics` (all with `None`, none with an empty list) that never
/// creates a topic: Kafka's default lets a broker with `auto.create.topics.enable=true` (its
/// own default, and Strimzi's examples') create any missing topic asked about, with the
/// broker's defaults, before its KafkaTopic could.
pub(crate) fn metadata_request(
    topics: Option<Vec<kafka_protocol::messages::metadata_request::MetadataRequestTopic>>,
) -> MetadataRequest {
    MetadataRequest::default()
        .with_topics(topics)
        .with_allow_auto_topic_creation(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_requests_never_create_topics() {
        for topics in [None, Some(Vec::new())] {
            let request = metadata_request(topics.clone());
            assert!(!request.allow_auto_topic_creation);
            assert_eq!(request.topics, topics);
        }
    }
}
