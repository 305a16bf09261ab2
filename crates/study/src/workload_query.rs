//! The query side of a workload (`query = "…"` or `queries = ["q1.sql"]` instead of scripts):
//! its options with their defaults ([`ExplainMode`], [`CacheState`]), the checks that keep
//! script keys and query keys apart, and the queries read from their files ([`QuerySource`]).

use std::path::Path;

use super::WorkloadSpec;

/// How the server's view of an execution is captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainMode {
    /// Every measured execution runs under `EXPLAIN (ANALYZE, BUFFERS, …)`.
    Each,
    /// Measured executions run the plain query; one more execution under EXPLAIN ANALYZE gives
    /// the plan and the server's figures (without EXPLAIN's overhead in the measured times).
    Separate,
    /// No EXPLAIN: the client's wall time only.
    Off,
}

pub const EXPLAIN_MODES: &[&str] = &["each", "separate", "off"];

/// The caches a measured execution starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheState {
    /// Whatever earlier executions left (warm-up executions fill them).
    Warm,
    /// Throwaway server restarted and the OS page cache dropped before every execution.
    Cold,
}

/// One query of a query workload: where it comes from (`query` or the file's path) and its
/// text (one statement, without a trailing semicolon).
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySource {
    pub name: String,
    pub sql: String,
}

/// Keys of script workloads that a query workload refuses when they differ from their default.
const SCRIPT_ONLY: &str = "builtin, scripts, defines, clients, threads, protocol, transactions, duration, rate, latency_limit, connect, seed, warmup, vacuum, client_cpus";

impl WorkloadSpec {
    /// True for a query workload (`query` or `queries`).
    pub fn is_query(&self) -> bool {
        self.query.is_some() || self.queries.is_some()
    }

    pub fn explain_mode(&self) -> ExplainMode {
        match self.explain.as_deref() {
            Some("separate") => ExplainMode::Separate,
            Some("off") => ExplainMode::Off,
            _ => ExplainMode::Each,
        }
    }

    pub fn cache_state(&self) -> CacheState {
        match self.cache.as_deref() {
            Some("cold") => CacheState::Cold,
            _ => CacheState::Warm,
        }
    }

    /// Measured executions of every query per run.
    pub fn execution_count(&self) -> u32 {
        self.executions.unwrap_or(3)
    }

    /// Unmeasured executions before the first round (none with a cold cache: they would only
    /// warm what is emptied before every measured execution).
    pub fn warmup_count(&self) -> u32 {
        match self.cache_state() {
            CacheState::Cold => 0,
            CacheState::Warm => self.warmup_executions.unwrap_or(1),
        }
    }

    /// The per-execution timeout in milliseconds, if any.
    pub fn timeout_ms(&self) -> Option<u64> {
        self.timeout.as_ref().and_then(|t| t.millis().ok())
    }

    /// Checks of the query keys that hold by themselves or between keys given together.
    pub(super) fn validate_query(&self) -> Result<(), (&'static str, String)> {
        if self.query.is_some() && self.queries.is_some() {
            return Err(("queries", "give either query or queries, not both".into()));
        }
        if let Some(q) = &self.query {
            one_statement(q).map_err(|m| ("query", m))?;
        }
        if self.queries.as_ref().is_some_and(Vec::is_empty) {
            return Err((
                "queries",
                "queries is empty (give one or more SQL files)".into(),
            ));
        }
        if self.executions == Some(0) {
            return Err(("executions", "executions must be at least 1".into()));
        }
        if let Some(t) = &self.timeout {
            if t.millis().map_err(|m| ("timeout", m))? == 0 {
                return Err(("timeout", "timeout must be above 0".into()));
            }
        }
        check_choice("explain", self.explain.as_deref(), EXPLAIN_MODES)?;
        check_choice("cache", self.cache.as_deref(), &["warm", "cold"])?;
        if self.parallel_workers.is_some_and(|n| n > 1024) {
            return Err((
                "parallel_workers",
                "parallel_workers must be 0..1024".into(),
            ));
        }
        if let Some(t) = &self.parallel_tables {
            if t.is_empty() || t.iter().any(|n| n.trim().is_empty()) {
                return Err((
                    "parallel_tables",
                    "parallel_tables must name one or more tables".into(),
                ));
            }
        }
        if self.is_query() {
            self.no_script_keys()?;
        }
        Ok(())
    }

