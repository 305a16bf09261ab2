//! Links and other users' files planted at an output's name, in a directory both can write to:
//! never followed, never replaced when they belong to someone else.

#[path = "../../testkit/src/skip.rs"]
mod skip;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use pgrig_outfile::{check, create_dir, create_streaming, write};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_link_at_the_name_is_replaced_and_its_target_left_alone() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = d.path().join("o.json");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    check(&out).unwrap();
    write(&out, b"{}").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!std::fs::symlink_metadata(&out)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{}");
    assert_eq!(mode(&out), 0o600);
}

#[test]
fn a_dangling_link_creates_nothing_at_its_target() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("elsewhere");
    let out = d.path().join("o.json");
    std::os::unix::fs::symlink(&target, &out).unwrap();
    write(&out, b"{}").unwrap();
    assert!(!target.exists());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{}");
}

#[test]
fn a_new_file_is_private_and_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("report.html");
    write(&out, b"x").unwrap();
    write(&out, b"y").unwrap();
    assert_eq!(mode(&out), 0o600);
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn fifos_and_directories_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let e = write(&fifo, b"x").unwrap_err();
    assert!(e.to_string().contains("is not a regular file"), "{e}");
    let e = check(d.path()).unwrap_err();
    assert!(e.to_string().contains("is a directory"), "{e}");
}

#[test]
fn streaming_refuses_links_and_hard_links_and_truncates_own_files() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = d.path().join("pgbench_log.1");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let e = create_streaming(&link).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    let dangling = d.path().join("pgbench_log.2");
    std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
    assert!(create_streaming(&dangling).is_err());
    assert!(!d.path().join("nowhere").exists());
    let hard = d.path().join("pgbench_log.3");
    std::fs::hard_link(&victim, &hard).unwrap();
    let e = create_streaming(&hard).unwrap_err();
    assert!(e.to_string().contains("hard links"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let own = d.path().join("pgbench_log.4");
    std::fs::write(&own, "old contents").unwrap();
    create_streaming(&own).unwrap();
    assert_eq!(std::fs::read_to_string(&own).unwrap(), "");
}

#[test]
fn a_linked_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = d.path().join("profile");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let e = create_dir(&link).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    let new = d.path().join("a/b");
    create_dir(&new).unwrap();
    assert_eq!(mode(&new), 0o700);
}

/// As root: a file another account owns at the name is refused, not replaced (the probe's
/// case: root overwriting what another user planted). Reported skipped when not root.
#[test]
fn another_users_file_is_refused_even_for_root() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skip::skip("needs root to give a file to another user");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o.json");
    std::fs::write(&out, "theirs").unwrap();
    let st = std::process::Command::new("chown")
        .arg("nobody")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    assert_ne!(std::fs::metadata(&out).unwrap().uid(), 0);
    let e = write(&out, b"ours").unwrap_err();
    assert!(e.to_string().contains("belongs to another user"), "{e}");
    assert!(check(&out).is_err());
    assert!(create_streaming(&out).is_err());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "theirs");
}

/// A FIFO at a streamed output's name is refused at once, reader or none (the probe's
/// `replay -f -o fifo` waited for a reader for ever); the same for a whole-file output.
#[test]
fn a_fifo_at_a_streamed_name_is_refused_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pgbench_log.1");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let (tx, rx) = std::sync::mpsc::channel();
    let f = fifo.clone();
    std::thread::spawn(move || tx.send(create_streaming(&f).map(drop)));
    let res = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("create_streaming on a FIFO did not return within 5 s");
    let e = res.unwrap_err();
    assert!(e.to_string().contains("is not a regular file"), "{e}");
    assert!(write(&fifo, b"x").is_err());
    assert!(check(&fifo).is_err());
}

fn chown_link(link: &Path, user: &str) {
    let st = std::process::Command::new("chown")
        .args(["-h", user])
        .arg(link)
        .status()
        .unwrap();
    assert!(st.success());
}

/// A symbolic link another account owns in an output's directory path is refused for every
/// kind of output (the probe's `--json dir-link/o.json` wrote into another user's directory
/// as root); links of the user's own (and root's) are followed. Reported skipped when not
/// root (giving a link to another account needs it).
#[test]
fn a_directory_link_another_user_owns_is_refused_and_ones_own_is_followed() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skip::skip("needs root to give a link to another user");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let theirs = d.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    let link = d.path().join("dir-link");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    chown_link(&link, "nobody");
    let deeper = d.path().join("deeper");
    std::os::unix::fs::symlink("dir-link/.", &deeper).unwrap();
    for base in [&link, &deeper] {
        let out = base.join("o.json");
        let why = |e: std::io::Error| e.to_string();
        for e in [
            write(&out, b"{}").map_err(why).unwrap_err(),
            check(&out).map_err(why).unwrap_err(),
            create_streaming(&out).map(drop).map_err(why).unwrap_err(),
            create_dir(&base.join("svg")).map_err(why).unwrap_err(),
        ] {
            assert!(e.contains("dir-link"), "{e}");
            assert!(e.contains("another user"), "{e}");
        }
    }
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
    chown_link(&link, "root");
    write(&link.join("o.json"), b"{}").unwrap();
    create_streaming(&deeper.join("log")).unwrap();
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 2);
}
