//! Certificate reloads instead of restarts: before the rolling step restarts a node whose pod
//! differs from the desired one only in its certificate annotations (a renewed node
//! certificate, a renewed CA certificate with the same key, a new user-provided listener
//! certificate), the node is asked to load its certificates again
//! ([`crate::rolling::reload`]): a per-node IncrementalAlterConfigs that sets each listener's
//! key store and trust store options to their `server.config` values, through a connection of
//! its own to the node (the replication listener of a broker, the controller listener of a
//! controller). Then each reloaded listener of the node must present, in a TLS handshake, the
//! certificate the node's Secret holds; only then are the pod's certificate annotations and
//! `strimzi.io/revision` set to the desired ones, which makes the pod current without a
//! restart (for Strimzi's operator too: the annotations are the ones it computes). A node
//! whose reload fails or cannot be verified is restarted by the rolling step as before, the
//! failure at the end of its restart Event.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Resource;
use kube::api::{Patch, PatchParams};
use strimzi_certificate_manager::certificate::ParsedCertificate;
use strimzi_operator_common::events::Severity;
use strimzi_operator_common::kafka::{AdminClient, AdminError, AlterConfigOp, TlsConfig};

use super::roll::operator_tls;
use super::{ClusterCas, ReconcileError, Reconciliation};
use crate::model::KafkaCluster;
use crate::model::desired::DesiredObjects;
use crate::model::listeners::services::{CONTROL_PLANE_PORT, REPLICATION_PORT};
use crate::rolling::NodeToRoll;
use crate::rolling::reload::{
    NEW_KEY_NEEDS_RESTART, ReloadOutlook, ReloadedListener, STARTUP_CERTIFICATE_NOT_AFTER,
    TrustingListener, annotations_after_reload, expected_certificates, reload_options,
    reload_outlook, reload_visible, startup_certificate_not_after, trust_checks,
};

/// The Event reason of a node that loaded new certificates without a restart.
const CERTIFICATES_RELOADED: &str = "CertificatesReloaded";

/// The index in `expected` of the listener on `port`, the node's own.
fn own_listener_index(expected: &[ReloadedListener], port: i32) -> Option<usize> {
    expected
        .iter()
        .position(|listener| i32::from(listener.port) == port)
}

/// How long a node may take to apply a reload after the call returned.
const APPLIED_WITHIN: Duration = Duration::from_secs(30);
/// How often a listener is looked at meanwhile.
const LOOK_AGAIN_AFTER: Duration = Duration::from_millis(250);

/// A node the rolling step would restart, asked to reload instead.
struct Reloading<'a> {
    node: &'a NodeToRoll,
    /// Its pod's annotations.
    running: &'a BTreeMap<String, String>,
    /// The pod its StrimziPodSet describes.
    desired_pod: &'a Pod,
}

/// Runs `look` until it finds what it looks for (`Ok(Ok(()))`), every [`LOOK_AGAIN_AFTER`]
/// until `deadline`: an error of `look` itself (`Err`) ends it at once, and what was seen
/// last (`Ok(Err(seen))`) is the error at the deadline, naming `listener`.
async fn look_until<F, Fut>(
    deadline: tokio::time::Instant,
    listener: &str,
    look: F,
) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Result<(), String>, AdminError>>,
{
    loop {
        let seen = look()
            .await
            .map_err(|error| format!("listener {listener}: {error}"))?;
        match seen {
            Ok(()) => return Ok(()),
            Err(seen) if tokio::time::Instant::now() >= deadline => {
                return Err(format!(
                    "listener {listener}: {seen} {}s after the call",
                    APPLIED_WITHIN.as_secs()
                ));
            }
            Err(_) => tokio::time::sleep(LOOK_AGAIN_AFTER).await,
        }
    }
}

/// What a node reloaded.
struct Reloaded {
    /// The listeners seen to serve their Secret's certificate.
    listeners: Vec<String>,
    /// The listeners seen to accept a client certificate of the current clients CA, when
    /// the clients CA changed.
    trusting: Vec<String>,
    /// The expiry of the certificate the node started with, read on its first reload.
    startup_not_after: Option<String>,
}

