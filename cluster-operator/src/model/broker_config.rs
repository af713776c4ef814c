//! Each node's `server.config`, laid out section by section as Strimzi writes it. Secrets are
//! not copied into the file: the Kafka image resolves `${strimzisecrets:...}`,
//! `${strimzienv:...}` and `${strimzidir:...}` placeholders through config providers when the
//! node starts. Owner: configuration.

use std::fmt::Write as _;

use strimzi_api::common::{MetricsConfig, RackType};
use strimzi_api::kafka::{
    GenericKafkaListener, KafkaAuthorization, KafkaListenerAuthentication, QuotasPlugin,
    TieredStorage,
};
use strimzi_api::naming;
use strimzi_api::storage::{SingleVolumeStorage, Storage};

use super::listeners::ListenerAddresses;
use super::user_config::{self, Properties};
use super::{KafkaCluster, KafkaNode, ModelError, ModelWarning};

/// Name of the KRaft controller listener.
pub const CONTROL_PLANE_LISTENER: &str = "CONTROLPLANE-9090";
/// Port of the KRaft controller listener.
pub const CONTROL_PLANE_PORT: i32 = 9090;
/// Name of the listener brokers replicate over.
pub const REPLICATION_LISTENER: &str = "REPLICATION-9091";
/// Port of the replication listener.
pub const REPLICATION_PORT: i32 = 9091;
/// Where the data volumes are mounted in the Kafka container.
pub const DATA_MOUNT_PATH: &str = "/var/lib/kafka";
/// Port of the metrics endpoint (JMX exporter or Strimzi metrics reporter).
pub const METRICS_PORT: i32 = 9404;

/// Metrics the Strimzi metrics reporter exports when `allowList` is not given.
const DEFAULT_METRICS_ALLOW_LIST: &[&str] = &[
    "kafka_cluster_partition.*",
    "kafka_controller_kafkacontroller.*",
    "kafka_controller_controllerstats_uncleanleaderelectionspersec_total",
    "kafka_log_log_size",
    "kafka_network_requestmetrics.*",
    "kafka_network_socketserver_networkprocessoravgidlepercent",
    "kafka_server_app_info.*",
    "kafka_server_brokertopicmetrics.*",
    "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total",
    "kafka_server_kafkaserver_brokerstate",
    "kafka_server_kafkaserver_clusterid_info",
    "kafka_server_kafkaserver_linux.*",
    "kafka_server_raft.*",
    "kafka_server_replicamanager.*",
    "kafka_server_request_queue_size",
    "kafka_server_socket_server.*",
];
/// The option naming the client quota callback class.
const QUOTA_CALLBACK_OPTION: &str = "client.quota.callback.class";
/// Config provider aliases the operator defines itself.
const RESERVED_PROVIDER_ALIASES: &[&str] =
    &["strimzienv", "strimzisecrets", "strimzifile", "strimzidir"];
/// Authorizer class of `simple` authorization in KRaft clusters.
const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
/// Metrics reporter Cruise Control reads broker metrics from.
const CRUISE_CONTROL_REPORTER: &str =
    "com.linkedin.kafka.cruisecontrol.metricsreporter.CruiseControlMetricsReporter";
/// Topic the Cruise Control metrics reporter writes to.
const CRUISE_CONTROL_METRICS_TOPIC: &str = "strimzi.cruisecontrol.metrics";
/// Kafka's JMX reporter, which the JMX Prometheus exporter reads.
const JMX_REPORTER: &str = "org.apache.kafka.common.metrics.JmxReporter";
/// Strimzi metrics reporter for Kafka metrics.
const STRIMZI_KAFKA_REPORTER: &str =
    "io.strimzi.kafka.metrics.prometheus.ServerKafkaMetricsReporter";
/// Strimzi metrics reporter for Yammer metrics.
const STRIMZI_YAMMER_REPORTER: &str =
    "io.strimzi.kafka.metrics.prometheus.ServerYammerMetricsReporter";

/// The `server.config` text being written, with Strimzi's section headers.
#[derive(Default)]
struct ConfigWriter {
    text: String,
}

impl ConfigWriter {
    fn section(&mut self, name: &str) {
        let _ = write!(self.text, "##########\n# {name}\n##########\n");
    }

    fn line(&mut self, key: &str, value: impl std::fmt::Display) {
        let _ = writeln!(self.text, "{key}={value}");
    }

