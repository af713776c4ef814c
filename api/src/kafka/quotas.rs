//! Client quota plugins of the Kafka brokers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

use crate::tagged_union;

/// Kafka's built-in quota plugin: default per-client limits applied by each broker.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotasPluginKafka {
    /// Bytes per second each client may produce to each broker before being throttled.
    #[schemars(range(min = 0))]
    pub producer_byte_rate: Option<i64>,
    /// Bytes per second each client may fetch from each broker before being throttled.
    #[schemars(range(min = 0))]
    pub consumer_byte_rate: Option<i64>,
    /// Share (in percent) of each broker's network and I/O threads a client may use.
    #[schemars(range(min = 0))]
    pub request_percentage: Option<i32>,
    /// Partitions per second each client may create or delete on each broker.
    #[schemars(range(min = 0))]
    pub controller_mutation_rate: Option<serde_json::Number>,
}

/// The Strimzi quota plugin: broker-wide byte-rate limits shared between clients, and
/// production stops when disks fill up.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotasPluginStrimzi {
    /// Bytes per second all non-excluded producers together may send to a broker.
    #[schemars(range(min = 0))]
    pub producer_byte_rate: Option<i64>,
    /// Bytes per second all non-excluded consumers together may fetch from a broker.
    #[schemars(range(min = 0))]
    pub consumer_byte_rate: Option<i64>,
    /// Production stops once a volume has this many free bytes or fewer. Not together with
    /// `minAvailableRatioPerVolume`.
    #[schemars(range(min = 0))]
    pub min_available_bytes_per_volume: Option<i64>,
    /// Production stops once a volume's free share (0 to 1) is this low or lower. Not together
    /// with `minAvailableBytesPerVolume`.
    #[schemars(range(min = 0, max = 1))]
    pub min_available_ratio_per_volume: Option<serde_json::Number>,
    /// Principals the quotas do not apply to, each prefixed with `User:`.
    pub excluded_principals: Option<Vec<String>>,
}

tagged_union! {
    /// Which client quota plugin the brokers use. Kafka's built-in one when unset.
    pub enum QuotasPlugin {
        /// Kafka's built-in quota plugin.
        Kafka("kafka") => QuotasPluginKafka,
        /// The Strimzi quota plugin.
        Strimzi("strimzi") => QuotasPluginStrimzi,
    }
}
