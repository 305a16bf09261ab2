//! Byte-level tests of backend message framing and parsing.

use super::backend::*;
use super::test_util::{data_row, msg, row_description};
use crate::error::Error;

fn one(bytes: &[u8]) -> Backend<'_> {
    assert_eq!(frame(bytes).unwrap(), Frame::Complete(bytes.len()));
    parse(bytes).unwrap()
}

#[test]
fn framing_reports_partial_and_complete_messages() {
    let m = msg(b'C', b"SELECT 1\0");
    assert_eq!(frame(&m[..3]).unwrap(), Frame::Partial { total: None });
    assert_eq!(
        frame(&m[..7]).unwrap(),
        Frame::Partial {
            total: Some(m.len())
        }
    );
    assert_eq!(frame(&m).unwrap(), Frame::Complete(m.len()));
}

#[test]
fn impossible_lengths_are_protocol_errors() {
    assert!(matches!(frame(b"Z\0\0\0\x02I"), Err(Error::Protocol(_))));
    assert!(matches!(
        frame(b"D\xff\xff\xff\xff"),
        Err(Error::Protocol(_))
    ));
}

#[test]
fn data_row_exposes_values_and_nulls() {
    let m = data_row(&[Some(b"1"), None, Some(b"")]);
    let Backend::DataRow(row) = one(&m) else {
        panic!()
    };
    assert_eq!(row.len(), 3);
    let v: Vec<_> = row.iter().collect();
    assert_eq!(v, vec![Some(&b"1"[..]), None, Some(&b""[..])]);
    assert_eq!(row.get(1), None);
    assert_eq!(row.get(0), Some(&b"1"[..]));
    assert_eq!(row.get_str(2), Some(""));
    assert_eq!(row.get(3), None);
}

#[test]
fn truncated_data_row_is_rejected() {
    let mut m = data_row(&[Some(b"hello")]);
    m.pop();
    let len = (m.len() - 1) as u32;
    m[1..5].copy_from_slice(&len.to_be_bytes());
    assert!(matches!(parse(&m), Err(Error::Protocol(_))));
    // A negative length other than -1 is malformed too.
    let bad = msg(b'D', &[0, 1, 0xff, 0xff, 0xff, 0xfe]);
    assert!(parse(&bad).is_err());
}

#[test]
fn row_description_lists_columns() {
    let m = row_description(&["aid", "abalance"]);
    let Backend::RowDescription(rd) = one(&m) else {
        panic!()
    };
    let names: Vec<_> = rd.names().collect();
    assert_eq!(names, ["aid", "abalance"]);
    assert_eq!(rd.columns().next().unwrap().type_oid, 23);
}

#[test]
fn command_complete_tag_and_row_count() {
    let m = msg(b'C', b"INSERT 0 5\0");
    let Backend::CommandComplete(tag) = one(&m) else {
        panic!()
    };
    assert_eq!(tag.as_str(), "INSERT 0 5");
    assert_eq!(tag.rows(), Some(5));
    let m = msg(b'C', b"BEGIN\0");
    let Backend::CommandComplete(tag) = one(&m) else {
        panic!()
    };
    assert_eq!(tag.rows(), None);
}

#[test]
fn ready_for_query_statuses() {
    for (b, s) in [
        (b"I", TransactionStatus::Idle),
        (b"T", TransactionStatus::InTransaction),
        (b"E", TransactionStatus::Failed),
    ] {
        let m = msg(b'Z', b);
        assert!(matches!(one(&m), Backend::ReadyForQuery(x) if x == s));
    }
    assert!(parse(&msg(b'Z', b"X")).is_err());
    assert!(parse(&msg(b'Z', b"")).is_err());
}

#[test]
fn simple_messages_parse() {
    assert!(matches!(one(&msg(b'1', b"")), Backend::ParseComplete));
    assert!(matches!(one(&msg(b'2', b"")), Backend::BindComplete));
    assert!(matches!(one(&msg(b'3', b"")), Backend::CloseComplete));
    assert!(matches!(one(&msg(b'n', b"")), Backend::NoData));
    assert!(matches!(one(&msg(b'I', b"")), Backend::EmptyQueryResponse));
    assert!(matches!(one(&msg(b's', b"")), Backend::PortalSuspended));
    assert!(matches!(
        one(&msg(b'G', b"\0\0\0")),
        Backend::CopyInResponse
    ));
    assert!(matches!(one(&msg(b'c', b"")), Backend::CopyDone));
    assert!(matches!(one(&msg(b'd', b"abc")), Backend::CopyData(b"abc")));
}

#[test]
fn parameter_status_key_data_and_notification() {
    let m = msg(b'S', b"TimeZone\0UTC\0");
    assert!(matches!(
        one(&m),
        Backend::ParameterStatus {
            name: b"TimeZone",
            value: b"UTC"
        }
    ));
    let m = msg(b'K', &[0, 0, 1, 0, 0xff, 0xff, 0xff, 0xff]);
    assert!(matches!(
        one(&m),
        Backend::BackendKeyData {
            process_id: 256,
            secret_key: -1
        }
    ));
    let m = msg(b'A', b"\0\0\0\x05chan\0hi\0");
    assert!(matches!(
        one(&m),
        Backend::Notification {
            process_id: 5,
            channel: b"chan",
            payload: b"hi"
        }
    ));
}

#[test]
fn parameter_description_lists_type_oids() {
    let m = msg(b't', &[0, 2, 0, 0, 0, 23, 0, 0, 0, 25]);
    let Backend::ParameterDescription(pd) = one(&m) else {
        panic!()
    };
    assert_eq!(pd.types().collect::<Vec<_>>(), [23, 25]);
}

#[test]
fn error_response_fields_are_borrowed() {
    let m = msg(
        b'E',
        b"SERROR\0C42601\0Msyntax error at or near \"x\"\0P8\0\0",
    );
    let Backend::Error(f) = one(&m) else { panic!() };
    assert_eq!(f.code(), "42601");
    assert_eq!(f.to_db_error().position, Some(8));
}

#[test]
fn sasl_mechanisms_are_listed() {
    let mut body = 10u32.to_be_bytes().to_vec();
    body.extend_from_slice(b"SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0");
    let m = msg(b'R', &body);
    let Backend::Authentication(Authentication::Sasl(mechs)) = one(&m) else {
        panic!()
    };
    let v: Vec<_> = mechs.iter().collect();
    assert_eq!(v, [&b"SCRAM-SHA-256-PLUS"[..], b"SCRAM-SHA-256"]);
}

#[test]
fn unknown_and_truncated_messages_never_panic() {
    assert!(parse(&msg(b'?', b"")).is_err());
    for tag in [b'R', b'K', b'S', b'C', b'D', b'T', b't', b'E', b'A', b'v'] {
        for len in 0..6 {
            let body = vec![0xffu8; len];
            let _ = parse(&msg(tag, &body));
        }
    }
}
