//! The HTTP API (on `http.port`) and the management endpoints (on `http.management.port`), with
//! the paths, content types, bodies and status codes of the Bridge's documented API for the
//! subset CONTRACT.md section 8 lists.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, RawQuery, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rdkafka::topic_partition_list::Offset;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::config::{BridgeConfig, Cors};
use crate::kafka::{ConsumerError, ConsumerInstance, Producer, Subscription};
use crate::metrics::BridgeMetrics;
use crate::records::{API_CONTENT_TYPE, Format, ProduceRequest, encode_request, records_json};

/// What the bridge reports as its version: ours, marked as the stand-in's.
pub const BRIDGE_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "-standin");

/// The state every request shares.
pub struct Bridge {
    config: BridgeConfig,
    producer: Producer,
    consumers: Mutex<HashMap<(String, String), Arc<ConsumerInstance>>>,
    metrics: BridgeMetrics,
    scheme: &'static str,
}

impl Bridge {
    /// A bridge with its producer; consumers come with requests.
    pub fn new(config: BridgeConfig, producer: Producer) -> Arc<Self> {
        let scheme = if config.http.tls.is_some() {
            "https"
        } else {
            "http"
        };
        Arc::new(Self {
            config,
            producer,
            consumers: Mutex::new(HashMap::new()),
            metrics: BridgeMetrics::default(),
            scheme,
        })
    }

    fn consumer(&self, group: &str, name: &str) -> Result<Arc<ConsumerInstance>, ApiError> {
        let found = self
            .consumers
            .lock()
            .ok()
            .and_then(|consumers| consumers.get(&(group.to_owned(), name.to_owned())).cloned());
        match found {
            Some(consumer) => {
                consumer.touch();
                Ok(consumer)
            }
            None => Err(reject(
                StatusCode::NOT_FOUND,
                "The specified consumer instance was not found.",
            )),
        }
    }

    fn remove(&self, group: &str, name: &str) -> Option<Arc<ConsumerInstance>> {
        self.consumers
            .lock()
            .ok()
            .and_then(|mut consumers| consumers.remove(&(group.to_owned(), name.to_owned())))
    }

    /// Deletes consumers idle longer than `http.timeoutSeconds`; returns how many.
    pub fn expire_idle(&self) -> usize {
        let Some(seconds) = self.config.http.consumer_timeout_seconds else {
            return 0;
        };
        let Ok(mut consumers) = self.consumers.lock() else {
            return 0;
        };
        let before = consumers.len();
        consumers.retain(|_, consumer| consumer.idle() < Duration::from_secs(seconds));
        before - consumers.len()
    }
}

/// An error answer: `{"error_code": <status>, "message": …}`.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    json_response(
        status,
        API_CONTENT_TYPE,
        &json!({"error_code": status.as_u16(), "message": message.into()}),
    )
}

fn json_response(status: StatusCode, content_type: &'static str, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, content_type)],
        body.to_string(),
    )
        .into_response()
}

fn consumer_error(error: ConsumerError) -> ApiError {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    reject(status, error.message)
}

/// An error answer not yet rendered (see [`error`]).
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    /// The HTTP status it answers with.
    pub fn status(&self) -> StatusCode {
        self.status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error(self.status, self.message)
    }
}

fn reject(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError {
        status,
        message: message.into(),
    }
}

/// Parses a JSON body; 422 when it does not fit.
fn body<T: DeserializeOwned>(bytes: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        reject(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("Invalid request body: {e}"),
        )
    })
}

/// Runs blocking consumer work off the runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ConsumerError> + Send + 'static,
) -> Result<T, ApiError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(consumer_error),
        Err(e) => Err(reject(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
    }
}

