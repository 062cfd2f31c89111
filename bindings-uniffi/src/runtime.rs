//! The binding's one tokio runtime (the core never makes one). Every exported async function
//! runs its work here through [`run`]: Kotlin's and Swift's executors only poll a `JoinHandle`,
//! so no second runtime is hidden behind uniffi (its `tokio` feature would add async-compat's).

use std::future::Future;
use std::sync::LazyLock;

pub static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8)))
        .thread_name("a2a-native")
        .enable_all()
        .build()
        .expect("the a2a-native tokio runtime could not start")
});

/// Aborts the spawned work when the caller stops waiting (a canceled coroutine or Swift task).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `work` on the runtime and waits for it from whatever executor polls this future.
pub async fn run<F>(work: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut handle = AbortOnDrop(RUNTIME.spawn(work));
    match (&mut handle.0).await {
        Ok(out) => out,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => unreachable!("the work is aborted only when this future is dropped"),
    }
}
