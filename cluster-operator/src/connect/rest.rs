//! Kafka Connect's REST API (port 8083, plain HTTP, JSON), over the operators' shared HTTP
//! client: connector plugins, connectors, their configuration, state and restarts.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use strimzi_operator_common::ErrorReason;
use strimzi_operator_common::http_client::{
    Exchange, HttpError, Method, Request, Server, send, url_encode,
};
use strimzi_operator_common::kafka::HostResolution;

use crate::model::connect::REST_API_PORT;

/// Largest answer read (the plugin list of a big image is a few hundred kB).
const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// Why a call to the REST API failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RestError {
    /// The API could not be reached.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// The API refused the call, with Connect's message.
    #[error("{method} {path} returned {status}: {message}")]
    Refused {
        /// The method.
        method: &'static str,
        /// The path.
        path: String,
        /// The HTTP status.
        status: u16,
        /// Connect's `message`, or the body.
        message: String,
    },
    /// The answer was not the JSON expected.
    #[error("{path} answered something unreadable: {message}")]
    Unreadable {
        /// The path.
        path: String,
        /// What was wrong.
        message: String,
    },
}

impl ErrorReason for RestError {
    fn reason(&self) -> &'static str {
        match self {
            // Strimzi's reason for failed REST calls.
            Self::Refused { .. } | Self::Unreadable { .. } => "ConnectRestException",
            Self::Http(error) => error.reason(),
        }
    }
}

impl RestError {
    /// The HTTP status of a refusal.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Refused { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// The host that serves the REST API of a Connect cluster: its API Service by name, or, when
/// names are not looked up, the IP address of a ready worker among `pods`.
pub fn api_host(
    api_service: &str,
    namespace: &str,
    resolution: HostResolution,
    pods: &[Pod],
) -> Option<String> {
    match resolution {
        HostResolution::System => Some(format!("{api_service}.{namespace}.svc")),
        HostResolution::IpAddressesOnly => {
            let mut ready: Vec<&Pod> = pods
                .iter()
                .filter(|pod| {
                    pod.metadata.deletion_timestamp.is_none() && crate::pod_set::is_ready(pod)
                })
                .collect();
            ready.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
            ready
                .into_iter()
                .find_map(|pod| pod.status.as_ref()?.pod_ip.clone())
        }
    }
}

/// A client of one Connect cluster's REST API.
#[derive(Clone, Debug)]
pub struct ConnectApi {
    server: Server,
    timeout: Duration,
}

impl ConnectApi {
    /// A client of the API on `host`, each call bounded by `timeout`.
    pub fn new(host: String, resolution: HostResolution, timeout: Duration) -> Self {
        Self {
            server: Server {
                host,
                port: REST_API_PORT as u16,
                tls: None,
                host_resolution: resolution,
            },
            timeout,
        }
    }

