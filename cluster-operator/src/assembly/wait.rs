//! Waiting, within the operation timeout, until objects selected by label reach a state: a
//! list+watch of its own feeds a cache, and the condition is checked after every change.

use std::sync::Arc;

use futures::StreamExt;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector;
use kube::runtime::watcher::{self, Event};
use tokio::time::Instant;

use strimzi_operator_common::cache::WatchedKind;

use super::ReconcileError;

/// Waits until `done` holds for the objects of `api` matching `selector` and returns them, or
/// fails with a timeout naming `what` at `deadline`.
pub async fn until<K>(
    api: Api<K>,
    selector: &str,
    deadline: Instant,
    what: &str,
    done: impl Fn(&[Arc<K>]) -> bool,
) -> Result<Vec<Arc<K>>, ReconcileError>
where
    K: WatchedKind,
{
    let (store, writer) = reflector::store();
    let mut events = watcher::watcher(api, watcher::Config::default().labels(selector))
        .default_backoff()
        .reflect(writer)
        .boxed();
    let mut synced = false;
    loop {
        let event = tokio::select! {
            () = tokio::time::sleep_until(deadline) => None,
            event = events.next() => event,
        };
        match event {
            None => {
                return Err(ReconcileError::Timeout {
                    what: what.to_owned(),
                });
            }
            Some(Ok(Event::InitDone)) => synced = true,
            Some(Ok(_)) => {}
            // Retried with backoff by the watcher.
            Some(Err(error)) => tracing::warn!(%error, what, "watching failed"),
        }
        if synced {
            let objects = store.state();
            if done(&objects) {
                return Ok(objects);
            }
        }
    }
}
