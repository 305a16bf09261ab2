//! Study file diagnostics: errors in `[workload]` name the line of the key, not the section
//! header; a misspelt `--set` key is named by itself with a did-you-mean; workload keys are
//! type-checked even when the matrix overrides them; `--dry-run` checks setup and script files
//! and the store, creating nothing.

use std::path::Path;
use std::process::Command;

fn pgrig(dir: &Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    pgrig_testkit::run(c)
}

/// `pgrig study s.toml --dry-run ARGS` on `text`: must fail with status 1; returns stderr.
fn dry_run_error(dir: &Path, text: &str, args: &[&str]) -> String {
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let mut all = vec!["study", "s.toml", "--dry-run"];
    all.extend_from_slice(args);
    let out = pgrig(dir, &all);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    out.stderr
}

#[test]
fn workload_errors_name_the_line_of_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[workload]\nclients = 2\n\nprotocol = \"fast\"\n",
        &[],
    );
    assert!(
        e.contains("s.toml:5:12: workload `protocol`: invalid query mode \"fast\""),
        "{e}"
    );
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[workload]\nclients = 2\nthreds = 2\n",
        &[],
    );
    assert!(
        e.contains("s.toml:4:1: unknown workload key `threds` (did you mean `threads`?)"),
        "{e}"
    );
}

#[test]
fn misspelt_set_key_is_named_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let study = "name = \"x\"\n[workload]\ntransactions = 5\n[matrix]\nclients = [1, 2]\n";
    let e = dry_run_error(dir.path(), study, &["--set", "workload.duraton=2s"]);
    assert!(
        e.contains(
            "--set workload.duraton=2s: unknown workload key `duraton` (did you mean `duration`?)"
        ),
        "{e}"
    );
    assert!(!e.contains("matrix `clients`"), "{e}");
    // a bad value given with --set names the key it went to
    let e = dry_run_error(dir.path(), study, &["--set", "workload.rounds=many"]);
    assert!(
        e.contains("s.toml with --set workload.rounds=many: workload `rounds`"),
        "{e}"
    );
    // an error of the file itself keeps its line when overrides are given
    let bad = "name = \"x\"\n[workload]\nclients = 2\nprotocol = \"fast\"\n";
    let e = dry_run_error(dir.path(), bad, &["--set", "repetitions=2"]);
    assert!(e.contains("s.toml:4:12: workload `protocol`"), "{e}");
}

#[test]
fn workload_values_are_type_checked_when_the_matrix_overrides_them() {
    let dir = tempfile::tempdir().unwrap();
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[workload]\nclients = \"four\"\n[matrix]\nclients = [1, 4]\n",
        &[],
    );
    assert!(
        e.contains("s.toml:3:11: workload `clients`: invalid type"),
        "{e}"
    );
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[matrix]\nclients = [1, \"four\"]\n",
        &[],
    );
    assert!(
        e.contains("s.toml:3:11: matrix `clients` value \"four\""),
        "{e}"
    );
}

#[test]
fn dry_run_checks_setup_and_script_files() {
    let dir = tempfile::tempdir().unwrap();
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[dataset]\nbuiltin = \"none\"\nsetup = [\"missing.sql\"]\n",
        &[],
    );
    assert!(e.contains("s.toml:4:10: could not read setup file"), "{e}");
    assert!(e.contains("missing.sql"), "{e}");

    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[workload]\nscripts = [\"nope.sql\"]\n",
        &[],
    );
    assert!(
        e.contains("s.toml:3:11: workload `scripts`: could not read script"),
        "{e}"
    );
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[matrix]\nscripts = [\"nope.sql\"]\n",
        &[],
    );
    assert!(e.contains("s.toml:3:11: workload `scripts`"), "{e}");

    // a setup file psql could not run either is refused before anything runs
    std::fs::write(dir.path().join("meta.sql"), "SELECT 1;\n\\i other.sql\n").unwrap();
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[dataset]\nbuiltin = \"none\"\nsetup = [\"meta.sql\"]\n",
        &[],
    );
    assert!(
        e.contains("meta.sql:2: psql meta-command \\i is not supported"),
        "{e}"
    );

    // the store a run would use
    let study = "name = \"x\"\n";
    let e = dry_run_error(dir.path(), study, &["--store", "nodir/r.db"]);
    assert!(
        e.contains("results store \"nodir/r.db\": directory \"nodir\" does not exist"),
        "{e}"
    );
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let e = dry_run_error(dir.path(), study, &["--store", "notes.txt"]);
    assert!(
        e.contains("not a pgrig results store (not an SQLite database)"),
        "{e}"
    );
    let e = dry_run_error(dir.path(), study, &["--store", "postgresql://h:99999/db"]);
    assert!(e.contains("invalid port number"), "{e}");
    assert!(
        !dir.path().join("pgrig.db").exists(),
        "a dry run creates no store"
    );

    // and a study whose files are all there passes
    std::fs::write(dir.path().join("q.sql"), "SELECT 1;\n").unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"x\"\n[workload]\nscripts = [\"q.sql\"]\n",
    )
    .unwrap();
    let ok = pgrig(dir.path(), &["study", "s.toml", "--dry-run"]);
    assert!(ok.success(), "{}", ok.stderr);
}

