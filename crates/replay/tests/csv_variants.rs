//! csvlog variants against a log recorded from a real server (PostgreSQL 15 or 18, whichever
//! `PGRIG_PG_BINDIR` names: both write 26 columns): the same records as PostgreSQL 8.4, 9.0
//! to 12 and 13 write them (22, 23, 24 columns), as managed services hand them out — Amazon
//! RDS's `log_fdw` table copied out with a header line, an export with columns reordered and
//! added (Azure Log Analytics / BigQuery style), Aurora/RDS logs exported from CloudWatch to
//! S3 with a time before each line — parse to the same items as the plain csvlog; a record
//! that fits none is an error naming its line.

mod common;

use std::path::Path;

use common::*;
use pgrig_replay::csv_variant::{split, COLUMNS};
use pgrig_replay::entry::Format;
use pgrig_replay::parser::ParseOptions;

/// The csvlog's records, each split into its fields.
fn records(path: &Path) -> Vec<Vec<Vec<u8>>> {
    let text = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, &c) in text.iter().enumerate() {
        if c == b'"' {
            quoted = !quoted;
        } else if c == b'\n' && !quoted {
            out.push(split(&text[start..i]).expect("a real csvlog record"));
            start = i + 1;
        }
    }
    out
}

fn field(o: &mut Vec<u8>, f: &[u8]) {
    if f.iter().any(|&c| matches!(c, b',' | b'"' | b'\n')) {
        o.push(b'"');
        for &c in f {
            if c == b'"' {
                o.push(b'"');
            }
            o.push(c);
        }
        o.push(b'"');
    } else {
        o.extend_from_slice(f);
    }
}

fn join(rows: &[Vec<Vec<u8>>], prefix: &[u8]) -> Vec<u8> {
    let mut o = Vec::new();
    for r in rows {
        o.extend_from_slice(prefix);
        for (i, f) in r.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            field(&mut o, f);
        }
        o.push(b'\n');
    }
    o
}

fn header(names: &[&str]) -> Vec<Vec<Vec<u8>>> {
    vec![names
        .iter()
        .map(|n| n.as_bytes().to_vec())
        .collect::<Vec<Vec<u8>>>()]
}

fn items_of(bytes: &[u8], name: &str, dir: &Path) -> Vec<pgrig_replay::Item> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    parse(&path, Format::Csv, ParseOptions::default()).0
}

#[test]
fn csvlog_variants_parse_to_the_plain_csvlogs_items() {
    let rec = record(
        "csvvar",
        &[("log_statement", "all")],
        &["-N"],
        &["simple", "extended"],
    );
    let rows = records(&rec.csv);
    assert!(rows.len() > 400, "only {} records", rows.len());
    let n = rows[0].len();
    assert_eq!(n, 26, "PostgreSQL 14+ writes 26 csvlog columns");
    let dir = tempfile::tempdir().unwrap();
    let plain = parse(&rec.csv, Format::Csv, ParseOptions::default()).0;
    assert!(plain.len() > 400, "only {} items", plain.len());
    let rejoined = items_of(&join(&rows, b""), "plain.csv", dir.path());
    assert_eq!(rejoined, plain, "the records split and joined again");

    // older servers' column counts: the same records without the later columns
    for (cols, server) in [
        (22, "postgresql-8.4"),
        (23, "postgresql-12"),
        (24, "postgresql-13"),
    ] {
        let cut: Vec<_> = rows.iter().map(|r| r[..cols].to_vec()).collect();
        let items = items_of(&join(&cut, b""), &format!("{server}.csv"), dir.path());
        assert_eq!(items, plain, "{server} ({cols} columns)");
    }
    // Amazon RDS: log_fdw's foreign table copied out with COPY ... CSV HEADER
    let mut with_header = header(&COLUMNS);
    with_header.extend(rows.iter().cloned());
    let items = items_of(
        &join(&with_header, b""),
        "rds_log_fdw_header.csv",
        dir.path(),
    );
    assert_eq!(items, plain, "RDS log_fdw export with a header line");
    // an export with columns of its own and the csvlog's in another order
    let mut names: Vec<&str> = vec!["TimeGenerated", "ResourceId"];
    names.extend(COLUMNS.iter().rev());
    let mut reordered = header(&names);
    for r in &rows {
        let mut row = vec![
            b"2024-01-01T00:00:00Z".to_vec(),
            b"/subscriptions/x".to_vec(),
        ];
        row.extend(r.iter().rev().cloned());
        reordered.push(row);
    }
    let items = items_of(
        &join(&reordered, b""),
        "log_analytics_export.csv",
        dir.path(),
    );
    assert_eq!(items, plain, "export with extra and reordered columns");
    // Aurora/RDS logs exported from CloudWatch Logs to S3: a time before every line
    let items = items_of(
        &join(&rows, b"2024-05-06T07:08:09.123Z "),
        "aurora_cloudwatch_s3_export.csv",
        dir.path(),
    );
    assert_eq!(items, plain, "CloudWatch export");

    // a record that fits none of them: an error naming its line
    let mut bad = rows[..3].to_vec();
    bad[2].push(b"extra".to_vec());
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, join(&bad, b"")).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let opts = ParseOptions {
        format: Some(Format::Csv),
        ..ParseOptions::default()
    };
    let mut p = pgrig_replay::parser::LogParser::new(std::io::BufReader::new(f), &opts);
    let err = loop {
        match p.next_item() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("the 27-column record was accepted"),
            Err(e) => break e.0,
        }
    };
    let line = 3 + bad[..2]
        .iter()
        .map(|r| {
            r.iter()
                .map(|f| f.iter().filter(|&&c| c == b'\n').count())
                .sum::<usize>()
        })
        .sum::<usize>();
    assert!(
        err.contains(&format!("line {line}")) && err.contains("has 27"),
        "{err}"
    );
}
