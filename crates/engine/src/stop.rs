//! Stopping from outside (Ctrl-C): one [`StopHandle`] for benchmarks and initialisation. The
//! front end owns the signal handling and calls [`StopHandle::stop`]; a benchmark then stops its
//! clients after their current transaction (and cancels statements still running a second
//! later), initialisation cancels what the server is doing on every connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::shared::RunShared;

/// How long clients get to finish their transaction after a stop request before the statements
/// still running are cancelled.
const CANCEL_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// A request to stop, shared between the front end and the runs it starts (one after the other).
#[derive(Clone, Default)]
pub struct StopHandle(Arc<StopState>);

#[derive(Default)]
struct StopState {
    requested: AtomicBool,
    /// the benchmark running now, if any
    run: Mutex<Option<Arc<RunShared>>>,
}

impl StopHandle {
    /// Asks whatever runs now (and anything started later) to stop.
    pub fn stop(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        let run = self.0.run.lock().ok().and_then(|r| r.clone());
        if let Some(sh) = run {
            stop_run(sh);
        }
    }

    /// Whether a stop was requested.
    pub fn requested(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }

    /// Makes `sh` the run a stop request reaches (stopping it at once if one came already).
    pub(crate) fn attach(&self, sh: &Arc<RunShared>) {
        if let Ok(mut r) = self.0.run.lock() {
            *r = Some(sh.clone());
        }
        if self.requested() {
            stop_run(sh.clone());
        }
    }

    /// The run is over: later requests no longer reach it.
    pub(crate) fn detach(&self) {
        if let Ok(mut r) = self.0.run.lock() {
            *r = None;
        }
    }

    /// Resolves once a stop is requested (checked every 50 ms).
    pub async fn requested_async(&self) {
        while !self.requested() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

/// Asks every client of `sh` to stop after its current transaction; statements still running
/// [`CANCEL_AFTER`] later get a cancel request (Ctrl-C on a long query).
fn stop_run(sh: Arc<RunShared>) {
    if sh.stop.swap(true, Ordering::SeqCst) {
        return;
    }
    std::thread::spawn(move || {
        std::thread::sleep(CANCEL_AFTER);
        if sh.finished.load(Ordering::SeqCst) {
            return;
        }
        let tokens: Vec<pgrig_wire::CancelToken> = sh
            .cancels
            .lock()
            .map(|t| t.iter().flatten().cloned().collect())
            .unwrap_or_default();
        if tokens.is_empty() {
            return;
        }
        sh.msg(
            crate::sink::Level::Info,
            &format!(
                "cancelling the statements still running on {} connections",
                tokens.len()
            ),
        );
        if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            rt.block_on(async {
                for t in &tokens {
                    let _ = t.cancel().await;
                }
            });
        }
    });
}
