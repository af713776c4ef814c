//! Node-ID assignment across pools, with `strimzi.io/next-node-ids` and
//! `strimzi.io/remove-node-ids`.
//!
//! The rules follow Strimzi: the IDs a pool has are those in its status; a pool that grows
//! takes IDs from its `next-node-ids` ranges first, then the lowest ID no pool uses; a pool
//! that shrinks gives up IDs from its `remove-node-ids` ranges first, then its highest IDs.
//! IDs stay unique across all pools of the cluster.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use strimzi_api::annotations::{NEXT_NODE_IDS, REMOVE_NODE_IDS};
use strimzi_api::node_pool::{KafkaNodePool, ProcessRole};

use crate::model::{ModelError, ModelWarning};

/// Reason of the warning about an unreadable ID range annotation.
pub const INVALID_NODE_ID_RANGE: &str = "InvalidNodeIdRange";

/// The node IDs of one pool before and after this reconciliation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolNodeIds {
    /// IDs the pool has now (from its status).
    pub current: BTreeSet<i32>,
    /// IDs the pool should have.
    pub desired: BTreeSet<i32>,
    /// IDs the pool gives up (scale down).
    pub removed: BTreeSet<i32>,
    /// IDs the pool gains (scale up or a new pool).
    pub added: BTreeSet<i32>,
    /// Desired IDs of nodes that had the broker role and lose it.
    pub used_to_be_broker: BTreeSet<i32>,
}

/// A user's list of preferred node IDs such as `[0, 10-12, 20-18]`: single IDs and ranges,
/// each range counted from its first to its last bound (downwards when the first is larger).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeIdRange {
    ranges: VecDeque<(i32, i32)>,
}

impl NodeIdRange {
    /// Parses the annotation value; blank or `[]` is an empty range.
    pub fn parse(value: &str) -> Result<Self, String> {
        let trimmed = value.trim();
        let inner = trimmed
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .map(str::trim);
        let inner = match inner {
            _ if trimmed.is_empty() => return Ok(Self::default()),
            Some("") => return Ok(Self::default()),
            Some(inner) => inner,
            None => return Err(format!("Invalid Node ID range: {value}")),
        };
        let parse_id = |text: &str| {
            let text = text.trim();
            if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) {
                text.parse::<i32>()
                    .map_err(|_| format!("Invalid Node ID (not an integer): {text}"))
            } else {
                Err(format!("Invalid Node ID range: {value}"))
            }
        };
        let ranges = inner
            .split(',')
            .map(|item| match item.split_once('-') {
                Some((start, end)) => Ok((parse_id(start)?, parse_id(end)?)),
                None => parse_id(item).map(|id| (id, id)),
            })
            .collect::<Result<VecDeque<_>, String>>()?;
        Ok(Self { ranges })
    }

    /// Takes the next ID of the range, or `None` when it is used up.
    fn next_id(&mut self) -> Option<i32> {
        let (start, end) = self.ranges.pop_front()?;
        if start != end {
            let following = if start < end { start + 1 } else { start - 1 };
            self.ranges.push_front((following, end));
        }
        Some(start)
    }
}

/// Reads a range annotation of `pool`; an unreadable one gives a warning and counts as absent.
fn range_annotation(
    pool: &KafkaNodePool,
    key: &str,
    fallback: &str,
    warnings: &mut Vec<ModelWarning>,
) -> Option<NodeIdRange> {
    let value = pool.metadata.annotations.as_ref()?.get(key)?;
    match NodeIdRange::parse(value) {
        Ok(range) => Some(range),
        Err(error) => {
            warnings.push(ModelWarning::new(
                INVALID_NODE_ID_RANGE,
                format!(
                    "KafkaNodePool {}: annotation {key} is ignored: {error}. {fallback}",
                    pool.metadata.name.as_deref().unwrap_or_default()
                ),
            ));
            None
        }
    }
}

/// The lowest ID not in `in_use`.
fn lowest_free(in_use: &BTreeSet<i32>) -> i32 {
    (0..).find(|id| !in_use.contains(id)).unwrap_or(i32::MAX)
}

