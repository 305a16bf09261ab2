//! What a worker takes from the run it joined, whatever it runs: a pgbench run's configuration
//! for this segment from the stored run options and scripts (`bench_config`: checked again, run
//! options only, with the worker's own target and log directory), or a Lua run's script as one
//! of the worker's own `--lua-script` files of the run's SHA-256 (`local_scripts`, `matching`).

use std::path::{Path, PathBuf};

use pgrig_engine::config::{BenchConfig, ConnArgs, SeedOption};

use crate::lua_script::{self, ScriptRef};
use crate::protocol::RunRow;
use crate::share::SegmentId;
use crate::FleetError;

/// The worker's own part of a pgbench run's configuration (its command line).
pub struct Own<'a> {
    /// `--segment I/N`
    pub segment: SegmentId,
    /// `--target`: never taken from the run
    pub target: Option<String>,
    /// `--log-dir`: where `-l` logs go
    pub log_dir: Option<&'a Path>,
}

/// The whole run's configuration from the run options the schema holds (checked: run options
/// only), its scripts (checked, as text), this worker's own target and log directory, cut to
/// this segment; and whether the run asked for no vacuum (`-n`). `env`: the environment the
/// options are parsed with (`PGBENCH_RANDOM_SEED`, `POSIXLY_CORRECT`).
pub fn bench_config(
    run: &RunRow,
    a: &Own,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(BenchConfig, bool), FleetError> {
    let refused = |why: String| FleetError::new(format!("run {}: refused: {why}", run.id));
    pgrig_pgbench_args::run_options::check_stored(&run.args).map_err(refused)?;
    if !(100..=60_000).contains(&run.interval_ms) {
        return Err(refused(format!(
            "its interval of {} ms is not within 100 to 60000 ms",
            run.interval_ms
        )));
    }
    let scripts = crate::scripts::decode(&run.scripts).map_err(|e| refused(e.0))?;
    let mut argv = vec!["pgrig worker".to_string()];
    argv.extend(run.args.iter().cloned());
    let parsed = pgrig_pgbench_args::parse_pgbench_args("pgrig", &argv, env)
        .map_err(|e| refused(format!("its options: {}", e.lines.join("; "))))?;
    let pgrig_pgbench_args::Action::Bench(mut cfg) = parsed.action else {
        return Err(refused("its options are not a benchmark".into()));
    };
    cfg.scripts = scripts;
    cfg.conn = ConnArgs {
        dbname: a.target.clone(),
        ..Default::default()
    };
    if cfg.log {
        let Some(dir) = a.log_dir else {
            return Err(refused(
                "it asks for -l transaction logs: give this worker --log-dir DIR".into(),
            ));
        };
        let prefix = cfg.log_prefix.as_deref().unwrap_or("pgbench_log");
        cfg.log_prefix = Some(dir.join(prefix).to_string_lossy().into_owned());
    }
    cfg.random_seed = Some(SeedOption::Value(run.seed));
    let (_, share) = crate::share::clients_of(a.segment, cfg.clients);
    crate::bounds::bench(&cfg, share).map_err(refused)?;
    let no_vacuum = cfg.no_vacuum;
    let cfg = crate::share::segment_config(cfg, a.segment)?;
    Ok((cfg, no_vacuum))
}

/// The local `--lua-script` files (a directory: its `*.lua` files) with their SHA-256.
pub fn local_scripts(given: &[PathBuf]) -> Result<Vec<(PathBuf, String)>, FleetError> {
    let mut files = Vec::new();
    for p in given {
        if p.is_dir() {
            let entries = std::fs::read_dir(p)
                .map_err(|e| FleetError::new(format!("--lua-script {}: {}", p.display(), e)))?;
            let mut lua: Vec<PathBuf> = (entries.flatten().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "lua"))
                .collect();
            lua.sort();
            files.extend(lua);
        } else {
            files.push(p.clone());
        }
    }
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read(&f)
                .map_err(|e| FleetError::new(format!("--lua-script {}: {}", f.display(), e)))?;
            Ok((f, lua_script::digest(&text)))
        })
        .collect()
}

