//! A mock Kubernetes API for tests of a reconciler's decisions, without a control plane.
//!
//! [`Scenario::new`] gives a [`kube::Client`] whose requests go to a [`Scenario`] instead of
//! an API server. The scenario lists the calls the code under test must make, in order, and
//! the answer to each; it answers them as they come and fails the test with the method and
//! URI of any request it did not expect, in order or at all.
//!
//! ```no_run
//! use http::Method;
//! use serde_json::json;
//! use strimzi_tests::mock_api::Scenario;
//!
//! # async fn example() {
//! let (client, scenario) = Scenario::new();
//! let verifier = scenario
//!     .expect(Method::GET, "/api/v1/namespaces/team-a")
//!     .respond_json(200, json!({"metadata": {"name": "team-a"}}))
//!     .expect(Method::PATCH, "/apis/kafka.strimzi.io/v1/namespaces/team-a/kafkatopics/orders/status?")
//!     .inspect_body(|body| assert_eq!(body["status"]["topicName"], "orders"))
//!     .respond_json(200, json!({}))
//!     .start();
//! // ... run the code under test with `client` ...
//! # drop(client);
//! verifier.finish().await;
//! # }
//! ```
//!
//! A call matches when its method is the expected one, its path is the expected path, and
//! its query parameters are the expected ones: an expectation without `?` matches a request
//! without query parameters; `path?fieldManager=x&force=true` one that has (at least) these
//! parameters, in any order, written as sent (percent-encoded: `labelSelector=a%3Db`); `path?`
//! one with any parameters or none.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How long [`Verifier::finish`] waits for the expected calls not made yet, unless the
/// scenario says otherwise ([`Scenario::within`]).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);

type MockHandle = tower_test::mock::Handle<Request<Body>, Response<Body>>;
type BodyCheck = Box<dyn FnOnce(&Value) + Send>;

/// The calls the code under test is expected to make, in order, with their answers: made
/// with its client by [`Scenario::new`], given calls with [`Scenario::expect`], then
/// answering them once [`Scenario::start`]ed.
#[must_use = "a scenario answers nothing until started"]
pub struct Scenario {
    handle: MockHandle,
    calls: VecDeque<ExpectedCall>,
    wait: Duration,
}

impl Scenario {
    /// A client whose every request goes to the returned scenario, and the scenario, still
    /// empty; must be called inside a Tokio runtime (the client spawns its request buffer
    /// there).
    pub fn new() -> (kube::Client, Self) {
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let scenario = Self {
            handle,
            calls: VecDeque::new(),
            wait: DEFAULT_WAIT,
        };
        (client, scenario)
    }

    /// Expects a `method` request to `path_and_query` next (see the module documentation for
    /// how the path and the query parameters match); answer it with
    /// [`Expecting::respond_json`].
    pub fn expect(self, method: Method, path_and_query: &str) -> Expecting {
        let (path, query) = match path_and_query.split_once('?') {
            Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
            None => (path_and_query.to_owned(), None),
        };
        Expecting {
            scenario: self,
            method,
            path,
            query,
            body_check: None,
        }
    }

    /// Expects a list of the objects of kind `K` in `namespace` selected by the label
    /// `selector` (as written, `a=b,c=d`) next, answered with `items`.
    pub fn lists<K: kube::Resource<DynamicType = ()>>(
        self,
        namespace: &str,
        selector: &str,
        items: Vec<Value>,
    ) -> Self {
        // As sent: percent-encoded.
        let encoded = selector
            .replace('/', "%2F")
            .replace('=', "%3D")
            .replace(',', "%2C");
        let path = K::url_path(&(), Some(namespace));
        self.expect(Method::GET, &format!("{path}?labelSelector={encoded}"))
            .respond_json(
                200,
                json!({"apiVersion": K::api_version(&()), "kind": format!("{}List", K::kind(&())),
                       "metadata": {"resourceVersion": "1"}, "items": items}),
            )
    }

