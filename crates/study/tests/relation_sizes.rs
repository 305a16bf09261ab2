//! `[collect] relation_sizes` as PostgreSQL reports them: the main fork, the free-space and
//! visibility maps, the init fork, TOAST (with its index) and the indexes apart, each equal to
//! the server's own size functions, adding up to `pg_total_relation_size`; `heap`, `indexes` and
//! `total` as before for old readers.

use pgrig_study::collect::stats::{relation_sizes, SIZE_KEYS};
use pgrig_study::db::Db;
use pgrig_study::spec::RelationSizes;
use pgrig_testkit::fresh_db;

fn n(v: &serde_json::Value, key: &str) -> i64 {
    v[key]
        .as_i64()
        .unwrap_or_else(|| panic!("{key} missing: {v}"))
}

#[test]
fn relation_sizes_keep_toast_maps_and_indexes_apart_and_add_up() {
    let db = fresh_db("relsizes");
    // a large jsonb column (compressed values above the TOAST threshold go out of line), an index,
    // and a vacuum so that the free-space and visibility maps exist
    db.psql(
        "CREATE TABLE hist (id int PRIMARY KEY, h jsonb); \
         ALTER TABLE hist ALTER COLUMN h SET STORAGE EXTERNAL; \
         INSERT INTO hist SELECT g, (SELECT jsonb_agg(md5((g * 1000 + i)::text)) FROM generate_series(1, 300) i) \
           FROM generate_series(1, 200) g; \
         DELETE FROM hist WHERE id % 10 = 0;",
    );
    db.psql("VACUUM hist");
    let mut conn = Db::connect(&db.conninfo(), "test").unwrap();
    let all = relation_sizes(&mut conn, &RelationSizes::All(true)).unwrap();
    let listed = relation_sizes(&mut conn, &RelationSizes::Tables(vec!["hist".into()])).unwrap();
    assert_eq!(all["hist"], listed["hist"]);
    let s = &all["hist"];
    for k in SIZE_KEYS {
        assert!(s[k].is_i64(), "{k}: {s}");
    }
    // the server's own functions, asked independently
    let q = |sql: &str| -> i64 {
        db.psql(&format!("SELECT {sql}"))
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let toast = q("pg_total_relation_size(reltoastrelid) FROM pg_class WHERE relname = 'hist'");
    assert!(toast > 0, "the jsonb column went to TOAST");
    assert_eq!(n(s, "toast"), toast);
    assert_eq!(n(s, "main"), q("pg_relation_size('hist', 'main')"));
    assert_eq!(n(s, "fsm"), q("pg_relation_size('hist', 'fsm')"));
    assert_eq!(n(s, "vm"), q("pg_relation_size('hist', 'vm')"));
    assert!(n(s, "fsm") > 0 && n(s, "vm") > 0, "{s}");
    assert_eq!(n(s, "indexes"), q("pg_indexes_size('hist')"));
    assert!(n(s, "indexes") > 0);
    let total = q("pg_total_relation_size('hist')");
    assert_eq!(n(s, "total"), total);
    let parts: i64 = ["main", "fsm", "vm", "init", "toast", "indexes"]
        .iter()
        .map(|k| n(s, k))
        .sum();
    assert_eq!(
        parts, total,
        "the parts add up to pg_total_relation_size: {s}"
    );
    // the old figures: heap = main fork + TOAST, as older readers expect
    assert_eq!(n(s, "heap"), n(s, "main") + toast);
    // the key finding of the jsonb post: pg_relation_size leaves most of the table out
    assert!(n(s, "main") < total / 2, "{s}");
}