    /// A query workload has none of the script workload's keys.
    fn no_script_keys(&self) -> Result<(), (&'static str, String)> {
        let given: &[(&'static str, bool)] = &[
            ("builtin", self.builtin.is_some()),
            ("scripts", self.scripts.is_some()),
            ("defines", !self.defines.is_empty()),
            ("clients", self.clients != 1),
            ("threads", self.threads != 1),
            ("protocol", self.protocol != "simple"),
            ("transactions", self.transactions.is_some()),
            ("duration", self.duration.is_some()),
            ("rate", self.rate.is_some()),
            ("latency_limit", self.latency_limit.is_some()),
            ("connect", self.connect),
            ("seed", self.seed.is_some()),
            ("warmup", self.warmup.is_some()),
            ("vacuum", self.vacuum),
            ("client_cpus", self.client_cpus.is_some()),
        ];
        match given.iter().find(|(_, g)| *g) {
            Some((key, _)) => Err((
                key,
                format!(
                    "`{key}` belongs to script workloads; a query workload (query/queries) runs one session \
                     with executions, warmup_executions, timeout, explain, cache, parallel_workers and \
                     parallel_tables (not: {SCRIPT_ONLY})"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Checks that need the whole point's workload: query keys without a query.
    pub fn validate_kind(&self) -> Result<(), (&'static str, String)> {
        self.validate_native_kind()?;
        if self.is_query() {
            if self.parallel_tables.is_some() && self.parallel_workers.is_none() {
                return Err((
                    "parallel_tables",
                    "parallel_tables names the tables parallel_workers is set on; give parallel_workers too".into(),
                ));
            }
            return Ok(());
        }
        let given: &[(&'static str, bool)] = &[
            ("executions", self.executions.is_some()),
            ("warmup_executions", self.warmup_executions.is_some()),
            ("timeout", self.timeout.is_some()),
            ("explain", self.explain.is_some()),
            ("cache", self.cache.is_some()),
            ("parallel_workers", self.parallel_workers.is_some()),
            ("parallel_tables", self.parallel_tables.is_some()),
        ];
        match given.iter().find(|(_, g)| *g) {
            Some((key, _)) => Err((
                key,
                format!("`{key}` belongs to query workloads; give query = \"SELECT …\" or queries = [\"q.sql\"]"),
            )),
            None => Ok(()),
        }
    }

    /// The queries, files read relative to `base_dir` (empty for a script workload).
    pub fn query_sources(&self, base_dir: &Path) -> Result<Vec<QuerySource>, String> {
        if let Some(q) = &self.query {
            return Ok(vec![QuerySource {
                name: "query".into(),
                sql: one_statement(q)?,
            }]);
        }
        let mut out = Vec::new();
        for f in query_files(base_dir, self.queries.iter().flatten())? {
            let path = base_dir.join(&f);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("could not read query file \"{}\": {e}", path.display()))?;
            let sql = one_statement(&text)
                .map_err(|m| format!("query file \"{}\": {m}", path.display()))?;
            out.push(QuerySource { name: f, sql });
        }
        Ok(out)
    }
}

/// The query files as named, a directory (`"queries/"`) standing for its `.sql` files in name
/// order (`queries/01.sql`, …).
fn query_files<'a>(
    base_dir: &Path,
    named: impl Iterator<Item = &'a String>,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for f in named {
        let path = base_dir.join(f);
        if !path.is_dir() {
            out.push(f.clone());
            continue;
        }
        let entries = std::fs::read_dir(&path)
            .map_err(|e| format!("could not read query directory \"{}\": {e}", path.display()))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        if names.is_empty() {
            return Err(format!(
                "query directory \"{}\" has no .sql files",
                path.display()
            ));
        }
        names.sort();
        let dir = f.trim_end_matches('/');
        out.extend(names.into_iter().map(|n| format!("{dir}/{n}")));
    }
    Ok(out)
}

fn check_choice(
    key: &'static str,
    value: Option<&str>,
    choices: &[&str],
) -> Result<(), (&'static str, String)> {
    match value {
        Some(v) if !choices.contains(&v) => Err((
            key,
            format!(
                "invalid {key} \"{v}\" (expected one of: {})",
                choices.join(", ")
            ),
        )),
        _ => Ok(()),
    }
}

/// The one SQL statement of `text` (comments and a trailing semicolon allowed), as sent.
fn one_statement(text: &str) -> Result<String, String> {
    let statements =
        crate::setup_sql::split(text).map_err(|e| format!("line {}: {}", e.line, e.message))?;
    match statements.as_slice() {
        [one] if one.copy_data.is_none() => {
            Ok(one.sql.trim().trim_end_matches(';').trim_end().to_string())
        }
        [] => Err("no SQL statement".into()),
        [_] => Err("COPY FROM STDIN cannot be measured as a query".into()),
        _ => Err(format!(
            "{} statements; a query is one statement (put each in its own file under queries)",
            statements.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::workload::effective;

    fn spec(s: &str) -> super::WorkloadSpec {
        effective(&s.parse().unwrap(), &[]).unwrap()
    }

    #[test]
    fn query_and_script_keys_stay_apart() {
        let w = spec("query = \"SELECT 1\"\nscripts = [\"a.sql\"]");
        assert_eq!(w.validate().unwrap_err().0, "scripts");
        let w = spec("query = \"SELECT 1\"\ntransactions = 10");
        assert_eq!(w.validate().unwrap_err().0, "transactions");
        let w = spec("builtin = \"tpcb-like\"\nparallel_workers = 2");
        w.validate().unwrap();
        assert_eq!(w.validate_kind().unwrap_err().0, "parallel_workers");
        let w = spec("query = \"SELECT 1\"\nparallel_tables = [\"t\"]");
        assert_eq!(w.validate_kind().unwrap_err().0, "parallel_tables");
    }

    #[test]
    fn query_values_are_checked() {
        let w = spec("query = \"SELECT 1; SELECT 2\"");
        assert!(w.validate().unwrap_err().1.contains("2 statements"));
        let w = spec("query = \"SELECT 1\"\nexplain = \"always\"");
        assert_eq!(w.validate().unwrap_err().0, "explain");
        let w = spec(
            "query = \"SELECT 1;\"\ntimeout = \"2s\"\ncache = \"cold\"\nwarmup_executions = 2",
        );
        w.validate().unwrap();
        assert_eq!(w.timeout_ms(), Some(2000));
        assert_eq!(w.warmup_count(), 0);
        assert_eq!(
            w.query_sources(std::path::Path::new(".")).unwrap()[0].sql,
            "SELECT 1"
        );
    }
}
