//! Outputs in a directory another account can write to: a link planted at the output's name is
//! replaced, never followed (the linked file keeps its contents, a dangling link creates nothing
//! at its target), a linked directory is refused, and outputs are private (0600). The same
//! helper (`pgrig_outfile`) writes every output; its own tests cover FIFOs, hard links, streamed
//! `-l` logs and other users' files.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pgrig_testkit::fresh_db;

fn plant_link(at: &Path, to: &Path) {
    std::os::unix::fs::symlink(to, at).unwrap();
}

fn is_private_regular_file(p: &Path) -> bool {
    let m = std::fs::symlink_metadata(p).unwrap();
    m.is_file() && m.permissions().mode() & 0o777 == 0o600
}

#[test]
fn json_and_report_outputs_replace_planted_links_without_following_them() {
    let db = fresh_db("out_links");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let json = dir.path().join("o.json");
    plant_link(&json, &victim);
    let out = common::pgrig_bench(&db, &["-S", "-t", "5", "--json", json.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(is_private_regular_file(&json));
    assert!(std::fs::read_to_string(&json).unwrap().contains("\"tps\""));

    let nowhere = dir.path().join("nowhere.html");
    let html = dir.path().join("r.html");
    plant_link(&html, &nowhere);
    let svgs = dir.path().join("svg");
    std::fs::create_dir(&svgs).unwrap();
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args([
        "report",
        json.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ])
    .args(["--svg", svgs.to_str().unwrap()]);
    let out = pgrig_testkit::run(c);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(!nowhere.exists(), "the dangling link's target was created");
    assert!(is_private_regular_file(&html));
    let svg_files: Vec<_> = std::fs::read_dir(&svgs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!svg_files.is_empty());
    assert!(svg_files.iter().all(|p| is_private_regular_file(p)));
}

#[test]
fn a_linked_svg_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("svg");
    plant_link(&link, &real);
    let doc = dir.path().join("doc.json");
    let db = fresh_db("out_svg_link");
    common::pgbench_init(&db, 1);
    let out = common::pgrig_bench(&db, &["-S", "-t", "5", "--json", doc.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(["report", doc.to_str().unwrap()])
        .args(["-o", dir.path().join("r.html").to_str().unwrap()])
        .args(["--svg", link.to_str().unwrap()]);
    let out = pgrig_testkit::run(c);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("symbolic link"), "{}", out.stderr);
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
}

fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

/// A FIFO planted at a streamed output's name (`-l`'s `pgbench_log.PID`, `capture -o`,
/// `replay -f -o`) no longer holds the command for ever: it ends at once with an error naming
/// the file.
#[test]
fn a_fifo_at_a_streamed_output_is_refused_at_once() {
    use std::time::Duration;
    let db = fresh_db("out_fifo");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let pgrig = env!("CARGO_BIN_EXE_pgrig");
    // `-l`: the log's name holds pgrig's pid, which `exec` keeps from the shell that plants it
    let mut c = db.command("sh");
    c.current_dir(dir.path())
        .args(["-c", "mkfifo pgbench_log.$$ && exec \"$0\" \"$@\""])
        .args([pgrig, "bench", "-S", "-t", "5", "-l"]);
    let log = common::finish_within(common::spawn_piped(c), Duration::from_secs(30));
    assert_ne!(log.code, Some(0), "{}", log.stdout);
    assert!(log.stderr.contains("pgbench_log."), "{}", log.stderr);
    assert!(log.stderr.contains("not a regular file"), "{}", log.stderr);

    std::fs::write(
        dir.path().join("small.log"),
        "2010-12-31 10:59:52.241 UTC|u|d|4d1db7a8.4236|LOG:  connection authorized: user=u database=d\n",
    )
    .unwrap();
    let out = dir.path().join("out.rf");
    mkfifo(&out);
    let mut c = std::process::Command::new(pgrig);
    c.current_dir(dir.path())
        .args(["replay", "-f", "-o", "out.rf", "small.log"]);
    let replay = common::finish_within(common::spawn_piped(c), Duration::from_secs(30));
    assert_ne!(replay.code, Some(0));
    assert!(replay.stderr.contains("out.rf"), "{}", replay.stderr);
    assert!(
        replay.stderr.contains("not a regular file"),
        "{}",
        replay.stderr
    );

    let cap = dir.path().join("cap.rf");
    mkfifo(&cap);
    let mut c = std::process::Command::new(pgrig);
    c.args(["capture", "--listen"])
        .arg(dir.path().join("sock"))
        .args(["--port", "6499", "--upstream", &db.conninfo(), "-o"])
        .arg(&cap);
    let capture = common::finish_within(common::spawn_piped(c), Duration::from_secs(30));
    assert_ne!(capture.code, Some(0));
    assert!(capture.stderr.contains("cap.rf"), "{}", capture.stderr);
    assert!(
        capture.stderr.contains("not a regular file"),
        "{}",
        capture.stderr
    );
}

/// `--json dir-link/o.json` where `dir-link` is a link another account owns (as root: the
/// probe wrote into another user's directory) is refused before the run, naming the link.
/// Reported skipped when not root (giving a link to another account needs it).
#[test]
fn json_into_a_directory_link_another_user_owns_is_refused() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        pgrig_testkit::skip("needs root to give a link to another user");
        return;
    }
    let db = fresh_db("out_dir_link");
    common::pgbench_init(&db, 1);
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    let link = dir.path().join("dir-link");
    plant_link(&link, &theirs);
    let st = std::process::Command::new("chown")
        .args(["-h", "nobody"])
        .arg(&link)
        .status()
        .unwrap();
    assert!(st.success());
    let json = link.join("o.json");
    let out = common::pgrig_bench(&db, &["-S", "-t", "5", "--json", json.to_str().unwrap()]);
    assert_ne!(out.code, Some(0), "{}", out.stdout);
    assert!(out.stderr.contains("dir-link"), "{}", out.stderr);
    assert!(out.stderr.contains("another user"), "{}", out.stderr);
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
}
