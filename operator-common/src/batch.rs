//! Batching of requests: callers queue one item each and wait for its result, while one
//! task collects items into batches of up to a maximum size, waiting at most a linger time
//! for a batch to fill, and hands each batch to a handler. The queue is bounded: when it is
//! full, callers wait (back-pressure) instead of failing.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use prometheus::IntGauge;
use tokio::sync::{Semaphore, mpsc, oneshot};

/// How batches are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSettings {
    /// Items queued at most before callers wait.
    pub max_queue_size: usize,
    /// Items per batch at most.
    pub max_batch_size: usize,
    /// How long the first item of a batch waits for more.
    pub max_linger: Duration,
    /// Batches handled at once at most.
    pub max_in_flight: usize,
}

/// The batcher stopped before answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the {0} batcher has stopped")]
pub struct BatcherStopped(pub &'static str);

type Handler<I, O> = Arc<dyn Fn(Vec<I>) -> BoxFuture<'static, Vec<O>> + Send + Sync>;

/// A queue of items handled in batches; cloning shares it.
pub struct Batcher<I, O> {
    name: &'static str,
    sender: mpsc::Sender<(I, oneshot::Sender<O>)>,
    queued: Option<IntGauge>,
}

impl<I, O> Clone for Batcher<I, O> {
    fn clone(&self) -> Self {
        Self {
            name: self.name,
            sender: self.sender.clone(),
            queued: self.queued.clone(),
        }
    }
}

impl<I: Send + 'static, O: Send + 'static> Batcher<I, O> {
    /// Starts the batcher `name` on the current Tokio runtime. `handler` gets a batch and
    /// returns one output per item, in the same order; it stops when every clone is dropped.
    pub fn spawn<F, Fut>(name: &'static str, settings: BatchSettings, handler: F) -> Self
    where
        F: Fn(Vec<I>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<O>> + Send + 'static,
    {
        Self::spawn_counted(name, settings, None, handler)
    }

    fn spawn_counted<F, Fut>(
        name: &'static str,
        settings: BatchSettings,
        queued: Option<IntGauge>,
        handler: F,
    ) -> Self
    where
        F: Fn(Vec<I>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<O>> + Send + 'static,
    {
        let (sender, receiver) = mpsc::channel(settings.max_queue_size.max(1));
        let handler: Handler<I, O> = Arc::new(move |items| Box::pin(handler(items)));
        tokio::spawn(collect(settings, receiver, handler, queued.clone()));
        Self {
            name,
            sender,
            queued,
        }
    }

    /// Starts the batcher `name` whose `handler` gets a shared `context` with each batch;
    /// `queued` shows how many items wait for a batch.
    pub fn spawn_with<C, Fut>(
        name: &'static str,
        settings: BatchSettings,
        context: &Arc<C>,
        handler: fn(Arc<C>, Vec<I>) -> Fut,
        queued: IntGauge,
    ) -> Self
    where
        C: Send + Sync + 'static,
        Fut: Future<Output = Vec<O>> + Send + 'static,
    {
        let context = context.clone();
        Self::spawn_counted(name, settings, Some(queued), move |items| {
            handler(context.clone(), items)
        })
    }

    /// Queues `item`, waiting while the queue is full, and returns its output.
    pub async fn call(&self, item: I) -> Result<O, BatcherStopped> {
        let (reply, answer) = oneshot::channel();
        if let Some(queued) = &self.queued {
            queued.inc();
        }
        let sent = self.sender.send((item, reply)).await;
        if sent.is_err()
            && let Some(queued) = &self.queued
        {
            queued.dec();
        }
        sent.map_err(|_| BatcherStopped(self.name))?;
        answer.await.map_err(|_| BatcherStopped(self.name))
    }
}

async fn collect<I: Send + 'static, O: Send + 'static>(
    settings: BatchSettings,
    mut receiver: mpsc::Receiver<(I, oneshot::Sender<O>)>,
    handler: Handler<I, O>,
    queued: Option<IntGauge>,
) {
    let in_flight = Arc::new(Semaphore::new(settings.max_in_flight.max(1)));
    let max_batch = settings.max_batch_size.max(1);
    while let Some(first) = receiver.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + settings.max_linger;
        while batch.len() < max_batch {
            match tokio::time::timeout_at(deadline, receiver.recv()).await {
                Ok(Some(item)) => batch.push(item),
                Ok(None) | Err(_) => break,
            }
        }
        if let Some(queued) = &queued {
            queued.sub(i64::try_from(batch.len()).unwrap_or(i64::MAX));
        }
        let Ok(permit) = in_flight.clone().acquire_owned().await else {
            return;
        };
        let handler = handler.clone();
        tokio::spawn(async move {
            let (items, replies): (Vec<I>, Vec<oneshot::Sender<O>>) = batch.into_iter().unzip();
            let outputs = handler(items).await;
            for (reply, output) in replies.into_iter().zip(outputs) {
                // The caller may have given up waiting; nothing to do then.
                let _ = reply.send(output);
            }
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Mutex;

    fn settings(size: usize, linger_ms: u64) -> BatchSettings {
        BatchSettings {
            max_queue_size: 16,
            max_batch_size: size,
            max_linger: Duration::from_millis(linger_ms),
            max_in_flight: 2,
        }
    }

    #[tokio::test]
    async fn the_queue_gauge_counts_items_waiting_for_a_batch() {
        let queued = IntGauge::new("queued", "items waiting").unwrap();
        let one_at_a_time = BatchSettings {
            max_in_flight: 1,
            ..settings(1, 0)
        };
        async fn slow(_: Arc<()>, items: Vec<u32>) -> Vec<u32> {
            tokio::time::sleep(Duration::from_millis(300)).await;
            items
        }
        let batcher =
            Batcher::spawn_with("slow", one_at_a_time, &Arc::new(()), slow, queued.clone());
        let calls: Vec<_> = (0..5)
            .map(|item| {
                let batcher = batcher.clone();
                tokio::spawn(async move { batcher.call(item).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        // One item is being handled and one taken by the collector waiting for its turn.
        assert!(queued.get() >= 3, "queued: {}", queued.get());
        for call in calls {
            call.await.unwrap().unwrap();
        }
        assert_eq!(queued.get(), 0);
    }

    #[tokio::test]
    async fn groups_concurrent_calls_into_bounded_batches() {
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let seen = sizes.clone();
        let batcher = Batcher::spawn("double", settings(4, 200), move |items: Vec<u32>| {
            seen.lock().unwrap().push(items.len());
            async move { items.into_iter().map(|item| item * 2).collect() }
        });
        let calls = (0..10).map(|item| {
            let batcher = batcher.clone();
            async move { batcher.call(item).await.unwrap() }
        });
        let outputs = futures::future::join_all(calls).await;
        assert_eq!(outputs, (0..10).map(|item| item * 2).collect::<Vec<_>>());
        let sizes = sizes.lock().unwrap().clone();
        assert_eq!(sizes.iter().sum::<usize>(), 10);
        assert!(sizes.iter().all(|size| *size <= 4), "{sizes:?}");
        assert!(sizes.len() <= 4, "calls were batched: {sizes:?}");
    }

    #[tokio::test]
    async fn a_lone_call_waits_only_the_linger() {
        let batcher = Batcher::spawn(
            "echo",
            settings(100, 20),
            |items: Vec<u8>| async move { items },
        );
        let started = std::time::Instant::now();
        assert_eq!(batcher.call(7).await.unwrap(), 7);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_full_queue_makes_callers_wait_instead_of_failing() {
        let settings = BatchSettings {
            max_queue_size: 1,
            max_batch_size: 1,
            max_linger: Duration::ZERO,
            max_in_flight: 1,
        };
        let batcher = Batcher::spawn("slow", settings, |items: Vec<u16>| async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            items
        });
        let calls = (0..50).map(|item| {
            let batcher = batcher.clone();
            async move { batcher.call(item).await }
        });
        let outputs = futures::future::join_all(calls).await;
        assert!(outputs.iter().all(Result::is_ok));
        assert_eq!(outputs.len(), 50);
    }
}
