//! Frontend (client → server) protocol messages as a capture records them: which message
//! types are recorded, a batch of them checked before it is replayed (every message complete,
//! of a recorded type, with a body that decodes), how many ReadyForQuery answers a batch asks
//! for, and the `-d 1` trace of a batch. Message boundaries come from pgrig-wire's framing.

use pgrig_wire::proto::backend::{frame, Frame};

/// Message types a capture records and a replay sends as recorded: Query, Parse, Bind,
/// Execute, Describe, Close, Sync, Flush, FunctionCall.
pub const RECORDED: &[u8] = b"QPBEDCSHF";

/// Whether a client message of type `tag` is recorded.
pub fn is_recorded(tag: u8) -> bool {
    RECORDED.contains(&tag)
}

/// One decoded message, borrowing from the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg<'a> {
    Query(&'a [u8]),
    Parse {
        name: &'a [u8],
        sql: &'a [u8],
        types: Vec<u32>,
    },
    Bind {
        portal: &'a [u8],
        stmt: &'a [u8],
        formats: Vec<u16>,
        values: Vec<Option<&'a [u8]>>,
        result_formats: Vec<u16>,
    },
    Execute {
        portal: &'a [u8],
        max_rows: u32,
    },
    Describe {
        kind: u8,
        name: &'a [u8],
    },
    Close {
        kind: u8,
        name: &'a [u8],
    },
    Sync,
    Flush,
    FunctionCall {
        oid: u32,
    },
}

/// A cursor over one message's body; every read is bounds-checked.
struct Body<'a> {
    b: &'a [u8],
}

impl<'a> Body<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.b.len() < n {
            return Err("message body ends early".into());
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u16(&mut self) -> Result<u16, String> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn u32(&mut self) -> Result<u32, String> {
        let s = self.take(4)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn cstr(&mut self) -> Result<&'a [u8], String> {
        let end = self
            .b
            .iter()
            .position(|&c| c == 0)
            .ok_or("string without its terminating NUL")?;
        let s = &self.b[..end];
        self.b = &self.b[end + 1..];
        Ok(s)
    }
    fn u16s(&mut self) -> Result<Vec<u16>, String> {
        let n = self.u16()?;
        (0..n).map(|_| self.u16()).collect()
    }
    fn done(&self) -> Result<(), String> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(format!("{} bytes after the message's fields", self.b.len()))
        }
    }
}

/// Decodes one complete message (type byte, length, body).
pub fn decode(m: &[u8]) -> Result<Msg<'_>, String> {
    let tag = m[0];
    let mut b = Body { b: &m[5..] };
    let msg = match tag {
        b'Q' => Msg::Query(b.cstr()?),
        b'P' => {
            let name = b.cstr()?;
            let sql = b.cstr()?;
            let n = b.u16()?;
            let types = (0..n).map(|_| b.u32()).collect::<Result<_, _>>()?;
            Msg::Parse { name, sql, types }
        }
        b'B' => {
            let portal = b.cstr()?;
            let stmt = b.cstr()?;
            let formats = b.u16s()?;
            let n = b.u16()?;
            let mut values = Vec::with_capacity(usize::from(n));
            for _ in 0..n {
                let len = b.u32()? as i32;
                values.push(if len < 0 {
                    None
                } else {
                    Some(b.take(len as usize)?)
                });
            }
            let result_formats = b.u16s()?;
            Msg::Bind {
                portal,
                stmt,
                formats,
                values,
                result_formats,
            }
        }
        b'E' => Msg::Execute {
            portal: b.cstr()?,
            max_rows: b.u32()?,
        },
        b'D' | b'C' => {
            let kind = b.take(1)?[0];
            if kind != b'S' && kind != b'P' {
                return Err(format!("unknown object type '{}'", kind.escape_ascii()));
            }
            let name = b.cstr()?;
            if tag == b'D' {
                Msg::Describe { kind, name }
            } else {
                Msg::Close { kind, name }
            }
        }
        b'S' => Msg::Sync,
        b'H' => Msg::Flush,
        b'F' => {
            let oid = b.u32()?;
            let _ = b.u16s()?;
            let n = b.u16()?;
            for _ in 0..n {
                let len = b.u32()? as i32;
                if len > 0 {
                    b.take(len as usize)?;
                }
            }
            b.u16()?;
            Msg::FunctionCall { oid }
        }
        other => {
            return Err(format!(
                "message type '{}' is not recorded",
                other.escape_ascii()
            ))
        }
    };
    b.done()?;
    Ok(msg)
}