    fn raw(&mut self, text: &str) {
        self.text.push_str(text);
        self.text.push('\n');
    }

    fn blank(&mut self) {
        self.text.push('\n');
    }
}

/// Which user options go into the file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum UserOptions {
    /// Every option (the file the node reads).
    All,
    /// Only options Kafka cannot change while running (input of the configuration hash).
    StaticOnly,
}

impl KafkaCluster {
    /// The `server.config` of `node`.
    pub fn server_config(&self, node: &KafkaNode, addresses: &ListenerAddresses) -> String {
        self.render_server_config(node, addresses, UserOptions::All)
    }

    /// Checks the parts of the configuration that cannot be turned into a valid
    /// `server.config`: user config providers that reuse the operator's aliases, replication
    /// settings above the broker count, conflicting quota limits, and Cruise Control with
    /// fewer than two brokers.
    pub fn validate_configuration(&self) -> Result<(), ModelError> {
        let (config, _) = self.user_options();
        let reserved = config.get("config.providers").and_then(|aliases| {
            aliases
                .split(',')
                .find(|alias| RESERVED_PROVIDER_ALIASES.contains(alias))
        });
        if let Some(alias) = reserved {
            return Err(ModelError::InvalidConfiguration(format!(
                "config.provider {alias} not permitted as it reserved for Strimzi. Not permitted aliases: [{}]",
                RESERVED_PROVIDER_ALIASES.join(", ")
            )));
        }
        let brokers = self.brokers().count();
        for option in [
            "default.replication.factor",
            "offsets.topic.replication.factor",
            "transaction.state.log.replication.factor",
            "transaction.state.log.min.isr",
        ] {
            let Some(value) = self
                .spec
                .config
                .as_ref()
                .and_then(|config| config.get(option))
            else {
                continue;
            };
            let text = user_config::config_value(value).unwrap_or_default();
            let number: i64 = text.parse().map_err(|_| {
                ModelError::InvalidConfiguration(format!("Property {option} should be an integer"))
            })?;
            if number > brokers as i64 {
                let or_less = if brokers > 1 { " or less" } else { "" };
                return Err(ModelError::InvalidConfiguration(format!(
                    "Kafka configuration option '{option}' should be set to {brokers}{or_less} because this cluster has only {brokers} Kafka broker(s)."
                )));
            }
        }
        if let Some(QuotasPlugin::Strimzi(quotas)) = &self.spec.quotas
            && quotas.min_available_bytes_per_volume.is_some()
            && quotas.min_available_ratio_per_volume.is_some()
        {
            return Err(ModelError::InvalidConfiguration(
                "You cannot configure both `minAvailableBytesPerVolume` and `minAvailableRatioPerVolume`, they are mutually exclusive.".to_owned(),
            ));
        }
        if self.kafka.spec.cruise_control.is_some() && brokers < 2 {
            return Err(ModelError::InvalidConfiguration(format!(
                "Kafka {}/{} has invalid configuration. Cruise Control cannot be deployed with a Kafka cluster which has only one broker. It requires at least two Kafka brokers.",
                self.namespace, self.name
            )));
        }
        Ok(())
    }

    /// The user's options as they reach `server.config`, with the warnings about dropped ones:
    /// forbidden options, and a quota callback class that conflicts with `quotas`.
    pub(crate) fn user_options(&self) -> (Properties, Vec<ModelWarning>) {
        let (mut config, mut warnings) = user_config::user_configuration(self.spec.config.as_ref());
        if let Some(quotas) = &self.spec.quotas
            && config.remove(QUOTA_CALLBACK_OPTION).is_some()
        {
            let plugin = match quotas {
                QuotasPlugin::Kafka(_) => "kafka",
                QuotasPlugin::Strimzi(_) => "strimzi",
            };
            warnings.push(ModelWarning::new(
                "QuotasPluginConflict",
                format!("Quotas plugin class cannot be configured in .spec.kafka.config, when .spec.kafka.quotas contains configuration of `{plugin}` plugin. The plugin from .spec.kafka.quotas will be used"),
            ));
        }
        (config, warnings)
    }

    /// The user options Kafka can change while running, which the operator applies to the
    /// running cluster (they are left out of the configuration hash).
    pub fn dynamic_configuration(&self) -> Vec<(String, String)> {
        let (config, _) = self.user_options();
        config
            .entries()
            .iter()
            .filter(|(key, _)| super::config_maps::is_dynamic_option(key))
            .cloned()
            .collect()
    }