    /// Waits up to `wait` in [`Verifier::finish`] for the expected calls (default
    /// [`DEFAULT_WAIT`]).
    pub fn within(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Starts answering requests in the background, on the current Tokio runtime. Call
    /// [`Verifier::finish`] once the code under test is done.
    pub fn start(self) -> Verifier {
        let state = Arc::new(Mutex::new(State {
            remaining: self.calls,
            answering: false,
            failures: Vec::new(),
        }));
        let progress = Arc::new(Notify::new());
        let task = tokio::spawn(answer(self.handle, state.clone(), progress.clone()));
        Verifier {
            state,
            progress,
            task,
            wait: self.wait,
            finished: false,
        }
    }
}

/// One expected call being described: the method and path are set; its body check is
/// optional and its answer is required ([`Expecting::respond_json`]).
#[must_use = "an expected call is added to the scenario by respond_json"]
pub struct Expecting {
    scenario: Scenario,
    method: Method,
    path: String,
    query: Option<String>,
    body_check: Option<BodyCheck>,
}

impl Expecting {
    /// Runs `check` on the request's body, read as JSON (`null` when empty), when the call
    /// comes; its assertions fail the test through [`Verifier::finish`].
    pub fn inspect_body(mut self, check: impl FnOnce(&Value) + Send + 'static) -> Self {
        self.body_check = Some(Box::new(check));
        self
    }

    /// Answers the call with HTTP `status` and `body` as JSON; the scenario, to expect the
    /// next call.
    pub fn respond_json(self, status: u16, body: Value) -> Scenario {
        let Self {
            mut scenario,
            method,
            path,
            query,
            body_check,
        } = self;
        scenario.calls.push_back(ExpectedCall {
            method,
            path,
            query,
            body_check,
            status,
            response: body,
        });
        scenario
    }
}

/// A Kubernetes `Status` document, the body of an API error: `code`, `reason` (such as
/// `NotFound`) and `message`.
pub fn status_body(code: u16, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    })
}

/// A started [`Scenario`]: answers requests until [`Verifier::finish`], which fails the test
/// unless every expected call came, in order, and nothing else.
#[must_use = "call finish() to check that every expected call came"]
pub struct Verifier {
    state: Arc<Mutex<State>>,
    progress: Arc<Notify>,
    task: JoinHandle<()>,
    wait: Duration,
    finished: bool,
}

impl Verifier {
    /// Waits until every expected call has come and been answered (up to the scenario's
    /// wait) or a request went wrong, then panics with what went wrong, if anything: a
    /// request not expected (its method and URI), a call not made, or a failed body check.
    pub async fn finish(mut self) {
        self.finished = true;
        let deadline = tokio::time::Instant::now() + self.wait;
        loop {
            let progressed = self.progress.notified();
            {
                let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                if !state.failures.is_empty() || (state.remaining.is_empty() && !state.answering) {
                    break;
                }
            }
            if tokio::time::timeout_at(deadline, progressed).await.is_err() {
                break;
            }
        }
        self.task.abort();
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut problems = state.failures.clone();
        problems.extend(
            state
                .remaining
                .iter()
                .map(|call| format!("expected call not made: {call}")),
        );
        assert!(
            problems.is_empty(),
            "mock Kubernetes API:\n  {}",
            problems.join("\n  ")
        );
    }
}

impl Drop for Verifier {
    fn drop(&mut self) {
        self.task.abort();
        if !self.finished && !std::thread::panicking() {
            panic!("a mock API scenario was dropped without Verifier::finish()");
        }
    }
}

/// What the answering task and [`Verifier::finish`] share.
struct State {
    /// The calls still expected, next first.
    remaining: VecDeque<ExpectedCall>,
    /// Whether an expected call taken from `remaining` is being checked and answered.
    answering: bool,
    /// What went wrong, as reported at the end.
    failures: Vec<String>,
}

struct ExpectedCall {
    method: Method,
    path: String,
    query: Option<String>,
    body_check: Option<BodyCheck>,
    status: u16,
    response: Value,
}