/// Assigns the node IDs of every pool. Pools are handled in name order so that the result
/// does not depend on the order the caller listed them in.
pub fn assign_node_ids(
    pools: &[KafkaNodePool],
) -> Result<(BTreeMap<String, PoolNodeIds>, Vec<ModelWarning>), ModelError> {
    let mut sorted: Vec<&KafkaNodePool> = pools.iter().collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));

    let status_ids = |pool: &KafkaNodePool| -> Option<Vec<i32>> {
        pool.status
            .as_ref()
            .and_then(|status| status.node_ids.clone())
    };
    let mut in_use = BTreeSet::new();
    for pool in &sorted {
        for id in status_ids(pool).unwrap_or_default() {
            if !in_use.insert(id) {
                return Err(ModelError::InvalidNodeIds(format!(
                    "Found duplicate node ID {id} in node pool {}",
                    pool.metadata.name.as_deref().unwrap_or_default()
                )));
            }
        }
    }

    let mut warnings = Vec::new();
    let mut assignments = BTreeMap::new();
    for pool in sorted {
        let name = pool.metadata.name.clone().unwrap_or_default();
        let replicas = usize::try_from(pool.spec.replicas).unwrap_or(0);
        let current: BTreeSet<i32> = status_ids(pool).unwrap_or_default().into_iter().collect();
        let mut ids = PoolNodeIds {
            desired: current.clone(),
            current,
            ..PoolNodeIds::default()
        };
        if replicas < ids.current.len() {
            let mut preferred = range_annotation(
                pool,
                REMOVE_NODE_IDS,
                "Nodes will be scaled down from the highest node ID.",
                &mut warnings,
            );
            for _ in replicas..ids.current.len() {
                let from_range = preferred.as_mut().and_then(|range| {
                    std::iter::from_fn(|| range.next_id()).find(|id| ids.desired.contains(id))
                });
                if let Some(id) = from_range.or_else(|| ids.desired.last().copied()) {
                    ids.desired.remove(&id);
                    ids.removed.insert(id);
                }
            }
        } else if replicas > ids.current.len() {
            let mut preferred = range_annotation(
                pool,
                NEXT_NODE_IDS,
                "New node IDs will be assigned sequentially.",
                &mut warnings,
            );
            for _ in ids.current.len()..replicas {
                let from_range = preferred.as_mut().and_then(|range| {
                    std::iter::from_fn(|| range.next_id()).find(|id| !in_use.contains(id))
                });
                let id = from_range.unwrap_or_else(|| lowest_free(&in_use));
                in_use.insert(id);
                ids.desired.insert(id);
                ids.added.insert(id);
            }
        }
        let was_broker = pool
            .status
            .as_ref()
            .and_then(|status| status.roles.as_ref())
            .is_some_and(|roles| roles.contains(&ProcessRole::Broker));
        if was_broker && !pool.spec.has_role(ProcessRole::Broker) {
            ids.used_to_be_broker = ids.desired.intersection(&ids.current).copied().collect();
        }
        assignments.insert(name, ids);
    }
    Ok((assignments, warnings))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn pool(
        name: &str,
        replicas: i32,
        status_ids: Option<Vec<i32>>,
        annotations: &[(&str, &str)],
    ) -> KafkaNodePool {
        let annotations: serde_json::Map<String, serde_json::Value> = annotations
            .iter()
            .map(|(key, value)| ((*key).to_owned(), json!(value)))
            .collect();
        serde_json::from_value(json!({
            "apiVersion": "kafka.strimzi.io/v1",
            "kind": "KafkaNodePool",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"replicas": replicas, "roles": ["broker"], "storage": {"type": "ephemeral"}},
            "status": {"nodeIds": status_ids},
        }))
        .unwrap()
    }

    fn set(ids: &[i32]) -> BTreeSet<i32> {
        ids.iter().copied().collect()
    }

    #[test]
    fn ranges_parse_like_strimzi() {
        let mut range = NodeIdRange::parse(" [ 3, 10 - 12, 7-5 ] ").unwrap();
        let ids: Vec<i32> = std::iter::from_fn(|| range.next_id()).collect();
        assert_eq!(ids, vec![3, 10, 11, 12, 7, 6, 5]);
        assert_eq!(NodeIdRange::parse("[]").unwrap(), NodeIdRange::default());
        assert_eq!(NodeIdRange::parse("  ").unwrap(), NodeIdRange::default());
        for bad in [
            "1,2",
            "[1,,2]",
            "[a]",
            "[1-]",
            "[-1]",
            "[1-2-3]",
            "[99999999999]",
        ] {
            assert!(NodeIdRange::parse(bad).is_err(), "{bad} accepted");
        }
    }

    /// One row: pools as (name, replicas, status IDs, annotations), then the expected
    /// (desired, removed, added) of each pool in name order.
    type Row<'a> = (
        &'a str,
        Vec<(&'a str, i32, Option<Vec<i32>>, Vec<(&'a str, &'a str)>)>,
        Vec<(Vec<i32>, Vec<i32>, Vec<i32>)>,
    );

    #[test]
    fn assignment_table() {
        let rows: Vec<Row> = vec![
            (
                "new pools take the lowest IDs in name order",
                vec![("b", 2, None, vec![]), ("a", 3, None, vec![])],
                vec![
                    (vec![0, 1, 2], vec![], vec![0, 1, 2]),
                    (vec![3, 4], vec![], vec![3, 4]),
                ],
            ),
            (
                "unchanged pool keeps its IDs",
                vec![("a", 3, Some(vec![5, 6, 7]), vec![])],
                vec![(vec![5, 6, 7], vec![], vec![])],
            ),
            (
                "scale up fills gaps from the lowest free ID",
                vec![
                    ("a", 4, Some(vec![0, 2]), vec![]),
                    ("b", 1, Some(vec![3]), vec![]),
                ],
                vec![
                    (vec![0, 1, 2, 4], vec![], vec![1, 4]),
                    (vec![3], vec![], vec![]),
                ],
            ),
            (
                "scale up takes next-node-ids first, skipping IDs in use by another pool",
                vec![
                    (
                        "a",
                        3,
                        Some(vec![0]),
                        vec![(NEXT_NODE_IDS, "[10, 100-101]")],
                    ),
                    ("b", 1, Some(vec![10]), vec![]),
                ],
                vec![
                    (vec![0, 100, 101], vec![], vec![100, 101]),
                    (vec![10], vec![], vec![]),
                ],
            ),
            (
                "an exhausted next-node-ids range falls back to the lowest free ID",
                vec![("a", 3, Some(vec![0]), vec![(NEXT_NODE_IDS, "[5]")])],
                vec![(vec![0, 1, 5], vec![], vec![1, 5])],
            ),
            (
                "scale down removes the highest IDs",
                vec![("a", 1, Some(vec![0, 1, 2]), vec![])],
                vec![(vec![0], vec![1, 2], vec![])],
            ),
            (
                "scale down removes remove-node-ids first, ignoring IDs the pool does not have",
                vec![(
                    "a",
                    1,
                    Some(vec![0, 1, 2]),
                    vec![(REMOVE_NODE_IDS, "[7, 0]")],
                )],
                vec![(vec![1], vec![0, 2], vec![])],
            ),
            (
                "invalid annotations are ignored",
                vec![
                    ("a", 1, Some(vec![0, 1, 2]), vec![(REMOVE_NODE_IDS, "0,1")]),
                    ("b", 2, None, vec![(NEXT_NODE_IDS, "[x]")]),
                ],
                vec![
                    (vec![0], vec![1, 2], vec![]),
                    (vec![3, 4], vec![], vec![3, 4]),
                ],
            ),
            (
                "IDs removed by one pool are not reused in the same reconciliation",
                vec![("a", 0, Some(vec![0]), vec![]), ("b", 1, None, vec![])],
                vec![(vec![], vec![0], vec![]), (vec![1], vec![], vec![1])],
            ),
        ];
        for (description, pools, expected) in rows {
            let pools: Vec<KafkaNodePool> = pools
                .into_iter()
                .map(|(name, replicas, ids, annotations)| pool(name, replicas, ids, &annotations))
                .collect();
            let (assignments, _) = assign_node_ids(&pools).unwrap();
            let actual: Vec<(BTreeSet<i32>, BTreeSet<i32>, BTreeSet<i32>)> = assignments
                .values()
                .map(|ids| (ids.desired.clone(), ids.removed.clone(), ids.added.clone()))
                .collect();
            let expected: Vec<_> = expected
                .iter()
                .map(|(desired, removed, added)| (set(desired), set(removed), set(added)))
                .collect();
            assert_eq!(actual, expected, "{description}");
        }
    }

    #[test]
    fn invalid_annotations_warn() {
        let pools = [pool("a", 2, None, &[(NEXT_NODE_IDS, "[x]")])];
        let (_, warnings) = assign_node_ids(&pools).unwrap();
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].reason, INVALID_NODE_ID_RANGE);
        assert!(warnings[0].message.contains("strimzi.io/next-node-ids"));
    }

    #[test]
    fn duplicate_ids_in_statuses_are_an_error() {
        let pools = [
            pool("a", 1, Some(vec![1]), &[]),
            pool("b", 1, Some(vec![1]), &[]),
        ];
        let error = assign_node_ids(&pools).unwrap_err();
        assert_eq!(error.reason(), "InvalidNodeIds");
        assert!(error.to_string().contains("duplicate node ID 1"));
    }

    #[test]
    fn role_change_from_broker_is_reported() {
        let mut changed = pool("a", 2, Some(vec![0, 1]), &[]);
        changed.spec.roles = vec![ProcessRole::Controller];
        changed.status.as_mut().unwrap().roles = Some(vec![ProcessRole::Broker]);
        let (assignments, _) = assign_node_ids(&[changed]).unwrap();
        assert_eq!(assignments["a"].used_to_be_broker, set(&[0, 1]));
        let (unchanged, _) = assign_node_ids(&[pool("a", 2, Some(vec![0, 1]), &[])]).unwrap();
        assert!(unchanged["a"].used_to_be_broker.is_empty());
    }
}
