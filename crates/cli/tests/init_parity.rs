//! `pgrig init` / `pgrig bench -i` against pgbench 15's `-i`: for each option combination one
//! database is initialised by pgbench and others by pgrig (its faster default and
//! `--load-jobs 1`), then the catalog definitions (columns, types, defaults, not null,
//! constraints, indexes, reloptions, persistence, partition keys and bounds, tablespaces), the
//! rows (md5 of every table's rows in key order), the visibility map summary (all-visible and
//! all-frozen pages, so FREEZE and vacuum effects show) and the shape of stderr (numbers
//! masked) must be the same. Bad options must give pgbench's messages and exit status.
//! `--unlogged-tables` with partitions follows pgbench 18, not 15: see [`oracle`].

use crate::common;

use std::process::Command;

use common::without_numbers;
use pgrig_testkit::{run, CmdOutput, TestDb};

fn pgrig(db: &TestDb, args: &[&str]) -> CmdOutput {
    let mut c = db.command(env!("CARGO_BIN_EXE_pgrig"));
    c.args(args);
    run(c)
}

fn pgbench(db: &TestDb, args: &[&str]) -> CmdOutput {
    let mut c: Command = db.pgbench();
    c.args(args);
    run(c)
}

/// Everything that defines the pgbench relations, one line per fact, sorted.
const CATALOG_SQL: &str = r#"
with rels as (
  select c.oid, c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'public' and c.relname like 'pgbench%'
)
select line from (
  select 'rel ' || c.relname || ' kind=' || c.relkind::text || ' persistence=' || c.relpersistence::text
    || ' options=' || coalesce(array_to_string(c.reloptions, ','), '-')
    || ' tablespace=' || coalesce((select spcname from pg_tablespace t where t.oid = c.reltablespace), '-')
    || ' partition=' || c.relispartition
    || ' bound=' || coalesce(pg_get_expr(c.relpartbound, c.oid), '-')
    || ' key=' || coalesce(case when c.relkind = 'p' then pg_get_partkeydef(c.oid) end, '-')
    || ' parent=' || coalesce((select i.inhparent::regclass::text from pg_inherits i where i.inhrelid = c.oid), '-') as line
  from pg_class c join rels r on r.oid = c.oid
  union all
  select 'col ' || r.relname || '.' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
    || ' notnull=' || a.attnotnull || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-')
    || ' dropped=' || a.attisdropped
  from rels r join pg_attribute a on a.attrelid = r.oid and a.attnum > 0
  left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
  union all
  select 'con ' || conrelid::regclass || ' ' || conname || ' ' || contype::text || ' ' || pg_get_constraintdef(k.oid)
    || ' local=' || conislocal || ' inh=' || coninhcount || ' parent=' || (conparentid <> 0)
    || ' deferrable=' || condeferrable || ' validated=' || convalidated
  from pg_constraint k join rels r on r.oid = k.conrelid
  union all
  select 'idx ' || pg_get_indexdef(x.indexrelid) || ' primary=' || x.indisprimary || ' unique=' || x.indisunique
    || ' valid=' || x.indisvalid || ' ready=' || x.indisready
    || ' tablespace=' || coalesce((select spcname from pg_tablespace t where t.oid = ic.reltablespace), '-')
    || ' persistence=' || ic.relpersistence::text
    || ' parent=' || coalesce((select i.inhparent::regclass::text from pg_inherits i where i.inhrelid = x.indexrelid), '-')
  from pg_index x join rels r on r.oid = x.indrelid join pg_class ic on ic.oid = x.indexrelid
) facts order by line
"#;

/// md5 of every table's rows in key order (and the row count).
const ROWS_SQL: &str = r#"
select 'branches ' || count(*) || ' ' || coalesce(md5(string_agg(t::text, E'\n' order by bid)), '-') from pgbench_branches t
union all select 'tellers ' || count(*) || ' ' || coalesce(md5(string_agg(t::text, E'\n' order by tid)), '-') from pgbench_tellers t
union all select 'accounts ' || count(*) || ' ' || coalesce(md5(string_agg(t::text, E'\n' order by aid)), '-') from pgbench_accounts t
union all select 'history ' || count(*) from pgbench_history t
"#;

