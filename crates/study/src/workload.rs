//! The workload of one run: the `[workload]` table with a point's matrix values laid over it,
//! validated into [`WorkloadSpec`] (every run option of `pgrig bench` has a key), and turned
//! into the engine's [`BenchConfig`] pieces. A workload is either scripts (a benchmark) or
//! queries (a query study: `query`/`queries`, checked in `workload_query`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use pgrig_engine::config::{BenchConfig, Duration, ScriptSource, SeedOption};
use pgrig_script::QueryMode;

use crate::spec::scalar_text;

/// Keys a `[workload]` table (and so a matrix dimension) may have.
pub const WORKLOAD_KEYS: &[&str] = &[
    "builtin",
    "scripts",
    "defines",
    "clients",
    "threads",
    "protocol",
    "transactions",
    "duration",
    "rate",
    "latency_limit",
    "max_tries",
    "connect",
    "seed",
    "warmup",
    "rounds",
    "vacuum",
    "isolation",
    "per_statement",
    "server_cpus",
    "client_cpus",
    "query",
    "queries",
    "executions",
    "warmup_executions",
    "timeout",
    "explain",
    "cache",
    "parallel_workers",
    "parallel_tables",
    "workload",
    "options",
    "sysbench",
];

/// A duration: seconds as a number, or text like `"20s"`, `"500ms"`, `"2m"`.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum DurationValue {
    Seconds(u64),
    Text(String),
}

impl<'de> Deserialize<'de> for DurationValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::Integer(n) if n >= 0 => Ok(DurationValue::Seconds(n as u64)),
            toml::Value::String(t) => Ok(DurationValue::Text(t)),
            o => Err(serde::de::Error::custom(format!(
                "invalid duration {o} (use whole seconds, or text such as \"20s\", \"500ms\", \"2m\")"
            ))),
        }
    }
}

impl DurationValue {
    /// Milliseconds, or a message saying what is wrong.
    pub fn millis(&self) -> Result<u64, String> {
        match self {
            DurationValue::Seconds(s) => Ok(s * 1000),
            DurationValue::Text(t) => parse_duration_ms(t),
        }
    }
}

