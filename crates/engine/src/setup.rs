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
    let dbname = wire.dbname().to_owned();
    let mut info = SetupInfo {
        server_version,
        scale: None,
        partitions: None,
    };
    if uses_builtin {
        let rows = conn
            .simple_query("select count(*) from pgbench_branches")
            .await;
        let scale = match rows {
            Ok(rows) => first_value(&rows)
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0),
            Err(e) => {
                let mut err = EngineError::fatal(format!(
                    "could not count number of branches: {}",
                    e.to_string().trim_end()
                ));
                if e.code() == Some("42P01") {
                    err = err.with(
                        Level::Hint,
                        format!("Perhaps you need to do initialization (\"pgbench -i\") in database \"{dbname}\"."),
                    );
                }
                return Err(err);
            }
        };
        if scale < 1 {
            return Err(EngineError::fatal(format!(
                "invalid count(*) from pgbench_branches: \"{scale}\""
            )));
        }
        if cfg.scale.is_some() {
            sink.message(
                Level::Warning,
                &format!("scale option ignored, using count from pgbench_branches table ({scale})"),
            );
        }
        info.scale = Some(scale);
        let q = "select p.partstrat, (select count(*) from pg_catalog.pg_inherits i where i.inhparent = c.oid) \
                 from pg_catalog.pg_class c left join pg_catalog.pg_partitioned_table p on p.partrelid = c.oid \
                 where c.oid = pg_catalog.to_regclass('pgbench_accounts')";
        match conn.simple_query(q).await {
            Ok(res) if res.first().is_none_or(|r| r.rows.is_empty()) => {
                return Err(EngineError::fatal("no pgbench_accounts table found in \"search_path\"").with(
                    Level::Hint,
                    format!("Perhaps you need to do initialization (\"pgbench -i\") in database \"{dbname}\"."),
                ))
            }
            Ok(res) => {
                let r = &res[0].rows[0];
                match r.get(0) {
                    Some("r") => info.partitions = Some(("range".into(), r.get(1).and_then(|v| v.parse().ok()).unwrap_or(0))),
                    Some("h") => info.partitions = Some(("hash".into(), r.get(1).and_then(|v| v.parse().ok()).unwrap_or(0))),
                    Some(other) => return Err(EngineError::fatal(format!("unexpected partition method: \"{other}\""))),
                    None => {}
                }
            }
            Err(e) => return Err(EngineError::fatal(e.to_string().trim_end().to_owned())),
        }
    }
    if !cfg.no_vacuum {
        sink.message(Level::Raw, "starting vacuum...");
        for sql in [
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ] {
            if let Err(e) = conn.simple_query(sql).await {
                sink.message(Level::Error, e.to_string().trim_end());
                sink.message(Level::Detail, "(ignoring this error and continuing anyway)");
            }
        }
        sink.message(Level::Raw, "end.\n");
        if cfg.vacuum_all {
            sink.message(Level::Raw, "starting vacuum pgbench_accounts...");
            if let Err(e) = conn.simple_query("vacuum analyze pgbench_accounts").await {
                sink.message(Level::Error, e.to_string().trim_end());
                sink.message(Level::Detail, "(ignoring this error and continuing anyway)");
            }
            sink.message(Level::Raw, "end.\n");
        }
    }
    conn.close().await;
    Ok(info)
}