    /// Sends `request`; the JSON answer of a 2xx status (`Null` for an empty one), else the
    /// refusal with Connect's message.
    async fn call(&self, request: Request) -> Result<Value, RestError> {
        let method = request.method.as_str();
        let path = request.path.clone();
        let response = send(
            &self.server,
            &request.header("Accept", "application/json"),
            Exchange {
                timeout: self.timeout,
                max_bytes: MAX_ANSWER_BYTES,
            },
        )
        .await?;
        let body: Value = if response.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&response.body).unwrap_or(Value::String(response.text()))
        };
        if (200..300).contains(&response.status) {
            return Ok(body);
        }
        let message = body
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| response.text());
        Err(RestError::Refused {
            method,
            path,
            status: response.status,
            message,
        })
    }

    /// `GET /connector-plugins`: every plugin (`class`, `type`, `version`).
    pub async fn connector_plugins(&self) -> Result<Vec<Value>, RestError> {
        let path = "/connector-plugins";
        match self.call(Request::new(Method::Get, path)).await? {
            Value::Array(plugins) => Ok(plugins),
            other => Err(RestError::Unreadable {
                path: path.to_owned(),
                message: format!("expected a list, got {other}"),
            }),
        }
    }

    /// `GET /connectors`: the names of the running connectors.
    pub async fn connectors(&self) -> Result<Vec<String>, RestError> {
        let path = "/connectors";
        match self.call(Request::new(Method::Get, path)).await? {
            Value::Array(names) => Ok(names
                .into_iter()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect()),
            other => Err(RestError::Unreadable {
                path: path.to_owned(),
                message: format!("expected a list, got {other}"),
            }),
        }
    }

    fn connector_path(name: &str, rest: &str) -> String {
        format!("/connectors/{}{rest}", url_encode(name))
    }

    /// `GET /connectors/<name>/config`; `None` when there is no such connector.
    pub async fn connector_config(&self, name: &str) -> Result<Option<Value>, RestError> {
        match self
            .call(Request::new(
                Method::Get,
                &Self::connector_path(name, "/config"),
            ))
            .await
        {
            Ok(config) => Ok(Some(config)),
            Err(error) if error.status() == Some(404) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// `PUT /connectors/<name>/config`: creates or updates the connector.
    pub async fn put_connector_config(&self, name: &str, config: &Value) -> Result<(), RestError> {
        self.call(Request::new(Method::Put, &Self::connector_path(name, "/config")).json(config))
            .await
            .map(drop)
    }

    /// `GET /connectors/<name>/status`.
    pub async fn connector_status(&self, name: &str) -> Result<Value, RestError> {
        self.call(Request::new(
            Method::Get,
            &Self::connector_path(name, "/status"),
        ))
        .await
    }

    /// `GET /connectors/<name>/topics`: the topics the connector uses.
    pub async fn connector_topics(&self, name: &str) -> Result<Vec<String>, RestError> {
        let answer = self
            .call(Request::new(
                Method::Get,
                &Self::connector_path(name, "/topics"),
            ))
            .await?;
        let mut topics: Vec<String> = answer
            .get(name)
            .and_then(|entry| entry.get("topics"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|topic| topic.as_str().map(str::to_owned))
            .collect();
        topics.sort();
        Ok(topics)
    }

    /// `PUT /connectors/<name>/<action>` (`pause`, `resume`, `stop`).
    pub async fn change_state(&self, name: &str, action: &str) -> Result<(), RestError> {
        self.call(Request::new(
            Method::Put,
            &Self::connector_path(name, &format!("/{action}")),
        ))
        .await
        .map(drop)
    }

    /// `POST /connectors/<name>/restart`, with its tasks when `include_tasks`, only the failed
    /// ones when `only_failed`.
    pub async fn restart_connector(
        &self,
        name: &str,
        include_tasks: bool,
        only_failed: bool,
    ) -> Result<(), RestError> {
        self.call(
            Request::new(Method::Post, &Self::connector_path(name, "/restart"))
                .param("includeTasks", include_tasks.to_string())
                .param("onlyFailed", only_failed.to_string()),
        )
        .await
        .map(drop)
    }

    /// `POST /connectors/<name>/tasks/<task>/restart`.
    pub async fn restart_task(&self, name: &str, task: i32) -> Result<(), RestError> {
        self.call(Request::new(
            Method::Post,
            &Self::connector_path(name, &format!("/tasks/{task}/restart")),
        ))
        .await
        .map(drop)
    }

    /// `GET /connectors/<name>/offsets`.
    pub async fn offsets(&self, name: &str) -> Result<Value, RestError> {
        self.call(Request::new(
            Method::Get,
            &Self::connector_path(name, "/offsets"),
        ))
        .await
    }

    /// `PATCH /connectors/<name>/offsets` with `offsets` (the connector must be stopped).
    pub async fn alter_offsets(&self, name: &str, offsets: &Value) -> Result<(), RestError> {
        self.call(
            Request::new(Method::Patch, &Self::connector_path(name, "/offsets")).json(offsets),
        )
        .await
        .map(drop)
    }

    /// `DELETE /connectors/<name>/offsets` (the connector must be stopped).
    pub async fn reset_offsets(&self, name: &str) -> Result<(), RestError> {
        self.call(Request::new(
            Method::Delete,
            &Self::connector_path(name, "/offsets"),
        ))
        .await
        .map(drop)
    }

    /// `DELETE /connectors/<name>`.
    pub async fn delete_connector(&self, name: &str) -> Result<(), RestError> {
        match self
            .call(Request::new(
                Method::Delete,
                &Self::connector_path(name, ""),
            ))
            .await
        {
            Err(error) if error.status() == Some(404) => Ok(()),
            other => other.map(drop),
        }
    }
}
