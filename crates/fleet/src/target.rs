//! What a worker's target is, so the coordinator can refuse a run whose workers reach different
//! databases: the server's system identifier (`pg_control_system()`, unique per cluster), the
//! database's name, and the data — pgbench's scale (rows of `pgbench_branches`) when its tables
//! are there, else a digest of the names of the database's user tables.

use pgrig_wire::ConnArgs;

use crate::db::Db;
use crate::FleetError;

/// The target a worker reaches, as registered (`workers.target`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub system_identifier: String,
    pub database: String,
    /// `pgbench scale N` or `tables sha256:…`
    pub dataset: String,
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "system {}, database {:?}, {}",
            self.system_identifier, self.database, self.dataset
        )
    }
}

const IDENTITY: &str = "SELECT (SELECT system_identifier FROM pg_control_system())::text, \
     current_database(), to_regclass('pgbench_branches') IS NOT NULL";

const TABLES: &str = "SELECT coalesce(string_agg(quote_ident(n.nspname) || '.' || \
     quote_ident(c.relname), ',' ORDER BY n.nspname, c.relname), '') \
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema', \
     'pgrig_fleet') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'";

/// Measures the target `conn` names (the worker's own target).
pub fn fingerprint(conn: &ConnArgs) -> Result<Fingerprint, FleetError> {
    let mut db = Db::connect_args(conn, "the target")?;
    let row = db
        .rows(IDENTITY)
        .map_err(|e| {
            FleetError::new(format!(
                "{e} (workers prove they reach the same server by its system identifier: \
                 GRANT EXECUTE ON FUNCTION pg_control_system() TO the benchmark's role)"
            ))
        })?
        .into_iter()
        .next()
        .unwrap_or_default();
    let g = |i: usize| row.get(i).cloned().flatten();
    let (Some(system_identifier), Some(database)) = (g(0), g(1)) else {
        return Err(FleetError::new(
            "could not read the target's system identifier (pg_control_system())",
        ));
    };
    let dataset = if g(2).as_deref() == Some("t") {
        let n = db.value("SELECT count(*) FROM pgbench_branches")?;
        format!("pgbench scale {}", n.unwrap_or_default())
    } else {
        let tables = db.value(TABLES)?.unwrap_or_default();
        format!("tables sha256:{}", &crate::scripts::digest(&tables)[..16])
    };
    Ok(Fingerprint {
        system_identifier,
        database,
        dataset,
    })
}

/// Workers' targets that differ, as one line per segment (`None`: all the same). A worker
/// registered without a fingerprint (refused before measuring) is left out.
pub fn differing(targets: &[(u32, String, String)]) -> Option<String> {
    let measured: Vec<_> = targets.iter().filter(|t| !t.2.is_empty()).collect();
    let first = measured.first()?;
    if measured.iter().all(|t| t.2 == first.2) {
        return None;
    }
    let lines: Vec<String> = measured
        .iter()
        .map(|(seg, host, t)| format!("segment {seg} on {host}: {t}"))
        .collect();
    Some(lines.join("; "))
}

#[cfg(test)]
mod tests {
    #[test]
    fn differing_targets_are_named() {
        let t = |s: u32, fp: &str| (s, "h".to_string(), fp.to_string());
        assert_eq!(super::differing(&[t(0, "a"), t(1, "a"), t(2, "")]), None);
        let d = super::differing(&[t(0, "a"), t(1, "b")]).unwrap();
        assert_eq!(d, "segment 0 on h: a; segment 1 on h: b");
    }
}