/// The messages of a batch, in order; an error names the message's position and fault.
pub fn split(batch: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut out = Vec::new();
    let mut rest = batch;
    while !rest.is_empty() {
        let n = match frame(rest) {
            Ok(Frame::Complete(n)) => n,
            Ok(Frame::Partial { .. }) => {
                return Err(format!("message {} is incomplete", out.len() + 1));
            }
            Err(e) => return Err(format!("message {}: {e}", out.len() + 1)),
        };
        out.push(&rest[..n]);
        rest = &rest[n..];
    }
    Ok(out)
}

/// Checks a recorded batch: complete messages of recorded types whose bodies decode.
pub fn check(batch: &[u8]) -> Result<(), String> {
    if batch.is_empty() {
        return Err("an empty batch of messages".into());
    }
    for (i, m) in split(batch)?.into_iter().enumerate() {
        decode(m).map_err(|e| format!("message {} ({}): {e}", i + 1, m[0].escape_ascii()))?;
    }
    Ok(())
}

/// ReadyForQuery answers the server gives to a (checked) batch: one per Query, Sync and
/// FunctionCall.
pub fn readies(batch: &[u8]) -> usize {
    split(batch)
        .map(|ms| {
            ms.iter()
                .filter(|m| matches!(m[0], b'Q' | b'S' | b'F'))
                .count()
        })
        .unwrap_or(0)
}

/// Whether the batch holds a simple Query (a COPY FROM STDIN it starts needs no Sync).
pub fn has_query(batch: &[u8]) -> bool {
    split(batch)
        .map(|ms| ms.iter().any(|m| m[0] == b'Q'))
        .unwrap_or(false)
}

fn show(o: &mut Vec<u8>, label: &str, v: &[u8]) {
    o.extend_from_slice(format!("      {label:<10} = ").as_bytes());
    o.extend_from_slice(v);
    o.push(b'\n');
}

/// The `-d 1` lines of a batch: one block per message, in the style of pgreplay's trace.
pub fn debug_lines(batch: &[u8], o: &mut Vec<u8>) {
    let Ok(ms) = split(batch) else { return };
    for m in ms {
        let Ok(msg) = decode(m) else { continue };
        match msg {
            Msg::Query(q) => show(o, "query", q),
            Msg::Parse { name, sql, types } => {
                show(o, "parse", name);
                show(o, "statement", sql);
                let t: Vec<String> = types.iter().map(u32::to_string).collect();
                show(o, "types", t.join(",").as_bytes());
            }
            Msg::Bind {
                portal,
                stmt,
                formats,
                values,
                ..
            } => {
                show(o, "bind", stmt);
                show(o, "portal", portal);
                let f: Vec<String> = formats.iter().map(u16::to_string).collect();
                show(o, "formats", f.join(",").as_bytes());
                for (i, v) in values.iter().enumerate() {
                    let shown: &[u8] = v.unwrap_or(b"(null)");
                    show(o, &format!("${}", i + 1), &shown[..shown.len().min(100)]);
                }
            }
            Msg::Execute { portal, max_rows } => {
                show(o, "execute", portal);
                show(o, "max rows", max_rows.to_string().as_bytes());
            }
            Msg::Describe { kind, name } => show(o, "describe", &[&[kind, b' '], name].concat()),
            Msg::Close { kind, name } => show(o, "close", &[&[kind, b' '], name].concat()),
            Msg::Sync => show(o, "sync", b""),
            Msg::Flush => show(o, "flush", b""),
            Msg::FunctionCall { oid } => show(o, "function", oid.to_string().as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use pgrig_wire::proto::frontend;

    #[test]
    fn extended_batch_decodes_counts_and_checks() {
        let mut b = BytesMut::new();
        frontend::parse(&mut b, b"s1", b"SELECT $1 + $2", 2).unwrap();
        frontend::bind(&mut b, b"", b"s1", [Some(&b"1"[..]), None]).unwrap();
        frontend::execute(&mut b, b"", 0).unwrap();
        frontend::sync(&mut b);
        frontend::query(&mut b, b"SELECT 1").unwrap();
        check(&b).unwrap();
        assert_eq!(readies(&b), 2);
        let ms = split(&b).unwrap();
        assert_eq!(ms.len(), 5);
        match decode(ms[1]).unwrap() {
            Msg::Bind { values, .. } => assert_eq!(values, [Some(&b"1"[..]), None]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_unknown_and_trailing_bytes_are_refused() {
        let mut b = BytesMut::new();
        frontend::query(&mut b, b"SELECT 1").unwrap();
        assert!(check(&b[..b.len() - 1]).is_err());
        let mut p = BytesMut::new();
        frontend::copy_data(&mut p, b"x").unwrap();
        assert!(check(&p).unwrap_err().contains("not recorded"));
        let mut s = b"S\0\0\0\x05x".to_vec();
        assert!(check(&s).unwrap_err().contains("after"));
        s.truncate(0);
        assert!(check(&s).is_err());
    }
}