    /// Writes `server.config`, optionally leaving out the dynamically updatable user options.
    pub(crate) fn render_server_config(
        &self,
        node: &KafkaNode,
        addresses: &ListenerAddresses,
        options: UserOptions,
    ) -> String {
        let mut out = ConfigWriter::default();
        out.raw("##############################\n##############################\n# This file is automatically generated by the Strimzi Cluster Operator\n# Any changes to this file will be ignored and overwritten!\n##############################\n##############################\n");
        out.section("Node ID");
        out.line("node.id", node.node_id);
        out.blank();
        self.write_rack(&mut out, node);
        self.write_kraft(&mut out, node);
        self.write_log_dirs(&mut out, node);
        self.write_listeners(&mut out, node, addresses);
        self.write_authorization(&mut out);
        self.write_cruise_control(&mut out, node);
        self.write_tiered_storage(&mut out, node);
        self.write_quotas(&mut out, node);
        self.write_strimzi_metrics_reporter(&mut out);
        self.write_user_configuration(&mut out, node, options);
        out.text.trim().to_owned()
    }

    /// `${strimzisecrets:<namespace>/<secret>:<key>}`: a value the node reads from a Secret.
    fn secret_placeholder(&self, secret: &str, key: &str) -> String {
        format!("${{strimzisecrets:{}/{secret}:{key}}}", self.namespace)
    }

    /// The node's own certificate chain and key, from its Secret `<pod>`.
    fn node_cert_placeholders(&self, node: &KafkaNode) -> (String, String) {
        (
            self.secret_placeholder(&node.pod_name, &format!("{}.crt", node.pod_name)),
            self.secret_placeholder(&node.pod_name, &format!("{}.key", node.pod_name)),
        )
    }

    /// The certificates of a CA, from the trust bundle Secret `<cluster>-trustbundle`.
    fn trust_bundle_placeholder(&self, key: &str) -> String {
        self.secret_placeholder(&format!("{}-trustbundle", self.name), key)
    }

    /// `<pod>.<cluster>-kafka-brokers.<namespace>.svc`.
    fn pod_dns_name(&self, pod: &str) -> String {
        format!(
            "{pod}.{}.{}.svc",
            naming::brokers_service(&self.name),
            self.namespace
        )
    }

    fn write_rack(&self, out: &mut ConfigWriter, node: &KafkaNode) {
        let Some(rack) = self.spec.rack.as_ref().filter(|_| node.is_broker()) else {
            return;
        };
        out.section("Rack ID");
        match (rack.r#type, &rack.env_var_name) {
            (Some(RackType::EnvironmentVariable), Some(variable)) => {
                out.line("broker.rack", format!("${{strimzienv:{variable}}}"));
            }
            _ => out.line("broker.rack", "${strimzidir:/opt/kafka/init:rack.id}"),
        }
        out.blank();
    }

    fn write_kraft(&self, out: &mut ConfigWriter, node: &KafkaNode) {
        out.section("KRaft configuration");
        let roles = match (node.is_broker(), node.is_controller()) {
            (true, false) => "broker",
            (false, _) => "controller",
            (true, true) => "broker,controller",
        };
        out.line("process.roles", roles);
        out.line("controller.listener.names", CONTROL_PLANE_LISTENER);
        let mut controllers: Vec<KafkaNode> = self.controllers().collect();
        controllers.sort_by_key(|controller| controller.node_id);
        let voters: Vec<String> = controllers
            .iter()
            .map(|controller| {
                format!(
                    "{}@{}:{CONTROL_PLANE_PORT}",
                    controller.node_id,
                    self.pod_dns_name(&controller.pod_name)
                )
            })
            .collect();
        out.line("controller.quorum.voters", voters.join(","));
        out.blank();
    }

    fn write_log_dirs(&self, out: &mut ConfigWriter, node: &KafkaNode) {
        let Some(storage) = self
            .pools
            .iter()
            .find(|pool| pool.name == node.pool)
            .map(|pool| &pool.storage)
        else {
            return;
        };
        let id = node.node_id;
        if let Some(path) = metadata_volume_path(storage) {
            out.section("KRaft metadata log dir configuration");
            out.line("metadata.log.dir", format!("{path}/kafka-log{id}"));
            out.blank();
        }
        let dirs: Vec<String> = data_volume_paths(storage)
            .iter()
            .map(|path| format!("{path}/kafka-log{id}"))
            .collect();
        out.section("Kafka message logs configuration");
        out.line("log.dirs", dirs.join(","));
        out.blank();
    }

