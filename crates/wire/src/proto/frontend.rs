//! Frontend (client → server) messages encoded into a caller-owned, reused `BytesMut`.
//!
//! Query-path messages take byte strings (SQL is not required to be valid UTF-8 here) and are
//! written directly; startup/auth/COPY-control messages go through `postgres-protocol`'s
//! `message::frontend` codec. Nothing here allocates beyond growing the caller's buffer.

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend as pp;

use crate::error::Error;

/// Writes `tag`, a length placeholder, the body via `f`, then patches the length.
/// On error the buffer is truncated back, so a failed encode leaves no partial message.
#[inline]
fn message<F>(buf: &mut BytesMut, tag: u8, f: F) -> Result<(), Error>
where
    F: FnOnce(&mut BytesMut) -> Result<(), Error>,
{
    let start = buf.len();
    buf.put_u8(tag);
    buf.put_u32(0);
    if let Err(e) = f(buf) {
        buf.truncate(start);
        return Err(e);
    }
    let len = buf.len() - start - 1;
    if len > i32::MAX as usize {
        buf.truncate(start);
        return Err(Error::usage("message too large for the protocol"));
    }
    buf[start + 1..start + 5].copy_from_slice(&(len as u32).to_be_bytes());
    Ok(())
}

#[inline]
fn cstr(buf: &mut BytesMut, s: &[u8], what: &str) -> Result<(), Error> {
    if s.contains(&0) {
        return Err(Error::usage(format!("{what} contains a NUL byte")));
    }
    buf.put_slice(s);
    buf.put_u8(0);
    Ok(())
}

/// Simple Query.
#[inline]
pub fn query(buf: &mut BytesMut, sql: &[u8]) -> Result<(), Error> {
    message(buf, b'Q', |b| cstr(b, sql, "query string"))
}

/// Parse with `param_count` parameters of unspecified type (the server infers them).
#[inline]
pub fn parse(buf: &mut BytesMut, name: &[u8], sql: &[u8], param_count: u16) -> Result<(), Error> {
    message(buf, b'P', |b| {
        cstr(b, name, "statement name")?;
        cstr(b, sql, "query string")?;
        b.put_u16(param_count);
        for _ in 0..param_count {
            b.put_u32(0);
        }
        Ok(())
    })
}

/// Writes Bind parameter values in place (text format); see [`bind_with`].
pub struct ParamWriter<'a> {
    buf: &'a mut BytesMut,
    count: usize,
}

impl ParamWriter<'_> {
    /// A NULL parameter.
    #[inline]
    pub fn null(&mut self) {
        self.buf.put_i32(-1);
        self.count += 1;
    }

    /// A parameter with the given text bytes.
    #[inline]
    pub fn bytes(&mut self, value: &[u8]) {
        self.buf.put_u32(value.len() as u32);
        self.buf.put_slice(value);
        self.count += 1;
    }

    /// An optional parameter (`None` is NULL).
    #[inline]
    pub fn value(&mut self, value: Option<&[u8]>) {
        match value {
            Some(v) => self.bytes(v),
            None => self.null(),
        }
    }

    /// A parameter rendered straight into the buffer by `render`, which appends its text
    /// (e.g. with `itoa` or `std::fmt::Write`, which `BytesMut` implements).
    #[inline]
    pub fn render(&mut self, render: impl FnOnce(&mut BytesMut)) {
        let at = self.buf.len();
        self.buf.put_u32(0);
        render(self.buf);
        let len = (self.buf.len() - at - 4) as u32;
        self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        self.count += 1;
    }

    /// Number of parameters written so far.
    pub fn count(&self) -> usize {
        self.count
    }
}