/// `"20s"`, `"500ms"`, `"2m"`, `"1h"`, `"15"` (seconds) → milliseconds.
pub fn parse_duration_ms(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3_600_000)
    } else {
        (t, 1000)
    };
    num.trim()
        .parse::<u64>()
        .map(|v| v * mult)
        .map_err(|_| format!("invalid duration \"{s}\" (use e.g. \"20s\", \"500ms\", \"2m\")"))
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// A builtin script name (or prefix): tpcb-like, simple-update, select-only.
    #[serde(default)]
    pub builtin: Option<String>,
    /// Script files `FILE[@WEIGHT]`, relative to the study file.
    #[serde(default)]
    pub scripts: Option<Vec<String>>,
    /// `-D NAME=VALUE` variables.
    #[serde(default)]
    pub defines: BTreeMap<String, toml::Value>,
    #[serde(default = "one")]
    pub clients: u32,
    #[serde(default = "one")]
    pub threads: u32,
    /// simple | extended | prepared
    #[serde(default = "simple")]
    pub protocol: String,
    /// Transactions per client.
    #[serde(default)]
    pub transactions: Option<u64>,
    #[serde(default)]
    pub duration: Option<DurationValue>,
    /// Target rate in transactions per second (all clients).
    #[serde(default)]
    pub rate: Option<f64>,
    /// Latency limit in milliseconds (`-L`).
    #[serde(default)]
    pub latency_limit: Option<f64>,
    /// Tries per transaction for serialization failures and deadlocks (0 = unlimited).
    #[serde(default = "ten")]
    pub max_tries: u32,
    /// A new connection per transaction (`-C`).
    #[serde(default)]
    pub connect: bool,
    /// Random seed; default: one per run, recorded.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Unrecorded warm-up before the first round of every run.
    #[serde(default)]
    pub warmup: Option<DurationValue>,
    /// Consecutive rounds without re-init or vacuum; collectors after each.
    #[serde(default = "one")]
    pub rounds: u32,
    /// Vacuum the pgbench tables before every round (pgbench's default without `-n`).
    #[serde(default)]
    pub vacuum: bool,
    /// default_transaction_isolation of every benchmark session.
    #[serde(default)]
    pub isolation: Option<String>,
    /// Per-statement latencies (`-r`).
    #[serde(default = "yes")]
    pub per_statement: bool,
    /// CPU cores the throwaway server may use.
    #[serde(default)]
    pub server_cpus: Option<u32>,
    /// CPU cores the client's worker threads may use.
    #[serde(default)]
    pub client_cpus: Option<u32>,
    /// Query workload: one SQL statement, measured as it is (instead of scripts).
    #[serde(default)]
    pub query: Option<String>,
    /// Query workload: files of one SQL statement each, relative to the study file.
    #[serde(default)]
    pub queries: Option<Vec<String>>,
    /// Query workload: measured executions of every query per run (default 3).
    #[serde(default)]
    pub executions: Option<u32>,
    /// Query workload: unmeasured executions of every query before the first round of every
    /// repetition (default 1; none with a cold cache).
    #[serde(default)]
    pub warmup_executions: Option<u32>,
    /// Query workload: per-execution timeout (the server cancels the statement).
    #[serde(default)]
    pub timeout: Option<DurationValue>,
    /// Query workload: `each` (every measured execution under EXPLAIN ANALYZE, the default),
    /// `separate` (measured plain, the plan from one more execution) or `off`.
    #[serde(default)]
    pub explain: Option<String>,
    /// Query workload: `warm` (default) or `cold` (throwaway server restarted and the OS page
    /// cache dropped before every measured execution).
    #[serde(default)]
    pub cache: Option<String>,
    /// Query workload: the parallel degree (the scanned tables' `parallel_workers` storage
    /// parameter and the session's `max_parallel_workers_per_gather`).
    #[serde(default)]
    pub parallel_workers: Option<u32>,
    /// Query workload: the tables `parallel_workers` is set on (default: those the query scans).
    #[serde(default)]
    pub parallel_tables: Option<Vec<String>>,
    /// A native workload (sysbench's `oltp_read_write`, `ycsb-a`, `tpcc`) instead of scripts.
    #[serde(default)]
    pub workload: Option<String>,
    /// The native workload's options, or the sysbench script's (matrix keys `options.NAME`).
    #[serde(default)]
    pub options: BTreeMap<String, toml::Value>,
    /// A sysbench 1.0 Lua script (relative to the study file) run through pgrig's embedded
    /// Lua runtime; its `sysbench.cmdline.options` are the `options` table's keys.
    #[serde(default)]
    pub sysbench: Option<String>,
}

fn one() -> u32 {
    1
}
fn ten() -> u32 {
    10
}
fn yes() -> bool {
    true
}
fn simple() -> String {
    "simple".into()
}

pub const ISOLATION_LEVELS: &[&str] = &[
    "read uncommitted",
    "read committed",
    "repeatable read",
    "serializable",
];

