//! The bridge API's embedded formats (`json`, `binary`, `text`) and record shapes, as the
//! Bridge's documented API has them: request bodies of `POST /topics/{topic}` into Kafka
//! records, Kafka records into the array `GET …/records` answers. Pure.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The content type of the API's own requests and answers.
pub const API_CONTENT_TYPE: &str = "application/vnd.kafka.v2+json";

/// How keys and values are embedded in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Any JSON value, serialized as JSON bytes.
    Json,
    /// Base64 of the bytes.
    Binary,
    /// A string, as UTF-8 bytes.
    Text,
}

impl Format {
    /// The format of `application/vnd.kafka.<format>.v2+json` (parameters ignored).
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media.to_ascii_lowercase().as_str() {
            "application/vnd.kafka.json.v2+json" => Some(Self::Json),
            "application/vnd.kafka.binary.v2+json" => Some(Self::Binary),
            "application/vnd.kafka.text.v2+json" => Some(Self::Text),
            _ => None,
        }
    }

    /// `application/vnd.kafka.<format>.v2+json`.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Json => "application/vnd.kafka.json.v2+json",
            Self::Binary => "application/vnd.kafka.binary.v2+json",
            Self::Text => "application/vnd.kafka.text.v2+json",
        }
    }

    /// Bytes of a key or value given in this format; `None` for JSON `null`.
    pub fn encode(self, value: &Value) -> Result<Option<Vec<u8>>, String> {
        if value.is_null() {
            return Ok(None);
        }
        match self {
            Self::Json => serde_json::to_vec(value)
                .map(Some)
                .map_err(|e| e.to_string()),
            Self::Binary => value
                .as_str()
                .ok_or_else(|| "a binary value must be a base64 string".to_owned())
                .and_then(|text| BASE64.decode(text).map_err(|e| format!("not base64: {e}")))
                .map(Some),
            Self::Text => value
                .as_str()
                .map(|text| Some(text.as_bytes().to_vec()))
                .ok_or_else(|| "a text value must be a string".to_owned()),
        }
    }

    /// A key or value in this format; `null` without bytes.
    pub fn decode(self, bytes: Option<&[u8]>) -> Result<Value, String> {
        let Some(bytes) = bytes else {
            return Ok(Value::Null);
        };
        match self {
            Self::Json => serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}")),
            Self::Binary => Ok(Value::String(BASE64.encode(bytes))),
            Self::Text => String::from_utf8(bytes.to_vec())
                .map(Value::String)
                .map_err(|e| format!("not UTF-8: {e}")),
        }
    }
}

/// A record header: the value is base64, in every format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Header name.
    pub key: String,
    /// Base64 of the header value.
    pub value: String,
}

/// One record of a produce request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProducerRecord {
    /// Key, embedded in the request's format.
    #[serde(default)]
    pub key: Value,
    /// Value, embedded in the request's format.
    #[serde(default)]
    pub value: Value,
    /// Partition to write to; Kafka's partitioner chooses without.
    pub partition: Option<i32>,
    /// Record time stamp, milliseconds since the epoch.
    pub timestamp: Option<i64>,
    /// Headers.
    #[serde(default)]
    pub headers: Vec<Header>,
}

/// The body of `POST /topics/{topic}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProduceRequest {
    /// The records, sent in order.
    pub records: Vec<ProducerRecord>,
}

/// A record ready for Kafka.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedRecord {
    /// Key bytes.
    pub key: Option<Vec<u8>>,
    /// Value bytes.
    pub value: Option<Vec<u8>>,
    /// Partition, if the request chose one.
    pub partition: Option<i32>,
    /// Time stamp, if given.
    pub timestamp: Option<i64>,
    /// Header names and decoded values.
    pub headers: Vec<(String, Vec<u8>)>,
}

/// Encodes a produce request in `format`; an error names the record (0-based) and field.
pub fn encode_request(
    request: &ProduceRequest,
    format: Format,
) -> Result<Vec<EncodedRecord>, String> {
    if request.records.is_empty() {
        return Err("records: at least one record is needed".to_owned());
    }
    request
        .records
        .iter()
        .enumerate()
        .map(|(index, record)| {
            let field = |name: &str, e: String| format!("records[{index}].{name}: {e}");
            let headers = record
                .headers
                .iter()
                .map(|header| {
                    BASE64
                        .decode(&header.value)
                        .map(|value| (header.key.clone(), value))
                        .map_err(|e| field("headers", format!("not base64: {e}")))
                })
                .collect::<Result<_, _>>()?;
            Ok(EncodedRecord {
                key: format.encode(&record.key).map_err(|e| field("key", e))?,
                value: format
                    .encode(&record.value)
                    .map_err(|e| field("value", e))?,
                partition: record.partition,
                timestamp: record.timestamp,
                headers,
            })
        })
        .collect()
}

/// The outcome of one produced record, as the answer lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum OffsetOrError {
    /// Written.
    Offset {
        /// Partition written to.
        partition: i32,
        /// Offset of the record.
        offset: i64,
    },
    /// Not written.
    Error {
        /// An HTTP-like status: 404 unknown topic or partition, 500 otherwise.
        error_code: u16,
        /// Why.
        message: String,
    },
}

/// A consumed record as Kafka gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumedRecord {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// Time stamp in milliseconds, if any.
    pub timestamp: Option<i64>,
    /// Key bytes.
    pub key: Option<Vec<u8>>,
    /// Value bytes.
    pub value: Option<Vec<u8>>,
    /// Headers.
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

