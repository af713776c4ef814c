//! Counting every read an operator makes of the Kubernetes API, as
//! `strimzi_operator_api_reads_total{kind,verb}` ([`Metrics::reads`]).
//!
//! A tower layer ([`CountReadsLayer`]) sits in front of the operator's client and looks at
//! each request as it is sent: a `GET` of one object is a `get`, a `GET` of a collection is a
//! `list`, labelled with the resource's plural name (`secrets`, `kafkas`, ...). Watches are
//! long-lived streams, not reads, and are not counted; neither are discovery and other
//! requests outside `/api` and `/apis`. The initial `LIST` of a cache (a reflector), and
//! the `LIST` it repeats when its watch has expired, go through the same client and count as
//! `list`s, one per page. A request counts when it is sent, whether it succeeds or not.
//! [`OperatorRuntime`](crate::runtime::OperatorRuntime) puts every request of its client
//! through the layer ([`count_reads`]), so every controller, cache, writer and the leader
//! election of an operator process is counted.

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Method, Request, Response, Uri};
use kube::Client;
use kube::client::Body;
use tower::{Layer, Service};

use crate::metrics::Metrics;

/// What kind of read a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadVerb {
    /// One object (or a subresource of it) by name.
    Get,
    /// A collection, whole or filtered by selectors.
    List,
}

impl ReadVerb {
    /// The verb as Kubernetes names it and as the metric labels it: `get` or `list`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::List => "list",
        }
    }
}

/// Subresources of a Namespace, whose paths would otherwise read as a namespaced collection:
/// `/api/v1/namespaces/{name}/status` is the status of Namespace `name`.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// The resource (plural name) and verb of a request if it reads the Kubernetes API, as the
/// API server itself tells gets, lists and watches apart: `GET` with an object name in the
/// path is a `get`; without one it is a `list`, unless its `watch` parameter is true (a
/// watch, `None`), as are the legacy `/watch/` paths. Anything but a `GET` of a path under
/// `/api/<version>/` or `/apis/<group>/<version>/` naming a resource is `None`.
pub fn classify<'a>(method: &Method, uri: &'a Uri) -> Option<(&'a str, ReadVerb)> {
    if method != Method::GET {
        return None;
    }
    let segments: Vec<&str> = uri
        .path()
        .split('/')
        .filter(|segment| !segment.is_empty())
        .collect();
    let rest = match segments.as_slice() {
        ["api", _version, rest @ ..] => rest,
        ["apis", _group, _version, rest @ ..] => rest,
        _ => return None,
    };
    let parts = match rest {
        [] | ["watch" | "proxy", ..] => return None,
        ["namespaces", _namespace, resource, ..] if !NAMESPACE_SUBRESOURCES.contains(resource) => {
            &rest[2..]
        }
        _ => rest,
    };
    match parts {
        [resource] => (!is_watch(uri)).then_some((*resource, ReadVerb::List)),
        [resource, _name, ..] => Some((*resource, ReadVerb::Get)),
        [] => None,
    }
}

/// Whether the query asks for a watch: `watch` set to a value Go reads as true.
fn is_watch(uri: &Uri) -> bool {
    uri.query()
        .into_iter()
        .flat_map(|query| query.split('&'))
        .filter_map(|pair| pair.split_once('='))
        .any(|(key, value)| {
            key == "watch" && matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True")
        })
}

/// A tower layer that counts the reads among the requests passing through it in
/// [`Metrics`] (see [`classify`]).
#[derive(Clone, Debug)]
pub struct CountReadsLayer {
    metrics: Metrics,
}

impl CountReadsLayer {
    /// A layer counting in `metrics`.
    pub fn new(metrics: Metrics) -> Self {
        Self { metrics }
    }
}

impl<S> Layer<S> for CountReadsLayer {
    type Service = CountReads<S>;

    fn layer(&self, inner: S) -> CountReads<S> {
        CountReads {
            inner,
            metrics: self.metrics.clone(),
        }
    }
}

/// The service [`CountReadsLayer`] makes: counts each read, then hands the request on
/// unchanged.
#[derive(Clone, Debug)]
pub struct CountReads<S> {
    inner: S,
    metrics: Metrics,
}

