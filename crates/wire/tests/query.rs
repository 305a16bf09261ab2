//! Query round trips against a real server: simple, extended (unnamed), prepared, pipelined
//! Bind/Execute batches, server errors with SQLSTATE fields, notices, COPY FROM STDIN.

mod common;

use common::{block_on, connect};
use pgrig_wire::{Backend, Connection, Notices, TransactionStatus};

async fn session(hint: &str) -> (pgrig_testkit::TestDb, Connection) {
    let db = pgrig_testkit::fresh_db(hint);
    let c = connect(&db.conninfo()).await;
    (db, c)
}

#[test]
fn simple_query_returns_results_per_statement() {
    block_on(async {
        let (_db, mut c) = session("wire_simple").await;
        let r = c
            .simple_query("CREATE TABLE t (a int, b text); INSERT INTO t VALUES (1, 'x'), (2, NULL); SELECT a, b FROM t ORDER BY a")
            .await
            .unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].tag, "CREATE TABLE");
        assert_eq!(r[1].tag, "INSERT 0 2");
        assert_eq!(r[1].rows_affected(), Some(2));
        assert_eq!(r[2].columns, ["a", "b"]);
        assert_eq!(r[2].rows.len(), 2);
        assert_eq!(r[2].rows[0].get(1), Some("x"));
        assert_eq!(r[2].rows[1].get(1), None);
        assert_eq!(r[2].rows_affected(), Some(2));
        let r = c.simple_query("").await.unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].tag, "");
        c.close().await;
    });
}

#[test]
fn server_error_carries_sqlstate_and_fields_and_session_recovers() {
    block_on(async {
        let (_db, mut c) = session("wire_error").await;
        c.execute_simple("CREATE TABLE u (id int PRIMARY KEY)")
            .await
            .unwrap();
        c.execute_simple("INSERT INTO u VALUES (1)").await.unwrap();
        let err = c
            .execute_simple("INSERT INTO u VALUES (1)")
            .await
            .unwrap_err();
        let db = err.db_error().unwrap();
        assert_eq!(db.code, "23505");
        assert_eq!(db.severity, "ERROR");
        assert_eq!(db.table.as_deref(), Some("u"));
        assert_eq!(db.constraint.as_deref(), Some("u_pkey"));
        assert_eq!(
            err.to_string(),
            "ERROR:  duplicate key value violates unique constraint \"u_pkey\"\n\
             DETAIL:  Key (id)=(1) already exists."
        );
        let err = c.simple_query("SELEC 1").await.unwrap_err();
        assert_eq!(err.code(), Some("42601"));
        assert_eq!(err.db_error().unwrap().position, Some(1));
        assert!(!err.is_fatal());
        let r = c.simple_query("SELECT 2").await.unwrap();
        assert_eq!(r[0].rows[0].get(0), Some("2"));
        c.close().await;
    });
}

#[test]
fn transaction_status_follows_ready_for_query() {
    block_on(async {
        let (_db, mut c) = session("wire_tx").await;
        c.execute_simple("BEGIN").await.unwrap();
        assert_eq!(c.transaction_status(), TransactionStatus::InTransaction);
        assert!(c.execute_simple("SELECT 1/0").await.is_err());
        assert_eq!(c.transaction_status(), TransactionStatus::Failed);
        c.execute_simple("ROLLBACK").await.unwrap();
        assert_eq!(c.transaction_status(), TransactionStatus::Idle);
        c.close().await;
    });
}

#[test]
fn extended_query_with_unnamed_statement_in_one_round_trip() {
    block_on(async {
        let (_db, mut c) = session("wire_ext").await;
        c.parse("", "SELECT $1::int + 1, $2::text IS NULL", 2);
        c.bind("", "", [Some(&b"41"[..]), None]);
        c.describe_portal("");
        c.execute("", 0);
        c.sync();
        c.send().await.unwrap();
        assert!(matches!(c.recv().await.unwrap(), Backend::ParseComplete));
        assert!(matches!(c.recv().await.unwrap(), Backend::BindComplete));
        match c.recv().await.unwrap() {
            Backend::RowDescription(rd) => assert_eq!(rd.len(), 2),
            other => panic!("{other:?}"),
        }
        match c.recv().await.unwrap() {
            Backend::DataRow(row) => {
                assert_eq!(row.get(0), Some(&b"42"[..]));
                assert_eq!(row.get_str(1), Some("t"));
            }
            other => panic!("{other:?}"),
        }
        match c.recv().await.unwrap() {
            Backend::CommandComplete(tag) => assert_eq!(tag.as_str(), "SELECT 1"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            c.recv().await.unwrap(),
            Backend::ReadyForQuery(TransactionStatus::Idle)
        ));
        c.close().await;
    });
}

