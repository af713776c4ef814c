//! The JSON shapes of Cruise Control 2.5's answers that our client reads (CONTRACT.md 5.4),
//! built from the model (pure).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::config::{Capacities, simple_name};
use crate::model::{Cluster, Proposal};

/// Every answer carries the API's version.
pub const VERSION: i64 = 1;

/// Bytes as whole megabytes (MiB, rounded to nearest), as Cruise Control reports data moved.
pub fn megabytes(bytes: u64) -> u64 {
    (bytes + (1 << 19)) >> 20
}

/// An error answer's body: `{"errorMessage", "stackTrace", "version"}`.
pub fn error_body(message: &str) -> Value {
    json!({
        "errorMessage": message,
        "stackTrace": format!("(Cruise Control stand-in: no Java stack) {message}"),
        "version": VERSION,
    })
}

/// `{"brokers": [...], "hosts": [...]}`: replica and leader counts of each broker, with its
/// capacity; measured loads are zero (the stand-in has no metrics).
pub fn load(cluster: &Cluster, capacities: &Capacities) -> Value {
    let counts = cluster.counts();
    let mut hosts: BTreeMap<&str, (usize, usize, usize, Option<&str>, f64)> = BTreeMap::new();
    let brokers: Vec<Value> = cluster
        .brokers
        .iter()
        .map(|(id, broker)| {
            let replicas = counts.replicas.get(id).copied().unwrap_or(0);
            let leaders = counts.leaders.get(id).copied().unwrap_or(0);
            let disk_mb = counts.bytes.get(id).copied().unwrap_or(0) as f64 / 1_048_576.0;
            let host =
                hosts
                    .entry(broker.host.as_str())
                    .or_insert((0, 0, 0, broker.rack.as_deref(), 0.0));
            host.0 += 1;
            host.1 += replicas;
            host.2 += leaders;
            host.4 += disk_mb;
            let capacity = capacities.of(*id);
            let disk_pct = capacity
                .filter(|c| c.disk_mb > 0.0)
                .map_or(0.0, |c| 100.0 * disk_mb / c.disk_mb);
            json!({
                "Broker": id,
                "Host": broker.host,
                "Rack": broker.rack.clone().unwrap_or_else(|| broker.host.clone()),
                "BrokerState": "ALIVE",
                "Replicas": replicas,
                "Leaders": leaders,
                "CpuPct": 0.0,
                "DiskPct": disk_pct,
                "DiskMB": disk_mb,
                "NwOutRate": 0.0,
                "LeaderNwInRate": 0.0,
                "FollowerNwInRate": 0.0,
                "PnwOutRate": 0.0,
                "DiskCapacityMB": capacity.map_or(0.0, |c| c.disk_mb),
                "NumCore": capacity.map_or(0.0, |c| c.cpu),
                "NetworkInCapacity": capacity.map_or(0.0, |c| c.network_in_kb),
                "NetworkOutCapacity": capacity.map_or(0.0, |c| c.network_out_kb),
            })
        })
        .collect();
    let hosts: Vec<Value> = hosts
        .into_iter()
        .map(|(host, (brokers, replicas, leaders, rack, disk_mb))| {
            json!({
                "Host": host,
                "Rack": rack.unwrap_or(host),
                "Brokers": brokers,
                "Replicas": replicas,
                "Leaders": leaders,
                "CpuPct": 0.0,
                "DiskMB": disk_mb,
                "NwOutRate": 0.0,
                "LeaderNwInRate": 0.0,
                "FollowerNwInRate": 0.0,
                "PnwOutRate": 0.0,
            })
        })
        .collect();
    json!({"brokers": brokers, "hosts": hosts})
}

/// A score in 0..=100 of how even the replica counts are: 100 × fewest / most.
pub fn balancedness(cluster: &Cluster) -> f64 {
    let counts = cluster.counts().replicas;
    let most = counts.values().copied().max().unwrap_or(0);
    let fewest = counts.values().copied().min().unwrap_or(0);
    if most == 0 {
        100.0
    } else {
        100.0 * fewest as f64 / most as f64
    }
}

/// What a proposal answer says besides the proposal itself.
#[derive(Clone, Debug)]
pub struct ProposalContext<'a> {
    /// The goals used, full class names.
    pub goals: &'a [String],
    /// Topics excluded.
    pub excluded_topics: &'a BTreeSet<String>,
    /// Valid metric windows.
    pub windows: u32,
    /// Include `proposals` and `loadBeforeOptimization`.
    pub verbose: bool,
}

/// The answer to a proposal request: `summary`, `goalSummary`, the loads and, verbose, the
/// proposals.
pub fn proposal(
    before: &Cluster,
    proposal: &Proposal,
    capacities: &Capacities,
    context: &ProposalContext<'_>,
) -> Value {
    let after = proposal.apply(before);
    let status = if proposal.movements.is_empty() {
        "NO-ACTION"
    } else {
        "FIXED"
    };
    let goal_summary: Vec<Value> = context
        .goals
        .iter()
        .map(|goal| {
            json!({
                "goal": simple_name(goal),
                "status": status,
                "optimizationTimeMs": 0,
                "clusterModelStats": {"metadata": {"brokers": after.brokers.len(),
                    "replicas": after.partitions.iter().map(|p| p.replicas.len()).sum::<usize>(),
                    "topics": after.partitions.iter().map(|p| p.topic.as_str()).collect::<BTreeSet<_>>().len()}},
            })
        })
        .collect();
    let mut answer = json!({
        "summary": {
            "numReplicaMovements": proposal.replica_moves(),
            "dataToMoveMB": megabytes(proposal.data_to_move()),
            "numIntraBrokerReplicaMovements": 0,
            "intraBrokerDataToMoveMB": 0,
            "numLeaderMovements": proposal.leader_moves(),
            "recentWindows": context.windows,
            "monitoredPartitionsPercentage": 100.0,
            "provisionStatus": "RIGHT_SIZED",
            "provisionRecommendation": "",
            "excludedTopics": context.excluded_topics,
            "excludedBrokersForLeadership": [],
            "excludedBrokersForReplicaMove": [],
            "onDemandBalancednessScoreBefore": balancedness(before),
            "onDemandBalancednessScoreAfter": balancedness(&after),
        },
        "goalSummary": goal_summary,
        "loadAfterOptimization": load(&after, capacities),
        "version": VERSION,
    });
    if context.verbose {
        answer["proposals"] = proposal
            .movements
            .iter()
            .map(|movement| {
                json!({
                    "topicPartition": {"topic": movement.topic, "partition": movement.partition},
                    "oldLeader": movement.old_leader,
                    "oldReplicas": movement.old_replicas,
                    "newReplicas": movement.new_replicas,
                })
            })
            .collect();
        answer["loadBeforeOptimization"] = load(before, capacities);
    }
    answer
}