#[test]
fn dataset_target_and_setting_errors_name_their_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        ("name = \"x\"\n[dataset]\nscale = 0\n", "s.toml:3:9: dataset scale must be at least 1"),
        (
            "name = \"x\"\n[dataset]\npartition_method = \"list\"\n",
            "s.toml:3:20: dataset partition_method \"list\"",
        ),
        ("name = \"x\"\n[[targets]]\nname = \"a\"\n[[targets]]\nname = \"a\"\n", "s.toml:5:8: two targets are named \"a\""),
        ("name = \"x\"\n[target]\nbin_dir = \"/nope\"\n", "s.toml:3:11: bin_dir \"/nope\" has no initdb and postgres"),
        ("name = \"x\"\nsettings = { work_mem = [1] }\n", "s.toml:2:25: setting \"work_mem\": must be"),
        ("name = \"x\"\n[workload]\nduration = 1.5\n", "s.toml:3:12: workload `duration`: invalid duration 1.5 (use whole seconds"),
        ("name = \"x\"\n[workload]\nbuiltin = \"tpcc\"\n", "s.toml:3:11: workload `builtin`: no builtin script"),
        ("name = \"x\"\n[workload]\nrate = 0.0\n", "s.toml:3:8: workload `rate`: rate must be"),
        ("name = \"x\"\n[collect]\nrelation_sizes = \"accounts\"\n", "s.toml:3:18: relation_sizes must be true, false or a list"),
        ("name = \"\"\n", "s.toml:1:8: the study needs a name"),
        (
            "name = \"x\"\n[target]\nurl = \"postgresql://h/db?options=-cx%3D1\"\n[matrix]\nisolation = [\"serializable\"]\n",
            "s.toml:3:7: target postgresql://h/db?options=-cx%3D1 sets its own \"options\"",
        ),
    ] {
        let e = dry_run_error(dir.path(), text, &[]);
        assert!(e.contains(want), "{text}\n{e}");
    }
}

#[test]
fn setting_names_and_values_that_could_break_the_configuration_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\nsettings = { work_mem = \"1MB\\nfsync = off\" }\n",
        &[],
    );
    assert!(
        e.contains(
            "s.toml:2:25: setting \"work_mem\": a setting value cannot contain a line break"
        ),
        "{e}"
    );
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[target]\nsettings = { \"work_mem = 1\\nfsync\" = \"off\" }\n",
        &[],
    );
    assert!(e.contains("s.toml:3:38: invalid setting name"), "{e}");
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[matrix]\n\"settings.work_mem\" = [\"1MB\", \"2MB\\nfsync = off\"]\n",
        &[],
    );
    assert!(
        e.contains("a setting value cannot contain a line break"),
        "{e}"
    );
    let e = dry_run_error(
        dir.path(),
        "name = \"x\"\n[matrix]\n\"settings.a;b\" = [1]\n",
        &[],
    );
    assert!(
        e.contains("s.toml:3:1: invalid setting name \"a;b\""),
        "{e}"
    );
}
