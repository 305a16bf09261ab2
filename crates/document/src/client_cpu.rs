//! The client's two CPU figures as a stored record or a run document holds them, whatever its
//! age: CPU time (the busiest worker thread's user + system time, as a share of the run) and
//! run-queue wait (the largest share a worker thread was ready to run but waited for a CPU),
//! and the flags they raise (`client-saturated`, `host-contended`) with the engine's thresholds.
//! Records before these names kept a `client_cpu` share that added the wait to the CPU time;
//! it is never read as either figure: both are recomputed from the stored threads.

use serde_json::Value;

/// A worker thread on a CPU at least this share of a run was the limit: `client-saturated`.
pub const SATURATED_CPU_TIME: f64 = 0.9;
/// A worker thread that waited for a CPU at least this share of a run shared its host with
/// work that took the CPU from it: `host-contended`.
pub const CONTENDED_RUN_QUEUE_WAIT: f64 = 0.1;
/// Runs shorter than this (seconds) are too short for either flag.
pub const FLAG_MIN_WALL_S: f64 = 0.5;

/// The client's own CPU was the limit: a thread's CPU time ≥ 90 % of the run.
pub const CLIENT_SATURATED: &str = "client-saturated";
/// The client waited for a CPU: a thread's run-queue wait ≥ 10 % of the run.
pub const HOST_CONTENDED: &str = "host-contended";

/// One run's client CPU time and run-queue wait (shares of the run, 0..1).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub cpu_time: f64,
    pub run_queue_wait: f64,
}

impl Figures {
    /// The flags these figures raise, in the order tables show them.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.cpu_time >= SATURATED_CPU_TIME {
            out.push(CLIENT_SATURATED);
        }
        if self.run_queue_wait >= CONTENDED_RUN_QUEUE_WAIT {
            out.push(HOST_CONTENDED);
        }
        out
    }
}

/// The figures of a stored record (`client_cpu_time`, `client_run_queue_wait`, or its
/// `client_threads`) or of a run document (`client_cpu.threads`); `None` when it keeps neither.
pub fn of(doc: &Value) -> Option<Figures> {
    let stored = (doc["client_cpu_time"].as_f64()).zip(doc["client_run_queue_wait"].as_f64());
    if let Some((cpu_time, run_queue_wait)) = stored {
        return Some(Figures {
            cpu_time,
            run_queue_wait,
        });
    }
    let threads = doc["client_threads"]
        .as_array()
        .or_else(|| doc["client_cpu"]["threads"].as_array())?;
    let figures = threads.iter().filter_map(thread).fold(None, |acc, t| {
        let a: Figures = acc.unwrap_or_default();
        Some(Figures {
            cpu_time: a.cpu_time.max(t.cpu_time),
            run_queue_wait: a.run_queue_wait.max(t.run_queue_wait),
        })
    });
    figures
}

/// One stored thread's shares, from its seconds (every schema spells those the same, but for
/// the wait: `wait_s` before schema 2).
fn thread(t: &Value) -> Option<Figures> {
    let s = |k: &str| t[k].as_f64().unwrap_or(0.0);
    let wall = t["wall_s"].as_f64().filter(|w| *w > 0.0)?;
    let wait = t["run_queue_wait_s"]
        .as_f64()
        .unwrap_or_else(|| s("wait_s"));
    Some(Figures {
        cpu_time: ((s("user_s") + s("sys_s")) / wall).clamp(0.0, 1.0),
        run_queue_wait: (wait / wall).clamp(0.0, 1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_documents_and_old_records_give_the_same_two_figures() {
        let new = json!({"client_cpu_time": 0.16, "client_run_queue_wait": 0.67});
        let want = Figures {
            cpu_time: 0.16,
            run_queue_wait: 0.67,
        };
        assert_eq!(of(&new), Some(want));
        // a record before schema 2: `client_cpu` was CPU + wait (0.83), never read as CPU time
        let old = json!({"client_cpu": 0.83, "client_threads": [
            {"user_s": 0.6, "sys_s": 0.2, "wait_s": 3.35, "wall_s": 5.0, "busy": 0.83},
            {"user_s": 0.1, "sys_s": 0.0, "wall_s": 5.0, "busy": 0.02}]});
        let f = of(&old).unwrap();
        assert!((f.cpu_time - 0.16).abs() < 1e-9 && (f.run_queue_wait - 0.67).abs() < 1e-9);
        assert_eq!(f.flags(), [HOST_CONTENDED]);
        let doc = json!({"client_cpu": {"threads": [
            {"user_s": 0.9, "sys_s": 0.05, "run_queue_wait_s": 0.0, "wall_s": 1.0}]}});
        assert_eq!(of(&doc).unwrap().flags(), [CLIENT_SATURATED]);
        assert_eq!(of(&json!({"client_cpu": 0.95})), None);
    }
}
