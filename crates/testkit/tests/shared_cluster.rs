//! The shared cluster and per-test databases, as other crates' tests use them.

use pgrig_testkit::{cluster, fresh_db, run};

#[test]
fn every_test_gets_the_same_cluster() {
    let a = cluster() as *const _;
    let b = cluster() as *const _;
    assert_eq!(a, b);
    assert!(cluster().is_running());
}

#[test]
fn tables_in_one_test_database_are_invisible_in_another() {
    let one = fresh_db("isolation one");
    let two = fresh_db("isolation two");
    assert_ne!(one.name, two.name);
    one.psql("CREATE TABLE only_here (x int); INSERT INTO only_here VALUES (7)");
    assert_eq!(one.psql("SELECT x FROM only_here"), "7");
    let err = two
        .try_psql("SELECT x FROM only_here")
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn dropping_a_test_database_removes_it() {
    let db = fresh_db("dropped");
    let name = db.name.clone();
    drop(db);
    let count = cluster()
        .psql(
            "postgres",
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
        )
        .unwrap();
    assert_eq!(count, "0");
}

#[test]
fn dropping_a_database_with_open_sessions_still_removes_it() {
    let db = fresh_db("busy");
    let name = db.name.clone();
    let mut psql = db.command(cluster().binaries().psql());
    psql.args(["-X", "-c", "SELECT pg_sleep(30)"]);
    let mut child = psql
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the session is connected.
    for _ in 0..200 {
        let n = cluster()
            .psql(
                "postgres",
                &format!("SELECT count(*) FROM pg_stat_activity WHERE datname = '{name}'"),
            )
            .unwrap();
        if n != "0" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(db);
    let _ = child.wait();
    let count = cluster()
        .psql(
            "postgres",
            &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
        )
        .unwrap();
    assert_eq!(count, "0");
}

#[test]
fn commands_get_the_test_database_environment() {
    let db = fresh_db("env");
    let mut cmd = db.command("sh");
    cmd.args(["-c", "echo $PGDATABASE $PGPORT"]);
    let out = run(cmd);
    assert!(out.success());
    assert_eq!(
        out.stdout.trim(),
        format!("{} {}", db.name, cluster().port())
    );
}

#[test]
fn installed_pgbench_runs_against_a_test_database() {
    let db = fresh_db("pgbench");
    let mut init = db.pgbench();
    init.args(["-i", "-s", "1", "-q"]);
    let out = run(init);
    assert!(out.success(), "{}", out.stderr);
    let mut bench = db.pgbench();
    bench.args(["-t", "10", "-c", "2", "-n"]);
    let out = run(bench);
    assert!(out.success(), "{}", out.stderr);
    assert!(
        out.stdout
            .contains("number of transactions actually processed: 20/20"),
        "{}",
        out.stdout
    );
}

#[test]
fn conninfo_names_socket_port_user_and_database() {
    let db = fresh_db("conninfo");
    let ci = db.conninfo();
    assert!(ci.contains(&format!("port={}", cluster().port())), "{ci}");
    assert!(ci.contains(&format!("dbname={}", db.name)), "{ci}");
    assert!(ci.contains("user=postgres"), "{ci}");
    let mut cmd = db.command(cluster().binaries().psql());
    cmd.args(["-X", "-At", "-d", &ci, "-c", "SELECT current_database()"]);
    let out = run(cmd);
    assert_eq!(out.stdout.trim(), db.name, "{}", out.stderr);
}