impl WorkloadSpec {
    /// Checks values the types cannot express. Returns `(key, message)` on the first problem.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.clients == 0 {
            return Err(("clients", "clients must be at least 1".into()));
        }
        if self.threads == 0 {
            return Err(("threads", "threads must be at least 1".into()));
        }
        if self.rounds == 0 {
            return Err(("rounds", "rounds must be at least 1".into()));
        }
        self.mode().map_err(|m| ("protocol", m))?;
        if self.transactions.is_some() && self.duration.is_some() {
            return Err((
                "duration",
                "give either transactions or duration, not both".into(),
            ));
        }
        if let Some(d) = &self.duration {
            let ms = d.millis().map_err(|m| ("duration", m))?;
            if ms < 1000 {
                return Err(("duration", "duration must be at least 1s".into()));
            }
        }
        if let Some(w) = &self.warmup {
            w.millis().map_err(|m| ("warmup", m))?;
        }
        if self.rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return Err((
                "rate",
                "rate must be a number of transactions per second above 0".into(),
            ));
        }
        if self
            .latency_limit
            .is_some_and(|l| !(l > 0.0 && l.is_finite()))
        {
            return Err((
                "latency_limit",
                "latency_limit must be a number of milliseconds above 0".into(),
            ));
        }
        if let Some(b) = &self.builtin {
            pgrig_script::builtin::lookup(b).map_err(|e| ("builtin", e.to_string()))?;
        }
        if let Some(i) = &self.isolation {
            if !ISOLATION_LEVELS.contains(&i.to_ascii_lowercase().as_str()) {
                return Err((
                    "isolation",
                    format!(
                        "unknown isolation \"{i}\" (expected one of: {})",
                        ISOLATION_LEVELS.join(", ")
                    ),
                ));
            }
        }
        if self.builtin.is_some() && self.scripts.is_some() {
            return Err(("scripts", "give either builtin or scripts, not both".into()));
        }
        for (k, v) in &self.defines {
            if scalar_text(v).is_none() {
                return Err((
                    "defines",
                    format!("define \"{k}\" must be a string, number or boolean"),
                ));
            }
        }
        if self.server_cpus == Some(0) || self.client_cpus == Some(0) {
            return Err(("server_cpus", "CPU counts must be at least 1".into()));
        }
        self.validate_native()?;
        self.validate_lua()?;
        self.validate_query()
    }

    pub fn mode(&self) -> Result<QueryMode, String> {
        self.protocol.parse()
    }

    /// True when the scripts are pgbench builtins (so the pgbench tables are needed).
    pub fn uses_builtin(&self) -> bool {
        self.scripts.is_none() && !self.is_native() && self.sysbench.is_none()
    }

    /// The scripts, files read by `read` relative to `base_dir`.
    pub fn script_sources(
        &self,
        base_dir: &Path,
        read: &mut dyn FnMut(&Path) -> std::io::Result<String>,
    ) -> Result<Vec<ScriptSource>, String> {
        if self.is_native() || self.sysbench.is_some() {
            return Ok(Vec::new());
        }
        let Some(files) = &self.scripts else {
            let name = self.builtin.as_deref().unwrap_or("tpcb-like");
            let b = pgrig_script::builtin::lookup(name).map_err(|e| e.to_string())?;
            return Ok(vec![ScriptSource::Builtin {
                name: b.name.to_string(),
                weight: 1,
            }]);
        };
        if files.is_empty() {
            return Err("scripts is empty".into());
        }
        let mut out = Vec::new();
        for f in files {
            let (name, weight) =
                pgrig_script::builtin::parse_weight(f).map_err(|e| format!("{f}: {e}"))?;
            let path = base_dir.join(name);
            let text = read(&path)
                .map_err(|e| format!("could not read script \"{}\": {e}", path.display()))?;
            out.push(ScriptSource::File {
                path: path.display().to_string(),
                text,
                weight,
            });
        }
        Ok(out)
    }

    /// The engine configuration of one round (connection filled in by the caller).
    pub fn bench_config(&self, scripts: Vec<ScriptSource>, seed: Option<u64>) -> BenchConfig {
        let duration = match (&self.duration, self.transactions) {
            (Some(d), _) => Duration::Seconds(d.millis().unwrap_or(1000).div_ceil(1000)),
            (None, Some(t)) => Duration::Transactions(t),
            (None, None) => Duration::Transactions(10),
        };
        BenchConfig {
            scripts,
            clients: self.clients,
            threads: pgrig_engine::config::clamp_threads(self.threads, self.clients),
            duration,
            mode: self.mode().unwrap_or(QueryMode::Simple),
            connect_per_tx: self.connect,
            defines: self
                .defines
                .iter()
                .filter_map(|(k, v)| scalar_text(v).map(|t| (k.clone(), t)))
                .collect(),
            no_vacuum: !self.vacuum,
            report_per_command: self.per_statement,
            rate: self.rate,
            latency_limit_us: self.latency_limit.map(|ms| (ms * 1000.0) as i64),
            max_tries: self.max_tries,
            failures_detailed: true,
            random_seed: Some(seed.map(SeedOption::Value).unwrap_or(SeedOption::Time)),
            ..Default::default()
        }
    }

    /// Warm-up length in whole seconds (0: none).
    pub fn warmup_seconds(&self) -> u64 {
        self.warmup
            .as_ref()
            .and_then(|w| w.millis().ok())
            .map(|ms| ms.div_ceil(1000))
            .unwrap_or(0)
    }
}

