//! What one scrape saw of the cluster ([`Snapshot`]) and the Prometheus text made from it
//! ([`render`]): the metric names, label names and meanings of Kafka Exporter 1.9.0 for the
//! subset CONTRACT.md section 6 lists. Pure; [`crate::collect`] fills the snapshot.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::config::Filters;

/// A broker of the cluster's metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broker {
    /// Node id.
    pub id: i32,
    /// `host:port` it advertises.
    pub address: String,
}

/// One partition of a topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Partition number.
    pub id: i32,
    /// Leader node id (-1 without a leader).
    pub leader: i32,
    /// Replica node ids, the preferred leader first.
    pub replicas: Vec<i32>,
    /// In-sync replica node ids.
    pub isr: Vec<i32>,
    /// Log start offset (low watermark).
    pub oldest_offset: i64,
    /// Log end offset (high watermark).
    pub current_offset: i64,
}

/// A topic and its partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    /// Topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<Partition>,
}

/// A consumer group and the offsets it committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Group id.
    pub name: String,
    /// How many members it has now.
    pub members: usize,
    /// Committed offset per topic and partition (-1: none committed for that partition).
    pub committed: BTreeMap<(String, i32), i64>,
}

/// Everything one scrape read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The brokers.
    pub brokers: Vec<Broker>,
    /// Every topic (the filters apply in [`render`]).
    pub topics: Vec<Topic>,
    /// Every consumer group (the filters apply in [`render`]).
    pub groups: Vec<Group>,
}

/// One metric family being written.
struct Family<'a> {
    out: &'a mut String,
}

impl<'a> Family<'a> {
    fn new(out: &'a mut String, name: &str, help: &str) -> Self {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        Self { out }
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: i64) {
        let labels: Vec<String> = labels
            .iter()
            .map(|(label, value)| format!("{label}=\"{}\"", escape(value)))
            .collect();
        let _ = if labels.is_empty() {
            writeln!(self.out, "{name} {value}")
        } else {
            writeln!(self.out, "{name}{{{}}} {value}", labels.join(","))
        };
    }
}

/// A label value in Prometheus' text format.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A group's offsets of the topics `filters` export, keeping only topics the group committed
/// an offset of (-1 on every partition means the group never read the topic).
fn consumed_topics<'a>(group: &'a Group, filters: &Filters) -> BTreeMap<&'a str, Vec<(i32, i64)>> {
    let mut topics: BTreeMap<&str, Vec<(i32, i64)>> = BTreeMap::new();
    for ((topic, partition), offset) in &group.committed {
        if filters.topic(topic) {
            topics
                .entry(topic.as_str())
                .or_default()
                .push((*partition, *offset));
        }
    }
    topics.retain(|_, partitions| partitions.iter().any(|(_, offset)| *offset >= 0));
    topics
}