impl ConsumedRecord {
    /// Bytes of key, value and headers, for `max_bytes`.
    pub fn size(&self) -> usize {
        self.key.as_ref().map_or(0, Vec::len)
            + self.value.as_ref().map_or(0, Vec::len)
            + self
                .headers
                .iter()
                .map(|(key, value)| key.len() + value.as_ref().map_or(0, Vec::len))
                .sum::<usize>()
    }
}

/// The JSON answer of a poll: `[{"topic", "key", "value", "partition", "offset",
/// "timestamp"?, "headers"?}]`, keys and values in `format`.
pub fn records_json(records: &[ConsumedRecord], format: Format) -> Result<Value, String> {
    let mut out = Vec::with_capacity(records.len());
    for record in records {
        let at = |e: String| {
            format!(
                "record {}/{}/{}: {e}",
                record.topic, record.partition, record.offset
            )
        };
        let mut json = serde_json::json!({
            "topic": record.topic,
            "key": format.decode(record.key.as_deref()).map_err(at)?,
            "value": format.decode(record.value.as_deref()).map_err(at)?,
            "partition": record.partition,
            "offset": record.offset,
        });
        if let Some(timestamp) = record.timestamp {
            json["timestamp"] = timestamp.into();
        }
        if !record.headers.is_empty() {
            json["headers"] = record
                .headers
                .iter()
                .map(|(key, value)| {
                    serde_json::json!({
                        "key": key,
                        "value": value.as_deref().map(|v| BASE64.encode(v)),
                    })
                })
                .collect();
        }
        out.push(json);
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_types_name_formats() {
        assert_eq!(
            Format::from_content_type("application/vnd.kafka.json.v2+json"),
            Some(Format::Json)
        );
        assert_eq!(
            Format::from_content_type("application/vnd.kafka.binary.v2+json; charset=utf-8"),
            Some(Format::Binary)
        );
        assert_eq!(
            Format::from_content_type("application/vnd.kafka.text.v2+json"),
            Some(Format::Text)
        );
        assert_eq!(Format::from_content_type("application/json"), None);
        assert_eq!(
            Format::Text.content_type(),
            "application/vnd.kafka.text.v2+json"
        );
    }

    #[test]
    fn produce_requests_are_encoded_per_format() {
        let request: ProduceRequest = serde_json::from_value(json!({"records": [
            {"key": "k", "value": {"a": [1, 2]}},
            {"value": "plain", "partition": 1, "headers": [{"key": "h", "value": "aGk="}]},
            {"value": null}
        ]}))
        .unwrap();
        let json = encode_request(&request, Format::Json).unwrap();
        assert_eq!(json[0].key.as_deref(), Some(&b"\"k\""[..]));
        assert_eq!(json[0].value.as_deref(), Some(&b"{\"a\":[1,2]}"[..]));
        assert_eq!(json[1].partition, Some(1));
        assert_eq!(json[1].headers, [("h".to_owned(), b"hi".to_vec())]);
        assert_eq!(json[2].value, None);
        let text = encode_request(&request, Format::Text).unwrap_err();
        assert_eq!(text, "records[0].value: a text value must be a string");
        let binary: ProduceRequest =
            serde_json::from_value(json!({"records": [{"value": "aGVsbG8="}]})).unwrap();
        assert_eq!(
            encode_request(&binary, Format::Binary).unwrap()[0]
                .value
                .as_deref(),
            Some(&b"hello"[..])
        );
        let bad: ProduceRequest =
            serde_json::from_value(json!({"records": [{"value": "not base64!"}]})).unwrap();
        assert!(
            encode_request(&bad, Format::Binary)
                .unwrap_err()
                .starts_with("records[0].value: not base64")
        );
        assert!(
            serde_json::from_value::<ProduceRequest>(json!({"records": [{"val": 1}]})).is_err()
        );
    }

    #[test]
    fn answers_have_the_documented_shapes() {
        let offsets = vec![
            OffsetOrError::Offset {
                partition: 0,
                offset: 7,
            },
            OffsetOrError::Error {
                error_code: 404,
                message: "unknown topic".into(),
            },
        ];
        assert_eq!(
            serde_json::to_value(&offsets).unwrap(),
            json!([{"partition": 0, "offset": 7}, {"error_code": 404, "message": "unknown topic"}])
        );
        let record = ConsumedRecord {
            topic: "t".into(),
            partition: 0,
            offset: 3,
            timestamp: Some(1000),
            key: None,
            value: Some(b"{\"n\":1}".to_vec()),
            headers: vec![("h".into(), Some(b"hi".to_vec()))],
        };
        assert_eq!(
            records_json(std::slice::from_ref(&record), Format::Json).unwrap(),
            json!([{"topic": "t", "key": null, "value": {"n": 1}, "partition": 0, "offset": 3,
                    "timestamp": 1000, "headers": [{"key": "h", "value": "aGk="}]}])
        );
        assert_eq!(
            records_json(std::slice::from_ref(&record), Format::Binary).unwrap()[0]["value"],
            json!("eyJuIjoxfQ==")
        );
        let not_json = ConsumedRecord {
            value: Some(b"plain".to_vec()),
            ..record
        };
        assert!(records_json(&[not_json], Format::Json).is_err());
    }
}