/// Lays `point` values over the base workload table and validates the result.
pub fn effective(
    base: &toml::Table,
    point: &[(String, toml::Value)],
) -> Result<WorkloadSpec, String> {
    let mut t = base.clone();
    for (k, v) in point {
        if WORKLOAD_KEYS.contains(&k.as_str()) {
            t.insert(k.clone(), v.clone());
        } else if let Some(name) = k.strip_prefix("options.") {
            let options = t
                .entry("options")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            match options {
                toml::Value::Table(o) => {
                    o.insert(name.to_string(), v.clone());
                }
                _ => return Err("`options` must be a table, e.g. options = { tables = 4 }".into()),
            }
        }
    }
    builtin_as_workload(&mut t, point.iter().any(|(k, _)| k == "workload"))?;
    toml::Value::Table(t)
        .try_into::<WorkloadSpec>()
        .map_err(|e| e.message().trim_end().to_string())
}

/// `workload = "tpcb-like"` (a pgbench builtin, not a native workload) reads as
/// `builtin = "tpcb-like"`, so that one `workload` matrix key can sweep pgbench's builtins and
/// native workloads together (`workload = ["tpcb-like", "oltp_write_only"]`). When the point's
/// own value made it a builtin (`from_point`), the `options` meant for the native points are
/// left out; given in `[workload]` itself, they stay and are refused as before.
fn builtin_as_workload(t: &mut toml::Table, from_point: bool) -> Result<(), String> {
    let Some(toml::Value::String(name)) = t.get("workload") else {
        return Ok(());
    };
    if pgrig_workloads::is_native(name) || pgrig_script::builtin::lookup(name).is_err() {
        return Ok(());
    }
    let name = name.clone();
    if t.contains_key("builtin") {
        return Err(format!(
            "workload \"{name}\" is pgbench's builtin; give it as workload or builtin, not both"
        ));
    }
    t.remove("workload");
    t.insert("builtin".into(), toml::Value::String(name));
    if from_point {
        t.remove("options");
    }
    Ok(())
}

#[path = "workload_native.rs"]
mod native;
pub use native::NativePoint;

#[path = "workload_lua.rs"]
mod lua;
pub use lua::LuaPoint;

#[path = "workload_query.rs"]
mod query;
pub use query::{CacheState, ExplainMode, QuerySource};

