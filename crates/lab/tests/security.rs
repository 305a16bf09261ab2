//! What another OS account can do to a scratch server: nothing. It cannot reach the unix socket
//! (the directory is private), cannot log in over TCP without the generated password (nor read
//! the password file), sees none of pgrig's environment through the server, and cannot change
//! the cached template that later clusters are copied from.
//!
//! The attacker is a throwaway account made with `useradd` (tests run as root); without root the
//! account tests print "skipped: reason".

mod support;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use pgrig_lab::{Server, ServerOptions};
use support::{output, skipped, Attacker};

fn psql_as(attacker: &Attacker, server: &Server, conninfo: &str) -> (bool, String, String) {
    let mut cmd = attacker.command(server.binaries().psql().to_str().unwrap());
    cmd.args(["-X", "-w", "-At", "-c", "SELECT 1", "-d", conninfo]);
    output(cmd)
}

#[test]
fn another_account_cannot_reach_the_unix_socket() {
    let attacker = match Attacker::create("s") {
        Ok(a) => a,
        Err(why) => return skipped("another_account_cannot_reach_the_unix_socket", &why),
    };
    let server = Server::start(ServerOptions::default()).unwrap();
    assert_eq!(server.psql("postgres", "SELECT 1").unwrap(), "1", "owner");
    let (ok, _, err) = psql_as(&attacker, &server, &server.conninfo("postgres"));
    assert!(!ok, "the attacker connected over the socket");
    assert!(err.contains("Permission denied"), "{err}");
}

#[test]
fn default_server_does_not_listen_on_tcp() {
    let server = Server::start(ServerOptions::default()).unwrap();
    let refused = std::net::TcpStream::connect(("127.0.0.1", server.port()));
    assert!(refused.is_err(), "something listens on {}", server.port());
    assert_eq!(
        server.psql("postgres", "SHOW listen_addresses").unwrap(),
        ""
    );
}

#[test]
fn another_account_cannot_log_in_over_tcp_without_the_password() {
    let attacker = match Attacker::create("t") {
        Ok(a) => a,
        Err(why) => {
            return skipped(
                "another_account_cannot_log_in_over_tcp_without_the_password",
                &why,
            )
        }
    };
    let server = Server::start(ServerOptions::default().tcp(true)).unwrap();
    let plain = format!(
        "host=127.0.0.1 port={} user=postgres dbname=postgres",
        server.port()
    );
    let (ok, _, err) = psql_as(&attacker, &server, &plain);
    assert!(!ok && err.contains("no password supplied"), "{err}");
    let (ok, _, err) = psql_as(&attacker, &server, &format!("{plain} password=postgres"));
    assert!(
        !ok && err.contains("password authentication failed"),
        "{err}"
    );
    // Nor can it read the password file, nor use it.
    let passfile = server.passfile().expect("a password file with TCP");
    let mut cat = attacker.command("cat");
    cat.arg(passfile);
    let (ok, out, _) = output(cat);
    assert!(!ok && out.is_empty(), "the attacker read the password file");
    let (ok, _, err) = psql_as(&attacker, &server, &server.tcp_conninfo("postgres"));
    assert!(!ok, "the attacker logged in with the password file: {err}");
    // The owner gets in with the password file.
    let mut own = Command::new(server.binaries().psql());
    own.args(["-X", "-w", "-At", "-c", "SELECT 1", "-d"])
        .arg(server.tcp_conninfo("postgres"));
    let (ok, out, err) = output(own);
    assert!(ok && out.trim() == "1", "{err}");
}