/// Whether all, none or some of the pages holding rows of each table with storage are
/// all-visible / all-frozen. (Page counts themselves may differ by a page per loading
/// connection: several writers each leave their last page partly filled; and since
/// PostgreSQL 16 a COPY extends a table by several pages at once, so a load can leave empty
/// pages at the end that VACUUM neither marks nor always truncates.)
const VISIBILITY_SQL: &str = r#"
select c.relname || ' ' || vis(c.oid)
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and c.relname like 'pgbench%' and c.relkind = 'r'
order by c.relname
"#;

/// The helpers [`VISIBILITY_SQL`] uses: `s` says `all`, `none` or `some` of `pages`; `vis`
/// counts the table's pages that hold rows and how many of them are all-visible/all-frozen.
const VISIBILITY_FN: &str = r#"
create or replace function s(n bigint, pages bigint) returns text language sql immutable as $$
  select case when n = pages then 'all' when n = 0 then 'none' else 'some' end $$;
create or replace function vis(rel regclass) returns text language plpgsql as $$
declare used bigint; visible bigint; frozen bigint;
begin
  execute format('select count(*), count(*) filter (where m.all_visible), count(*) filter (where m.all_frozen)
      from pg_visibility_map(%s::oid::regclass) m
      where m.blkno in (select distinct ((ctid::text::point)[0])::bigint from only %s)', rel::oid, rel)
    into used, visible, frozen;
  return 'visible=' || s(visible, used) || ' frozen=' || s(frozen, used);
end $$;
"#;

fn catalog(db: &TestDb) -> String {
    db.psql(CATALOG_SQL)
}

fn tables_exist(db: &TestDb) -> bool {
    db.psql("select count(*) from pg_class where relname = 'pgbench_accounts'") == "1"
}

/// stderr with numbers masked and the program name (`pgbench:`, `pgrig:`) normalised. The
/// progress lines name their table since PostgreSQL 16 (`... tuples (P%) of TABLE done`), the
/// wording pgrig follows; pgbench 15 omits ` of TABLE`.
fn shape(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .map(|l| {
            let l = without_numbers(l).replace("(N%) of pgbench_accounts done", "(N%) done");
            for p in ["pgbench: ", "pgrig: "] {
                if let Some(rest) = l.strip_prefix(p) {
                    return format!("PROG: {rest}");
                }
            }
            l
        })
        .collect()
}

struct Outcome {
    out: CmdOutput,
    catalog: String,
    rows: String,
    visibility: String,
}

fn outcome(db: &TestDb, out: CmdOutput) -> Outcome {
    let (rows, visibility) = if out.success() && tables_exist(db) {
        (db.psql(ROWS_SQL), db.psql(VISIBILITY_SQL))
    } else {
        (String::new(), String::new())
    };
    Outcome {
        catalog: catalog(db),
        rows,
        visibility,
        out,
    }
}

/// This binary's cluster: autovacuum off, because an automatic ANALYZE that starts while a
/// load is still committing holds back VACUUM's horizon, so visibility (compared below) would
/// depend on the daemon's timing rather than on the tool.
fn quiet_cluster() -> &'static pgrig_testkit::Server {
    static SERVER: std::sync::OnceLock<pgrig_testkit::Server> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        pgrig_testkit::custom_cluster(
            pgrig_testkit::ServerOptions::default().setting("autovacuum", "off"),
        )
    })
}

/// A fresh database on this binary's cluster.
fn fresh_db(hint: &str) -> TestDb {
    pgrig_testkit::fresh_db_on(quiet_cluster(), hint)
}

fn prepared_db(hint: &str) -> TestDb {
    let db = pgrig_testkit::fresh_db_on(quiet_cluster(), hint);
    db.psql("create extension if not exists pg_visibility");
    db.psql(VISIBILITY_FN);
    db
}

/// True when pgrig follows pgbench 18 rather than pgbench 15 for `args`: `--unlogged-tables` with
/// partitions makes only the partitions unlogged (pgbench 15 also the four tables and their
/// indexes, which PostgreSQL 18 refuses for the partitioned parent).
fn pgbench18_persistence(args: &[&str]) -> bool {
    args.contains(&"--unlogged-tables") && args.iter().any(|a| a.starts_with("--partitions"))
}