    /// The TLS settings of the control plane and replication listeners: the node certificate,
    /// and mutual TLS against the cluster CA.
    fn write_internal_listener(&self, out: &mut ConfigWriter, node: &KafkaNode, name: &str) {
        let prefix = format!("listener.name.{}.", name.to_lowercase());
        self.write_cluster_tls(out, node, &prefix);
        out.line(&format!("{prefix}ssl.client.auth"), "required");
        out.blank();
    }

    fn write_listeners(
        &self,
        out: &mut ConfigWriter,
        node: &KafkaNode,
        addresses: &ListenerAddresses,
    ) {
        let mut listeners = Vec::new();
        let mut advertised = Vec::new();
        let mut protocols = vec![format!("{CONTROL_PLANE_LISTENER}:SSL")];
        let own_address = self.pod_dns_name(&node.pod_name);

        out.section("Control Plane listener");
        self.write_internal_listener(out, node, CONTROL_PLANE_LISTENER);

        if node.is_controller() {
            listeners.push(format!(
                "{CONTROL_PLANE_LISTENER}://0.0.0.0:{CONTROL_PLANE_PORT}"
            ));
            advertised.push(format!(
                "{CONTROL_PLANE_LISTENER}://{own_address}:{CONTROL_PLANE_PORT}"
            ));
        }

        if node.is_broker() {
            protocols.push(format!("{REPLICATION_LISTENER}:SSL"));
            listeners.push(format!(
                "{REPLICATION_LISTENER}://0.0.0.0:{REPLICATION_PORT}"
            ));
            advertised.push(format!(
                "{REPLICATION_LISTENER}://{own_address}:{REPLICATION_PORT}"
            ));
            out.section("Replication listener");
            self.write_internal_listener(out, node, REPLICATION_LISTENER);

            for listener in &self.spec.listeners {
                let name = listener_name(listener);
                out.section(&format!("Listener configuration: {name}"));
                listeners.push(format!("{name}://0.0.0.0:{}", listener.port));
                let (host, port) = addresses
                    .advertised
                    .get(&(listener.name.clone(), node.node_id))
                    .map(|address| (address.host.clone(), address.port))
                    .unwrap_or_else(|| (own_address.clone(), listener.port));
                advertised.push(format!("{name}://{host}:{port}"));
                protocols.push(format!("{name}:{}", security_protocol(listener)));
                self.write_listener_authentication(out, listener, &name);
                write_connection_limits(out, listener, &name);
                if listener.tls {
                    self.write_listener_tls(out, node, listener, &name);
                }
                out.blank();
            }
        }

        out.section("Common listener configuration");
        out.line("listener.security.protocol.map", protocols.join(","));
        out.line("listeners", listeners.join(","));
        if node.is_broker() {
            out.line("inter.broker.listener.name", REPLICATION_LISTENER);
        }
        if !advertised.is_empty() {
            out.line("advertised.listeners", advertised.join(","));
        }
        out.line("sasl.enabled.mechanisms", "");
        out.line("ssl.endpoint.identification.algorithm", "HTTPS");
        out.blank();
    }

    fn write_listener_authentication(
        &self,
        out: &mut ConfigWriter,
        listener: &GenericKafkaListener,
        name: &str,
    ) {
        let prefix = format!("listener.name.{}", name.to_lowercase());
        match &listener.authentication {
            Some(KafkaListenerAuthentication::ScramSha512(_)) => {
                out.line(
                    &format!("{prefix}.scram-sha-512.sasl.jaas.config"),
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                );
                out.line(
                    &format!("{prefix}.sasl.enabled.mechanisms"),
                    "SCRAM-SHA-512",
                );
                out.blank();
            }
            Some(KafkaListenerAuthentication::Tls(_)) => {
                out.line(&format!("{prefix}.ssl.client.auth"), "required");
                out.line(
                    &format!("{prefix}.ssl.truststore.certificates"),
                    self.trust_bundle_placeholder("clients-ca.crt"),
                );
                out.line(&format!("{prefix}.ssl.truststore.type"), "PEM");
                out.blank();
            }
            Some(KafkaListenerAuthentication::Custom(custom)) => {
                let options = custom
                    .listener_config
                    .iter()
                    .flat_map(|config| config.iter());
                for (key, value) in options {
                    if user_config::is_forbidden_listener_option(key) {
                        continue;
                    }
                    if let Some(value) = user_config::config_value(value) {
                        out.line(&format!("{prefix}.{key}"), value);
                    }
                }
            }
            None => {}
        }
    }

