//! Before the clients start: the setup connection, the banner's server version, the scale and
//! partitioning of pgbench's tables for builtin scripts, and the pre-run vacuum.

use std::sync::Arc;

use crate::config::BenchConfig;
use crate::error::EngineError;
use crate::sink::{Level, Sink};

pub(crate) struct SetupInfo {
    pub server_version: String,
    /// scale read from pgbench_branches (builtin scripts)
    pub scale: Option<i64>,
    pub partitions: Option<(String, i64)>,
}

fn first_value(results: &[pgrig_wire::QueryResult]) -> Option<String> {
    results.first()?.rows.first()?.get(0).map(|s| s.to_owned())
}

pub(crate) async fn prepare(
    cfg: &BenchConfig,
    wire: &mut pgrig_wire::Config,
    sink: &Arc<dyn Sink>,
    uses_builtin: bool,
) -> Result<SetupInfo, EngineError> {
    let mut conn = crate::ask::connect_asking(wire, &**sink)
        .await
        .map_err(|e| {
            EngineError::fatal(e.to_string())
                .with(Level::Error, "could not create connection for setup")
        })?;
    conn.set_notice_handler(Some(crate::sink::notice_printer(sink.clone())));
    let server_version = conn.parameter("server_version").unwrap_or("").to_owned();
    // Like pgbench: the version line right after the setup connection, before the scale query.
    sink.banner(&server_version);
    if cfg.debug {
        debug_connection(cfg, &conn, wire, &**sink);
    }
    let mut info = SetupInfo {
        server_version,
        scale: None,
        partitions: None,
    };
    if uses_builtin {
        let dbname = wire.dbname();
        let scale = read_scale(&mut conn, dbname).await?;
        if cfg.scale.is_some() {
            sink.message(
                Level::Warning,
                &format!("scale option ignored, using count from pgbench_branches table ({scale})"),
            );
        }
        info.scale = Some(scale);
        info.partitions = read_partitions(&mut conn, dbname).await?;
    }
    if let Some(native) = &cfg.native {
        // a native workload's own checks (its tables exist); pgbench's vacuum is for its tables
        for sql in native.0.preflight() {
            if let Err(e) = conn.simple_query(&sql).await {
                return Err(EngineError::fatal(e.to_string().trim_end().to_string()));
            }
        }
        let mut answers = Vec::new();
        for sql in native.0.dataset_queries() {
            answers.push(match conn.simple_query(&sql).await {
                Ok(rows) => Ok(first_value(&rows)),
                Err(e) => Err(e.to_string().trim_end().to_string()),
            });
        }
        native.0.configure(&answers).map_err(EngineError::fatal)?;
    } else if !cfg.no_vacuum {
        vacuum(cfg, &mut conn, &**sink).await;
    }
    conn.close().await;
    Ok(info)
}

/// `--debug`: pgbench's line about the connection and the run's size.
fn debug_connection(
    cfg: &BenchConfig,
    conn: &pgrig_wire::Connection,
    wire: &pgrig_wire::Config,
    sink: &dyn Sink,
) {
    let (what, n) = match cfg.duration {
        crate::config::Duration::Transactions(n) => ("nxacts", n),
        crate::config::Duration::Seconds(s) => ("duration", s),
    };
    sink.message(
        Level::Debug,
        &format!(
            "pghost: {} pgport: {} nclients: {} {what}: {n} dbName: {}",
            conn.host(),
            conn.port(),
            cfg.clients,
            wire.dbname()
        ),
    );
}

/// pgbench's hint when its tables are missing.
fn init_hint(err: EngineError, dbname: &str) -> EngineError {
    err.with(
        Level::Hint,
        format!("Perhaps you need to do initialization (\"pgbench -i\") in database \"{dbname}\"."),
    )
}

/// The scale: the number of rows of pgbench_branches.
async fn read_scale(conn: &mut pgrig_wire::Connection, dbname: &str) -> Result<i64, EngineError> {
    let rows = conn
        .simple_query("select count(*) from pgbench_branches")
        .await;
    let scale = match rows {
        Ok(rows) => first_value(&rows)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0),
        Err(e) => {
            let err = EngineError::fatal(format!(
                "could not count number of branches: {}",
                e.to_string().trim_end()
            ));
            return Err(if e.code() == Some("42P01") {
                init_hint(err, dbname)
            } else {
                err
            });
        }
    };
    if scale < 1 {
        return Err(EngineError::fatal(format!(
            "invalid count(*) from pgbench_branches: \"{scale}\""
        )));
    }
    Ok(scale)
}

/// How pgbench_accounts is partitioned (method and number of partitions), if it is.
async fn read_partitions(
    conn: &mut pgrig_wire::Connection,
    dbname: &str,
) -> Result<Option<(String, i64)>, EngineError> {
    let q = "select p.partstrat, (select count(*) from pg_catalog.pg_inherits i where i.inhparent = c.oid) \
             from pg_catalog.pg_class c left join pg_catalog.pg_partitioned_table p on p.partrelid = c.oid \
             where c.oid = pg_catalog.to_regclass('pgbench_accounts')";
    let res = conn
        .simple_query(q)
        .await
        .map_err(|e| EngineError::fatal(e.to_string().trim_end().to_owned()))?;
    let Some(r) = res.first().and_then(|r| r.rows.first()) else {
        let err = EngineError::fatal("no pgbench_accounts table found in \"search_path\"");
        return Err(init_hint(err, dbname));
    };
    let count = || r.get(1).and_then(|v| v.parse().ok()).unwrap_or(0);
    match r.get(0) {
        Some("r") => Ok(Some(("range".into(), count()))),
        Some("h") => Ok(Some(("hash".into(), count()))),
        Some(other) => Err(EngineError::fatal(format!(
            "unexpected partition method: \"{other}\""
        ))),
        None => Ok(None),
    }
}

/// The pre-run vacuum (`-n` skips it, `-v` adds pgbench_accounts); errors are reported and
/// ignored, as pgbench does.
async fn vacuum(cfg: &BenchConfig, conn: &mut pgrig_wire::Connection, sink: &dyn Sink) {
    sink.message(Level::Raw, "starting vacuum...");
    for sql in [
        "vacuum pgbench_branches",
        "vacuum pgbench_tellers",
        "truncate pgbench_history",
    ] {
        run_ignoring_errors(conn, sql, sink).await;
    }
    sink.message(Level::Raw, "end.\n");
    if cfg.vacuum_all {
        sink.message(Level::Raw, "starting vacuum pgbench_accounts...");
        run_ignoring_errors(conn, "vacuum analyze pgbench_accounts", sink).await;
        sink.message(Level::Raw, "end.\n");
    }
}

async fn run_ignoring_errors(conn: &mut pgrig_wire::Connection, sql: &str, sink: &dyn Sink) {
    if let Err(e) = conn.simple_query(sql).await {
        sink.message(Level::Error, e.to_string().trim_end());
        sink.message(Level::Detail, "(ignoring this error and continuing anyway)");
    }
}
