//! `[collect] profile = true` in a query study: the server's processes are profiled over each
//! point's measured executions and the folded stacks are stored with the run, as script runs do
//! (`results flame` finds them); a cold-cache query study with profiling is refused at plan time
//! (the server restarts between executions). Skipped with `SKIPPED:` when perf cannot record here.

use std::path::Path;
use std::process::Command;

/// Functions of a sequential scan, by name or prefix: the executor node (`ExecSeqScan…`,
/// `SeqNext`, `ExecScan`), the table AM (`heap_getnextslot`, `table_scan_getnextslot`) and the
/// heap's page reader (`heapgettup…`, `heapgetpage`, `heap_prepare_pagescan`). A short sample
/// of a scan holds some of them, not always a given one (PostgreSQL 18 on a loaded machine had
/// `ExecSeqScanWithQual`, `SeqNext` and `heapgettup_pagemode` but no `heap_getnextslot`); a
/// stripped postgres shows the exported ones only.
const SCAN_FUNCTIONS: &[&str] = &[
    "ExecSeqScan",
    "SeqNext",
    "ExecScan",
    "heap_getnextslot",
    "table_scan_getnextslot",
    "heapgettup",
    "heapgetpage",
    "heap_prepare_pagescan",
];

/// Whether a frame of the folded stacks is one of the scan's functions.
fn holds_a_scan_function(folded: &str) -> bool {
    folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ').map(|(stack, _)| stack))
        .flat_map(|stack| stack.split(';'))
        .any(|frame| SCAN_FUNCTIONS.iter().any(|f| frame.starts_with(f)))
}

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    pgrig_testkit::run(c)
}

/// Why perf cannot record on this machine, if it cannot.
fn perf_unusable() -> Option<String> {
    let out = Command::new("perf")
        .args(["record", "-q", "-o", "/dev/null", "--", "true"])
        .output();
    match out {
        Err(e) => Some(format!("perf cannot be started: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "perf record fails here: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    }
}

#[test]
fn a_query_study_with_profile_stores_the_servers_folded_stacks() {
    if let Some(why) = perf_unusable() {
        pgrig_testkit::skip(&why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "name = \"qprof\"\nsettings = { jit = \"off\" }\n[target]\nfast = true\n\
         [dataset]\nbuiltin = \"tpcb\"\nscale = 5\n\
         [workload]\nquery = \"SELECT count(*) FROM pgbench_accounts WHERE abalance <> 0\"\n\
         executions = 6\nwarmup_executions = 1\n\
         [matrix]\nparallel_workers = [0, 2]\n\
         [collect]\nprofile = true\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert!(out.success(), "{}\n{}", out.stdout, out.stderr);
    for run in ["1", "2"] {
        let show = pgrig(dir.path(), &["results", "show", run]);
        assert!(show.success(), "{}", show.stderr);
        let v: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
        let server = &v["provenance"]["profiles"]["server"];
        assert!(
            server["samples"].as_u64().unwrap_or(0) > 0,
            "run {run}: {server}"
        );
        let folded = pgrig(dir.path(), &["results", "flame", run, "--folded"]);
        assert!(folded.success(), "run {run}: {}", folded.stderr);
        assert!(
            holds_a_scan_function(&folded.stdout),
            "run {run}: none of the scan's functions {SCAN_FUNCTIONS:?} in\n{}",
            folded.stdout
        );
    }
}

/// The check itself: the PostgreSQL 18 sample that failed the old check (no
/// `heap_getnextslot`) holds the scan; a profile of something else does not.
#[test]
fn a_sample_with_any_of_the_scans_functions_holds_the_scan() {
    let pg18 = "postgres;PostgresMain;exec_simple_query;PortalRun;ExecutorRun;ExecAgg;\
                ExecSeqScanWithQual;SeqNext;heapgettup_pagemode 7\n\
                postgres;PostgresMain;exec_simple_query;ExecAgg;ExecInterpExpr 2\n";
    assert!(holds_a_scan_function(pg18));
    let other = "postgres;PostgresMain;exec_simple_query;ExecHashJoin;ExecInterpExpr 9\n\
                 postgres;ServerLoop;WaitEventSetWait 1\n";
    assert!(!holds_a_scan_function(other));
}

#[test]
fn a_cold_cache_query_study_with_profile_is_refused_before_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "name = \"qcold\"\n[workload]\nquery = \"SELECT 1\"\ncache = \"cold\"\n\
         [collect]\nprofile = true\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml", "--dry-run"]);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("study.toml:4:9: workload `cache`: \"cold\" restarts the server between executions, so [collect] profile"),
        "{}",
        out.stderr
    );
}
