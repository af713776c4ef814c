//! Custom resources of one kind in one namespace, as the operators' tests drive them: written
//! as JSON documents (so that tests can also send what the typed API would not), read back
//! untyped, and waited on until a condition holds.

use std::fmt::Debug;
use std::future::Future;
use std::time::{Duration, Instant};

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::discovery::pinned_kind;
use kube::{Client, Resource};
use serde_json::Value;

/// How long [`eventually`] and the waits below wait by default.
pub const WAIT: Duration = Duration::from_secs(60);

/// Waits up to `timeout` for `check` to hold, polling every 200 ms; panics naming `what`.
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let outcome = poll(timeout, POLL_INTERVAL, || {
        let holds = check();
        async move { if holds.await { Ok(()) } else { Err(()) } }
    })
    .await;
    if outcome.is_err() {
        panic!("timed out waiting for {what}");
    }
}

/// Like [`eventually`], for a check that yields something once it holds: polls `check`
/// every 200 ms until it returns `Ok`, for up to `timeout`, and hands back that value. When
/// time runs out, the panic names `what` and shows the `Err` of the last attempt (what the
/// check last saw, say).
pub async fn eventually_ok<T, E, F, Fut>(what: &str, timeout: Duration, check: F) -> T
where
    E: Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    eventually_ok_every(what, timeout, POLL_INTERVAL, check).await
}

/// Like [`eventually_ok`], polling every `interval`: for a check that costs more than an API
/// read (one that starts a process, say) over a long wait.
pub async fn eventually_ok_every<T, E, F, Fut>(
    what: &str,
    timeout: Duration,
    interval: Duration,
    check: F,
) -> T
where
    E: Debug,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    match poll(timeout, interval, check).await {
        Ok(value) => value,
        Err(last) => panic!("timed out waiting for {what}; last seen: {last:#?}"),
    }
}

/// How often [`eventually`] and [`eventually_ok`] check.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// Runs `check` every `interval` until it succeeds or `timeout` has passed; its last result.
async fn poll<T, E, F, Fut>(timeout: Duration, interval: Duration, mut check: F) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        let outcome = check().await;
        if outcome.is_ok() || Instant::now() >= deadline {
            return outcome;
        }
        tokio::time::sleep(interval).await;
    }
}

