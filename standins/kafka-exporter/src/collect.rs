//! Reading a [`Snapshot`] from Kafka with rdkafka: metadata, watermarks of every partition,
//! the consumer groups with their members, and each group's committed offsets (an
//! OffsetFetch through a consumer that never joins the group). Blocking: run it off the
//! async runtime.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};

use crate::config::{ExporterConfig, Filters};
use crate::metrics::{Broker, Group, Partition, Snapshot, Topic};
use crate::tls::TlsMaterial;

/// How long one Kafka request of a scrape may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The librdkafka settings of the exporter's clients (without `group.id`). Pure.
pub fn client_settings(config: &ExporterConfig, tls: &TlsMaterial) -> Vec<(String, String)> {
    let mut settings = vec![
        ("bootstrap.servers".to_owned(), config.servers.join(",")),
        (
            "client.id".to_owned(),
            "strimzi-kafka-exporter-standin".to_owned(),
        ),
        ("enable.auto.commit".to_owned(), "false".to_owned()),
    ];
    let protocol = match (config.tls.is_some(), config.sasl.is_some()) {
        (false, false) => "PLAINTEXT",
        (true, false) => "SSL",
        (false, true) => "SASL_PLAINTEXT",
        (true, true) => "SASL_SSL",
    };
    settings.push(("security.protocol".to_owned(), protocol.to_owned()));
    if config.tls.is_some() {
        if let Some(ca) = &tls.ca_pem {
            settings.push(("ssl.ca.pem".to_owned(), ca.clone()));
        }
        if let Some((cert, key)) = &tls.client {
            settings.push(("ssl.certificate.pem".to_owned(), cert.clone()));
            settings.push(("ssl.key.pem".to_owned(), key.clone()));
        }
        if tls.insecure_skip_verify {
            settings.push((
                "enable.ssl.certificate.verification".to_owned(),
                "false".to_owned(),
            ));
            settings.push((
                "ssl.endpoint.identification.algorithm".to_owned(),
                "none".to_owned(),
            ));
        }
    }
    if let Some(sasl) = &config.sasl {
        settings.push(("sasl.mechanism".to_owned(), sasl.mechanism.to_owned()));
        settings.push(("sasl.username".to_owned(), sasl.username.clone()));
        settings.push(("sasl.password".to_owned(), sasl.password.clone()));
    }
    settings
}

/// Reads snapshots of one cluster.
pub struct Collector {
    settings: Vec<(String, String)>,
    client: BaseConsumer,
    filters: Filters,
}

impl Collector {
    /// A collector with the settings of [`client_settings`].
    pub fn new(settings: Vec<(String, String)>, filters: Filters) -> Result<Self, KafkaError> {
        let client = consumer(&settings, None)?;
        Ok(Self {
            settings,
            client,
            filters,
        })
    }

    /// One scrape's view of the cluster. Committed offsets are fetched only for groups and
    /// topics the filters export.
    pub fn snapshot(&self) -> Result<Snapshot, KafkaError> {
        let metadata = self.client.fetch_metadata(None, REQUEST_TIMEOUT)?;
        let brokers = metadata
            .brokers()
            .iter()
            .map(|broker| Broker {
                id: broker.id(),
                address: format!("{}:{}", broker.host(), broker.port()),
            })
            .collect();
        let mut topics = Vec::new();
        for topic in metadata.topics() {
            if topic.error().is_some() {
                continue;
            }
            let mut partitions = Vec::new();
            for partition in topic.partitions() {
                let (oldest_offset, current_offset) = if self.filters.topic(topic.name()) {
                    self.client
                        .fetch_watermarks(topic.name(), partition.id(), REQUEST_TIMEOUT)?
                } else {
                    (-1, -1)
                };
                partitions.push(Partition {
                    id: partition.id(),
                    leader: partition.leader(),
                    replicas: partition.replicas().to_vec(),
                    isr: partition.isr().to_vec(),
                    oldest_offset,
                    current_offset,
                });
            }
            partitions.sort_by_key(|partition| partition.id);
            topics.push(Topic {
                name: topic.name().to_owned(),
                partitions,
            });
        }
        topics.sort_by(|a, b| a.name.cmp(&b.name));

        let mut wanted = TopicPartitionList::new();
        for topic in topics
            .iter()
            .filter(|topic| self.filters.topic(&topic.name))
        {
            for partition in &topic.partitions {
                wanted.add_partition(&topic.name, partition.id);
            }
        }
        let list = self.client.fetch_group_list(None, REQUEST_TIMEOUT)?;
        let mut groups = Vec::new();
        for group in list.groups() {
            if !self.filters.group(group.name()) {
                continue;
            }
            let committed = if wanted.count() == 0 {
                BTreeMap::new()
            } else {
                let reader = consumer(&self.settings, Some(group.name()))?;
                reader
                    .committed_offsets(wanted.clone(), REQUEST_TIMEOUT)?
                    .elements()
                    .iter()
                    .map(|element| {
                        let offset = match element.offset() {
                            Offset::Offset(offset) => offset,
                            _ => -1,
                        };
                        ((element.topic().to_owned(), element.partition()), offset)
                    })
                    .collect()
            };
            groups.push(Group {
                name: group.name().to_owned(),
                members: group.members().len(),
                committed,
            });
        }
        groups.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Snapshot {
            brokers,
            topics,
            groups,
        })
    }
}

fn consumer(
    settings: &[(String, String)],
    group: Option<&str>,
) -> Result<BaseConsumer, KafkaError> {
    let mut config = ClientConfig::new();
    for (key, value) in settings {
        config.set(key, value);
    }
    if let Some(group) = group {
        config.set("group.id", group);
    }
    config.create()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_args;

    fn settings(args: &[&str], tls: &TlsMaterial) -> BTreeMap<String, String> {
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        client_settings(&parse_args(&args).unwrap(), tls)
            .into_iter()
            .collect()
    }

    #[test]
    fn mutual_tls_uses_the_mounted_pem_texts() {
        let tls = TlsMaterial {
            ca_pem: Some("CA".into()),
            client: Some(("CERT".into(), "KEY".into())),
            insecure_skip_verify: false,
        };
        let settings = settings(&["--kafka.server=a:9091", "--tls.enabled"], &tls);
        assert_eq!(settings["security.protocol"], "SSL");
        assert_eq!(settings["bootstrap.servers"], "a:9091");
        assert_eq!(settings["ssl.ca.pem"], "CA");
        assert_eq!(settings["ssl.certificate.pem"], "CERT");
        assert_eq!(settings["ssl.key.pem"], "KEY");
        assert!(!settings.contains_key("enable.ssl.certificate.verification"));
    }

    #[test]
    fn plain_and_sasl_connections() {
        let none = TlsMaterial::default();
        let settings_plain = settings(&["--kafka.server=a:9092"], &none);
        assert_eq!(settings_plain["security.protocol"], "PLAINTEXT");
        assert!(!settings_plain.contains_key("ssl.ca.pem"));
        let sasl = settings(
            &[
                "--kafka.server=a:9092",
                "--sasl.enabled",
                "--sasl.username=u",
                "--sasl.password=p",
            ],
            &none,
        );
        assert_eq!(sasl["security.protocol"], "SASL_PLAINTEXT");
        assert_eq!(sasl["sasl.mechanism"], "PLAIN");
    }
}
