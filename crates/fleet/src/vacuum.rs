//! pgbench's pre-run vacuum for a segmented run, done once by segment 0 before it registers (so
//! before the shared start): `vacuum pgbench_branches`, `vacuum pgbench_tellers`,
//! `truncate pgbench_history`, and with `-v` `vacuum analyze pgbench_accounts`. Errors are
//! returned as messages and the run goes on, as pgbench does.

use pgrig_engine::config::BenchConfig;
use pgrig_wire::{Config, Connection};

use crate::FleetError;

/// Runs the vacuum on the run's target; the statements' errors.
pub fn pre_run(cfg: &BenchConfig) -> Result<Vec<String>, FleetError> {
    let wire =
        Config::from_args(&cfg.conn, "pgbench").map_err(|e| FleetError::new(e.to_string()))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| FleetError::new(e.to_string()))?;
    let mut sql = vec![
        "vacuum pgbench_branches",
        "vacuum pgbench_tellers",
        "truncate pgbench_history",
    ];
    if cfg.vacuum_all {
        sql.push("vacuum analyze pgbench_accounts");
    }
    rt.block_on(async {
        let mut conn = Connection::connect(&wire)
            .await
            .map_err(|e| FleetError::new(e.to_string().trim_end().to_string()))?;
        let mut errors = Vec::new();
        for s in sql {
            if let Err(e) = conn.simple_query(s).await {
                errors.push(e.to_string().trim_end().to_string());
            }
        }
        conn.close().await;
        Ok(errors)
    })
}
