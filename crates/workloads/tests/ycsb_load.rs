//! The YCSB dataset loaded on a real PostgreSQL through the generic loader (binary COPY, the
//! primary key after the load): the table as YCSB's JDBC binding creates it, one row per
//! record with YCSB's keys, every field of the configured length.

mod ycsb_common;

use pgrig_engine::config::ConnArgs;
use pgrig_engine::sink::NullSink;
use pgrig_engine::stop::StopHandle;
use ycsb_common::build;

pub fn conn(db: &pgrig_testkit::TestDb) -> ConnArgs {
    ConnArgs {
        dbname: Some(db.conninfo()),
        ..ConnArgs::default()
    }
}

#[test]
fn usertable_loads_with_ycsb_keys_and_field_lengths() {
    let db = pgrig_testkit::fresh_db("ycsb_load");
    let native = build("ycsb-a", &["recordcount=20000"]);
    let report = pgrig_init::generic::load(
        &conn(&db),
        &native.load,
        2,
        &NullSink,
        &StopHandle::default(),
    )
    .expect("load");
    assert_eq!(report.rows, 20000);
    assert_eq!(
        db.psql("SELECT count(*), count(DISTINCT ycsb_key) FROM usertable"),
        "20000|20000"
    );
    assert_eq!(
        db.psql("SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'usertable'::regclass AND attnum > 0"),
        "ycsb_key character varying, field0 text, field1 text, field2 text, field3 text, field4 text, field5 text, field6 text, field7 text, field8 text, field9 text"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_constraint WHERE conrelid = 'usertable'::regclass AND contype = 'p'"),
        "1",
        "the primary key"
    );
    // the loader sends binary COPY when the table's types are exactly the source's binary columns
    let types = db.psql("SELECT string_agg(format_type(atttypid, NULL), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'usertable'::regclass AND attnum > 0 AND NOT attisdropped");
    let binary = native.load.sources[0]
        .binary_columns()
        .expect("binary columns")
        .join(",");
    assert_eq!(types, binary, "binary COPY applies");
    // record 0's key as YCSB writes it, and every key `user` + digits
    assert_eq!(
        db.psql("SELECT count(*) FROM usertable WHERE ycsb_key = 'user6284781860667377211'"),
        "1"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM usertable WHERE ycsb_key !~ '^user[0-9]+$'"),
        "0"
    );
    let lengths = db.psql(
        "SELECT min(length(f)), max(length(f)) FROM usertable, LATERAL (VALUES (field0), (field1), (field2), (field3), (field4), (field5), (field6), (field7), (field8), (field9)) v(f)",
    );
    assert_eq!(lengths, "100|100");
    // printable ASCII, and not all the same
    assert_eq!(
        db.psql("SELECT count(*) FROM usertable WHERE field3 !~ '^[ -\\x7f]+$'"),
        "0"
    );
    assert_eq!(
        db.psql("SELECT count(DISTINCT field0) > 19990 FROM usertable"),
        "t"
    );
}

#[test]
fn options_shape_the_loaded_table() {
    let db = pgrig_testkit::fresh_db("ycsb_load_opts");
    let native = build(
        "ycsb-c",
        &[
            "recordcount=1000",
            "fieldcount=3",
            "fieldlength=20",
            "fieldlengthdistribution=uniform",
            "minfieldlength=5",
            "insertorder=ordered",
            "zeropadding=8",
            "table=kv",
        ],
    );
    pgrig_init::generic::load(
        &conn(&db),
        &native.load,
        2,
        &NullSink,
        &StopHandle::default(),
    )
    .expect("load");
    assert_eq!(
        db.psql("SELECT min(ycsb_key), max(ycsb_key), count(*) FROM kv"),
        "user00000000|user00000999|1000"
    );
    let l = db.psql("SELECT min(length(field2)), max(length(field2)), count(DISTINCT length(field2)) > 10 FROM kv");
    assert_eq!(l, "5|20|t");
    for sql in &native.cleanup {
        db.psql(sql);
    }
    assert_eq!(
        db.psql("SELECT count(*) FROM pg_class WHERE relname = 'kv'"),
        "0",
        "cleanup drops the table"
    );
}

#[test]
fn loading_over_an_existing_table_is_an_error_unless_cleaned_up_first() {
    let db = pgrig_testkit::fresh_db("ycsb_load_twice");
    let native = build("ycsb-b", &["recordcount=100"]);
    let stop = StopHandle::default();
    pgrig_init::generic::load(&conn(&db), &native.load, 2, &NullSink, &stop).expect("load");
    db.psql("UPDATE usertable SET field0 = 'kept'");
    let e = pgrig_init::generic::load(&conn(&db), &native.load, 2, &NullSink, &stop).unwrap_err();
    assert!(format!("{e:?}").contains("already exists"), "{e:?}");
    assert_eq!(
        db.psql("SELECT count(*) FROM usertable WHERE field0 = 'kept'"),
        "100"
    );
    pgrig_init::generic::load_replacing(
        &conn(&db),
        &native.cleanup,
        &native.load,
        2,
        &NullSink,
        &stop,
    )
    .expect("reload");
    assert_eq!(
        db.psql("SELECT count(*), count(*) FILTER (WHERE field0 = 'kept') FROM usertable"),
        "100|0"
    );
}
