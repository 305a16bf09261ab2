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