    fn write_listener_tls(
        &self,
        out: &mut ConfigWriter,
        node: &KafkaNode,
        listener: &GenericKafkaListener,
        name: &str,
    ) {
        let prefix = format!("listener.name.{}", name.to_lowercase());
        let custom = listener
            .configuration
            .as_ref()
            .and_then(|configuration| configuration.broker_cert_chain_and_key.as_ref());
        let (chain, key) = match custom {
            Some(custom) => (
                self.secret_placeholder(&custom.secret_name, &custom.certificate),
                self.secret_placeholder(&custom.secret_name, &custom.key),
            ),
            None => self.node_cert_placeholders(node),
        };
        out.line(&format!("{prefix}.ssl.keystore.certificate.chain"), chain);
        out.line(&format!("{prefix}.ssl.keystore.key"), key);
        out.line(&format!("{prefix}.ssl.keystore.type"), "PEM");
        out.blank();
    }

    fn write_authorization(&self, out: &mut ConfigWriter) {
        let Some(authorization) = &self.spec.authorization else {
            return;
        };
        let cluster = &self.name;
        let mut super_users = vec![
            format!("User:CN={},O=io.strimzi", naming::kafka_component(cluster)),
            format!("User:CN={cluster}-entity-topic-operator,O=io.strimzi"),
            format!("User:CN={cluster}-entity-user-operator,O=io.strimzi"),
            format!("User:CN={},O=io.strimzi", naming::kafka_exporter(cluster)),
            format!("User:CN={},O=io.strimzi", naming::cruise_control(cluster)),
            "User:CN=cluster-operator,O=io.strimzi".to_owned(),
        ];
        out.section("Authorization");
        let class = match authorization {
            KafkaAuthorization::Simple(_) => STANDARD_AUTHORIZER,
            KafkaAuthorization::Custom(custom) => {
                custom.authorizer_class.as_deref().unwrap_or("null")
            }
        };
        out.line("authorizer.class.name", class);
        super_users.extend(
            authorization
                .super_users()
                .iter()
                .map(|user| format!("User:{user}")),
        );
        out.line("super.users", super_users.join(";"));
        out.blank();
    }

    /// The node certificate as key store and the cluster CA as trust store, under `prefix`:
    /// used by the internal listeners and by the broker-side plugins (remote log metadata
    /// manager, quota plugin) that reach the replication listener.
    fn write_cluster_tls(&self, out: &mut ConfigWriter, node: &KafkaNode, prefix: &str) {
        let (chain, key) = self.node_cert_placeholders(node);
        out.line(&format!("{prefix}ssl.keystore.certificate.chain"), chain);
        out.line(&format!("{prefix}ssl.keystore.key"), key);
        out.line(&format!("{prefix}ssl.keystore.type"), "PEM");
        out.line(
            &format!("{prefix}ssl.truststore.certificates"),
            self.trust_bundle_placeholder("cluster-ca.crt"),
        );
        out.line(&format!("{prefix}ssl.truststore.type"), "PEM");
    }

