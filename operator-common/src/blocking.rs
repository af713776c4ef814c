//! CPU-heavy work, such as generating RSA-4096 keys, run off the async runtime.
//!
//! A reconciliation that generated a key inline would hold one of the runtime's few worker
//! threads for a second or so, stalling every other controller, watch and health probe that
//! is scheduled there. [`CpuPool::run`] moves such a closure to tokio's blocking thread pool
//! instead. That pool grows to hundreds of threads, more than the machine has cores, so the
//! pool also caps how many closures compute at once: ten clusters that need new CAs at the
//! same moment then share the cores in turn instead of all slowing down together, and the
//! async tasks keep a core when there are two or more.
//!
//! ```no_run
//! use strimzi_operator_common::blocking::CpuPool;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! // E.g. `|| keys::generate(KeyAlgorithm::Rsa4096)` from strimzi-certificate-manager.
//! let sum = CpuPool::global().run(|| (1..=1_000_000u64).sum::<u64>()).await?;
//! assert_eq!(sum, 500_000_500_000);
//! # Ok(())
//! # }
//! ```

use std::num::NonZeroUsize;
use std::sync::{Arc, OnceLock};

use tokio::sync::Semaphore;

/// Why a closure given to [`CpuPool::run`] returned no result.
#[derive(Debug, thiserror::Error)]
pub enum BlockingError {
    /// The closure panicked; the panic's message when it was a string.
    #[error("CPU-bound task panicked: {0}")]
    Panicked(String),
    /// The runtime is shutting down, so the closure did not run (or did not finish).
    #[error("CPU-bound task cancelled: the runtime is shutting down")]
    Cancelled,
}

impl crate::ErrorReason for BlockingError {
    fn reason(&self) -> &'static str {
        match self {
            BlockingError::Panicked(_) => "InternalError",
            BlockingError::Cancelled => "ShuttingDown",
        }
    }
}

/// Runs CPU-heavy closures on tokio's blocking thread pool, at most [`CpuPool::limit`] of
/// them at a time; callers past the limit wait their turn without holding a thread.
///
/// Cloning is cheap and the clones share the limit. Most code uses the process-wide
/// [`CpuPool::global`].
#[derive(Clone, Debug)]
pub struct CpuPool {
    permits: Arc<Semaphore>,
    limit: usize,
}

impl CpuPool {
    /// A pool that runs at most `limit` closures at once (at least one).
    pub fn new(limit: usize) -> Self {
        let limit = limit.max(1);
        CpuPool {
            permits: Arc::new(Semaphore::new(limit)),
            limit,
        }
    }

    /// The process-wide pool, limited to the number of cores the process may use
    /// ([`std::thread::available_parallelism`]; one if that is unknown).
    pub fn global() -> &'static CpuPool {
        static GLOBAL: OnceLock<CpuPool> = OnceLock::new();
        GLOBAL.get_or_init(CpuPool::default)
    }

    /// How many closures this pool runs at once at most.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Waits until fewer than [`CpuPool::limit`] closures of this pool are running, then runs
    /// `work` on tokio's blocking thread pool and returns its result.
    ///
    /// Must be called within a tokio runtime. If the returned future is dropped once `work`
    /// has started, `work` still runs to its end and keeps its place under the limit until
    /// then; its result is dropped.
    pub async fn run<F, T>(&self, work: F) -> Result<T, BlockingError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| BlockingError::Cancelled)?;
        let task = tokio::task::spawn_blocking(move || {
            let result = work();
            drop(permit);
            result
        });
        task.await.map_err(|error| {
            if error.is_cancelled() {
                return BlockingError::Cancelled;
            }
            let panic = error.into_panic();
            let message = panic
                .downcast_ref::<&str>()
                .map(|message| (*message).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".to_owned());
            BlockingError::Panicked(message)
        })
    }
}

impl Default for CpuPool {
    /// A pool limited to [`std::thread::available_parallelism`] (one if that is unknown).
    fn default() -> Self {
        CpuPool::new(std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_at_most_limit_closures_at_once_and_returns_each_result() {
        let pool = CpuPool::new(3);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks = (0..12).map(|task| {
            let (running, most) = (Arc::clone(&running), Arc::clone(&most));
            pool.run(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // The first closures wait for each other, so the limit is surely reached
                // however slowly the blocking threads start.
                let deadline = Instant::now() + Duration::from_secs(10);
                while most.load(Ordering::SeqCst) < 3 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
                std::thread::sleep(Duration::from_millis(5));
                running.fetch_sub(1, Ordering::SeqCst);
                task * 10
            })
        });
        let results: Vec<usize> = futures::future::try_join_all(tasks).await.unwrap();
        assert_eq!(results, (0..12).map(|task| task * 10).collect::<Vec<_>>());
        // Twelve closures and three permits: the limit is reached, never passed.
        assert_eq!(most.load(Ordering::SeqCst), 3);
        assert_eq!(pool.permits.available_permits(), 3);
    }

    #[tokio::test]
    async fn a_panic_is_an_error_and_frees_its_place() {
        let pool = CpuPool::new(1);
        let error = pool
            .run(|| -> u32 { panic!("key generation exploded") })
            .await
            .unwrap_err();
        assert!(
            matches!(&error, BlockingError::Panicked(message) if message == "key generation exploded")
        );
        assert_eq!(crate::ErrorReason::reason(&error), "InternalError");
        assert_eq!(pool.run(|| 7).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn a_dropped_caller_keeps_its_place_until_the_closure_ends() {
        let pool = CpuPool::new(1);
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (finish_tx, finish_rx) = std::sync::mpsc::channel::<()>();
        let caller = tokio::spawn({
            let pool = pool.clone();
            async move {
                pool.run(move || {
                    started_tx.send(()).unwrap();
                    finish_rx.recv().unwrap();
                })
                .await
            }
        });
        tokio::task::spawn_blocking(move || started_rx.recv().unwrap())
            .await
            .unwrap();
        caller.abort();
        assert!(caller.await.unwrap_err().is_cancelled());
        assert_eq!(pool.permits.available_permits(), 0);
        finish_tx.send(()).unwrap();
        assert_eq!(pool.run(|| "next").await.unwrap(), "next");
    }

    #[test]
    fn limits_are_at_least_one_and_the_global_pool_uses_every_core() {
        assert_eq!(CpuPool::new(0).limit(), 1);
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        assert_eq!(CpuPool::global().limit(), cores);
        assert_eq!(CpuPool::default().limit(), cores);
    }
}