/// What pgbench does with `args`. For [`pgbench18_persistence`] pgbench runs without
/// `--unlogged-tables`, and its catalog is adjusted to pgbench 18's rule: the partitions and
/// their indexes unlogged, everything else logged.
fn oracle(args: &[&str]) -> Outcome {
    let base = prepared_db("oracle");
    if !pgbench18_persistence(args) {
        return outcome(&base, pgbench(&base, &[&["-i"][..], args].concat()));
    }
    let logged: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| *a != "--unlogged-tables")
        .collect();
    let mut want = outcome(&base, pgbench(&base, &[&["-i"][..], &logged].concat()));
    want.catalog = want
        .catalog
        .lines()
        .map(|l| {
            let partition = l.starts_with("rel ") && l.contains(" partition=true ");
            let partition_index = l.starts_with("idx ") && !l.ends_with(" parent=-");
            if partition || partition_index {
                l.replace("persistence=p", "persistence=u")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    want
}

/// Initialises with pgbench and with pgrig (`pgrig init`, default and `--load-jobs 1`, and
/// `pgrig bench -i`), and compares everything.
fn check(args: &[&str]) {
    let want = oracle(args);
    assert_eq!(
        want.out.code,
        Some(0),
        "pgbench failed: {}",
        want.out.stderr
    );
    let variants: [(&str, Vec<&str>); 3] = [
        ("init", [&["init"][..], args].concat()),
        (
            "init_exact",
            [&["init", "--load-jobs", "1"][..], args].concat(),
        ),
        ("bench_i", [&["bench", "-i"][..], args].concat()),
    ];
    for (hint, argv) in variants {
        let what = format!("pgrig {}", argv.join(" "));
        // Visibility after VACUUM depends on every other session's snapshot at that moment
        // (other tests load the cluster too), for pgbench's run as for pgrig's: a difference
        // must persist over three fresh attempts of both to count, everything else must match
        // on each.
        let mut got = None;
        let mut want_visibility = want.visibility.clone();
        for _attempt in 0..3 {
            let db = prepared_db(hint);
            let o = outcome(&db, pgrig(&db, &argv));
            let mut settled = o.visibility == want_visibility;
            if !settled {
                // pgbench's reference may be the disturbed one: load it again too
                let again = oracle(args);
                settled = again.visibility == o.visibility;
                want_visibility = again.visibility;
            }
            got = Some(o);
            if settled {
                break;
            }
            eprintln!("{what}: visibility differs, retrying both on fresh databases");
        }
        let got = got.expect("at least one attempt");
        assert_eq!(got.out.code, Some(0), "{what} failed: {}", got.out.stderr);
        assert_eq!(got.catalog, want.catalog, "{what}: catalog differs");
        assert_eq!(got.rows, want.rows, "{what}: rows differ");
        assert_eq!(
            got.visibility, want_visibility,
            "{what}: visibility differs"
        );
        assert_eq!(
            shape(&got.out.stderr),
            shape(&want.out.stderr),
            "{what}: stderr differs"
        );
        assert_eq!(got.out.stdout, want.out.stdout, "{what}: stdout differs");
    }
}

#[test]
fn default_steps() {
    check(&["-s", "2"]);
}

#[test]
fn all_steps_with_foreign_keys_step() {
    check(&["-I", "dtgvpf", "-s", "1"]);
}

#[test]
fn foreign_keys_option_and_fillfactor() {
    check(&["--foreign-keys", "-F", "80", "-s", "1"]);
}

#[test]
fn server_side_generation_and_repeated_steps() {
    check(&["-I", "dtGvvp", "-s", "2"]);
}

#[test]
fn keys_before_data_and_both_generators() {
    check(&["-I", "d t p g G v", "-s", "2"]);
}

#[test]
fn no_vacuum_quiet() {
    check(&["-n", "-q", "-s", "2"]);
}

#[test]
fn unlogged_tables() {
    check(&["--unlogged-tables", "-s", "1"]);
}

#[test]
fn range_partitions() {
    check(&["--partitions=3", "-s", "2", "--foreign-keys"]);
}

#[test]
fn hash_partitions() {
    check(&["--partitions", "3", "--partition-method=HASH", "-s", "2"]);
}

#[test]
fn partitions_server_side_unlogged() {
    check(&[
        "--partitions=2",
        "-I",
        "dtGvp",
        "--unlogged-tables",
        "-s",
        "2",
    ]);
}

/// A tablespace in a directory the (unprivileged) server account owns.
fn tablespace(db: &TestDb, name: &str) -> String {
    let server = db.server();
    let dir = server.root_dir().join(format!("ts_{name}"));
    std::fs::create_dir_all(&dir).expect("create tablespace directory");
    let st = std::process::Command::new("chown")
        .arg(server.os_user())
        .arg(&dir)
        .status()
        .expect("chown");
    assert!(st.success());
    db.psql(&format!(
        "create tablespace {name} location '{}'",
        dir.display()
    ));
    name.to_string()
}

#[test]
fn tablespaces() {
    let db = fresh_db("ts");
    let pid = std::process::id();
    let ts = tablespace(&db, &format!("ts_tables_{pid}"));
    let its = tablespace(&db, &format!("ts_index_{pid}"));
    let t = format!("--tablespace={ts}");
    let i = format!("--index-tablespace={its}");
    check(&[t.as_str(), i.as_str(), "-s", "1"]);
    check(&[t.as_str(), i.as_str(), "--partitions=2", "-s", "2"]);
}

/// The `-i` option combinations of PostgreSQL's pgbench TAP suites (15.18 and 18.6) that touch
/// persistence, partitions and constraints, against pgbench 15 (with pgbench 18's persistence
/// rule, see [`oracle`]).
#[test]
fn tap_suite_init_combinations_match_pgbench() {
    check(&[
        "--init-steps=dtpvGvv",
        "--no-vacuum",
        "--foreign-keys",
        "--unlogged-tables",
        "--partitions=3",
    ]);
    let db = fresh_db("ts_tap");
    let ts = tablespace(&db, &format!("ts_tap_{}", std::process::id()));
    let t = format!("--tablespace={ts}");
    let i = format!("--index-tablespace={ts}");
    check(&[
        "--init-steps=dtpvg",
        "--scale=1",
        "--unlogged-tables",
        "--fillfactor=98",
        "--foreign-keys",
        "--quiet",
        t.as_str(),
        i.as_str(),
        "--partitions=2",
        "--partition-method=hash",
    ]);
}

/// `--unlogged-tables` read back from `pg_class` on this server: pgbench 18.6's rule whatever
/// the server version (partitioned: the four tables logged, only the partitions unlogged;
/// unpartitioned: all four unlogged), and `--foreign-keys` works with it.
#[test]
fn unlogged_tables_persistence_is_pgbench18s_on_every_server() {
    const PERSISTENCE: &str =
        "select string_agg(relname || '=' || relpersistence::text, ' ' order by relname) \
        from pg_class where relname like 'pgbench%' and relkind in ('r', 'p')";
    let db = fresh_db("persist_part");
    let out = pgrig(
        &db,
        &[
            "init",
            "-q",
            "--unlogged-tables",
            "--partitions=3",
            "--foreign-keys",
            "-s",
            "1",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        db.psql(PERSISTENCE),
        "pgbench_accounts=p pgbench_accounts_1=u pgbench_accounts_2=u pgbench_accounts_3=u \
         pgbench_branches=p pgbench_history=p pgbench_tellers=p"
    );
    let db = fresh_db("persist_plain");
    let out = pgrig(
        &db,
        &[
            "init",
            "-q",
            "--unlogged-tables",
            "--foreign-keys",
            "-s",
            "1",
        ],
    );
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        db.psql(PERSISTENCE),
        "pgbench_accounts=u pgbench_branches=u pgbench_history=u pgbench_tellers=u"
    );
}

#[test]
fn bigint_keys_from_scale_20000_ddl_only() {
    check(&["-I", "dt", "-s", "20000"]);
    let db = fresh_db("bigint");
    let out = pgrig(&db, &["init", "-I", "dt", "-s", "20000", "--partitions=4"]);
    assert!(out.success(), "{}", out.stderr);
    assert_eq!(
        db.psql("select format_type(atttypid, atttypmod) from pg_attribute where attrelid = 'pgbench_accounts_4'::regclass and attname = 'aid'"),
        "bigint"
    );
    assert_eq!(
        db.psql("select pg_get_expr(relpartbound, oid) from pg_class where relname = 'pgbench_accounts_2'"),
        "FOR VALUES FROM ('500000001') TO ('1000000001')"
    );
}

/// Option errors: pgbench's messages (program name aside) and exit status, nothing on stdout.
#[test]
fn bad_options_match_pgbench() {
    let db = fresh_db("badopts");
    let cases: &[&[&str]] = &[
        &["-I", "dtx"],
        &["-I", ""],
        &["-F", "5"],
        &["-F", "abc"],
        &["-s", "0"],
        &["--partitions=-1"],
        &["--partitions=2", "--partition-method=list"],
        &["--partition-method=hash"],
        &["-c", "4"],
        &["-T", "5"],
        &["--tablespace=no_such_tablespace", "-s", "1"],
        &["--index-tablespace=no_such_tablespace", "-I", "dtp"],
    ];
    for args in cases {
        let oracle = fresh_db("badopts_pgbench");
        let want = pgbench(&oracle, &[&["-i"][..], args].concat());
        for argv in [
            [&["init"][..], args].concat(),
            [&["bench", "-i"][..], args].concat(),
        ] {
            let db = fresh_db("badopts_pgrig");
            let got = pgrig(&db, &argv);
            let what = format!("pgrig {}", argv.join(" "));
            assert_eq!(got.code, want.code, "{what}: {}", got.stderr);
            assert_eq!(got.stdout, "", "{what}");
            let norm = |s: &str| -> Vec<String> {
                shape(s)
                    .into_iter()
                    .map(|l| {
                        l.replace("\"pgbench --help\"", "\"PROG --help\"")
                            .replace("\"pgrig init --help\"", "\"PROG --help\"")
                            .replace("\"pgrig bench --help\"", "\"PROG --help\"")
                    })
                    .collect()
            };
            assert_eq!(norm(&got.stderr), norm(&want.stderr), "{what}");
        }
    }
    // Init-only options without -i: pgbench's benchmarking-mode complaint.
    let want = pgbench(&db, &["-I", "dtg"]);
    let got = pgrig(&db, &["bench", "-I", "dtg"]);
    assert_eq!(got.code, want.code);
    assert_eq!(shape(&got.stderr), shape(&want.stderr));
}

#[test]
fn load_jobs_option_is_validated() {
    let db = fresh_db("loadjobs");
    let out = pgrig(&db, &["init", "--load-jobs=0"]);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "pgrig: error: --load-jobs must be in range 1..256\npgrig: hint: Try \"pgrig init --help\" for more information.\n"
    );
    let out = pgrig(&db, &["init", "--help"]);
    assert_eq!(out.code, Some(0));
    assert!(out.stdout.contains("--load-jobs=NUM"), "{}", out.stdout);
}

/// On a terminal (a pseudo-terminal from `script`): bars with rows, rate and ETA, and the
/// per-step summary after pgbench's `done in` line.
#[test]
fn terminal_shows_bars_and_summary() {
    if Command::new("script").arg("--version").output().is_err() {
        pgrig_testkit::skip("script(1) is not installed (Debian: bsdutils; ./test installs it)");
        return;
    }
    let db = fresh_db("tty");
    let cmd = format!("{} init -s 2 --partitions 2", env!("CARGO_BIN_EXE_pgrig"));
    let mut c = db.command("script");
    c.args(["-qec", &cmd, "/dev/null"]);
    let out = run(c);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let text = out.stdout;
    assert!(text.contains("pgbench_accounts ["), "{text}");
    assert!(
        text.contains("200,000/200,000 rows") || text.contains("200000/200000 rows"),
        "{text}"
    );
    assert!(text.contains("ETA"), "{text}");
    assert!(text.contains("done in "), "{text}");
    assert!(
        text.contains("client-side generate") && text.contains("total"),
        "{text}"
    );
    assert!(
        !text.contains("of pgbench_accounts done"),
        "no pgbench lines on a terminal: {text}"
    );
}