impl ExpectedCall {
    fn matches(&self, method: &Method, uri: &http::Uri) -> bool {
        *method == self.method
            && uri.path() == self.path
            && match &self.query {
                None => parameters(uri.query()).next().is_none(),
                Some(expected) => parameters(Some(expected))
                    .all(|wanted| parameters(uri.query()).any(|got| got == wanted)),
            }
    }
}

/// The `key=value` parameters of `query`, as sent (percent-encoded).
fn parameters(query: Option<&str>) -> impl Iterator<Item = &str> {
    query
        .unwrap_or_default()
        .split('&')
        .filter(|parameter| !parameter.is_empty())
}

impl fmt::Display for ExpectedCall {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} {}", self.method, self.path)?;
        match &self.query {
            Some(query) => write!(formatter, "?{query}"),
            None => Ok(()),
        }
    }
}

/// Answers each request with the next expected call's answer, or records it as unexpected
/// and answers 500 (so that the code under test gets an error instead of waiting).
async fn answer(mut handle: MockHandle, state: Arc<Mutex<State>>, progress: Arc<Notify>) {
    while let Some((request, respond)) = handle.next_request().await {
        let (parts, body) = request.into_parts();
        let received = format!("{} {}", parts.method, parts.uri);
        let expected = {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            let next_matches = state
                .remaining
                .front()
                .is_some_and(|call| call.matches(&parts.method, &parts.uri));
            if next_matches {
                state.answering = true;
                state.remaining.pop_front()
            } else {
                let failure = match state.remaining.front() {
                    Some(call) => format!("unexpected request {received}; expected {call}"),
                    None => format!("unexpected request {received}; no more calls expected"),
                };
                eprintln!("mock Kubernetes API: {failure}");
                state.failures.push(failure);
                None
            }
        };
        let response = match expected {
            Some(call) => {
                if let Some(check) = call.body_check {
                    let checked = read_json(body).await.and_then(|document| {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            check(&document);
                        }))
                        .map_err(|panic| panic_message(panic.as_ref()))
                    });
                    if let Err(problem) = checked {
                        let failure = format!("body of {received}: {problem}");
                        eprintln!("mock Kubernetes API: {failure}");
                        state
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .failures
                            .push(failure);
                    }
                }
                json_response(call.status, &call.response)
            }
            None => json_response(
                500,
                &status_body(500, "InternalError", &format!("not expected: {received}")),
            ),
        };
        respond.send_response(response);
        state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .answering = false;
        progress.notify_waiters();
    }
}

/// The JSON document of a request body; `null` when the body is empty.
async fn read_json(body: Body) -> Result<Value, String> {
    let bytes = body
        .collect_bytes()
        .await
        .map_err(|error| format!("reading it: {error}"))?;
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&bytes).map_err(|error| format!("not JSON: {error}"))
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_else(|| "the check panicked".to_owned())
}