#[test]
fn generated_password_is_scram_private_and_never_in_connection_strings() {
    use std::os::unix::fs::MetadataExt;
    let server = Server::start(ServerOptions::default().tcp(true)).unwrap();
    let passfile = server.passfile().unwrap();
    let meta = std::fs::metadata(passfile).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o600);
    assert_eq!(meta.uid(), nix::unistd::Uid::effective().as_raw());
    let text = std::fs::read_to_string(passfile).unwrap();
    let password = text.lines().next().unwrap().rsplit(':').next().unwrap();
    assert!(password.len() >= 32, "a weak password");
    let shown = [
        server.conninfo("postgres"),
        server.tcp_conninfo("postgres"),
        server.url("postgres"),
        server.tcp_url("postgres"),
        format!("{:?}", server.env("postgres")),
        format!("{server:?}"),
        serde_json::to_string(&server.info()).unwrap(),
    ];
    for s in shown {
        assert!(!s.contains(password), "password shown in {s}");
    }
    assert_eq!(server.password(), None);
    let stored = server
        .psql(
            "postgres",
            "SELECT left(rolpassword, 14) FROM pg_authid WHERE rolname = 'postgres'",
        )
        .unwrap();
    assert_eq!(stored, "SCRAM-SHA-256$");
}

const SECRET_HELPER: &str = "PGRIG_LAB_SECRET_HELPER";

/// Not a test by itself: the process `secrets_in_pgrigs_environment_do_not_reach_the_server`
/// starts with secrets in its environment; prints the server's environment.
#[test]
#[ignore = "a helper process of secrets_in_pgrigs_environment_do_not_reach_the_server"]
fn secret_env_helper() {
    if std::env::var_os(SECRET_HELPER).is_none() {
        return;
    }
    let server = Server::start(ServerOptions::default()).unwrap();
    let env = server
        .psql(
            "postgres",
            "CREATE TEMP TABLE e (line text); COPY e FROM PROGRAM 'env'; \
             SELECT 'ENV ' || line FROM e",
        )
        .unwrap();
    println!("\n{env}");
}

#[test]
fn secrets_in_pgrigs_environment_do_not_reach_the_server() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["secret_env_helper", "--exact", "--ignored", "--nocapture"])
        .env(SECRET_HELPER, "1")
        .env("PGRIG_TEST_SECRET", "hunter2-not-for-the-server")
        .env("PGPASSWORD", "pgpassword-not-for-the-server")
        .env("AWS_SECRET_ACCESS_KEY", "cloud-key-not-for-the-server")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let env: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("ENV "))
        .collect();
    assert!(
        env.iter().any(|l| l.starts_with("PATH=")),
        "no environment seen: {stdout}"
    );
    for line in &env {
        assert!(!line.contains("not-for-the-server"), "leaked: {line}");
        assert!(
            !line.starts_with("PGRIG_") && !line.starts_with("PGPASS"),
            "leaked: {line}"
        );
    }
}