/// The local file (of `local_scripts`) whose SHA-256 is the run's script's; else why not, and how to fix it.
pub fn matching(
    run: &RunRow,
    script: &ScriptRef,
    local: &[(PathBuf, String)],
) -> Result<PathBuf, FleetError> {
    if let Some((f, _)) = local.iter().find(|(_, d)| *d == script.sha256) {
        return Ok(f.clone());
    }
    let have: Vec<String> = (local.iter())
        .map(|(f, d)| format!("{} (sha256 {})", f.display(), &d[..16]))
        .collect();
    Err(FleetError::new(format!(
        "run {}: refused: no --lua-script file has the run's script {} (sha256 {}); this \
         worker has {}. Copy the coordinator's {} to this host and give it as --lua-script \
         (a worker runs only its own files, never a script from the coordinator)",
        run.id,
        script.name,
        script.sha256,
        if have.is_empty() {
            "none".to_string()
        } else {
            have.join(", ")
        },
        script.name
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgrig_engine::config::ScriptSource;

    fn run(args: &[&str]) -> RunRow {
        RunRow {
            id: 7,
            segments: 2,
            args: args.iter().map(|s| s.to_string()).collect(),
            scripts: crate::scripts::encode(&[ScriptSource::Builtin {
                name: "select-only".into(),
                weight: 1,
            }]),
            seed: 42,
            interval_ms: 1000,
            digest: String::new(),
            kind: "pgbench".into(),
            state: "waiting".into(),
            coordinator_silent_s: 0.0,
        }
    }

    fn own(index: u32, log_dir: Option<&Path>) -> Own<'_> {
        Own {
            segment: SegmentId { index, count: 2 },
            target: Some("host=t".into()),
            log_dir,
        }
    }

    #[test]
    fn a_segment_gets_its_share_the_run_seed_and_its_own_target() {
        let none = |_: &str| None;
        let (cfg, no_vacuum) = bench_config(&run(&["--client=5", "-n"]), &own(1, None), &none)
            .expect("a run's options");
        assert!(no_vacuum);
        assert_eq!(cfg.clients, 2, "segment 1 of 2 of 5 clients");
        assert_eq!(cfg.conn.dbname.as_deref(), Some("host=t"));
        assert_eq!(cfg.random_seed, Some(SeedOption::Value(42)));
    }

    #[test]
    fn a_connection_option_or_logs_without_a_log_dir_are_refused() {
        let none = |_: &str| None;
        let e = bench_config(&run(&["--host=elsewhere"]), &own(0, None), &none)
            .expect_err("a connection option");
        assert!(e.0.starts_with("run 7: refused: "), "{e}");
        let e = bench_config(&run(&["--log"]), &own(0, None), &none).expect_err("no --log-dir");
        assert!(e.0.contains("give this worker --log-dir DIR"), "{e}");
        let dir = Path::new("/var/tmp");
        let (cfg, _) =
            bench_config(&run(&["--log", "--client=2"]), &own(0, Some(dir)), &none).expect("logs");
        assert_eq!(cfg.log_prefix.as_deref(), Some("/var/tmp/pgbench_log"));
    }

    #[test]
    fn only_a_local_file_of_the_run_digest_matches() {
        let local = vec![(PathBuf::from("/x/a.lua"), "ab".repeat(32))];
        let mut script = ScriptRef {
            name: "a.lua".into(),
            sha256: "ab".repeat(32),
        };
        assert_eq!(
            matching(&run(&[]), &script, &local).expect("same digest"),
            PathBuf::from("/x/a.lua")
        );
        script.sha256 = "cd".repeat(32);
        let e = matching(&run(&[]), &script, &local).expect_err("other digest");
        assert!(e.0.contains("/x/a.lua (sha256 abababababababab)"), "{e}");
    }
}