impl<S, B> Service<Request<B>> for CountReads<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, context: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: Request<B>) -> S::Future {
        if let Some((resource, verb)) = classify(request.method(), request.uri()) {
            self.metrics.count_read(resource, verb.as_str());
        }
        self.inner.call(request)
    }
}

/// An existing client as a tower service, so that layers can be put in front of it.
#[derive(Clone)]
struct Through(Client);

impl Service<Request<Body>> for Through {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _context: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        // The client waits for its own capacity in `send`.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let client = self.0.clone();
        Box::pin(async move { client.send(request).await })
    }
}

/// `client` with its reads counted in `metrics`: same default namespace, same validity,
/// same errors. Must be called inside a Tokio runtime.
pub fn count_reads(client: Client, metrics: Metrics) -> Client {
    let namespace = client.default_namespace().to_owned();
    let valid_until = *client.valid_until();
    let service = CountReadsLayer::new(metrics).layer(Through(client));
    Client::new(service, namespace).with_valid_until(valid_until)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn read(method: Method, uri: &'static str) -> Option<(String, &'static str)> {
        let uri = Uri::from_static(uri);
        classify(&method, &uri).map(|(resource, verb)| (resource.to_owned(), verb.as_str()))
    }

    #[test]
    fn gets_lists_and_watches_are_told_apart_as_the_api_server_does() {
        for (uri, expected) in [
            // Namespaced objects and collections, core and grouped.
            ("/api/v1/namespaces/ns/secrets/a", Some(("secrets", "get"))),
            ("/api/v1/namespaces/ns/secrets", Some(("secrets", "list"))),
            (
                "/api/v1/namespaces/ns/secrets?labelSelector=strimzi.io%2Fcluster%3Dx",
                Some(("secrets", "list")),
            ),
            (
                "/apis/kafka.strimzi.io/v1/namespaces/ns/kafkas/my-cluster",
                Some(("kafkas", "get")),
            ),
            (
                "/apis/kafka.strimzi.io/v1/namespaces/ns/kafkas?limit=500&resourceVersion=0",
                Some(("kafkas", "list")),
            ),
            // Subresources count as a get of their resource.
            (
                "/apis/kafka.strimzi.io/v1/namespaces/ns/kafkas/my-cluster/status",
                Some(("kafkas", "get")),
            ),
            ("/api/v1/namespaces/ns/pods/p/log", Some(("pods", "get"))),
            // Every namespace, and cluster-scoped resources.
            ("/api/v1/pods", Some(("pods", "list"))),
            ("/api/v1/nodes/node-1", Some(("nodes", "get"))),
            (
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/b",
                Some(("clusterrolebindings", "get")),
            ),
            // Namespaces themselves, and their subresources.
            ("/api/v1/namespaces", Some(("namespaces", "list"))),
            ("/api/v1/namespaces/ns", Some(("namespaces", "get"))),
            ("/api/v1/namespaces/ns/status", Some(("namespaces", "get"))),
            // Watches are streams, not reads.
            ("/api/v1/namespaces/ns/secrets?watch=true", None),
            (
                "/apis/kafka.strimzi.io/v1/namespaces/ns/kafkas?watch=1&resourceVersion=5",
                None,
            ),
            (
                "/api/v1/pods?allowWatchBookmarks=true&watch=True&timeoutSeconds=290",
                None,
            ),
            (
                "/api/v1/namespaces/ns/pods?watch=false",
                Some(("pods", "list")),
            ),
            ("/api/v1/watch/namespaces/ns/pods", None),
            // Discovery, proxies and the rest are no object reads.
            ("/api", None),
            ("/api/v1", None),
            ("/apis", None),
            ("/apis/kafka.strimzi.io", None),
            ("/apis/kafka.strimzi.io/v1", None),
            ("/version", None),
            ("/openapi/v3", None),
            ("/api/v1/proxy/namespaces/ns/pods/p", None),
        ] {
            let expected = expected.map(|(resource, verb)| (resource.to_owned(), verb));
            assert_eq!(read(Method::GET, uri), expected, "{uri}");
        }
    }

    #[test]
    fn only_gets_are_reads() {
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert_eq!(
                read(method.clone(), "/api/v1/namespaces/ns/secrets/a"),
                None
            );
            assert_eq!(read(method, "/api/v1/namespaces/ns/secrets"), None);
        }
    }
}
