//! Tests of parameter precedence and defaults (arguments, conninfo, URI, environment).

use std::path::PathBuf;
use std::time::Duration;

use super::*;

fn env() -> MapEnv {
    MapEnv::new("osuser", "/home/osuser")
}

fn args(host: Option<&str>, port: Option<&str>, user: Option<&str>, db: Option<&str>) -> ConnArgs {
    ConnArgs {
        host: host.map(Into::into),
        port: port.map(Into::into),
        user: user.map(Into::into),
        dbname: db.map(Into::into),
    }
}

fn unix(dir: &str, port: u16) -> Target {
    Target {
        host: Host::Unix(PathBuf::from(dir)),
        hostaddr: None,
        port,
    }
}

fn tcp(h: &str, port: u16) -> Target {
    Target {
        host: Host::Tcp(h.into()),
        hostaddr: None,
        port,
    }
}

#[test]
fn defaults_follow_debian_libpq() {
    let c = Config::from_args_in(&ConnArgs::default(), "", &env()).unwrap();
    assert_eq!(c.targets, vec![unix("/var/run/postgresql", 5432)]);
    assert_eq!(c.user, "osuser");
    assert_eq!(c.dbname, "osuser");
    assert_eq!(c.password, None);
    assert_eq!(c.sslmode, SslMode::Prefer);
    assert_eq!(c.passfile, Some(PathBuf::from("/home/osuser/.pgpass")));
    assert_eq!(
        c.sslrootcert,
        Some(PathBuf::from("/home/osuser/.postgresql/root.crt"))
    );
    assert!(c.sslsni);
    assert_eq!(c.connect_timeout, None);
}

#[test]
fn dbname_defaults_to_user() {
    let c = Config::from_args_in(&args(None, None, Some("bob"), None), "", &env()).unwrap();
    assert_eq!(c.dbname, "bob");
}

#[test]
fn arguments_override_environment() {
    let e = env()
        .with("PGHOST", "envhost")
        .with("PGPORT", "6000")
        .with("PGUSER", "envuser");
    let c = Config::from_args_in(
        &args(Some("/tmp/s"), Some("7000"), None, Some("db")),
        "",
        &e,
    )
    .unwrap();
    assert_eq!(c.targets, vec![unix("/tmp/s", 7000)]);
    assert_eq!(c.user, "envuser");
    assert_eq!(c.dbname, "db");
}

#[test]
fn environment_fills_everything_libpq_reads() {
    let e = env()
        .with("PGHOST", "db.example")
        .with("PGPORT", "6543")
        .with("PGUSER", "u")
        .with("PGDATABASE", "d")
        .with("PGPASSWORD", "pw")
        .with("PGPASSFILE", "/etc/pgpass")
        .with("PGOPTIONS", "-c work_mem=64MB")
        .with("PGAPPNAME", "app")
        .with("PGSSLMODE", "verify-full")
        .with("PGSSLROOTCERT", "/ca.pem")
        .with("PGSSLCERT", "/c.pem")
        .with("PGSSLKEY", "/k.pem")
        .with("PGCONNECT_TIMEOUT", "10");
    let c = Config::from_args_in(&ConnArgs::default(), "", &e).unwrap();
    assert_eq!(c.targets, vec![tcp("db.example", 6543)]);
    assert_eq!((c.user.as_str(), c.dbname.as_str()), ("u", "d"));
    assert_eq!(c.password.as_ref().map(Password::expose), Some("pw"));
    assert_eq!(c.passfile, Some(PathBuf::from("/etc/pgpass")));
    assert_eq!(c.options.as_deref(), Some("-c work_mem=64MB"));
    assert_eq!(c.application_name.as_deref(), Some("app"));
    assert_eq!(c.sslmode, SslMode::VerifyFull);
    assert_eq!(c.sslrootcert, Some(PathBuf::from("/ca.pem")));
    assert_eq!(c.sslcert, Some(PathBuf::from("/c.pem")));
    assert_eq!(c.sslkey, Some(PathBuf::from("/k.pem")));
    assert_eq!(c.connect_timeout, Some(Duration::from_secs(10)));
}

#[test]
fn conninfo_dbname_overrides_earlier_arguments_but_only_where_set() {
    let a = args(
        Some("arghost"),
        Some("1111"),
        Some("arguser"),
        Some("host=cihost dbname='my db'"),
    );
    let c = Config::from_args_in(&a, "", &env()).unwrap();
    assert_eq!(c.targets, vec![tcp("cihost", 1111)]);
    assert_eq!(c.user, "arguser");
    assert_eq!(c.dbname, "my db");
}

