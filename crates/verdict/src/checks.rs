//! Did the run happen, and did its clients do their work: the client's counts against the
//! server's transaction counters (`happened`), and failed, retried and aborted work (`errors`).

use crate::finding::{Finding, Severity};

/// The run's counts, from the client and (where it could read them) from the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// transactions the client reported as completed
    pub client_tx: u64,
    /// server transactions each client transaction makes (1 for the builtin workloads; a
    /// script of several transactions makes more)
    pub server_per_tx: f64,
    /// transactions the client itself made on the database outside the measured ones (setup,
    /// its own readings), which it knows
    pub own_tx: u64,
    /// the database's `xact_commit + xact_rollback` over the run (`pg_stat_database`)
    pub server_tx: Option<u64>,
    /// transactions that failed (not retried to success)
    pub failed: u64,
    /// retries (serialization failures and deadlocks retried)
    pub retried: u64,
    /// clients that stopped before the end
    pub aborted_clients: u64,
    pub clients: u64,
}

/// Share of failed transactions above which a run's figures need their failures beside them.
pub const FAILED_SHARE: f64 = 0.01;

/// The client's transactions against the server's counters.
pub fn happened(c: &Counts) -> Option<Finding> {
    if c.client_tx == 0 {
        return Some(Finding::new(
            "happened",
            Severity::Invalid,
            "no transaction completed".into(),
            "check the script, the dataset and the server's log",
        ));
    }
    let server = c.server_tx?;
    let expected = (c.client_tx as f64 * c.server_per_tx).round() as u64;
    let source = "pg_stat_database.xact_commit + xact_rollback";
    if server < expected {
        let f = Finding::new(
            "happened",
            Severity::Invalid,
            format!(
                "the server counted {server} transactions where the client reported {expected}"
            ),
            "the client measured something else than this database: a pooler answering, \
             another database, or a server that was not this one",
        );
        return Some(evidence(f, c, server, source));
    }
    // anything beyond the client's own work and a little background (1 %, at least 10)
    let slack = ((expected as f64) * 0.01).max(10.0) as u64;
    let others = server - expected - c.own_tx.min(server - expected);
    if others > slack {
        let f = Finding::new(
            "happened",
            Severity::Warning,
            format!("{others} transactions on the database during the run were not the run's"),
            "another workload shared the database: run on a database of its own",
        );
        return Some(evidence(f, c, server, source));
    }
    None
}

fn evidence(f: Finding, c: &Counts, server: u64, source: &str) -> Finding {
    f.with(
        "client transactions",
        c.client_tx as f64,
        "tx",
        "the client",
    )
    .with(
        "client's own transactions",
        c.own_tx as f64,
        "tx",
        "the client",
    )
    .with("server transactions", server as f64, "tx", source)
}

/// Failed, retried and aborted work.
pub fn errors(c: &Counts) -> Vec<Finding> {
    let mut out = Vec::new();
    if c.aborted_clients > 0 {
        out.push(
            Finding::new(
                "errors.aborted_clients",
                Severity::Invalid,
                format!(
                    "{} of {} clients stopped before the end: the run's concurrency was not the \
                     one asked for",
                    c.aborted_clients, c.clients
                ),
                "read the clients' errors; retry serialization failures (--max-tries) or \
                 count them (--continue-on-error)",
            )
            .with(
                "aborted clients",
                c.aborted_clients as f64,
                "",
                "the client",
            )
            .with("clients", c.clients as f64, "", "the options"),
        );
    }
    let tried = c.client_tx + c.failed;
    if tried > 0 && c.failed as f64 > FAILED_SHARE * tried as f64 {
        let share = 100.0 * c.failed as f64 / tried as f64;
        out.push(
            Finding::new(
                "errors.failed",
                Severity::Warning,
                format!("{share:.1} % of transactions failed"),
                "report the failures beside the throughput; the rate counts successes only",
            )
            .with("failed", c.failed as f64, "tx", "the client")
            .with("completed", c.client_tx as f64, "tx", "the client")
            .with("retried", c.retried as f64, "", "the client"),
        );
    }
    out
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