#[test]
fn prepared_statement_is_parsed_once_and_executed_many_times() {
    block_on(async {
        let (_db, mut c) = session("wire_prep").await;
        c.parse("s1", "SELECT $1::int * 2", 1);
        c.describe_statement("s1");
        c.sync();
        c.send().await.unwrap();
        assert!(matches!(c.recv().await.unwrap(), Backend::ParseComplete));
        match c.recv().await.unwrap() {
            Backend::ParameterDescription(pd) => assert_eq!(pd.types().collect::<Vec<_>>(), [23]),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            c.recv().await.unwrap(),
            Backend::RowDescription(_)
        ));
        assert!(matches!(c.recv().await.unwrap(), Backend::ReadyForQuery(_)));
        for i in 0..50i32 {
            c.bind_with("", "s1", |w| {
                w.render(|b| b.extend_from_slice(i.to_string().as_bytes()))
            });
            c.execute("", 0);
            c.sync();
            c.send().await.unwrap();
            let mut got = None;
            loop {
                match c.recv().await.unwrap() {
                    Backend::DataRow(row) => got = row.get_str(0).map(str::to_owned),
                    Backend::ReadyForQuery(_) => break,
                    Backend::Error(e) => panic!("{e}"),
                    _ => {}
                }
            }
            assert_eq!(got, Some((i * 2).to_string()));
        }
        c.close_statement("s1");
        c.sync();
        c.send().await.unwrap();
        assert!(matches!(c.recv().await.unwrap(), Backend::CloseComplete));
        assert!(matches!(c.recv().await.unwrap(), Backend::ReadyForQuery(_)));
        c.close().await;
    });
}