#[test]
fn uri_dbname_with_credentials() {
    let a = args(
        None,
        None,
        None,
        Some("postgresql://bob:secret@h1:5433,h2/bench?sslmode=disable"),
    );
    let c = Config::from_args_in(&a, "", &env()).unwrap();
    assert_eq!(c.targets, vec![tcp("h1", 5433), tcp("h2", 5432)]);
    assert_eq!(c.user, "bob");
    assert_eq!(c.dbname, "bench");
    assert_eq!(c.password.as_ref().map(Password::expose), Some("secret"));
    assert_eq!(c.sslmode, SslMode::Disable);
}

#[test]
fn single_port_applies_to_all_hosts_and_mismatch_is_an_error() {
    let c = Config::parse_in("host=a,b,/tmp port=6000", &env()).unwrap();
    assert_eq!(
        c.targets,
        vec![tcp("a", 6000), tcp("b", 6000), unix("/tmp", 6000)]
    );
    let e = Config::parse_in("host=a,b,c port=1,2", &env()).unwrap_err();
    assert_eq!(e.to_string(), "could not match 2 port numbers to 3 hosts");
}

#[test]
fn hostaddr_alone_connects_over_tcp() {
    let c = Config::parse_in("hostaddr=127.0.0.1", &env()).unwrap();
    assert_eq!(c.targets[0].host, Host::Tcp(String::new()));
    assert_eq!(c.targets[0].hostaddr, Some("127.0.0.1".parse().unwrap()));
    assert_eq!(c.targets[0].host_str(), "127.0.0.1");
}

#[test]
fn invalid_values_are_reported_like_libpq() {
    let e = |s: &str| Config::parse_in(s, &env()).unwrap_err().to_string();
    assert_eq!(e("port=99999"), "invalid port number: \"99999\"");
    assert_eq!(e("port=abc"), "invalid port number: \"abc\"");
    assert_eq!(
        e("sslmode=sometimes"),
        "invalid sslmode value: \"sometimes\""
    );
    assert_eq!(
        e("connect_timeout=soon"),
        "invalid integer value \"soon\" for connection option \"connect_timeout\""
    );
    assert_eq!(e("bogus=1"), "invalid connection option \"bogus\"");
    assert!(e("channel_binding=require").contains("channel binding"));
}

#[test]
fn short_connect_timeout_is_raised_to_two_seconds_and_zero_means_none() {
    let c = Config::parse_in("connect_timeout=1", &env()).unwrap();
    assert_eq!(c.connect_timeout, Some(Duration::from_secs(2)));
    let c = Config::parse_in("connect_timeout=0", &env()).unwrap();
    assert_eq!(c.connect_timeout, None);
}

#[test]
fn fallback_application_name_from_caller() {
    let c = Config::from_args_in(&ConnArgs::default(), "pgbench", &env()).unwrap();
    assert_eq!(c.fallback_application_name.as_deref(), Some("pgbench"));
}

#[test]
fn application_name_beats_fallback() {
    let c = Config::parse_in("fallback_application_name=pgbench", &env()).unwrap();
    assert_eq!(c.application_name, None);
    assert_eq!(c.fallback_application_name.as_deref(), Some("pgbench"));
    let e = env().with("PGAPPNAME", "mine");
    let c = Config::parse_in("fallback_application_name=pgbench", &e).unwrap();
    assert_eq!(c.application_name.as_deref(), Some("mine"));
}

#[test]
fn empty_arguments_count_as_unset() {
    let e = env().with("PGHOST", "envhost");
    let c = Config::from_args_in(&args(Some(""), Some(""), Some(""), Some("")), "", &e).unwrap();
    assert_eq!(c.targets, vec![tcp("envhost", 5432)]);
    assert_eq!(c.user, "osuser");
}

#[test]
fn debug_output_never_contains_the_password() {
    let c = Config::parse_in("password=hunter2", &env()).unwrap();
    assert!(!format!("{c:?}").contains("hunter2"));
}

#[test]
fn socket_path_is_built_from_directory_and_port() {
    assert_eq!(
        unix("/tmp", 5433).socket_path(),
        Some(PathBuf::from("/tmp/.s.PGSQL.5433"))
    );
}

#[test]
fn malformed_urls_never_echo_their_password() {
    for bad in [
        "postgresql://bob:hunter2@[::1/db",
        "postgresql://bob:hunter2@h/db?password=hunter2=x",
        "postgresql://bob:hunter2%zz@h/db",
        "postgresql://bob@h/db?password=hunter2%zz",
        "postgresql://bob:hunter2@h/db?nosuch=1",
        "host=h password=hunter2 port=x",
    ] {
        let e = Config::parse_in(bad, &env()).unwrap_err().to_string();
        assert!(!e.contains("hunter2"), "{bad}: {e}");
    }
}
