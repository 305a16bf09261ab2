//! `prepare`: the tables pgrig loads are the tables the real sysbench 1.0.20 creates on another
//! database of the same cluster (columns, types, defaults, indexes, sequence, row counts, value
//! formats, k's range and skew); `prepare` over existing tables fails with sysbench's CREATE
//! TABLE error; `cleanup` drops the tables.

mod sysbench_common;

use pgrig_testkit::{fresh_db, TestDb};
use pgrig_workloads::{sysbench, Options};
use sysbench_common::{pgrig_load, run_sysbench};

fn opts(pairs: &[(&str, &str)]) -> Options {
    let mut o = Options::new();
    for (k, v) in pairs {
        o.set(k, *v);
    }
    o
}

/// Columns (name, type, not null, default), indexes, constraints and sequences of `sbtest*`.
fn shape(db: &TestDb) -> String {
    db.psql(
        "select string_agg(x, E'\\n' order by x) from (
           select format('col %s.%s %s notnull=%s default=%s', c.relname, a.attname,
                         format_type(a.atttypid, a.atttypmod), a.attnotnull,
                         pg_get_expr(d.adbin, d.adrelid))
             from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
             left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
            where c.relname like 'sbtest%' and c.relkind = 'r'
           union all
           select format('index %s', indexdef) from pg_indexes where tablename like 'sbtest%'
           union all
           select format('constraint %s %s', conname, pg_get_constraintdef(oid))
             from pg_constraint where conrelid::regclass::text like 'sbtest%'
           union all
           select format('sequence %s owned by %s', s.relname, pg_get_serial_sequence(t.relname, 'id'))
             from pg_class s join pg_depend dp on dp.objid = s.oid and dp.deptype = 'a'
             join pg_class t on t.oid = dp.refobjid where s.relkind = 'S'
         ) q(x)",
    )
}

/// Row count, id range, k range, and the rows whose values break sysbench's formats.
fn facts(db: &TestDb, table: &str) -> Vec<String> {
    db.psql(&format!(
        "select count(*), min(id), max(id), count(distinct id), min(k), max(k),
                count(*) filter (where c !~ '^([0-9]{{11}}-){{9}}[0-9]{{11}} $'),
                count(*) filter (where pad !~ '^([0-9]{{11}}-){{4}}[0-9]{{11}} $'),
                count(*) filter (where length(c::text) <> 119 or octet_length(c) <> 120)
           from {table}"
    ))
    .split('|')
    .map(str::to_string)
    .collect()
}

/// The share of rows whose k is in the middle 1% of 1..table_size (special: about 75%).
fn hot_share(db: &TestDb, table: &str, size: i64) -> f64 {
    let lo = size / 2 - size / 200;
    let hi = size / 2 + size / 200 + 1;
    db.psql(&format!(
        "select (count(*) filter (where k between {lo} and {hi}))::float8 / count(*) from {table}"
    ))
    .parse()
    .unwrap()
}

#[test]
fn prepared_tables_match_sysbench_prepare() {
    let ours = fresh_db("sb_prepare_pgrig");
    let theirs = fresh_db("sb_prepare_oracle");
    let o = opts(&[
        ("tables", "2"),
        ("table_size", "5000"),
        ("rand-seed", "7"),
        ("analyze", "on"),
    ]);
    let native = sysbench::build("oltp_read_write", &o).unwrap();
    let report = pgrig_load(&ours, &native.load, 2).unwrap();
    assert_eq!(report.rows, 10_000);
    run_sysbench(
        &theirs,
        &[
            "--tables=2",
            "--table-size=5000",
            "--threads=2",
            "oltp_read_write",
            "prepare",
        ],
    );
    assert_eq!(shape(&ours), shape(&theirs));
    assert!(shape(&ours).contains("index CREATE INDEX k_2 ON public.sbtest2 USING btree (k)"));
    for t in ["sbtest1", "sbtest2"] {
        let (a, b) = (facts(&ours, t), facts(&theirs, t));
        assert_eq!(a[..4], ["5000", "1", "5000", "5000"], "{t}: ids 1..5000");
        assert_eq!(a[..4], b[..4]);
        assert_eq!(
            a[6..],
            ["0", "0", "0"],
            "{t}: every c and pad in sysbench's format"
        );
        assert_eq!(b[6..], ["0", "0", "0"]);
        for f in [&a, &b] {
            let (min, max): (i64, i64) = (f[4].parse().unwrap(), f[5].parse().unwrap());
            assert!(
                1 <= min && max <= 5000,
                "{t}: k within 1..table_size: {f:?}"
            );
        }
        // the default --rand-type (special) puts about 75% of k in the middle 1%
        let (ha, hb) = (hot_share(&ours, t, 5000), hot_share(&theirs, t, 5000));
        assert!(
            (ha - hb).abs() < 0.05,
            "{t}: hot share {ha} vs sysbench {hb}"
        );
        let seq = format!("select last_value || ',' || is_called from {t}_id_seq");
        assert_eq!(
            ours.psql(&seq),
            theirs.psql(&seq),
            "{t}: the serial sequence"
        );
    }
    // analyze=on leaves statistics (by default pgrig leaves them to autovacuum, as sysbench)
    let analyzed = "select count(*) from pg_stats where tablename = 'sbtest1' and attname = 'k'";
    assert_eq!(ours.psql(analyzed), "1");
    // the next server-numbered row continues after the loaded ids, as after sysbench's INSERTs
    ours.psql("insert into sbtest1 (k, c, pad) values (1, '', '')");
    assert_eq!(ours.psql("select max(id) from sbtest1"), "5001");
}