/// Reads a script file as bench does: its bytes as they are (a Latin-1 script stays Latin-1).
pub fn read_script_file(path: &Path) -> std::io::Result<String> {
    pgrig_script::file::read_path(path).map_err(|e| match e {
        pgrig_script::file::ReadError::Open(e) | pgrig_script::file::ReadError::Read(e) => e,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pgbench_builtin_named_as_workload_is_the_builtin() {
        let point = |v: &str| vec![("workload".to_string(), toml::Value::String(v.into()))];
        let mut base = toml::Table::new();
        base.insert("options".into(), toml::Value::Table(toml::Table::new()));
        let w = effective(&base, &point("tpcb-like")).unwrap();
        assert_eq!(
            (w.builtin.as_deref(), w.workload.as_deref()),
            (Some("tpcb-like"), None)
        );
        assert!(w.options.is_empty());
        w.validate().unwrap();
        let w = effective(&base, &point("oltp_write_only")).unwrap();
        assert_eq!(w.workload.as_deref(), Some("oltp_write_only"));
        // both given: refused by name
        base.insert("builtin".into(), toml::Value::String("select-only".into()));
        assert!(effective(&base, &point("tpcb-like"))
            .unwrap_err()
            .contains("not both"));
    }

    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn every_listed_key_is_accepted() {
        let t = table(
            "builtin = \"tpcb-like\"\ndefines = { a = 1 }\nclients = 2\nthreads = 2\nprotocol = \"prepared\"\n\
             transactions = 5\nrate = 10.0\nlatency_limit = 5.0\nmax_tries = 3\nconnect = false\nseed = 1\n\
             warmup = \"1s\"\nrounds = 2\nvacuum = true\nisolation = \"serializable\"\nper_statement = false\n\
             server_cpus = 1\nclient_cpus = 1\n",
        );
        let w = effective(&t, &[]).unwrap();
        assert_eq!(w.clients, 2);
        w.validate().unwrap();
        // scripts and duration are the remaining keys
        let w2 = effective(&table("scripts = [\"a.sql@2\"]\nduration = \"3s\""), &[]).unwrap();
        assert!(w2.scripts.is_some());
        // the native workload's keys
        let w3 = effective(
            &table("workload = \"oltp_read_write\"\noptions = { tables = 2 }"),
            &[("options.table_size".into(), toml::Value::Integer(50))],
        )
        .unwrap();
        assert_eq!(w3.workload.as_deref(), Some("oltp_read_write"));
        assert_eq!(w3.options.len(), 2);
        // a sysbench script's
        let w4 = effective(
            &table("sysbench = \"t.lua\"\noptions = { accounts = 5 }"),
            &[],
        )
        .unwrap();
        assert_eq!(w4.sysbench.as_deref(), Some("t.lua"));
        assert_eq!(WORKLOAD_KEYS.len(), 32);
    }

    #[test]
    fn script_files_keep_their_bytes_and_weights() {
        let dir = std::env::temp_dir().join(format!("pgrig-wl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("latin1.sql"), b"select 'caf\xe9';\n").unwrap();
        let w = effective(&table("scripts = [\"latin1.sql@3\"]"), &[]).unwrap();
        let sources = w.script_sources(&dir, &mut read_script_file);
        std::fs::remove_dir_all(&dir).unwrap();
        match sources.unwrap().as_slice() {
            [ScriptSource::File { text, weight, .. }] => {
                assert_eq!(pgrig_script::bytes::encode(text), b"select 'caf\xe9';\n");
                assert_eq!(*weight, 3);
            }
            other => panic!("{other:?}"),
        }
        let w = effective(&table("scripts = [\"a.sql@x\"]"), &[]).unwrap();
        let e = w.script_sources(&dir, &mut read_script_file).unwrap_err();
        assert_eq!(e, "a.sql@x: invalid weight specification: @x");
    }

    #[test]
    fn point_overrides_base() {
        let w = effective(
            &table("clients = 1\nisolation = \"read committed\""),
            &[("clients".into(), toml::Value::Integer(4))],
        )
        .unwrap();
        assert_eq!(w.clients, 4);
        assert_eq!(w.isolation.as_deref(), Some("read committed"));
    }

    #[test]
    fn bad_values_name_their_key() {
        let w = effective(&table("isolation = \"snapshot\""), &[]).unwrap();
        assert_eq!(w.validate().unwrap_err().0, "isolation");
        let w = effective(&table("protocol = \"fast\""), &[]).unwrap();
        assert_eq!(w.validate().unwrap_err().0, "protocol");
        let e = effective(&table("clients = \"many\""), &[]).unwrap_err();
        assert!(e.contains("invalid type"), "{e}");
        let e = effective(&table("clinets = 1"), &[]).unwrap_err();
        assert!(e.contains("unknown field `clinets`"), "{e}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("20s"), Ok(20_000));
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("2m"), Ok(120_000));
        assert_eq!(parse_duration_ms("3"), Ok(3000));
        assert!(parse_duration_ms("soon").is_err());
    }

    #[test]
    fn bench_config_maps_options() {
        let w = effective(
            &table("clients = 4\nthreads = 8\nprotocol = \"prepared\"\ntransactions = 7\nmax_tries = 100\nvacuum = false"),
            &[],
        )
        .unwrap();
        let c = w.bench_config(vec![], Some(42));
        assert_eq!(c.threads, 4);
        assert_eq!(c.duration, Duration::Transactions(7));
        assert_eq!(c.mode, QueryMode::Prepared);
        assert_eq!(c.max_tries, 100);
        assert!(c.no_vacuum);
        assert_eq!(c.random_seed, Some(SeedOption::Value(42)));
    }
}
