//! PostgreSQL's own pgbench TAP suites (001_pgbench_with_server, 002_pgbench_no_server of
//! REL_15_STABLE, transcribed as data in `pgbench_tap/cases.toml`) as a differential test: every
//! case runs with the installed pgbench 15 and with pgrig through a link named `pgbench`, each in
//! its own database of the test cluster. Where pgbench 15 passes a case, pgrig must pass it too.
//!
//! Reported, not asserted: cases pgbench 15 itself fails, cases marked `newer` (they need a newer
//! pgbench or server; the mark is asserted to be true), cases marked `awaiting` (pgrig fails them
//! only because of an item being fixed elsewhere; asserted to still fail, so a fix flips them),
//! cases marked `newer_client` (pgrig follows a later pgbench that changed what the case relies
//! on; asserted to fail with pgrig, and the suite's later form of the case is ported too).
//! Without pgbench the test fails. `PGRIG_TAP_THREADS` sets the parallelism (default 3),
//! `PGRIG_TAP_FILTER` runs only the cases whose name contains it.

#[path = "pgbench_tap/data.rs"]
mod data;
#[path = "pgbench_tap/perl_re.rs"]
mod perl_re;
#[path = "pgbench_tap/run.rs"]
mod run;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use data::Case;
use run::{run_case, Context, Outcome, Tool};

/// One case's results with both tools.
struct Verdict {
    case: Case,
    pgbench: Outcome,
    pgrig: Outcome,
}

#[test]
fn pgbench_tap_suites_pass_with_pgrig_wherever_pgbench_15_passes() {
    // the heaviest load of the suite (several cases at once): not beside the timing tests
    let _alone = crate::common::alone();
    let oracle = pgrig_testkit::pgbench_path()
        .expect("pgbench is not installed: it is this test's oracle (install postgresql-client-15 or set PGRIG_PGBENCH)");
    let link = tempfile::tempdir().expect("link directory");
    let pgrig = link.path().join("pgbench");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pgrig"), &pgrig).expect("pgbench link");
    let tools = [Tool { exe: oracle }, Tool { exe: pgrig }];
    let ctx = context(&tools[0].exe);
    let filter = std::env::var("PGRIG_TAP_FILTER").unwrap_or_default();
    let cases: Vec<Case> = data::load()
        .into_iter()
        .filter(|c| c.name.contains(&filter))
        .collect();
    let verdicts = run_all(&ctx, &tools, cases);
    let errors = report(&verdicts);
    assert!(
        errors.is_empty(),
        "{} case(s) failed:\n\n{}",
        errors.len(),
        errors.join("\n\n")
    );
}

/// The shared cluster, a template database holding pgbench's tables at scale 1 (made by the
/// installed pgbench), and the seed of the seeded-random cases.
fn context(oracle: &PathBuf) -> Context {
    let server = pgrig_testkit::cluster();
    let template = format!("tap_template_{}", std::process::id());
    server
        .psql("postgres", &format!("CREATE DATABASE {template}"))
        .expect("template database");
    let mut init = std::process::Command::new(oracle);
    init.args(["-i", "-q"]).envs(server.env(&template));
    let out = pgrig_testkit::run(init);
    assert!(
        out.success(),
        "pgbench -i of the template failed: {}",
        out.stderr
    );
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos() as u64 % 1_000_000_000);
    Context {
        server,
        template,
        seed,
    }
}

/// Runs every case with both tools: the parallel ones on a few threads, then the serial ones.
fn run_all(ctx: &Context, tools: &[Tool; 2], cases: Vec<Case>) -> Vec<Verdict> {
    let threads: usize = std::env::var("PGRIG_TAP_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let (serial, parallel): (Vec<Case>, Vec<Case>) = cases.into_iter().partition(|c| c.serial);
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = parallel.get(i) else { break };
                let v = verdict(ctx, tools, case);
                done.lock().unwrap().push(v);
            });
        }
    });
    let mut verdicts = done.into_inner().unwrap();
    verdicts.extend(serial.iter().map(|c| verdict(ctx, tools, c)));
    verdicts
}

fn verdict(ctx: &Context, tools: &[Tool; 2], case: &Case) -> Verdict {
    Verdict {
        case: case.clone(),
        pgbench: run_case(ctx, case, &tools[0]),
        pgrig: run_case(ctx, case, &tools[1]),
    }
}

/// Prints the summary and the reported cases (uncaptured); returns the assertion failures.
fn report(verdicts: &[Verdict]) -> Vec<String> {
    let (mut errors, mut notes) = (Vec::new(), Vec::new());
    let mut counts = [0usize; 5]; // passing, awaiting, newer, pgbench fails, later pgbench
    for v in verdicts {
        let c = &v.case;
        let title = format!("[{}] {}", c.suite, c.name);
        if let (None, Some(why)) = (&v.pgbench, &c.newer_client) {
            match &v.pgrig {
                None => errors.push(format!(
                    "{title}: marked `newer_client` ({why}) but pgrig passes it: remove the mark"
                )),
                Some(_) => {
                    counts[4] += 1;
                    notes.push(format!("follows a later pgbench: {title}: {why}"));
                }
            }
            continue;
        }
        match (&v.pgbench, &v.pgrig, &c.newer, &c.awaiting) {
            (None, _, Some(why), _) => errors.push(format!(
                "{title}: marked `newer` ({why}) but pgbench 15 passes it: remove the mark"
            )),
            (Some(_), _, Some(why), _) => {
                counts[2] += 1;
                notes.push(format!("newer than 15: {title}: {why}"));
            }
            (Some(why), _, None, _) => {
                counts[3] += 1;
                notes.push(format!("pgbench 15 fails (not asserted): {title}:\n{why}"));
            }
            (None, None, None, Some(item)) => errors.push(format!(
                "{title}: pgrig now passes; remove its `awaiting = {item:?}` mark"
            )),
            (None, Some(_), None, Some(item)) => {
                counts[1] += 1;
                notes.push(format!("awaiting h-dropin ({item}): {title}"));
            }
            (None, None, None, None) => counts[0] += 1,
            (None, Some(why), None, None) => errors.push(format!("{title}: pgrig fails:\n{why}")),
        }
    }
    let mut summary = format!(
        "pgbench TAP suites: {} cases; {} pass with both; {} awaiting h-dropin; {} newer than 15; \
         {} where pgrig follows a later pgbench; {} failed by pgbench 15 itself\n",
        verdicts.len(),
        counts[0],
        counts[1],
        counts[2],
        counts[4],
        counts[3]
    );
    for n in &notes {
        summary.push_str(&format!("  {n}\n"));
    }
    // Written to the stderr file itself, which the test harness does not capture: the lists
    // show on every run, passing or not.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), summary.as_bytes());
    errors
}