impl Reconciliation<'_> {
    /// Lets each of `nodes` (those the rolling step would restart) whose pod differs from
    /// its desired pod in certificates only load them without a restart, one node after the
    /// other, unless `STRIMZI_RELOAD_CERTIFICATES` is `false`. Returns the nodes still to
    /// restart and, for those that could have reloaded, why they restart (the end of their
    /// restart Event).
    pub(super) async fn reload_certificates(
        &self,
        cluster: &KafkaCluster,
        desired: &DesiredObjects,
        cas: &ClusterCas,
        pods: &BTreeMap<String, Pod>,
        nodes: Vec<NodeToRoll>,
    ) -> Result<(Vec<NodeToRoll>, BTreeMap<String, String>), ReconcileError> {
        if !self.operator.config.reload_certificates {
            return Ok((nodes, BTreeMap::new()));
        }
        let trusted = cas.cluster.authority.trusted_certificates().len();
        let mut still_to_restart = Vec::new();
        let mut restart_notes = BTreeMap::new();
        // Issued when a trust store change is first to be checked, for every node after.
        let mut trust_check_identity = None;
        for node in nodes {
            let (Some(pod), Some(desired_pod)) = (pods.get(&node.pod), desired.pods.get(&node.pod))
            else {
                still_to_restart.push(node);
                continue;
            };
            let running = pod.metadata.annotations.clone().unwrap_or_default();
            match reload_outlook(&node, &running, desired_pod, trusted) {
                ReloadOutlook::Reload => {}
                ReloadOutlook::Restart => {
                    still_to_restart.push(node);
                    continue;
                }
                ReloadOutlook::RestartWhileKeyReplaced => {
                    restart_notes.insert(node.pod.clone(), format!(" ({NEW_KEY_NEEDS_RESTART})"));
                    still_to_restart.push(node);
                    continue;
                }
            }
            let reloading = Reloading {
                node: &node,
                running: &running,
                desired_pod,
            };
            match self
                .reload_node(cluster, desired, cas, &reloading, &mut trust_check_identity)
                .await
            {
                Ok(reloaded) => {
                    self.mark_reloaded(pod, desired_pod, reloaded.startup_not_after.as_deref())
                        .await?;
                    self.reloaded(pod, &node, &reloaded).await;
                }
                Err(why) => {
                    tracing::warn!(pod = %node.pod, %why, "the certificates could not be reloaded: the node restarts instead");
                    restart_notes.insert(
                        node.pod.clone(),
                        format!(" (its certificates could not be reloaded: {why})"),
                    );
                    still_to_restart.push(node);
                }
            }
        }
        Ok((still_to_restart, restart_notes))
    }

    /// Asks a node to load its certificates again and checks that each reloaded listener
    /// serves the certificate of the node's Secret and, when its trust of the clients CA
    /// changes, that each listener trusting the clients CA accepts a client certificate of the
    /// current clients CA (`trust_check_identity`, issued on first use); what was reloaded, or
    /// why not. On the first reload since the node started, the expiry of the certificate it
    /// serves before the reload (the one it started with) is read first.
    async fn reload_node(
        &self,
        cluster: &KafkaCluster,
        desired: &DesiredObjects,
        cas: &ClusterCas,
        reloading: &Reloading<'_>,
        trust_check_identity: &mut Option<String>,
    ) -> Result<Reloaded, String> {
        let node = reloading.node;
        let server_config = desired
            .server_configs
            .get(&node.pod)
            .ok_or_else(|| "no desired server.config".to_owned())?;
        let options = reload_options(server_config);
        let secrets: Vec<&Secret> = desired
            .node_certificates
            .iter()
            .chain([&desired.trust_bundle])
            .collect();
        let expected = expected_certificates(&options, &secrets)?;
        let host = cluster.pod_dns_name(&node.pod);
        let port = if node.broker {
            REPLICATION_PORT
        } else {
            CONTROL_PLANE_PORT
        };
        let identity = &desired.cluster_operator_certificate;
        let admin = self
            .node_admin_client(format!("{host}:{port}"), operator_tls(identity, cas))
            .map_err(|error| error.to_string())?;
        let mut served_before = Vec::new();
        for listener in &expected {
            let address = format!("{host}:{}", listener.port);
            let served = admin
                .served_certificate(&address)
                .await
                .map_err(|error| format!("listener {}: {error}", listener.name))?;
            served_before.push(served);
        }
        let trusting = trust_checks(
            reloading.running,
            reloading.desired_pod,
            &options,
            reload_visible(&served_before, &expected),
        )?;
        let first_reload = !reloading
            .running
            .contains_key(STARTUP_CERTIFICATE_NOT_AFTER);
        let startup_not_after = match (first_reload, own_listener_index(&expected, port)) {
            (false, _) => None,
            (true, Some(index)) => {
                let parsed = ParsedCertificate::from_der(&served_before[index])
                    .map_err(|error| format!("the certificate it started with: {error}"))?;
                Some(startup_certificate_not_after(parsed.not_after()))
            }
            (true, None) => return Err(format!("no listener on {port} to reload")),
        };
        let ops = options
            .into_iter()
            .map(|(name, value)| AlterConfigOp::Set { name, value })
            .collect();
        admin
            .alter_own_configs(node.node_id, ops)
            .await
            .map_err(|error| error.to_string())?;
        // The node applies the change once it replays the metadata record the call wrote, a
        // moment after the call returns: each listener is looked at until it serves the new
        // certificate and accepts a client of the current clients CA, for a bounded time.
        let deadline = tokio::time::Instant::now() + APPLIED_WITHIN;
        let mut listeners = Vec::new();
        for listener in expected {
            let address = format!("{host}:{}", listener.port);
            let wanted = &listener.certificate;
            look_until(deadline, &listener.name, || async {
                let served = admin.served_certificate(&address).await?;
                Ok((served == *wanted)
                    .then_some(())
                    .ok_or_else(|| "it served another certificate than its Secret's".to_owned()))
            })
            .await?;
            listeners.push(listener.name);
        }
        let mut accepted = Vec::new();
        if !trusting.is_empty() {
            let checker = self
                .trust_checker(format!("{host}:{port}"), cas, trust_check_identity)
                .await?;
            for TrustingListener { name, port } in trusting {
                let address = format!("{host}:{port}");
                look_until(deadline, &name, || async {
                    Ok(checker
                        .client_certificate_accepted(&address)
                        .await
                        .map_err(|refused| {
                            format!(
                                "it refused a client certificate of the current clients CA: {refused}"
                            )
                        }))
                })
                .await?;
                accepted.push(name);
            }
        }
        Ok(Reloaded {
            listeners,
            trusting: accepted,
            startup_not_after,
        })
    }

    /// A client of the node at `address` presenting a certificate of the current clients CA
    /// (`identity`, issued here on first use).
    async fn trust_checker(
        &self,
        address: String,
        cas: &ClusterCas,
        identity: &mut Option<String>,
    ) -> Result<AdminClient, String> {
        let pem = match identity {
            Some(pem) => pem.clone(),
            None => {
                let pem = cas
                    .trust_check_identity()
                    .await
                    .map_err(|error| format!("a client certificate to check with: {error}"))?;
                identity.insert(pem).clone()
            }
        };
        let tls = TlsConfig {
            ca_pem: cas.cluster.authority.trusted_pem_bundle(),
            client_identity_pem: Some(pem),
            verify_hostname: false,
        };
        self.node_admin_client(address, tls)
            .map_err(|error| error.to_string())
    }

    /// Sets the certificate annotations and the revision of the reloaded `pod` to those of
    /// `desired_pod`, so that it runs as desired, and the expiry of the certificate it started
    /// with when first read (`startup_not_after`); only the pod that was checked (its UID).
    async fn mark_reloaded(
        &self,
        pod: &Pod,
        desired_pod: &Pod,
        startup_not_after: Option<&str>,
    ) -> Result<(), ReconcileError> {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let mut annotations = annotations_after_reload(desired_pod);
        if let Some(not_after) = startup_not_after {
            annotations.insert(
                STARTUP_CERTIFICATE_NOT_AFTER.to_owned(),
                Some(not_after.to_owned()),
            );
        }
        let patch = serde_json::json!({"metadata": {
            "uid": pod.metadata.uid,
            "annotations": annotations,
        }});
        self.api::<Pod>()
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| ReconcileError::api("annotate Pod", &name, source))?;
        self.operator.runtime.metrics().count_write("Pod", "patch");
        Ok(())
    }

    /// Says in a Normal Event on `pod` that `node` loaded its new certificates without a
    /// restart, and on which listeners that was seen.
    async fn reloaded(&self, pod: &Pod, node: &NodeToRoll, reloaded: &Reloaded) {
        let why = node.explanations();
        let mut checked = format!(
            "listeners {} serve their certificates",
            reloaded.listeners.join(", ")
        );
        if !reloaded.trusting.is_empty() {
            checked.push_str(&format!(
                ", and {} accept a client certificate of the current clients CA",
                reloaded.trusting.join(", ")
            ));
        }
        tracing::info!(pod = %node.pod, node_id = node.node_id, reasons = %why.join("; "), "reloaded the certificates of a Kafka node without a restart");
        self.operator
            .runtime
            .events()
            .publish_logged(
                &pod.object_ref(&()),
                Severity::Normal,
                CERTIFICATES_RELOADED,
                "StrimziInitiatedCertificateReload",
                &format!(
                    "Certificates reloaded without a restart, because {}; {checked}",
                    why.join(" and "),
                ),
            )
            .await;
    }
}
