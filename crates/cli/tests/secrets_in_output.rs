//! Secrets stay private: a password in a malformed connection URI is never echoed (`run
//! --target`, `bench`, a results store given with `--store` and a study target all show it as
//! `****`), and a results store is created readable by its owner only.

use std::process::Command;

use pgrig_testkit::run;

const BAD: &str = "postgresql://u:hunter2@[::1/db?sslpassword=hunter2";

fn pgrig(dir: &std::path::Path, args: &[&str]) -> pgrig_testkit::CmdOutput {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args).current_dir(dir);
    run(c)
}

#[test]
fn malformed_uris_are_reported_without_their_password() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        format!("name = \"x\"\n[target]\nurl = \"{BAD}\"\n"),
    )
    .unwrap();
    for args in [
        vec!["run", "--target", BAD, "-T", "1s"],
        vec!["bench", "-t", "1", BAD],
        vec!["results", "list", "--store", BAD],
        vec!["study", "study.toml"],
    ] {
        let out = pgrig(dir.path(), &args);
        assert_ne!(out.code, Some(0), "{args:?}");
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(
            !all.contains("hunter2"),
            "{args:?} echoed the password: {all}"
        );
        assert!(all.contains("u:****@"), "{args:?}: {all}");
    }
}

#[test]
fn a_new_results_store_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "name = \"private\"\n[target]\nfast = true\n[workload]\ntransactions = 5\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml", "--store", "new.db"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let mode = std::fs::metadata(dir.path().join("new.db"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "store mode {:o}", mode & 0o777);
}

#[test]
fn a_password_in_a_study_file_comment_is_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("study.toml"),
        "# was: postgresql://bob:hunter2@db.example/bench\nname = \"c\"\n[target]\nfast = true\n[workload]\ntransactions = 5\n",
    )
    .unwrap();
    let out = pgrig(dir.path(), &["study", "study.toml"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let export = pgrig(dir.path(), &["results", "export", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_str(&export.stdout).unwrap();
    let id = runs[0]["run_id"].to_string();
    let shown = pgrig(dir.path(), &["results", "show", &id]);
    assert!(
        shown.stdout.contains("bob:****@db.example"),
        "{}",
        shown.stdout
    );
    assert!(!shown.stdout.contains("hunter2"));
    let raw = std::fs::read(dir.path().join("pgrig.db")).unwrap();
    assert!(
        !raw.windows(7).any(|w| w == b"hunter2"),
        "in the store file"
    );
}