/// The API port's routes.
pub fn api_router(bridge: Arc<Bridge>) -> Router {
    let instance = "/consumers/{group}/instances/{name}";
    let cors = bridge.config.http.cors.clone();
    let router = Router::new()
        .route("/", get(info))
        .route("/topics", get(list_topics))
        .route("/topics/{topic}", get(topic_metadata).post(produce))
        .route("/topics/{topic}/partitions", get(topic_partitions))
        .route(
            "/topics/{topic}/partitions/{partition}",
            post(produce_to_partition),
        )
        .route("/consumers/{group}", post(create_consumer))
        .route(instance, axum::routing::delete(delete_consumer))
        .route(
            &format!("{instance}/subscription"),
            post(subscribe).get(subscription).delete(unsubscribe),
        )
        .route(&format!("{instance}/assignments"), post(assign))
        .route(&format!("{instance}/records"), get(poll))
        .route(&format!("{instance}/offsets"), post(commit))
        .route(&format!("{instance}/positions"), post(seek))
        .route(
            &format!("{instance}/positions/beginning"),
            post(seek_to_beginning),
        )
        .route(&format!("{instance}/positions/end"), post(seek_to_end))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "Not Found") })
        .layer(middleware::from_fn_with_state(
            Arc::clone(&bridge),
            count_requests,
        ))
        .with_state(bridge);
    match cors {
        Some(cors) => router.layer(middleware::from_fn_with_state(Arc::new(cors), apply_cors)),
        None => router,
    }
}

/// The management port's routes.
pub fn management_router(bridge: Arc<Bridge>) -> Router {
    Router::new()
        .route("/healthy", get(|| async { StatusCode::OK }))
        .route("/ready", get(|| async { StatusCode::OK }))
        .route("/metrics", get(metrics))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "Not Found") })
        .with_state(bridge)
}

async fn count_requests(
    State(bridge): State<Arc<Bridge>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    bridge.metrics.started();
    let response = next.run(request).await;
    bridge
        .metrics
        .finished(&method, &path, response.status().as_u16());
    response
}

/// CORS as the real bridge applies it: requests from an origin not allowed are refused
/// with 403; pre-flight requests are answered here.
async fn apply_cors(State(cors): State<Arc<Cors>>, request: Request, next: Next) -> Response {
    let Some(origin) = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|origin| origin.to_str().ok())
        .map(str::to_owned)
    else {
        return next.run(request).await;
    };
    let allowed = cors
        .allowed_origins
        .iter()
        .any(|allowed| allowed == "*" || allowed == &origin);
    if !allowed {
        return (StatusCode::FORBIDDEN, "CORS Rejected - Invalid origin").into_response();
    }
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        StatusCode::NO_CONTENT.into_response()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    if let Ok(origin) = HeaderValue::from_str(&origin) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    if preflight {
        if let Ok(methods) = HeaderValue::from_str(&cors.allowed_methods.join(",")) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, methods);
        }
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("content-type,accept,origin"),
        );
    }
    response
}

async fn info() -> Response {
    json_response(
        StatusCode::OK,
        "application/json",
        &json!({"bridge_version": BRIDGE_VERSION}),
    )
}

async fn metrics(State(bridge): State<Arc<Bridge>>) -> Response {
    if bridge.config.metrics.is_none() {
        return error(
            StatusCode::NOT_FOUND,
            "Metrics are not enabled (bridge.metrics)",
        );
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        bridge.metrics.render(),
    )
        .into_response()
}

/// What a handler answers: its response, or an error answer.
type Answer = Result<Response, ApiError>;

/// A `200` answer with a body of the API's JSON content type.
fn api_json(body: &Value) -> Response {
    json_response(StatusCode::OK, API_CONTENT_TYPE, body)
}

/// Runs consumer work off the runtime and answers `204` once it is done.
async fn no_content(work: impl FnOnce() -> Result<(), ConsumerError> + Send + 'static) -> Answer {
    blocking(work).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The consumer instance the request's path (`/consumers/{group}/instances/{name}/…`) names,
/// marked as used; `404` when there is none.
struct Instance(Arc<ConsumerInstance>);

impl FromRequestParts<Arc<Bridge>> for Instance {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, bridge: &Arc<Bridge>) -> Result<Self, ApiError> {
        let Path((group, name)) = Path::<(String, String)>::from_request_parts(parts, bridge)
            .await
            .map_err(|rejection| reject(StatusCode::NOT_FOUND, rejection.body_text()))?;
        bridge.consumer(&group, &name).map(Instance)
    }
}

async fn list_topics(State(bridge): State<Arc<Bridge>>) -> Answer {
    let topics = blocking(move || bridge.producer.topics().map_err(Into::into)).await?;
    Ok(api_json(&json!(topics)))
}