    fn write_cruise_control(&self, out: &mut ConfigWriter, node: &KafkaNode) {
        if !self.cruise_control_reporter(node) {
            return;
        }
        let (chain, key) = self.node_cert_placeholders(node);
        let reporter = "cruise.control.metrics.reporter.";
        out.section("Cruise Control configuration");
        let topic_name = self
            .kafka
            .spec
            .cruise_control
            .as_ref()
            .and_then(|cruise_control| cruise_control.config.as_ref())
            .and_then(|config| config.get("metric.reporter.topic"))
            .and_then(user_config::config_value)
            .unwrap_or_else(|| CRUISE_CONTROL_METRICS_TOPIC.to_owned());
        out.line("cruise.control.metrics.topic", topic_name);
        out.line(
            &format!("{reporter}ssl.endpoint.identification.algorithm"),
            "HTTPS",
        );
        out.line(
            &format!("{reporter}bootstrap.servers"),
            format!("{}:{REPLICATION_PORT}", naming::brokers_service(&self.name)),
        );
        out.line(&format!("{reporter}security.protocol"), "SSL");
        out.line(&format!("{reporter}ssl.keystore.type"), "PEM");
        out.line(&format!("{reporter}ssl.keystore.certificate.chain"), chain);
        out.line(&format!("{reporter}ssl.keystore.key"), key);
        out.line(&format!("{reporter}ssl.truststore.type"), "PEM");
        out.line(
            &format!("{reporter}ssl.truststore.certificates"),
            self.trust_bundle_placeholder("cluster-ca.crt"),
        );
        out.line("cruise.control.metrics.topic.auto.create", "true");
        // Topic settings the user did not give come from the broker defaults; the user's own
        // reach Kafka through the user configuration.
        let user = |key: &str| {
            self.spec
                .config
                .as_ref()
                .and_then(|config| config.get(key))
                .and_then(user_config::config_value)
        };
        let topic = "cruise.control.metrics.topic.";
        if user(&format!("{topic}num.partitions")).is_none() {
            let partitions = user("num.partitions").unwrap_or_else(|| "1".to_owned());
            out.line(&format!("{topic}num.partitions"), partitions);
        }
        if user(&format!("{topic}replication.factor")).is_none() {
            let factor = user("default.replication.factor").unwrap_or_else(|| "1".to_owned());
            out.line(&format!("{topic}replication.factor"), factor);
        }
        if user(&format!("{topic}min.insync.replicas")).is_none() {
            out.line(&format!("{topic}min.insync.replicas"), 1);
        }
        out.blank();
    }

    /// Whether `node` runs the Cruise Control metrics reporter (brokers, when Cruise Control
    /// is deployed).
    fn cruise_control_reporter(&self, node: &KafkaNode) -> bool {
        node.is_broker() && self.kafka.spec.cruise_control.is_some()
    }

    fn write_tiered_storage(&self, out: &mut ConfigWriter, node: &KafkaNode) {
        let Some(TieredStorage::Custom(custom)) = &self.spec.tiered_storage else {
            return;
        };
        out.section("Kafka tiered storage configuration");
        out.raw("# RLMM configuration generated by Strimzi");
        out.line("remote.log.storage.system.enable", "true");
        out.line("remote.log.metadata.manager.impl.prefix", "rlmm.config.");
        out.line(
            "remote.log.metadata.manager.class.name",
            "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager",
        );
        out.line(
            "remote.log.metadata.manager.listener.name",
            REPLICATION_LISTENER,
        );
        let client = "rlmm.config.remote.log.metadata.common.client.";
        out.line(
            &format!("{client}bootstrap.servers"),
            format!("{}:{REPLICATION_PORT}", naming::brokers_service(&self.name)),
        );
        out.line(&format!("{client}security.protocol"), "SSL");
        self.write_cluster_tls(out, node, client);
        out.raw("# RSM configs set by the operator and by the user");
        let manager = custom.remote_storage_manager.clone().unwrap_or_default();
        out.line(
            "remote.log.storage.manager.class.name",
            manager.class_name.as_deref().unwrap_or("null"),
        );
        out.line(
            "remote.log.storage.manager.class.path",
            manager.class_path.as_deref().unwrap_or("null"),
        );
        out.line("remote.log.storage.manager.impl.prefix", "rsm.config.");
        for (key, value) in manager.config.iter().flatten() {
            out.line(&format!("rsm.config.{key}"), value);
        }
        out.blank();
    }