/// The Prometheus text of `snapshot`. Topics and groups pass `filters`; with
/// `show_all_offsets` false only groups that have members are reported (the real exporter
/// then asks only for the partitions assigned to members, so an empty group shows nothing).
///
/// Lag per partition is the log end offset minus the committed offset. As in the real
/// exporter, a partition of a consumed topic without a committed offset reports offset and lag
/// -1; the lag sum leaves it out, the offset sum adds its -1; a topic without any committed
/// offset of the group is not reported for it.
pub fn render(snapshot: &Snapshot, filters: &Filters, show_all_offsets: bool) -> String {
    let mut out = String::new();
    let count = i64::try_from(snapshot.brokers.len()).unwrap_or(i64::MAX);
    Family::new(
        &mut out,
        "kafka_brokers",
        "Number of brokers in the Kafka cluster.",
    )
    .sample("kafka_brokers", &[], count);
    let mut family = Family::new(&mut out, "kafka_broker_info", "Information about a broker.");
    for broker in &snapshot.brokers {
        family.sample(
            "kafka_broker_info",
            &[("address", &broker.address), ("id", &broker.id.to_string())],
            1,
        );
    }

    let topics: Vec<&Topic> = snapshot
        .topics
        .iter()
        .filter(|topic| filters.topic(&topic.name))
        .collect();
    let mut family = Family::new(
        &mut out,
        "kafka_topic_partitions",
        "Number of partitions of a topic.",
    );
    for topic in &topics {
        let partitions = i64::try_from(topic.partitions.len()).unwrap_or(i64::MAX);
        family.sample(
            "kafka_topic_partitions",
            &[("topic", &topic.name)],
            partitions,
        );
    }
    type PartitionValue = fn(&Partition) -> i64;
    let per_partition: [(&str, &str, PartitionValue); 7] = [
        (
            "kafka_topic_partition_current_offset",
            "Log end offset of a partition.",
            |p| p.current_offset,
        ),
        (
            "kafka_topic_partition_oldest_offset",
            "Log start offset of a partition.",
            |p| p.oldest_offset,
        ),
        (
            "kafka_topic_partition_leader",
            "Node id of a partition's leader.",
            |p| i64::from(p.leader),
        ),
        (
            "kafka_topic_partition_replicas",
            "Number of replicas of a partition.",
            |p| i64::try_from(p.replicas.len()).unwrap_or(i64::MAX),
        ),
        (
            "kafka_topic_partition_in_sync_replica",
            "Number of in-sync replicas of a partition.",
            |p| i64::try_from(p.isr.len()).unwrap_or(i64::MAX),
        ),
        (
            "kafka_topic_partition_leader_is_preferred",
            "1 if a partition's leader is its preferred replica, else 0.",
            |p| i64::from(p.replicas.first() == Some(&p.leader)),
        ),
        (
            "kafka_topic_partition_under_replicated_partition",
            "1 if a partition has fewer in-sync replicas than replicas, else 0.",
            |p| i64::from(p.isr.len() < p.replicas.len()),
        ),
    ];
    for (name, help, value) in per_partition {
        let mut family = Family::new(&mut out, name, help);
        for topic in &topics {
            for partition in &topic.partitions {
                family.sample(
                    name,
                    &[
                        ("topic", &topic.name),
                        ("partition", &partition.id.to_string()),
                    ],
                    value(partition),
                );
            }
        }
    }

    let log_end: BTreeMap<(&str, i32), i64> = snapshot
        .topics
        .iter()
        .flat_map(|topic| {
            topic
                .partitions
                .iter()
                .map(|p| ((topic.name.as_str(), p.id), p.current_offset))
        })
        .collect();
    let groups: Vec<&Group> = snapshot
        .groups
        .iter()
        .filter(|group| filters.group(&group.name))
        .filter(|group| show_all_offsets || group.members > 0)
        .collect();
    let mut family = Family::new(
        &mut out,
        "kafka_consumergroup_members",
        "Number of members of a consumer group.",
    );
    for group in &groups {
        let members = i64::try_from(group.members).unwrap_or(i64::MAX);
        family.sample(
            "kafka_consumergroup_members",
            &[("consumergroup", &group.name)],
            members,
        );
    }
    // Per group and consumed topic: (partition, committed, lag) rows and the two sums.
    let mut rows = Vec::new();
    for group in &groups {
        for (topic, partitions) in consumed_topics(group, filters) {
            let mut offsets = Vec::new();
            let (mut offset_sum, mut lag_sum) = (0, 0);
            for (partition, committed) in partitions {
                let lag = if committed < 0 {
                    Some(-1)
                } else {
                    log_end.get(&(topic, partition)).map(|end| {
                        lag_sum += end - committed;
                        end - committed
                    })
                };
                offset_sum += committed;
                offsets.push((partition, committed, lag));
            }
            rows.push((group.name.as_str(), topic, offsets, offset_sum, lag_sum));
        }
    }
    let mut family = Family::new(
        &mut out,
        "kafka_consumergroup_current_offset",
        "Offset a consumer group committed on a partition.",
    );
    for (group, topic, offsets, _, _) in &rows {
        for (partition, committed, _) in offsets {
            let partition = partition.to_string();
            family.sample(
                "kafka_consumergroup_current_offset",
                &[
                    ("consumergroup", group),
                    ("topic", topic),
                    ("partition", &partition),
                ],
                *committed,
            );
        }
    }
    let mut family = Family::new(
        &mut out,
        "kafka_consumergroup_current_offset_sum",
        "Sum of the offsets a consumer group committed on a topic.",
    );
    for (group, topic, _, offset_sum, _) in &rows {
        family.sample(
            "kafka_consumergroup_current_offset_sum",
            &[("consumergroup", group), ("topic", topic)],
            *offset_sum,
        );
    }
    let mut family = Family::new(
        &mut out,
        "kafka_consumergroup_lag",
        "Messages a consumer group has yet to read from a partition: log end offset minus \
         committed offset.",
    );
    for (group, topic, offsets, _, _) in &rows {
        for (partition, _, lag) in offsets {
            if let Some(lag) = lag {
                let partition = partition.to_string();
                family.sample(
                    "kafka_consumergroup_lag",
                    &[
                        ("consumergroup", group),
                        ("topic", topic),
                        ("partition", &partition),
                    ],
                    *lag,
                );
            }
        }
    }
    let mut family = Family::new(
        &mut out,
        "kafka_consumergroup_lag_sum",
        "Sum of a consumer group's lag over the partitions of a topic.",
    );
    for (group, topic, _, _, lag_sum) in &rows {
        family.sample(
            "kafka_consumergroup_lag_sum",
            &[("consumergroup", group), ("topic", topic)],
            *lag_sum,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_args;

    fn filters(args: &[&str]) -> Filters {
        let mut all = vec!["--kafka.server=k:9092".to_owned()];
        all.extend(args.iter().map(|arg| (*arg).to_owned()));
        parse_args(&all).unwrap().filters
    }

    fn partition(id: i32, leader: i32, replicas: &[i32], isr: &[i32], end: i64) -> Partition {
        Partition {
            id,
            leader,
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
            oldest_offset: 0,
            current_offset: end,
        }
    }

    fn snapshot() -> Snapshot {
        Snapshot {
            brokers: vec![
                Broker {
                    id: 0,
                    address: "b-0:9091".into(),
                },
                Broker {
                    id: 1,
                    address: "b-1:9091".into(),
                },
            ],
            topics: vec![
                Topic {
                    name: "lagging".into(),
                    partitions: vec![
                        partition(0, 0, &[0, 1], &[0, 1], 10),
                        partition(1, 0, &[1, 0], &[0], 7),
                    ],
                },
                Topic {
                    name: "__consumer_offsets".into(),
                    partitions: vec![partition(0, 1, &[1], &[1], 3)],
                },
                Topic {
                    name: "unread".into(),
                    partitions: vec![partition(0, 1, &[1], &[1], 5)],
                },
            ],
            groups: vec![
                Group {
                    name: "watchers".into(),
                    members: 0,
                    committed: BTreeMap::from([
                        (("lagging".into(), 0), 4),
                        (("lagging".into(), 1), -1),
                        (("unread".into(), 0), -1),
                    ]),
                },
                Group {
                    name: "readers".into(),
                    members: 2,
                    committed: BTreeMap::from([(("lagging".into(), 0), 10)]),
                },
            ],
        }
    }

    fn lines(text: &str) -> Vec<&str> {
        text.lines().filter(|line| !line.starts_with('#')).collect()
    }

    #[test]
    fn topics_partitions_and_brokers_are_exported() {
        let text = render(&snapshot(), &filters(&["--topic.exclude=^__"]), true);
        let lines = lines(&text);
        for expected in [
            "kafka_brokers 2",
            "kafka_broker_info{address=\"b-0:9091\",id=\"0\"} 1",
            "kafka_topic_partitions{topic=\"lagging\"} 2",
            "kafka_topic_partition_current_offset{topic=\"lagging\",partition=\"0\"} 10",
            "kafka_topic_partition_oldest_offset{topic=\"lagging\",partition=\"1\"} 0",
            "kafka_topic_partition_leader{topic=\"lagging\",partition=\"1\"} 0",
            "kafka_topic_partition_replicas{topic=\"lagging\",partition=\"0\"} 2",
            "kafka_topic_partition_in_sync_replica{topic=\"lagging\",partition=\"1\"} 1",
            "kafka_topic_partition_leader_is_preferred{topic=\"lagging\",partition=\"0\"} 1",
            "kafka_topic_partition_leader_is_preferred{topic=\"lagging\",partition=\"1\"} 0",
            "kafka_topic_partition_under_replicated_partition{topic=\"lagging\",partition=\"1\"} 1",
            "kafka_topic_partition_under_replicated_partition{topic=\"lagging\",partition=\"0\"} 0",
        ] {
            assert!(lines.contains(&expected), "no {expected:?} in\n{text}");
        }
        assert!(!text.contains("__consumer_offsets"), "{text}");
        // Every family is typed once, as a gauge.
        assert!(text.contains("# TYPE kafka_consumergroup_lag gauge\n"));
        assert_eq!(text.matches("# TYPE kafka_brokers gauge").count(), 1);
    }

    #[test]
    fn lag_is_log_end_minus_committed_offset() {
        let text = render(&snapshot(), &filters(&[]), true);
        let lines = lines(&text);
        for expected in [
            "kafka_consumergroup_members{consumergroup=\"watchers\"} 0",
            "kafka_consumergroup_members{consumergroup=\"readers\"} 2",
            "kafka_consumergroup_current_offset{consumergroup=\"watchers\",topic=\"lagging\",partition=\"0\"} 4",
            "kafka_consumergroup_current_offset{consumergroup=\"watchers\",topic=\"lagging\",partition=\"1\"} -1",
            "kafka_consumergroup_lag{consumergroup=\"watchers\",topic=\"lagging\",partition=\"0\"} 6",
            "kafka_consumergroup_lag{consumergroup=\"watchers\",topic=\"lagging\",partition=\"1\"} -1",
            "kafka_consumergroup_lag_sum{consumergroup=\"watchers\",topic=\"lagging\"} 6",
            "kafka_consumergroup_current_offset_sum{consumergroup=\"watchers\",topic=\"lagging\"} 3",
            "kafka_consumergroup_lag{consumergroup=\"readers\",topic=\"lagging\",partition=\"0\"} 0",
        ] {
            assert!(lines.contains(&expected), "no {expected:?} in\n{text}");
        }
        // A topic the group never committed on is not the group's.
        assert!(
            !text.contains("topic=\"unread\",partition=\"0\"} -1"),
            "{text}"
        );
        assert!(
            !text.contains("consumergroup=\"watchers\",topic=\"unread\""),
            "{text}"
        );
    }

    #[test]
    fn groups_without_members_need_show_all_and_filters_apply() {
        let text = render(&snapshot(), &filters(&[]), false);
        assert!(!text.contains("watchers"), "{text}");
        assert!(text.contains("consumergroup=\"readers\""), "{text}");
        let text = render(&snapshot(), &filters(&["--group.exclude=^read"]), true);
        assert!(!text.contains("readers"), "{text}");
        assert!(text.contains("watchers"), "{text}");
        let text = render(&snapshot(), &filters(&["--topic.filter=^unread$"]), true);
        assert!(!text.contains("kafka_consumergroup_lag{"), "{text}");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