#[test]
fn prepared_tables_without_auto_inc_or_secondary_index_match_sysbench() {
    let ours = fresh_db("sb_prepare_noinc_pgrig");
    let theirs = fresh_db("sb_prepare_noinc_oracle");
    let o = opts(&[
        ("table_size", "300"),
        ("auto_inc", "off"),
        ("create_secondary", "off"),
        ("rand-type", "uniform"),
    ]);
    pgrig_load(
        &ours,
        &sysbench::build("oltp_read_only", &o).unwrap().load,
        2,
    )
    .unwrap();
    run_sysbench(
        &theirs,
        &[
            "--table-size=300",
            "--auto_inc=off",
            "--create_secondary=off",
            "--rand-type=uniform",
            "oltp_read_only",
            "prepare",
        ],
    );
    assert_eq!(shape(&ours), shape(&theirs));
    assert!(!shape(&ours).contains("sequence"));
    let analyzed = "select count(*) from pg_stats where tablename = 'sbtest1'";
    assert_eq!(
        ours.psql(analyzed),
        theirs.psql(analyzed),
        "by default no statistics, as sysbench"
    );
    assert_eq!(facts(&ours, "sbtest1")[..4], facts(&theirs, "sbtest1")[..4]);
}

#[test]
fn oltp_insert_without_auto_inc_prepares_empty_tables_as_sysbench() {
    let ours = fresh_db("sb_prepare_insert_pgrig");
    let theirs = fresh_db("sb_prepare_insert_oracle");
    let o = opts(&[("table_size", "100"), ("auto_inc", "off")]);
    pgrig_load(&ours, &sysbench::build("oltp_insert", &o).unwrap().load, 2).unwrap();
    run_sysbench(
        &theirs,
        &[
            "--table-size=100",
            "--auto_inc=off",
            "oltp_insert",
            "prepare",
        ],
    );
    assert_eq!(shape(&ours), shape(&theirs));
    let count = "select count(*) from sbtest1";
    assert_eq!(ours.psql(count), "0");
    assert_eq!(theirs.psql(count), "0");
}

#[test]
fn bulk_insert_prepares_one_table_per_thread_as_sysbench() {
    let ours = fresh_db("sb_prepare_bulk_pgrig");
    let theirs = fresh_db("sb_prepare_bulk_oracle");
    let o = opts(&[("threads", "3")]);
    pgrig_load(&ours, &sysbench::build("bulk_insert", &o).unwrap().load, 2).unwrap();
    run_sysbench(&theirs, &["--threads=3", "bulk_insert", "prepare"]);
    assert_eq!(shape(&ours), shape(&theirs));
    assert!(shape(&ours).contains("sbtest3_pkey PRIMARY KEY (id)"));
}

#[test]
fn prepare_over_existing_tables_fails_with_sysbenchs_create_table_error() {
    let db = fresh_db("sb_prepare_twice");
    let o = opts(&[("table_size", "10")]);
    let native = sysbench::build("oltp_point_select", &o).unwrap();
    assert!(
        native.load.drop.is_empty(),
        "prepare must never drop tables"
    );
    pgrig_load(&db, &native.load, 2).unwrap();
    db.psql("update sbtest1 set k = -1 where id = 1");
    let err = pgrig_load(&db, &native.load, 2).unwrap_err();
    assert!(err.contains("relation \"sbtest1\" already exists"), "{err}");
    assert!(
        err.contains("CREATE TABLE sbtest1(\n  id SERIAL,"),
        "names sysbench's statement: {err}"
    );
    assert_eq!(
        db.psql("select k from sbtest1 where id = 1"),
        "-1",
        "the data is untouched"
    );
}

#[test]
fn cleanup_drops_every_table() {
    let db = fresh_db("sb_cleanup");
    let o = opts(&[("tables", "3"), ("table_size", "10")]);
    let native = sysbench::build("oltp_read_write", &o).unwrap();
    pgrig_load(&db, &native.load, 2).unwrap();
    assert_eq!(
        db.psql("select count(*) from pg_tables where tablename like 'sbtest%'"),
        "3"
    );
    assert_eq!(native.cleanup[2], "DROP TABLE IF EXISTS sbtest3");
    db.psql(&native.cleanup.join(";\n"));
    assert_eq!(
        db.psql("select count(*) from pg_tables where tablename like 'sbtest%'"),
        "0"
    );
}

#[test]
fn rows_are_the_same_for_the_same_seed_whatever_the_connections() {
    let a = fresh_db("sb_seed_a");
    let b = fresh_db("sb_seed_b");
    let o = opts(&[("table_size", "2000"), ("rand-seed", "42")]);
    pgrig_load(&a, &sysbench::build("oltp_read_only", &o).unwrap().load, 2).unwrap();
    pgrig_load(&b, &sysbench::build("oltp_read_only", &o).unwrap().load, 3).unwrap();
    let digest =
        "select md5(string_agg(id::text || k::text || c || pad, ',' order by id)) from sbtest1";
    assert_eq!(a.psql(digest), b.psql(digest));
}