/// `(partition, leader, replicas, isr)` as the API lists partitions.
fn partitions_json(partitions: &[(i32, i32, Vec<i32>, Vec<i32>)]) -> Value {
    partitions
        .iter()
        .map(|(partition, leader, replicas, isr)| {
            json!({
                "partition": partition,
                "leader": leader,
                "replicas": replicas.iter().map(|broker| json!({
                    "broker": broker,
                    "leader": broker == leader,
                    "in_sync": isr.contains(broker),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The partitions of `topic`, as the API lists them.
async fn topic_partitions_json(bridge: Arc<Bridge>, topic: String) -> Result<Value, ApiError> {
    let partitions =
        blocking(move || bridge.producer.partitions(&topic).map_err(Into::into)).await?;
    Ok(partitions_json(&partitions))
}

async fn topic_metadata(State(bridge): State<Arc<Bridge>>, Path(topic): Path<String>) -> Answer {
    let partitions = topic_partitions_json(bridge, topic.clone()).await?;
    Ok(api_json(&json!({"name": topic, "partitions": partitions})))
}

async fn topic_partitions(State(bridge): State<Arc<Bridge>>, Path(topic): Path<String>) -> Answer {
    Ok(api_json(&topic_partitions_json(bridge, topic).await?))
}

/// The value of `name` in a query string (`a=1&b=2`), if given.
fn query_value<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// `?async=true`: answer 204 without waiting for the delivery reports.
fn asynchronous(query: Option<&str>) -> Result<bool, ApiError> {
    match query_value(query, "async") {
        None | Some("false") => Ok(false),
        Some("true") | Some("") => Ok(true),
        Some(other) => Err(reject(
            StatusCode::BAD_REQUEST,
            format!("async: {other:?} is not true or false"),
        )),
    }
}

async fn produce(
    State(bridge): State<Arc<Bridge>>,
    Path(topic): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    bytes: Bytes,
) -> Answer {
    let asynchronous = asynchronous(query.as_deref())?;
    send(&bridge, &topic, None, asynchronous, &headers, &bytes).await
}

async fn produce_to_partition(
    State(bridge): State<Arc<Bridge>>,
    Path((topic, partition)): Path<(String, i32)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    bytes: Bytes,
) -> Answer {
    let asynchronous = asynchronous(query.as_deref())?;
    send(
        &bridge,
        &topic,
        Some(partition),
        asynchronous,
        &headers,
        &bytes,
    )
    .await
}

/// `503` when `http.<side>.enabled` is false, with the bridge's message (`name` is the side's
/// name at the start of a sentence).
fn enabled(on: bool, name: &str, side: &str) -> Result<(), ApiError> {
    if on {
        return Ok(());
    }
    Err(reject(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "{name} is disabled in config. To enable {side} update http.{side}.enabled to true"
        ),
    ))
}

async fn send(
    bridge: &Bridge,
    topic: &str,
    partition: Option<i32>,
    asynchronous: bool,
    headers: &HeaderMap,
    bytes: &Bytes,
) -> Answer {
    enabled(bridge.config.http.producer_enabled, "Producer", "producer")?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let Some(format) = Format::from_content_type(content_type) else {
        return Err(reject(
            StatusCode::BAD_REQUEST,
            format!(
                "Content-Type {content_type:?} is not application/vnd.kafka.json.v2+json, \
                 application/vnd.kafka.binary.v2+json or application/vnd.kafka.text.v2+json"
            ),
        ));
    };
    let request: ProduceRequest = body(bytes)?;
    if partition.is_some() && request.records.iter().any(|r| r.partition.is_some()) {
        return Err(reject(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Partition specified in the path and in a record",
        ));
    }
    let mut records = encode_request(&request, format)
        .map_err(|message| reject(StatusCode::UNPROCESSABLE_ENTITY, message))?;
    if let Some(partition) = partition {
        for record in &mut records {
            record.partition = Some(partition);
        }
    }
    let offsets = bridge.producer.send(topic, &records, !asynchronous).await;
    if asynchronous {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    let written = offsets
        .iter()
        .filter(|o| matches!(o, crate::records::OffsetOrError::Offset { .. }))
        .count();
    bridge.metrics.sent(topic, written as u64);
    Ok(api_json(&json!({"offsets": offsets})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateConsumer {
    name: Option<String>,
    format: Option<Format>,
    #[serde(rename = "auto.offset.reset")]
    auto_offset_reset: Option<String>,
    #[serde(rename = "enable.auto.commit")]
    enable_auto_commit: Option<Value>,
    #[serde(rename = "fetch.min.bytes")]
    fetch_min_bytes: Option<Value>,
    #[serde(rename = "consumer.request.timeout.ms")]
    request_timeout_ms: Option<Value>,
    #[serde(rename = "isolation.level")]
    isolation_level: Option<String>,
}

/// A number given as a JSON number or a string of digits.
fn number(value: &Value, field: &str) -> Result<u64, ApiError> {
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|text| text.trim().parse().ok()))
        .ok_or_else(|| {
            reject(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("{field}: {value} is not a non-negative number"),
            )
        })
}

/// The librdkafka settings of a new consumer, from the bridge's and the request's. Pure.
fn consumer_settings(
    base: &[(String, String)],
    group: &str,
    name: &str,
    request: &CreateConsumer,
) -> Result<Vec<(String, String)>, ApiError> {
    let invalid = |message: String| reject(StatusCode::UNPROCESSABLE_ENTITY, message);
    let mut settings = base.to_vec();
    settings.push(("group.id".to_owned(), group.to_owned()));
    settings.push(("client.id".to_owned(), name.to_owned()));
    if let Some(reset) = &request.auto_offset_reset {
        if !["earliest", "latest", "none"].contains(&reset.as_str()) {
            return Err(invalid(format!(
                "auto.offset.reset: {reset:?} is not earliest, latest or none"
            )));
        }
        let reset = if reset == "none" { "error" } else { reset };
        settings.push(("auto.offset.reset".to_owned(), reset.to_owned()));
    }
    if let Some(commit) = &request.enable_auto_commit {
        let commit = commit
            .as_bool()
            .or_else(|| commit.as_str().and_then(|text| text.parse().ok()))
            .ok_or_else(|| invalid(format!("enable.auto.commit: {commit} is not true or false")))?;
        settings.push(("enable.auto.commit".to_owned(), commit.to_string()));
    }
    if let Some(bytes) = &request.fetch_min_bytes {
        let bytes = number(bytes, "fetch.min.bytes")?;
        settings.push(("fetch.min.bytes".to_owned(), bytes.max(1).to_string()));
    }
    if let Some(level) = &request.isolation_level {
        if !["read_committed", "read_uncommitted"].contains(&level.as_str()) {
            return Err(invalid(format!(
                "isolation.level: {level:?} is not read_committed or read_uncommitted"
            )));
        }
        settings.push(("isolation.level".to_owned(), level.clone()));
    }
    Ok(settings)
}

/// The answer to a consumer instance name already taken.
fn name_taken() -> ApiError {
    reject(
        StatusCode::CONFLICT,
        "A consumer instance with the specified name already exists in the Kafka Bridge.",
    )
}

async fn create_consumer(
    State(bridge): State<Arc<Bridge>>,
    Path(group): Path<String>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Answer {
    enabled(bridge.config.http.consumer_enabled, "Consumer", "consumer")?;
    let request: CreateConsumer = if bytes.is_empty() {
        body(&Bytes::from_static(b"{}"))?
    } else {
        body(&bytes)?
    };
    let name = request
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-{}", bridge.config.id, uuid::Uuid::new_v4()));
    let settings = consumer_settings(&bridge.config.consumer, &group, &name, &request)?;
    let timeout = match &request.request_timeout_ms {
        Some(value) => Duration::from_millis(number(value, "consumer.request.timeout.ms")?),
        None => Duration::from_secs(30),
    };
    let key = (group.clone(), name.clone());
    let taken =
        |consumers: &HashMap<(String, String), Arc<ConsumerInstance>>| consumers.contains_key(&key);
    if bridge.consumers.lock().map(|c| taken(&c)).unwrap_or(false) {
        return Err(name_taken());
    }
    let instance = ConsumerInstance::new(
        &group,
        &name,
        request.format.unwrap_or(Format::Binary),
        timeout,
        &settings,
        bridge.config.max_poll_records,
    )
    .map_err(|e| reject(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    if let Ok(mut consumers) = bridge.consumers.lock() {
        // Another request may have taken the name while this consumer was made.
        if taken(&consumers) {
            return Err(name_taken());
        }
        consumers.insert(key, Arc::new(instance));
    }
    let host = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{}:{}", bridge.config.http.host, bridge.config.http.port));
    Ok(api_json(&json!({
        "instance_id": name,
        "base_uri": format!("{}://{host}/consumers/{group}/instances/{name}", bridge.scheme),
    })))
}

async fn delete_consumer(
    State(bridge): State<Arc<Bridge>>,
    Path((group, name)): Path<(String, String)>,
) -> Answer {
    let instance = bridge.remove(&group, &name).ok_or_else(|| {
        reject(
            StatusCode::NOT_FOUND,
            "The specified consumer instance was not found.",
        )
    })?;
    // Closing leaves the group: a blocking call.
    let _ = tokio::task::spawn_blocking(move || drop(instance)).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubscribeRequest {
    topics: Option<Vec<String>>,
    topic_pattern: Option<String>,
}

async fn subscribe(Instance(consumer): Instance, bytes: Bytes) -> Answer {
    let request: SubscribeRequest = body(&bytes)?;
    let subscription = match (request.topics, request.topic_pattern) {
        (Some(_), Some(_)) => {
            return Err(reject(
                StatusCode::CONFLICT,
                "Subscriptions to topics, partitions, and patterns are mutually exclusive.",
            ));
        }
        (Some(topics), None) if !topics.is_empty() => Subscription::Topics(topics),
        (None, Some(pattern)) => Subscription::Pattern(pattern),
        _ => {
            return Err(reject(
                StatusCode::UNPROCESSABLE_ENTITY,
                "A list (of Topics type) or a topic_pattern must be specified.",
            ));
        }
    };
    no_content(move || consumer.subscribe(subscription)).await
}

async fn subscription(Instance(consumer): Instance) -> Answer {
    let (topics, partitions) = blocking(move || Ok(consumer.listing())).await?;
    let partitions: Vec<Value> = partitions
        .into_iter()
        .map(|(topic, list)| json!({ topic: list }))
        .collect();
    Ok(api_json(
        &json!({"topics": topics, "partitions": partitions}),
    ))
}

async fn unsubscribe(Instance(consumer): Instance) -> Answer {
    no_content(move || {
        consumer.unsubscribe();
        Ok(())
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicPartition {
    topic: String,
    partition: i32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartitionsRequest {
    partitions: Vec<TopicPartition>,
}

async fn assign(Instance(consumer): Instance, bytes: Bytes) -> Answer {
    let partitions = body::<PartitionsRequest>(&bytes)?
        .partitions
        .into_iter()
        .map(|p| (p.topic, p.partition))
        .collect();
    no_content(move || consumer.assign(partitions)).await
}

/// A number of the query string, 400 when it is not one.
fn query_number(query: Option<&str>, name: &str) -> Result<Option<u64>, ApiError> {
    query_value(query, name)
        .map(|value| {
            value.parse().map_err(|_| {
                reject(
                    StatusCode::BAD_REQUEST,
                    format!("{name}: {value:?} is not a non-negative number"),
                )
            })
        })
        .transpose()
}

async fn poll(
    State(bridge): State<Arc<Bridge>>,
    Instance(consumer): Instance,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Answer {
    let timeout = query_number(query.as_deref(), "timeout")?;
    let max_bytes = query_number(query.as_deref(), "max_bytes")?;
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("*/*");
    let asked = accept.split(',').find_map(Format::from_content_type);
    let wildcard = accept.split(',').any(|a| a.trim().starts_with("*/*"));
    match asked {
        Some(format) if format == consumer.format => {}
        None if wildcard => {}
        _ => {
            return Err(reject(
                StatusCode::NOT_ACCEPTABLE,
                "Consumer format does not match the embedded format requested by the Accept \
                 header.",
            ));
        }
    }
    let format = consumer.format;
    let timeout = timeout
        .map(Duration::from_millis)
        .unwrap_or(consumer.default_timeout);
    let records = blocking(move || consumer.poll(timeout)).await?;
    if let Some(max) = max_bytes
        && records.iter().map(|r| r.size() as u64).sum::<u64>() > max
    {
        return Err(reject(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Response exceeds the maximum number of bytes the consumer can receive",
        ));
    }
    let json = records_json(&records, format)
        .map_err(|message| reject(StatusCode::NOT_ACCEPTABLE, message))?;
    for record in &records {
        bridge.metrics.consumed(&record.topic, 1);
    }
    Ok(json_response(StatusCode::OK, format.content_type(), &json))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OffsetEntry {
    topic: String,
    partition: i32,
    offset: i64,
    /// Accepted as the API allows it, not committed (librdkafka's commits carry none here).
    #[serde(default, rename = "metadata")]
    _metadata: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OffsetsRequest {
    offsets: Vec<OffsetEntry>,
}

async fn commit(Instance(consumer): Instance, bytes: Bytes) -> Answer {
    let offsets: Vec<(String, i32, i64)> = if bytes.iter().all(u8::is_ascii_whitespace) {
        Vec::new()
    } else {
        body::<OffsetsRequest>(&bytes)?
            .offsets
            .into_iter()
            .map(|o| (o.topic, o.partition, o.offset))
            .collect()
    };
    no_content(move || consumer.commit(&offsets)).await
}

async fn seek(Instance(consumer): Instance, bytes: Bytes) -> Answer {
    let positions = body::<OffsetsRequest>(&bytes)?
        .offsets
        .into_iter()
        .map(|o| (o.topic, o.partition, Offset::Offset(o.offset)))
        .collect::<Vec<_>>();
    no_content(move || consumer.seek(&positions)).await
}

/// Moves the consumer to `to` on the partitions of the request.
async fn seek_to(consumer: Arc<ConsumerInstance>, bytes: &Bytes, to: Offset) -> Answer {
    let positions = body::<PartitionsRequest>(bytes)?
        .partitions
        .into_iter()
        .map(|p| (p.topic, p.partition, to))
        .collect::<Vec<_>>();
    no_content(move || consumer.seek(&positions)).await
}

async fn seek_to_beginning(Instance(consumer): Instance, bytes: Bytes) -> Answer {
    seek_to(consumer, &bytes, Offset::Beginning).await
}

async fn seek_to_end(Instance(consumer): Instance, bytes: Bytes) -> Answer {
    seek_to(consumer, &bytes, Offset::End).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(value: Value) -> CreateConsumer {
        serde_json::from_value(value).unwrap()
    }

    fn get<'a>(settings: &'a [(String, String)], key: &str) -> Option<&'a str> {
        settings
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }

    #[test]
    fn a_consumer_request_becomes_librdkafka_settings() {
        let base = vec![("bootstrap.servers".to_owned(), "k:9092".to_owned())];
        let settings = consumer_settings(
            &base,
            "bridge-group",
            "reader",
            &request(
                json!({"name": "reader", "format": "json", "auto.offset.reset": "earliest",
                            "enable.auto.commit": false, "fetch.min.bytes": "100",
                            "isolation.level": "read_committed"}),
            ),
        )
        .unwrap();
        assert_eq!(get(&settings, "group.id"), Some("bridge-group"));
        assert_eq!(get(&settings, "client.id"), Some("reader"));
        assert_eq!(get(&settings, "auto.offset.reset"), Some("earliest"));
        assert_eq!(get(&settings, "enable.auto.commit"), Some("false"));
        assert_eq!(get(&settings, "fetch.min.bytes"), Some("100"));
        assert_eq!(get(&settings, "isolation.level"), Some("read_committed"));
        assert_eq!(get(&settings, "bootstrap.servers"), Some("k:9092"));
    }

    #[test]
    fn query_strings_are_read() {
        assert_eq!(
            query_value(Some("timeout=2000&max_bytes=10"), "max_bytes"),
            Some("10")
        );
        assert_eq!(query_value(Some("async"), "async"), Some(""));
        assert_eq!(query_value(None, "timeout"), None);
        assert_eq!(
            query_number(Some("timeout=2000"), "timeout").unwrap(),
            Some(2000)
        );
        assert_eq!(
            query_number(Some("timeout=soon"), "timeout")
                .unwrap_err()
                .status(),
            StatusCode::BAD_REQUEST
        );
        assert!(asynchronous(Some("async=true")).unwrap());
        assert!(!asynchronous(None).unwrap());
        assert!(asynchronous(Some("async=maybe")).is_err());
    }

    #[test]
    fn invalid_consumer_requests_answer_422() {
        for body in [
            json!({"auto.offset.reset": "middle"}),
            json!({"enable.auto.commit": "maybe"}),
            json!({"fetch.min.bytes": -1}),
            json!({"isolation.level": "dirty"}),
        ] {
            let response = consumer_settings(&[], "g", "n", &request(body.clone())).unwrap_err();
            assert_eq!(
                response.status(),
                StatusCode::UNPROCESSABLE_ENTITY,
                "{body}"
            );
        }
        assert!(serde_json::from_value::<CreateConsumer>(json!({"format": "avro"})).is_err());
        assert!(serde_json::from_value::<CreateConsumer>(json!({"nmae": "x"})).is_err());
    }
}