/// Bind with text-format parameters written by `write`, and text-format results.
#[inline]
pub fn bind_with<F>(buf: &mut BytesMut, portal: &[u8], stmt: &[u8], write: F) -> Result<(), Error>
where
    F: FnOnce(&mut ParamWriter<'_>),
{
    message(buf, b'B', |b| {
        cstr(b, portal, "portal name")?;
        cstr(b, stmt, "statement name")?;
        b.put_u16(0); // all parameters in text format
        let count_at = b.len();
        b.put_u16(0);
        let mut w = ParamWriter { buf: b, count: 0 };
        write(&mut w);
        let count = w.count;
        if count > u16::MAX as usize {
            return Err(Error::usage(format!("too many parameters: {count}")));
        }
        b[count_at..count_at + 2].copy_from_slice(&(count as u16).to_be_bytes());
        b.put_u16(0); // all results in text format
        Ok(())
    })
}

/// Bind with the given text-format parameter values (`None` is NULL).
#[inline]
pub fn bind<'p, I>(buf: &mut BytesMut, portal: &[u8], stmt: &[u8], params: I) -> Result<(), Error>
where
    I: IntoIterator<Item = Option<&'p [u8]>>,
{
    bind_with(buf, portal, stmt, |w| {
        for p in params {
            w.value(p);
        }
    })
}

/// Describe a portal (`P`) or a statement (`S`).
#[inline]
pub fn describe(buf: &mut BytesMut, kind: u8, name: &[u8]) -> Result<(), Error> {
    message(buf, b'D', |b| {
        b.put_u8(kind);
        cstr(b, name, "name")
    })
}

/// Execute a portal; `max_rows` 0 means all rows.
#[inline]
pub fn execute(buf: &mut BytesMut, portal: &[u8], max_rows: u32) -> Result<(), Error> {
    message(buf, b'E', |b| {
        cstr(b, portal, "portal name")?;
        b.put_u32(max_rows.min(i32::MAX as u32));
        Ok(())
    })
}

/// Close a portal (`P`) or a statement (`S`).
#[inline]
pub fn close(buf: &mut BytesMut, kind: u8, name: &[u8]) -> Result<(), Error> {
    message(buf, b'C', |b| {
        b.put_u8(kind);
        cstr(b, name, "name")
    })
}

/// Sync.
#[inline]
pub fn sync(buf: &mut BytesMut) {
    pp::sync(buf);
}

/// Flush (ask the server to send pending output without a Sync).
#[inline]
pub fn flush(buf: &mut BytesMut) {
    pp::flush(buf);
}

/// Terminate.
pub fn terminate(buf: &mut BytesMut) {
    pp::terminate(buf);
}

/// CopyData carrying `data`.
#[inline]
pub fn copy_data(buf: &mut BytesMut, data: &[u8]) -> Result<(), Error> {
    message(buf, b'd', |b| {
        b.put_slice(data);
        Ok(())
    })
}

/// CopyDone.
pub fn copy_done(buf: &mut BytesMut) {
    pp::copy_done(buf);
}

/// CopyFail with an error message for the server.
pub fn copy_fail(buf: &mut BytesMut, reason: &str) -> Result<(), Error> {
    pp::copy_fail(reason, buf).map_err(|e| Error::usage(e.to_string()))
}

/// SSLRequest.
pub fn ssl_request(buf: &mut BytesMut) {
    pp::ssl_request(buf);
}

/// CancelRequest for the given backend.
pub fn cancel_request(buf: &mut BytesMut, process_id: i32, secret_key: i32) {
    pp::cancel_request(process_id, secret_key, buf);
}

/// StartupMessage (protocol 3.0) with `(name, value)` parameters.
pub fn startup<'a>(
    buf: &mut BytesMut,
    params: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), Error> {
    pp::startup_message(params, buf).map_err(|e| Error::usage(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_is_tagged_length_prefixed_and_nul_terminated() {
        let mut b = BytesMut::new();
        query(&mut b, b"SELECT 1").unwrap();
        assert_eq!(&b[..], b"Q\0\0\0\x0dSELECT 1\0");
    }

    #[test]
    fn nul_in_query_is_rejected_and_leaves_buffer_untouched() {
        let mut b = BytesMut::new();
        sync(&mut b);
        let before = b.clone();
        assert!(matches!(query(&mut b, b"SELECT\0 1"), Err(Error::Usage(_))));
        assert_eq!(b, before);
    }

    #[test]
    fn parse_declares_unspecified_param_types() {
        let mut b = BytesMut::new();
        parse(&mut b, b"s1", b"SELECT $1", 1).unwrap();
        assert_eq!(&b[..], b"P\0\0\0\x17s1\0SELECT $1\0\0\x01\0\0\0\0");
    }

    #[test]
    fn bind_encodes_text_values_and_nulls() {
        let mut b = BytesMut::new();
        bind(&mut b, b"", b"s1", [Some(&b"42"[..]), None]).unwrap();
        let expected: &[u8] = b"B\0\0\0\x18\0s1\0\0\0\0\x02\0\0\0\x0242\xff\xff\xff\xff\0\0";
        assert_eq!(&b[..], expected);
    }

    #[test]
    fn bind_with_renders_params_in_place() {
        use std::fmt::Write;
        let mut a = BytesMut::new();
        bind_with(&mut a, b"", b"s1", |w| {
            w.render(|buf| write!(buf, "{}", 42).unwrap());
            w.null();
        })
        .unwrap();
        let mut b = BytesMut::new();
        bind(&mut b, b"", b"s1", [Some(&b"42"[..]), None]).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn execute_describe_close_layouts() {
        let mut b = BytesMut::new();
        execute(&mut b, b"", 0).unwrap();
        describe(&mut b, b'P', b"").unwrap();
        close(&mut b, b'S', b"s1").unwrap();
        flush(&mut b);
        sync(&mut b);
        let expected: &[u8] =
            b"E\0\0\0\x09\0\0\0\0\0D\0\0\0\x06P\0C\0\0\0\x08Ss1\0H\0\0\0\x04S\0\0\0\x04";
        assert_eq!(&b[..], expected);
    }

    #[test]
    fn copy_data_wraps_payload() {
        let mut b = BytesMut::new();
        copy_data(&mut b, b"1\t2\n").unwrap();
        copy_done(&mut b);
        assert_eq!(&b[..], b"d\0\0\0\x081\t2\nc\0\0\0\x04");
    }
}