    fn write_quotas(&self, out: &mut ConfigWriter, node: &KafkaNode) {
        let Some(QuotasPlugin::Strimzi(quotas)) = &self.spec.quotas else {
            return;
        };
        let prefix = "client.quota.callback.static.";
        out.section("Quotas configuration");
        out.line(
            "client.quota.callback.class",
            "io.strimzi.kafka.quotas.StaticQuotaCallback",
        );
        out.line(
            &format!("{prefix}kafka.admin.bootstrap.servers"),
            format!("{}:{REPLICATION_PORT}", naming::brokers_service(&self.name)),
        );
        out.line(&format!("{prefix}kafka.admin.security.protocol"), "SSL");
        self.write_cluster_tls(out, node, &format!("{prefix}kafka.admin."));
        if let Some(rate) = quotas.producer_byte_rate {
            out.line(&format!("{prefix}produce"), rate);
        }
        if let Some(rate) = quotas.consumer_byte_rate {
            out.line(&format!("{prefix}fetch"), rate);
        }
        if let Some(bytes) = quotas.min_available_bytes_per_volume {
            out.line(
                &format!("{prefix}storage.per.volume.limit.min.available.bytes"),
                bytes,
            );
        }
        if let Some(ratio) = quotas.min_available_ratio_per_volume {
            out.line(
                &format!("{prefix}storage.per.volume.limit.min.available.ratio"),
                ratio,
            );
        }
        let mut excluded = vec![
            format!(
                "User:CN={},O=io.strimzi",
                naming::kafka_component(&self.name)
            ),
            format!(
                "User:CN={},O=io.strimzi",
                naming::cruise_control(&self.name)
            ),
        ];
        excluded.extend(quotas.excluded_principals.iter().flatten().cloned());
        out.line(
            &format!("{prefix}excluded.principal.name.list"),
            excluded.join(";"),
        );
        out.blank();
    }

    fn write_strimzi_metrics_reporter(&self, out: &mut ConfigWriter) {
        let Some(MetricsConfig::StrimziMetricsReporter(reporter)) = &self.spec.metrics_config
        else {
            return;
        };
        let allow_list = reporter
            .values
            .as_ref()
            .and_then(|values| values.allow_list.clone())
            .unwrap_or_else(|| {
                DEFAULT_METRICS_ALLOW_LIST
                    .iter()
                    .map(|regex| (*regex).to_owned())
                    .collect()
            });
        out.section("Strimzi Metrics Reporter configuration");
        out.line("prometheus.metrics.reporter.listener.enable", "true");
        out.line(
            "prometheus.metrics.reporter.listener",
            format!("http://:{METRICS_PORT}"),
        );
        out.line(
            "prometheus.metrics.reporter.allowlist",
            allow_list.join(","),
        );
        out.blank();
    }

