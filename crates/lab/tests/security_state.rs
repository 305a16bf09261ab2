//! What pgrig trusts when it stops or cleans up a server: only what it checked. A state
//! directory someone else could write is refused, a forged state file or a rewritten
//! `postmaster.pid` never makes pgrig signal another process or delete another directory,
//! symbolic links planted at state-file names are not followed, and a start killed half-way
//! leaves no directory behind.

mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pgrig_lab::{start_detached, status, stop, Server, ServerInfo, ServerOptions};

fn state_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pgrig-sec-state-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

fn write_json(dir: &Path, info: &ServerInfo) {
    std::fs::write(
        dir.join("server.json"),
        serde_json::to_string(info).unwrap(),
    )
    .unwrap();
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.contains("(postgres)") && !s.contains(") Z"))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn state_directory_others_can_write_is_refused() {
    let victim = Server::start(ServerOptions::default()).unwrap();
    let dir = state_dir("shared");
    let mut forged = victim.info();
    forged.root = PathBuf::from("/tmp/pgrig-cluster-forged");
    write_json(&dir, &forged);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    for err in [
        stop(&dir).unwrap_err().to_string(),
        status(&dir).unwrap_err().to_string(),
        start_detached(&dir, ServerOptions::default())
            .unwrap_err()
            .to_string(),
    ] {
        assert!(err.contains("others may write"), "{err}");
    }
    assert!(victim.is_running());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn state_directory_of_another_account_is_refused() {
    if !nix::unistd::Uid::effective().is_root() {
        return support::skipped(
            "state_directory_of_another_account_is_refused",
            "not root, so no directory of another account can be made",
        );
    }
    let dir = state_dir("foreign");
    std::os::unix::fs::lchown(&dir, Some(65534), None).unwrap();
    let err = start_detached(&dir, ServerOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("belongs to uid 65534"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn forged_state_file_naming_a_foreign_directory_deletes_nothing() {
    let dir = state_dir("forged-root");
    let precious = std::env::temp_dir().join(format!("pgrig-sec-precious-{}", std::process::id()));
    std::fs::create_dir_all(precious.join("data")).unwrap();
    let info = ServerInfo {
        root: precious.clone(),
        data_dir: precious.join("data"),
        socket_dir: precious.join("sock"),
        log: precious.join("server.log"),
        port: 1,
        user: "postgres".into(),
        os_user: "nobody".into(),
        os_uid: None,
        bin_dir: "/usr/bin".into(),
        version: "x".into(),
        pid: None,
        start_time: None,
        tcp: false,
        passfile: None,
    };
    write_json(&dir, &info);
    let err = stop(&dir).unwrap_err().to_string();
    assert!(err.contains("does not create"), "{err}");
    assert!(precious.join("data").exists());
    std::fs::remove_dir_all(&precious).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn forged_state_file_naming_another_postmaster_does_not_signal_it() {
    let victim = Server::start(ServerOptions::default()).unwrap();
    let dir = state_dir("forged-pid");
    let started = start_detached(&dir, ServerOptions::default()).unwrap();
    // The state names our detached cluster, but the victim's pid with its true start time.
    let mut forged: ServerInfo = started.clone();
    let v = victim.info();
    forged.pid = v.pid;
    forged.start_time = Some(pgrig_lab::ProcessId::of(v.pid.unwrap()).unwrap().start_time);
    write_json(&dir, &forged);
    assert!(!status(&dir).unwrap().unwrap().running);
    let err = stop(&dir).unwrap_err().to_string();
    assert!(err.contains("does not name the postmaster"), "{err}");
    assert!(victim.is_running(), "stop signalled another postmaster");
    assert_eq!(victim.psql("postgres", "SELECT 1").unwrap(), "1");
    assert!(started.data_dir.exists(), "a served directory was deleted");
    // pgrig left the real one alone; end it here.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(started.pid.unwrap() as i32),
        nix::sys::signal::Signal::SIGQUIT,
    )
    .unwrap();
    wait_until("the detached postmaster to exit", || {
        !alive(started.pid.unwrap())
    });
    std::fs::remove_dir_all(&started.root).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rewritten_postmaster_pid_does_not_make_stop_signal_another_process() {
    let victim = Server::start(ServerOptions::default()).unwrap();
    let dir = state_dir("pidfile");
    let started = start_detached(&dir, ServerOptions::default()).unwrap();
    point_pid_file_at(&started.data_dir, victim.postmaster_pid().unwrap());
    let stopped = stop(&dir).unwrap().unwrap();
    assert_eq!(stopped.port, started.port);
    wait_until("the detached postmaster to exit", || {
        !alive(started.pid.unwrap())
    });
    assert!(victim.is_running(), "stop signalled the victim");
    assert!(!started.root.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the server's account can do: make `postmaster.pid` name another process.
fn point_pid_file_at(data: &Path, pid: u32) {
    let file = data.join("postmaster.pid");
    let text = std::fs::read_to_string(&file).unwrap();
    let rest: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&file, format!("{pid}\n{}\n", rest.join("\n"))).unwrap();
}

#[test]
fn planted_symlinks_at_state_file_names_are_not_followed() {
    let dir = state_dir("symlink");
    let precious = dir.with_extension("precious");
    std::fs::write(&precious, "precious\n").unwrap();
    std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The temporary name the next start writes first, and the state file itself.
    let tmp = dir.join(format!(".server.json.{}", std::process::id()));
    std::os::unix::fs::symlink(&precious, &tmp).unwrap();
    std::os::unix::fs::symlink(&precious, dir.join("server.json")).unwrap();
    let err = start_detached(&dir, ServerOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("symbolic link"), "{err}");
    std::fs::remove_file(dir.join("server.json")).unwrap();
    let started = start_detached(&dir, ServerOptions::default()).unwrap();
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
    assert!(std::fs::symlink_metadata(dir.join("server.json"))
        .unwrap()
        .is_file());
    assert_eq!(stop(&dir).unwrap().unwrap().port, started.port);
    std::fs::remove_file(&precious).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

const OWNER_HELPER: &str = "PGRIG_LAB_SEC_OWNER";

/// Not a test by itself: the process this file's tests start (`spawn_owner`); starts a server
/// (or a detached one, or only builds a template) under the base directory it is given,
/// reports, and waits to be killed.
#[test]
#[ignore = "a helper process of this file's tests (spawn_owner)"]
fn owner_helper() {
    let Ok(spec) = std::env::var(OWNER_HELPER) else {
        return;
    };
    let (mode, base) = spec.split_once(':').unwrap();
    let opts = ServerOptions {
        base_dir: Some(base.into()),
        use_template: mode == "template",
        ..ServerOptions::default()
    };
    if mode == "detached" {
        let state = Path::new(base).join("state");
        start_detached(&state, opts).unwrap();
        return;
    }
    let server = Server::start(opts).unwrap();
    println!(
        "\nOWNER {} {}",
        server.postmaster_pid().unwrap(),
        server.data_dir().display()
    );
    std::thread::sleep(Duration::from_secs(120));
}

#[allow(clippy::zombie_processes)] // the callers kill and wait
fn spawn_owner(mode: &str, base: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "owner_helper",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(OWNER_HELPER, format!("{mode}:{}", base.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn private_base(tag: &str) -> PathBuf {
    let base = Path::new("/tmp").join(format!("pgrig-sec-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    base
}

#[test]
fn rewritten_postmaster_pid_does_not_make_the_watchdog_kill_another_process() {
    let victim = Server::start(ServerOptions::default()).unwrap();
    let base = private_base("watchdog");
    let mut owner = spawn_owner("server", &base);
    let mut line = String::new();
    let mut reader = BufReader::new(owner.stdout.take().unwrap());
    while !line.starts_with("OWNER") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "owner died");
    }
    let mut parts = line.split_whitespace().skip(1);
    let pid: u32 = parts.next().unwrap().parse().unwrap();
    let data = PathBuf::from(parts.next().unwrap());
    point_pid_file_at(&data, victim.postmaster_pid().unwrap());
    owner.kill().unwrap();
    owner.wait().unwrap();
    wait_until("the watchdog's cleanup", || !data.exists() && !alive(pid));
    assert!(victim.is_running(), "the watchdog signalled the victim");
    std::fs::remove_dir_all(&base).unwrap();
}

/// Kills a starting owner as soon as `probe` finds its half-made directory; then nothing of
/// it may remain under `base`.
fn kill_during_start(mode: &str, probe: impl Fn(&Path) -> Option<PathBuf>) {
    let base = private_base(mode);
    let mut owner = spawn_owner(mode, &base);
    let deadline = Instant::now() + Duration::from_secs(20);
    let half_made = loop {
        if let Some(dir) = probe(&base) {
            break dir;
        }
        assert!(Instant::now() < deadline, "no directory appeared");
        std::thread::sleep(Duration::from_millis(5));
    };
    owner.kill().unwrap();
    owner.wait().unwrap();
    wait_until("the half-made directory to go", || !half_made.exists());
    std::thread::sleep(Duration::from_millis(300)); // nothing comes back
    assert!(!half_made.exists());
    std::fs::remove_dir_all(&base).unwrap();
}

fn find(dir: &Path, prefix: &str, inner: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name().unwrap().to_string_lossy().starts_with(prefix) && p.join(inner).exists()
        })
}

#[test]
fn detached_start_killed_during_initdb_leaves_no_directory() {
    kill_during_start("detached", |base| {
        let root = find(base, "pgrig-cluster-", "data")?;
        root.join("data/PG_VERSION").exists().then_some(root)
    });
}

#[test]
fn template_build_killed_during_initdb_leaves_no_directory() {
    let cache = format!("pgrig-templates-{}", nix::unistd::Uid::effective());
    kill_during_start("template", |base| {
        let build = find(&base.join(&cache), "pgrig-build-", "data")?;
        build.join("data/PG_VERSION").exists().then_some(build)
    });
}