#[test]
fn pipelined_binds_before_one_sync_and_error_skips_the_rest() {
    block_on(async {
        let (_db, mut c) = session("wire_pipe").await;
        c.execute_simple("CREATE TABLE p (x int)").await.unwrap();
        c.parse("ins", "INSERT INTO p VALUES ($1)", 1);
        for v in [b"1", b"2", b"3"] {
            c.bind("", "ins", [Some(&v[..])]);
            c.execute("", 0);
        }
        c.sync();
        c.send().await.unwrap();
        let mut tags = Vec::new();
        loop {
            match c.recv().await.unwrap() {
                Backend::CommandComplete(t) => tags.push(t.as_str().to_owned()),
                Backend::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        assert_eq!(tags, ["INSERT 0 1"; 3]);
        // A failing statement in the middle: the server skips to Sync.
        c.bind("", "ins", [Some(&b"4"[..])]);
        c.execute("", 0);
        c.bind("", "ins", [Some(&b"oops"[..])]);
        c.execute("", 0);
        c.bind("", "ins", [Some(&b"6"[..])]);
        c.execute("", 0);
        c.sync();
        c.send().await.unwrap();
        let mut completes = 0;
        let mut code = None;
        loop {
            match c.recv().await.unwrap() {
                Backend::CommandComplete(_) => completes += 1,
                Backend::Error(e) => code = Some(e.code().to_owned()),
                Backend::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        assert_eq!((completes, code.as_deref()), (1, Some("22P02")));
        // Everything up to Sync is one implicit transaction: the completed insert is gone too.
        let r = c.simple_query("SELECT count(*) FROM p").await.unwrap();
        assert_eq!(r[0].rows[0].get(0), Some("3"));
        c.close().await;
    });
}

#[test]
fn several_syncs_in_one_write_yield_one_ready_each() {
    block_on(async {
        let (_db, mut c) = session("wire_syncs").await;
        for i in 0..10 {
            c.query(format!("SELECT {i}").as_bytes());
        }
        c.send().await.unwrap();
        let mut readies = 0;
        let mut values = Vec::new();
        while readies < 10 {
            match c.recv().await.unwrap() {
                Backend::DataRow(r) => values.push(r.get_str(0).unwrap().to_owned()),
                Backend::ReadyForQuery(_) => readies += 1,
                _ => {}
            }
        }
        assert_eq!(values, (0..10).map(|i| i.to_string()).collect::<Vec<_>>());
        c.close().await;
    });
}

#[test]
fn nul_in_query_is_reported_on_send_and_nothing_is_sent() {
    block_on(async {
        let (_db, mut c) = session("wire_nul").await;
        c.query(b"SELECT 1");
        c.query(b"SELECT\0 2");
        assert!(matches!(c.send().await, Err(pgrig_wire::Error::Usage(_))));
        assert_eq!(c.pending_bytes(), 0);
        let r = c.simple_query("SELECT 3").await.unwrap();
        assert_eq!(r.len(), 1);
        c.close().await;
    });
}

#[test]
fn notices_are_collected_or_returned() {
    block_on(async {
        let (_db, mut c) = session("wire_notice").await;
        c.execute_simple("DROP TABLE IF EXISTS nope").await.unwrap();
        let notices = c.take_notices();
        assert_eq!(notices.len(), 1);
        assert_eq!(
            notices[0].to_string(),
            "NOTICE:  table \"nope\" does not exist, skipping"
        );
        c.set_notices(Notices::Return);
        c.query(b"DROP TABLE IF EXISTS nope");
        c.send().await.unwrap();
        assert!(matches!(c.recv().await.unwrap(), Backend::Notice(_)));
        c.skip_until_ready().await.unwrap();
        c.set_notices(Notices::Ignore);
        c.execute_simple("DROP TABLE IF EXISTS nope").await.unwrap();
        assert!(c.take_notices().is_empty());
        c.close().await;
    });
}

#[test]
fn notice_handler_sees_every_notice_as_it_arrives() {
    block_on(async {
        let (_db, mut c) = session("wire_notice_handler").await;
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        c.set_notice_handler(Some(std::sync::Arc::new(
            move |f: &pgrig_wire::ErrorFields<'_>| {
                sink.lock().unwrap().push(f.to_db_error().to_string());
            },
        )));
        c.execute_simple("DROP TABLE IF EXISTS nope").await.unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            ["NOTICE:  table \"nope\" does not exist, skipping"]
        );
        assert!(c.take_notices().is_empty(), "handled, not collected");
        c.close().await;
    });
}

#[test]
fn copy_from_stdin_loads_rows() {
    block_on(async {
        let (_db, mut c) = session("wire_copy").await;
        c.execute_simple("CREATE TABLE c (a int, b text)")
            .await
            .unwrap();
        let n = c
            .copy_in("COPY c FROM STDIN", ["1\tone\n2\t", "two\n3\t\\N\n"])
            .await
            .unwrap();
        assert_eq!(n, 3);
        // A large streaming copy crossing many CopyData chunks.
        let mut copy = c.copy_in_start("COPY c (a) FROM STDIN").await.unwrap();
        let mut line = String::new();
        for i in 0..100_000 {
            line.clear();
            line.push_str(&i.to_string());
            line.push('\n');
            copy.write(line.as_bytes()).await.unwrap();
        }
        assert_eq!(copy.finish().await.unwrap(), 100_000);
        let r = c
            .simple_query("SELECT count(*), count(b) FROM c")
            .await
            .unwrap();
        assert_eq!(r[0].rows[0].0, [Some("100003".into()), Some("2".into())]);
        // Bad data: the server's error comes back at the end; the session stays usable.
        let err = c
            .copy_in("COPY c FROM STDIN", ["x\ty\n"])
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some("22P02"));
        let copy = c.copy_in_start("COPY c FROM STDIN").await.unwrap();
        copy.fail("changed my mind").await.unwrap();
        assert_eq!(c.transaction_status(), TransactionStatus::Idle);
        assert!(c.copy_in_start("SELECT 1").await.is_err());
        c.close().await;
    });
}

#[test]
fn syntax_error_text_matches_libpq_including_line_context() {
    let sql = "select 1,\n\t2 frm t";
    let (db, ours) = block_on(async {
        let (db, mut c) = session("wire_errtext").await;
        let ours = c.simple_query(sql).await.unwrap_err().to_string();
        c.close().await;
        (db, ours)
    });
    let conninfo = db.conninfo();
    assert_eq!(
        ours,
        "ERROR:  syntax error at or near \"t\"\nLINE 2:  2 frm t\n               ^"
    );
    if let Ok(out) = std::process::Command::new("psql")
        .args(["-X", "-q", "-c", sql, &conninfo])
        .output()
    {
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end(), ours);
    }
}