/// Creates `document` (any kind the API server knows, found by discovery) in `namespace`,
/// returning the API server's message when it refuses it.
pub async fn create_document(
    client: &Client,
    namespace: &str,
    document: &Value,
) -> Result<(), String> {
    let api_version = document["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = document["kind"].as_str().unwrap_or_default();
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, _) = pinned_kind(client, &gvk)
        .await
        .map_err(|error| format!("unknown kind {api_version} {kind}: {error}"))?;
    let mut object: DynamicObject =
        serde_json::from_value(document.clone()).map_err(|error| error.to_string())?;
    object.metadata.namespace = Some(namespace.to_owned());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    api.create(&PostParams::default(), &object)
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// The custom resources of one kind in one namespace.
#[derive(Clone)]
pub struct CustomResources {
    api: Api<DynamicObject>,
    kind: String,
}

impl CustomResources {
    /// The resources of kind `K` in `namespace`.
    pub fn of<K: Resource<DynamicType = ()>>(client: &Client, namespace: &str) -> Self {
        let resource = ApiResource::erase::<K>(&());
        Self {
            kind: resource.kind.clone(),
            api: Api::namespaced_with(client.clone(), namespace, &resource),
        }
    }

    /// Creates `document`; the API server's error, if any.
    pub async fn try_create(&self, document: Value) -> Result<(), kube::Error> {
        let object: DynamicObject =
            serde_json::from_value(document).map_err(kube::Error::SerdeError)?;
        self.api
            .create(&PostParams::default(), &object)
            .await
            .map(|_| ())
    }

    /// Creates `document`, panicking on an error.
    pub async fn create(&self, document: Value) {
        if let Err(error) = self.try_create(document).await {
            panic!("creating a {}: {error}", self.kind);
        }
    }

    /// Merges `patch` into the resource `name`.
    pub async fn patch(&self, name: &str, patch: Value) {
        if let Err(error) = self
            .api
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            panic!("patching {} {name}: {error}", self.kind);
        }
    }

    /// Deletes the resource `name` (if it exists).
    pub async fn delete(&self, name: &str) {
        match self.api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => panic!("deleting {} {name}: {error}", self.kind),
        }
    }

    /// The resource `name`, `None` when it does not exist.
    pub async fn get(&self, name: &str) -> Option<DynamicObject> {
        match self.api.get_opt(name).await {
            Ok(object) => object,
            Err(error) => panic!("reading {} {name}: {error}", self.kind),
        }
    }

    /// Every resource of this kind in the namespace.
    pub async fn list(&self) -> Vec<DynamicObject> {
        match self.api.list(&ListParams::default()).await {
            Ok(list) => list.items,
            Err(error) => panic!("listing {}s: {error}", self.kind),
        }
    }

    /// Whether the resource `name` exists.
    pub async fn exists(&self, name: &str) -> bool {
        self.get(name).await.is_some()
    }

    /// The resource's `status` (`null` when unset or gone).
    pub async fn status(&self, name: &str) -> Value {
        self.get(name)
            .await
            .map(|object| object.data["status"].clone())
            .unwrap_or(Value::Null)
    }

    /// The status condition of `type`.
    pub async fn condition(&self, name: &str, r#type: &str) -> Option<Value> {
        self.status(name).await["conditions"]
            .as_array()?
            .iter()
            .find(|condition| condition["type"] == r#type)
            .cloned()
    }

    /// Whether the resource is `Ready` for its current generation.
    pub async fn is_ready(&self, name: &str) -> bool {
        self.get(name).await.as_ref().is_some_and(is_ready)
    }

    /// Waits until the resource is `Ready` for its current generation.
    pub async fn wait_ready(&self, name: &str) {
        eventually(&format!("{} {name} Ready", self.kind), WAIT, || {
            self.is_ready(name)
        })
        .await;
    }

    /// Waits until the resource has a condition of `type` with status `True`, `reason` and
    /// a message containing `message`; the condition.
    pub async fn wait_condition(
        &self,
        name: &str,
        r#type: &str,
        reason: &str,
        message: &str,
    ) -> Value {
        self.wait_condition_status(name, r#type, "True", reason, message)
            .await
    }

    /// Waits until the resource's `Ready` condition is `False` with `reason` and a message
    /// containing `message` (how the operators report what they could not do); the condition.
    pub async fn wait_not_ready(&self, name: &str, reason: &str, message: &str) -> Value {
        self.wait_condition_status(name, "Ready", "False", reason, message)
            .await
    }

    /// Waits until the resource has a condition of `type` with `status`, `reason` and a
    /// message containing `message`; the condition.
    pub async fn wait_condition_status(
        &self,
        name: &str,
        r#type: &str,
        status: &str,
        reason: &str,
        message: &str,
    ) -> Value {
        let matches = |condition: &Value| {
            condition["status"] == status
                && condition["reason"] == reason
                && condition["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(message)
        };
        eventually(
            &format!("{} {name} {type}={status} {reason}: {message}", self.kind),
            WAIT,
            || async {
                self.condition(name, r#type)
                    .await
                    .is_some_and(|condition| matches(&condition))
            },
        )
        .await;
        self.condition(name, r#type).await.unwrap_or(Value::Null)
    }
}

/// Whether `object` is `Ready` for its current generation.
pub fn is_ready(object: &DynamicObject) -> bool {
    let status = &object.data["status"];
    status["observedGeneration"].as_i64() == object.metadata.generation
        && status["conditions"].as_array().is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}
