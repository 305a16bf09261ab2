//! Byte-level tests of the startup state machine, including a fake SCRAM server.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::*;
use crate::proto::backend::{frame, parse, Frame};
use crate::proto::test_util::{auth, msg};
use crate::proto::TransactionStatus;

fn feed(s: &mut Startup, bytes: &[u8], out: &mut BytesMut) -> Result<Step, Error> {
    let mut rest = bytes;
    let mut step = Step::Continue;
    while !rest.is_empty() {
        let Frame::Complete(n) = frame(rest).unwrap() else {
            panic!("partial")
        };
        step = s.handle(parse(&rest[..n]).unwrap(), out)?;
        rest = &rest[n..];
    }
    Ok(step)
}

fn ready_tail() -> Vec<u8> {
    let mut v = msg(b'S', b"server_version\x0015.4\0");
    v.extend(msg(b'K', &[0, 0, 0, 7, 0, 0, 0, 9]));
    v.extend(msg(b'Z', b"I"));
    v
}

/// Splits one frontend message off `buf`: (tag, body).
fn take_frontend(buf: &mut BytesMut) -> (u8, Vec<u8>) {
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    let m = buf.split_to(len + 1);
    (m[0], m[5..].to_vec())
}

#[test]
fn trust_reaches_ready_and_records_session() {
    let mut s = Startup::new("alice", None);
    let mut out = BytesMut::new();
    let mut bytes = auth(0, b"");
    bytes.extend(ready_tail());
    assert_eq!(feed(&mut s, &bytes, &mut out).unwrap(), Step::Ready);
    assert!(out.is_empty());
    assert_eq!(s.method(), AuthMethod::Trust);
    let session = s.into_session();
    assert_eq!(session.key, Some((7, 9)));
    assert_eq!(session.server_version_num(), 150004);
    assert_eq!(session.tx_status, TransactionStatus::Idle);
}

#[test]
fn cleartext_password_is_sent_nul_terminated() {
    let mut s = Startup::new("alice", Some(b"secret"));
    let mut out = BytesMut::new();
    feed(&mut s, &auth(3, b""), &mut out).unwrap();
    assert_eq!(&out[..], b"p\0\0\0\x0bsecret\0");
    assert!(s.password_sent());
}

#[test]
fn md5_password_is_salted_with_user_name() {
    let mut s = Startup::new("alice", Some(b"secret"));
    let mut out = BytesMut::new();
    feed(&mut s, &auth(5, &[1, 2, 3, 4]), &mut out).unwrap();
    let (tag, body) = take_frontend(&mut out);
    assert_eq!(tag, b'p');
    let expected = postgres_protocol::authentication::md5_hash(b"alice", b"secret", [1, 2, 3, 4]);
    assert_eq!(&body[..body.len() - 1], expected.as_bytes());
}

#[test]
fn missing_password_fails_like_libpq() {
    let mut s = Startup::new("alice", None);
    let mut out = BytesMut::new();
    let err = feed(&mut s, &auth(10, b"SCRAM-SHA-256\0\0"), &mut out).unwrap_err();
    assert_eq!(err.to_string(), "fe_sendauth: no password supplied");
}

#[test]
fn server_error_during_startup_is_a_db_error() {
    let mut s = Startup::new("alice", Some(b"x"));
    let mut out = BytesMut::new();
    let e = msg(
        b'E',
        b"SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user \"alice\"\0\0",
    );
    let err = feed(&mut s, &e, &mut out).unwrap_err();
    assert_eq!(err.code(), Some("28P01"));
    assert_eq!(
        err.to_string(),
        "FATAL:  password authentication failed for user \"alice\""
    );
}

#[test]
fn unsupported_methods_and_mechanisms_are_reported() {
    let mut out = BytesMut::new();
    let mut s = Startup::new("a", Some(b"x"));
    let err = feed(&mut s, &auth(7, b""), &mut out).unwrap_err();
    assert_eq!(err.to_string(), "authentication method 7 not supported");
    let mut s = Startup::new("a", Some(b"x"));
    let err = feed(&mut s, &auth(10, b"SCRAM-SHA-1\0\0"), &mut out).unwrap_err();
    assert!(err.to_string().contains("SASL authentication mechanisms"));
}