/// The one cached template under a private base directory.
fn template_data(base: &Path) -> PathBuf {
    let cache = base.join(format!("pgrig-templates-{}", nix::unistd::Uid::effective()));
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("pg"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.pop().unwrap().join("data")
}

fn private_base(tag: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let base = Path::new("/tmp").join(format!("pgrig-sec-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    base
}

#[test]
fn template_tampering_does_not_reach_a_later_cluster() {
    let base = private_base("template");
    let opts = || ServerOptions {
        base_dir: Some(base.clone()),
        ..ServerOptions::default()
    };
    let first = Server::start(opts()).unwrap();
    let auto_conf = template_data(&base).join("postgresql.auto.conf");
    // From inside the server, as its account: the template is out of reach.
    let tried = first.psql(
        "postgres",
        &format!(
            "COPY (SELECT 'work_mem = ''77MB''') TO PROGRAM 'cat >> {}'",
            auto_conf.display()
        ),
    );
    let own_account = !nix::unistd::Uid::effective().is_root();
    assert!(
        own_account || tried.is_err(),
        "the server's account wrote into the template"
    );
    drop(first);
    // A template changed anyway (owner or modes no longer pgrig's only) is not used.
    std::fs::write(&auto_conf, "work_mem = '77MB'\n").unwrap();
    tamper_visibly(&auto_conf);
    let later = Server::start(opts()).unwrap();
    assert_eq!(later.psql("postgres", "SHOW work_mem").unwrap(), "4MB");
    drop(later);
    std::fs::remove_dir_all(&base).unwrap();
}

/// A template whose contents changed after it was built, with owner and modes intact (as a
/// process holding a descriptor opened while the server's account owned the file could do), is
/// not handed on: the copy's digest differs from the one recorded at build time, so the template
/// is built again and the later cluster has initdb's settings.
#[test]
fn template_changed_with_owner_and_modes_intact_is_built_again() {
    let base = private_base("template_digest");
    let opts = || ServerOptions {
        base_dir: Some(base.clone()),
        ..ServerOptions::default()
    };
    drop(Server::start(opts()).unwrap());
    let auto_conf = template_data(&base).join("postgresql.auto.conf");
    let before = std::fs::metadata(&auto_conf).unwrap();
    let mut text = std::fs::read_to_string(&auto_conf).unwrap();
    text.push_str("cluster_name = 'poisoned_by_nobody'\n");
    std::fs::write(&auto_conf, text).unwrap();
    let after = std::fs::metadata(&auto_conf).unwrap();
    assert_eq!(
        (before.uid(), before.mode()),
        (after.uid(), after.mode()),
        "owner and mode unchanged"
    );
    let later = Server::start(opts()).unwrap();
    assert_eq!(later.psql("postgres", "SHOW cluster_name").unwrap(), "");
    drop(later);
    let rebuilt = std::fs::read_to_string(template_data(&base).join("postgresql.auto.conf"));
    assert!(
        !rebuilt.unwrap().contains("poisoned"),
        "the template was built again"
    );
    std::fs::remove_dir_all(&base).unwrap();
}

/// What an attacker's write leaves behind: the file is the server account's (as root) or
/// writable by others (otherwise the account is our own and only the modes can tell).
fn tamper_visibly(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if nix::unistd::Uid::effective().is_root() {
        let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
        std::os::unix::fs::lchown(path, Some(nobody.uid.as_raw()), None).unwrap();
    } else {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
}

/// As root, without `PGRIG_SERVER_USER`: the server runs as the account pgrig creates for it
/// (`pgrig-server`: a system account with no login shell), never `nobody`, so a process running
/// as `nobody` (any daemon that does) cannot connect through the `trust` socket; it could when
/// the server ran as `nobody`. Skipped when not root or when `PGRIG_SERVER_USER` is set.
#[test]
fn as_root_the_server_runs_as_its_own_account_which_nobody_cannot_reach() {
    const NAME: &str = "as_root_the_server_runs_as_its_own_account_which_nobody_cannot_reach";
    if !nix::unistd::Uid::effective().is_root() {
        return skipped(NAME, "not root: the server runs as pgrig's own account");
    }
    if std::env::var_os("PGRIG_SERVER_USER").is_some() {
        return skipped(NAME, "PGRIG_SERVER_USER chooses the account here");
    }
    let server = Server::start(ServerOptions::default()).unwrap();
    assert_eq!(server.os_user(), pgrig_lab::SERVER_ACCOUNT);
    let account = nix::unistd::User::from_name(pgrig_lab::SERVER_ACCOUNT)
        .unwrap()
        .expect("the account exists");
    let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
    assert_ne!(account.uid, nobody.uid);
    assert!(account.shell.ends_with("nologin"), "{:?}", account.shell);
    let pid = server.postmaster_pid().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert!(
        uid_line.contains(&format!("\t{}\t", account.uid.as_raw())),
        "the postmaster runs as {uid_line}"
    );
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(server.binaries().psql())
        .args(["-X", "-w", "-At", "-c", "SELECT 1", "-d"])
        .arg(server.conninfo("postgres"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    let (ok, _, err) = output(cmd);
    assert!(!ok, "a process running as nobody connected");
    assert!(err.contains("Permission denied"), "{err}");
}