fn json_response(status: u16, body: &Value) -> Response<Body> {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(Body::from(body.to_string().into_bytes()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::Api;
    use kube::api::{Patch, PatchParams};

    /// The panic message of `future`, which must panic.
    async fn panic_of(future: impl std::future::Future<Output = ()> + Send + 'static) -> String {
        let joined = tokio::spawn(future).await;
        let panic = joined.expect_err("expected a panic").into_panic();
        panic_message(panic.as_ref())
    }

    #[tokio::test]
    async fn expected_calls_are_answered_in_order_and_bodies_checked() {
        let (client, scenario) = Scenario::new();
        let verifier = scenario
            .expect(Method::GET, "/api/v1/namespaces/team-a")
            .respond_json(200, json!({"metadata": {"name": "team-a", "uid": "u1"}}))
            .expect(
                Method::PATCH,
                "/api/v1/namespaces/team-a/configmaps/settings?fieldManager=test",
            )
            .inspect_body(|body| assert_eq!(body["data"]["key"], "value"))
            .respond_json(
                200,
                json!({"metadata": {"name": "settings"}, "data": {"key": "value"}}),
            )
            .start();
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let namespace = namespaces.get("team-a").await.unwrap();
        assert_eq!(namespace.metadata.uid.as_deref(), Some("u1"));
        let maps: Api<ConfigMap> = Api::namespaced(client, "team-a");
        let patched = maps
            .patch(
                "settings",
                &PatchParams::apply("test"),
                &Patch::Apply(json!({"data": {"key": "value"}})),
            )
            .await
            .unwrap();
        assert_eq!(patched.data.unwrap()["key"], "value");
        verifier.finish().await;
    }

    #[tokio::test]
    async fn an_error_answer_reaches_the_client_as_an_api_error() {
        let (client, scenario) = Scenario::new();
        let verifier = scenario
            .expect(Method::GET, "/api/v1/namespaces/gone")
            .respond_json(
                404,
                status_body(404, "NotFound", "namespaces \"gone\" not found"),
            )
            .start();
        let namespaces: Api<Namespace> = Api::all(client);
        assert!(namespaces.get_opt("gone").await.unwrap().is_none());
        verifier.finish().await;
    }

    #[tokio::test]
    async fn an_unexpected_request_fails_with_its_method_and_uri() {
        let (client, scenario) = Scenario::new();
        let verifier = scenario
            .expect(Method::GET, "/api/v1/namespaces/team-a")
            .respond_json(200, json!({"metadata": {"name": "team-a"}}))
            .start();
        let namespaces: Api<Namespace> = Api::all(client);
        let refused = namespaces.delete("team-a", &Default::default()).await;
        assert!(refused.is_err(), "answered 500");
        let message = panic_of(verifier.finish()).await;
        assert!(
            message.contains("unexpected request DELETE /api/v1/namespaces/team-a")
                && message.contains("expected GET /api/v1/namespaces/team-a"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_request_after_the_last_expected_call_fails() {
        let (client, scenario) = Scenario::new();
        let verifier = scenario.start();
        let namespaces: Api<Namespace> = Api::all(client);
        assert!(namespaces.get("team-a").await.is_err());
        let message = panic_of(verifier.finish()).await;
        assert!(
            message.contains("unexpected request GET /api/v1/namespaces/team-a; no more calls"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_call_never_made_fails_after_the_wait() {
        let (_client, scenario) = Scenario::new();
        let verifier = scenario
            .expect(Method::GET, "/api/v1/namespaces/team-a")
            .respond_json(200, json!({}))
            .within(Duration::from_millis(100))
            .start();
        let message = panic_of(verifier.finish()).await;
        assert!(
            message.contains("expected call not made: GET /api/v1/namespaces/team-a"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_failed_body_check_and_a_missing_query_fail() {
        let (client, scenario) = Scenario::new();
        let verifier = scenario
            .expect(
                Method::PATCH,
                "/api/v1/namespaces/team-a/configmaps/settings?",
            )
            .inspect_body(|body| assert_eq!(body["data"]["key"], "other"))
            .respond_json(200, json!({"metadata": {"name": "settings"}}))
            .expect(Method::GET, "/api/v1/namespaces/team-a?labelSelector=x")
            .respond_json(200, json!({}))
            .start();
        let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "team-a");
        maps.patch(
            "settings",
            &PatchParams::apply("test"),
            &Patch::Apply(json!({"data": {"key": "value"}})),
        )
        .await
        .unwrap();
        let namespaces: Api<Namespace> = Api::all(client);
        assert!(namespaces.get("team-a").await.is_err());
        let message = panic_of(verifier.finish()).await;
        assert!(
            message.contains("body of PATCH /api/v1/namespaces/team-a/configmaps/settings?")
                && message.contains("\"other\""),
            "{message}"
        );
        assert!(
            message.contains("unexpected request GET /api/v1/namespaces/team-a; expected GET /api/v1/namespaces/team-a?labelSelector=x"),
            "{message}"
        );
    }
}