    fn write_user_configuration(
        &self,
        out: &mut ConfigWriter,
        node: &KafkaNode,
        options: UserOptions,
    ) {
        let (mut config, _) = self.user_options();

        let mut providers = vec!["strimzienv", "strimzisecrets"];
        if node.is_broker() {
            providers.extend(["strimzifile", "strimzidir"]);
        }
        let mut aliases = providers.join(",");
        if let Some(user_aliases) = config.remove("config.providers") {
            aliases = format!("{user_aliases},{aliases}");
        }
        out.section("Config providers");
        out.raw("# Configuration providers configured by the user and by Strimzi");
        out.line("config.providers", aliases);
        out.line(
            "config.providers.strimzienv.class",
            "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        );
        out.line("config.providers.strimzienv.param.allowlist.pattern", ".*");
        out.line(
            "config.providers.strimzisecrets.class",
            "io.strimzi.kafka.KubernetesSecretConfigProvider",
        );
        if node.is_broker() {
            out.line(
                "config.providers.strimzifile.class",
                "org.apache.kafka.common.config.provider.FileConfigProvider",
            );
            out.line(
                "config.providers.strimzifile.param.allowed.paths",
                "/opt/kafka",
            );
            out.line(
                "config.providers.strimzidir.class",
                "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
            );
            out.line(
                "config.providers.strimzidir.param.allowed.paths",
                "/opt/kafka",
            );
        }
        out.blank();

        let mut reporters = Vec::new();
        if self.cruise_control_reporter(node) {
            reporters.push(CRUISE_CONTROL_REPORTER);
        }
        if matches!(
            self.spec.metrics_config,
            Some(MetricsConfig::JmxPrometheusExporter(_))
        ) {
            reporters.push(JMX_REPORTER);
        }
        let strimzi_reporter = matches!(
            self.spec.metrics_config,
            Some(MetricsConfig::StrimziMetricsReporter(_))
        );
        if strimzi_reporter {
            reporters.push(STRIMZI_KAFKA_REPORTER);
        }
        write_reporters(out, &mut config, "metric.reporters", &reporters);
        if strimzi_reporter {
            write_reporters(
                out,
                &mut config,
                "kafka.metrics.reporters",
                &[STRIMZI_YAMMER_REPORTER],
            );
        }

        if options == UserOptions::StaticOnly {
            config = Properties::from_pairs(
                config
                    .entries()
                    .iter()
                    .filter(|(key, _)| !super::config_maps::is_dynamic_option(key))
                    .cloned(),
            );
        }
        if !config.is_empty() {
            out.section("User provided configuration");
            out.raw(&config.write());
            out.blank();
        }
    }
}

/// Writes the reporters the operator needs under `key`, after the user's own; the user's
/// option is consumed unless it already lists every needed reporter.
fn write_reporters(out: &mut ConfigWriter, config: &mut Properties, key: &str, needed: &[&str]) {
    if needed.is_empty() {
        return;
    }
    match config.get(key).map(str::to_owned) {
        Some(user) => {
            let missing: Vec<&str> = needed
                .iter()
                .copied()
                .filter(|reporter| !user.contains(reporter))
                .collect();
            if !missing.is_empty() {
                config.remove(key);
                out.section(&format!("{key} configuration"));
                out.raw(&format!("# {key} configured by the user and by Strimzi"));
                out.line(key, format!("{user},{}", missing.join(",")));
                out.blank();
            }
        }
        None => {
            out.section(&format!("{key} configuration"));
            out.raw(&format!("# {key} configured by Strimzi"));
            out.line(key, needed.join(","));
            out.blank();
        }
    }
}

/// `max.connections` and `max.connection.creation.rate` of a listener.
fn write_connection_limits(out: &mut ConfigWriter, listener: &GenericKafkaListener, name: &str) {
    let Some(configuration) = &listener.configuration else {
        return;
    };
    let prefix = format!("listener.name.{}", name.to_lowercase());
    if let Some(limit) = configuration.max_connections {
        out.line(&format!("{prefix}.max.connections"), limit);
    }
    if let Some(rate) = configuration.max_connection_creation_rate {
        out.line(&format!("{prefix}.max.connection.creation.rate"), rate);
    }
}

/// The listener's name in the Kafka configuration: `<NAME>-<PORT>`, upper case.
pub fn listener_name(listener: &GenericKafkaListener) -> String {
    format!("{}-{}", listener.name.to_uppercase(), listener.port)
}

/// The Kafka security protocol of a user listener.
fn security_protocol(listener: &GenericKafkaListener) -> &'static str {
    let sasl = match &listener.authentication {
        Some(KafkaListenerAuthentication::ScramSha512(_)) => true,
        Some(KafkaListenerAuthentication::Custom(custom)) => custom.sasl.unwrap_or(false),
        Some(KafkaListenerAuthentication::Tls(_)) | None => false,
    };
    match (listener.tls, sasl) {
        (false, false) => "PLAINTEXT",
        (true, false) => "SSL",
        (false, true) => "SASL_PLAINTEXT",
        (true, true) => "SASL_SSL",
    }
}

/// Mount path of a data volume: `/var/lib/kafka/data` alone, `/var/lib/kafka/data-<id>` in
/// JBOD storage.
fn volume_path(volume: &SingleVolumeStorage, in_jbod: bool) -> String {
    match volume.id() {
        Some(id) if in_jbod => format!("{DATA_MOUNT_PATH}/data-{id}"),
        _ => format!("{DATA_MOUNT_PATH}/data"),
    }
}

/// Mount paths of every data volume of a pool's storage, in the order of the volumes.
pub fn data_volume_paths(storage: &Storage) -> Vec<String> {
    match storage {
        Storage::Jbod(jbod) => jbod
            .volumes
            .iter()
            .flatten()
            .map(|volume| volume_path(volume, true))
            .collect(),
        Storage::Ephemeral(_) | Storage::PersistentClaim(_) => {
            vec![format!("{DATA_MOUNT_PATH}/data")]
        }
    }
}

/// Mount path of the volume holding the KRaft metadata log: the JBOD volume marked
/// `kraftMetadata: shared`, else the one with the lowest ID; the only volume otherwise.
pub fn metadata_volume_path(storage: &Storage) -> Option<String> {
    match storage {
        Storage::Jbod(jbod) => {
            let volumes = jbod.volumes.as_deref().unwrap_or_default();
            volumes
                .iter()
                .find(|volume| volume.kraft_metadata().is_some())
                .or_else(|| volumes.iter().min_by_key(|volume| volume.id()))
                .map(|volume| volume_path(volume, true))
        }
        Storage::Ephemeral(_) | Storage::PersistentClaim(_) => {
            Some(format!("{DATA_MOUNT_PATH}/data"))
        }
    }
}