#[test]
fn ready_before_authentication_is_a_protocol_error() {
    let mut s = Startup::new("a", None);
    let mut out = BytesMut::new();
    assert!(matches!(
        feed(&mut s, &msg(b'Z', b"I"), &mut out),
        Err(Error::Protocol(_))
    ));
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <HmacSha256 as KeyInit>::new_from_slice(key).unwrap();
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// Runs a SCRAM exchange against a fake server holding `verifier_password`'s verifier.
/// Returns the outcome of the client's processing and whether the server accepted the proof.
fn scram_exchange(client_password: &[u8], tamper_signature: bool) -> (Result<Step, Error>, bool) {
    let verifier = postgres_protocol::password::scram_sha_256(b"s3cret");
    // SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>
    let (_, rest) = verifier.split_once('$').unwrap();
    let (iter_salt, keys) = rest.split_once('$').unwrap();
    let (iter, salt) = iter_salt.split_once(':').unwrap();
    let (stored_key, server_key) = keys.split_once(':').unwrap();
    let stored_key = B64.decode(stored_key).unwrap();
    let server_key = B64.decode(server_key).unwrap();

    let mut s = Startup::new("alice", Some(client_password));
    let mut out = BytesMut::new();
    feed(
        &mut s,
        &auth(10, b"SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0"),
        &mut out,
    )
    .unwrap();
    let (tag, body) = take_frontend(&mut out);
    assert_eq!(tag, b'p');
    assert!(body.starts_with(b"SCRAM-SHA-256\0"));
    let client_first = std::str::from_utf8(&body[14 + 4..]).unwrap().to_string();
    let client_first_bare = client_first.strip_prefix("n,,").unwrap();
    let client_nonce = client_first_bare.strip_prefix("n=,r=").unwrap();

    let server_first = format!("r={client_nonce}SERVERNONCE,s={salt},i={iter}");
    feed(&mut s, &auth(11, server_first.as_bytes()), &mut out).unwrap();
    let (_, client_final) = take_frontend(&mut out);
    let client_final = String::from_utf8(client_final).unwrap();
    let (without_proof, proof) = client_final.rsplit_once(",p=").unwrap();
    let auth_message = format!("{client_first_bare},{server_first},{without_proof}");

    let client_signature = hmac(&stored_key, auth_message.as_bytes());
    let client_key: Vec<u8> = B64
        .decode(proof)
        .unwrap()
        .iter()
        .zip(&client_signature)
        .map(|(a, b)| a ^ b)
        .collect();
    let accepted = Sha256::digest(&client_key).as_slice() == stored_key.as_slice();

    let mut server_signature = hmac(&server_key, auth_message.as_bytes());
    if tamper_signature {
        server_signature[0] ^= 1;
    }
    let server_final = format!("v={}", B64.encode(server_signature));
    let mut tail = auth(12, server_final.as_bytes());
    tail.extend(auth(0, b""));
    tail.extend(ready_tail());
    (feed(&mut s, &tail, &mut out), accepted)
}

#[test]
fn scram_sha_256_proof_is_accepted_by_server_and_server_is_verified() {
    let (outcome, accepted) = scram_exchange(b"s3cret", false);
    assert!(accepted);
    assert_eq!(outcome.unwrap(), Step::Ready);
}

#[test]
fn scram_with_wrong_password_produces_a_rejected_proof() {
    let (_, accepted) = scram_exchange(b"wrong", false);
    assert!(!accepted);
}

#[test]
fn scram_rejects_a_forged_server_signature() {
    let (outcome, _) = scram_exchange(b"s3cret", true);
    assert!(outcome
        .unwrap_err()
        .to_string()
        .contains("SCRAM server signature"));
}

#[test]
fn authentication_ok_without_scram_final_is_refused() {
    let mut s = Startup::new("alice", Some(b"pw"));
    let mut out = BytesMut::new();
    feed(&mut s, &auth(10, b"SCRAM-SHA-256\0\0"), &mut out).unwrap();
    assert!(feed(&mut s, &auth(0, b""), &mut out).is_err());
}
