//! The capture file `pgrig capture` writes and `pgrig replay` reads (format in
//! docs/replay.md, "Capturing with typed parameters"): a 24-byte header (`PGRIGCAP`, version,
//! reserved, the capture's start as µs since the Unix epoch), then records — µs since the
//! start, session id, kind, payload length, payload; all big-endian. Everything read is
//! checked before use; an error names the record's byte offset.

use std::io::{self, Read, Write};

use crate::capture_msg;
use crate::error::Error;
use crate::item::{Item, ItemKind};
use crate::time::Timestamp;

/// The first 8 bytes of a capture file.
pub const MAGIC: &[u8; 8] = b"PGRIGCAP";
pub const VERSION: u32 = 1;
const HEADER_LEN: usize = 24;
/// Largest payload accepted (the protocol's own message limit).
const MAX_PAYLOAD: u32 = 1 << 30;
/// Seconds from the Unix epoch to 2000-01-01 (the replay items' epoch).
const EPOCH_2000: i64 = 946_684_800;

/// A record's kind (its byte in the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `C`: a session authenticated; payload: its startup parameters, NUL-terminated
    /// name/value pairs (`user`, `database`, then the others).
    Connect = b'C' as isize,
    /// `M`: what the client sent at once: one or more whole frontend messages.
    Messages = b'M' as isize,
    /// `X`: the session ended (Terminate or the connection closed).
    Disconnect = b'X' as isize,
    /// `K`: a cancel request for the session.
    Cancel = b'K' as isize,
    /// `Z`: the capture ended cleanly; payload: 8-byte counts of sessions, message batches,
    /// skipped CopyData messages and cancels.
    End = b'Z' as isize,
}

impl Kind {
    fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            b'C' => Kind::Connect,
            b'M' => Kind::Messages,
            b'X' => Kind::Disconnect,
            b'K' => Kind::Cancel,
            b'Z' => Kind::End,
            _ => return None,
        })
    }
}

/// The counts of a capture (the `Z` record's payload).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub sessions: u64,
    pub batches: u64,
    pub copy_skipped: u64,
    pub cancels: u64,
}

/// Writes a capture file.
pub struct Writer<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Writes the header; `start_unix_us` is the capture's start on the wall clock.
    pub fn new(mut out: W, start_unix_us: i64) -> io::Result<Writer<W>> {
        let mut h = Vec::with_capacity(HEADER_LEN);
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&VERSION.to_be_bytes());
        h.extend_from_slice(&0u32.to_be_bytes());
        h.extend_from_slice(&start_unix_us.to_be_bytes());
        out.write_all(&h)?;
        Ok(Writer {
            out,
            buf: Vec::new(),
        })
    }

    /// One record.
    pub fn record(
        &mut self,
        at_us: u64,
        session: u64,
        kind: Kind,
        payload: &[u8],
    ) -> io::Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(&at_us.to_be_bytes());
        self.buf.extend_from_slice(&session.to_be_bytes());
        self.buf.push(kind as u8);
        self.buf
            .extend_from_slice(&(payload.len() as u32).to_be_bytes());
        self.out.write_all(&self.buf)?;
        self.out.write_all(payload)
    }

    /// The closing `Z` record.
    pub fn end(&mut self, at_us: u64, c: Counts) -> io::Result<()> {
        let mut p = Vec::with_capacity(32);
        for v in [c.sessions, c.batches, c.copy_skipped, c.cancels] {
            p.extend_from_slice(&v.to_be_bytes());
        }
        self.record(at_us, 0, Kind::End, &p)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Startup parameters as a Connect payload (the password is never among them: the protocol
/// sends it in its own message, which a capture does not record).
pub fn connect_payload(params: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut p = Vec::new();
    for (k, v) in params {
        p.extend_from_slice(k);
        p.push(0);
        p.extend_from_slice(v);
        p.push(0);
    }
    p
}

/// A startup parameter: name and value.
type Param<'a> = (&'a [u8], &'a [u8]);

fn connect_params(p: &[u8]) -> Result<Vec<Param<'_>>, String> {
    if p.last() != Some(&0) {
        return Err("startup parameters without their terminating NUL".into());
    }
    let parts: Vec<&[u8]> = p[..p.len() - 1].split(|&b| b == 0).collect();
    if !parts.len().is_multiple_of(2) {
        return Err("a startup parameter without its value".into());
    }
    Ok(parts.chunks(2).map(|c| (c[0], c[1])).collect())
}

/// Reads a capture file as replay items.
pub struct Reader<R: Read> {
    input: R,
    start_unix_us: i64,
    offset: u64,
    /// The `Z` record's counts, once read.
    pub counts: Option<Counts>,
}

fn bad(offset: u64, what: impl std::fmt::Display) -> Error {
    Error(format!(
        "Error: capture file, record at byte {offset}: {what}"
    ))
}

impl<R: Read> Reader<R> {
    /// Reads and checks the header.
    pub fn new(mut input: R) -> Result<Reader<R>, Error> {
        let mut h = [0u8; HEADER_LEN];
        input
            .read_exact(&mut h)
            .map_err(|_| Error::new("Error: capture file: the header is incomplete"))?;
        if &h[..8] != MAGIC {
            return Err(Error::new("Error: not a capture file (no PGRIGCAP header)"));
        }
        let version = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
        if version != VERSION {
            return Err(Error(format!(
                "Error: capture file version {version} is not supported (this pgrig reads version {VERSION})"
            )));
        }
        let start_unix_us = i64::from_be_bytes(h[16..24].try_into().expect("8 bytes"));
        Ok(Reader {
            input,
            start_unix_us,
            offset: HEADER_LEN as u64,
            counts: None,
        })
    }

    /// The next item; `None` at the end of the file (or after the `Z` record).
    pub fn next_item(&mut self) -> Result<Option<Item>, Error> {
        loop {
            if self.counts.is_some() {
                return Ok(None);
            }
            let at = self.offset;
            let mut head = [0u8; 21];
            match read_full(&mut self.input, &mut head) {
                Ok(0) => return Ok(None),
                Ok(21) => {}
                Ok(_) => return Err(bad(at, "the file ends inside the record's header")),
                Err(e) => return Err(bad(at, e)),
            }
            let us = u64::from_be_bytes(head[..8].try_into().expect("8 bytes"));
            let session = u64::from_be_bytes(head[8..16].try_into().expect("8 bytes"));
            let len = u32::from_be_bytes(head[17..21].try_into().expect("4 bytes"));
            let kind = Kind::from_byte(head[16])
                .ok_or_else(|| bad(at, format!("unknown kind '{}'", head[16].escape_ascii())))?;
            if len > MAX_PAYLOAD || us > i64::MAX as u64 / 2 {
                return Err(bad(at, "impossible length or time"));
            }
            let mut payload = vec![0u8; len as usize];
            if read_full(&mut self.input, &mut payload).map_err(|e| bad(at, e))? != payload.len() {
                return Err(bad(at, "the file ends inside the record"));
            }
            self.offset += 21 + u64::from(len);
            if let Some(item) = self.item(at, us, session, kind, payload)? {
                return Ok(Some(item));
            }
        }
    }

    fn item(
        &mut self,
        at: u64,
        us: u64,
        session: u64,
        kind: Kind,
        payload: Vec<u8>,
    ) -> Result<Option<Item>, Error> {
        if kind != Kind::End && session == 0 {
            return Err(bad(at, "session id 0"));
        }
        let kind = match kind {
            Kind::End => {
                if payload.len() != 32 {
                    return Err(bad(at, "the end record's counts are not 32 bytes"));
                }
                let n =
                    |i: usize| u64::from_be_bytes(payload[i * 8..i * 8 + 8].try_into().expect("8"));
                self.counts = Some(Counts {
                    sessions: n(0),
                    batches: n(1),
                    copy_skipped: n(2),
                    cancels: n(3),
                });
                return Ok(None);
            }
            Kind::Connect => {
                let params = connect_params(&payload).map_err(|e| bad(at, e))?;
                let get = |k: &[u8]| {
                    params
                        .iter()
                        .find(|(n, _)| *n == k)
                        .map(|(_, v)| v.to_vec())
                };
                let user = get(b"user").ok_or_else(|| bad(at, "a session without a user"))?;
                let database = get(b"database").unwrap_or_else(|| user.clone());
                ItemKind::Connect { user, database }
            }
            Kind::Messages => {
                capture_msg::check(&payload).map_err(|e| bad(at, e))?;
                ItemKind::Wire { messages: payload }
            }
            Kind::Disconnect | Kind::Cancel if !payload.is_empty() => {
                return Err(bad(at, "a payload where none belongs"));
            }
            Kind::Disconnect => ItemKind::Disconnect,
            Kind::Cancel => ItemKind::Cancel,
        };
        Ok(Some(Item {
            time: self.timestamp(us),
            session,
            kind,
        }))
    }

    /// Recorded time as seconds since 2000-01-01 (UTC) and microseconds.
    fn timestamp(&self, us: u64) -> Timestamp {
        let t = self.start_unix_us.saturating_add(us as i64) - EPOCH_2000 * 1_000_000;
        Timestamp {
            sec: t.div_euclid(1_000_000),
            usec: t.rem_euclid(1_000_000) as u32,
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Whether `head` (the first bytes of an input) starts a capture file.
pub fn is_capture(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), EPOCH_2000 * 1_000_000 + 5).unwrap();
        let params = vec![
            (b"user".to_vec(), b"alice".to_vec()),
            (b"database".to_vec(), b"db".to_vec()),
        ];
        w.record(10, 1, Kind::Connect, &connect_payload(&params))
            .unwrap();
        w.record(20, 1, Kind::Messages, b"S\0\0\0\x04").unwrap();
        w.record(30, 1, Kind::Cancel, b"").unwrap();
        w.record(40, 1, Kind::Disconnect, b"").unwrap();
        w.end(
            50,
            Counts {
                sessions: 1,
                batches: 1,
                copy_skipped: 3,
                cancels: 1,
            },
        )
        .unwrap();
        w.flush().unwrap();
        w.out
    }

    #[test]
    fn records_read_back_as_items_and_counts() {
        let bytes = sample();
        assert!(is_capture(&bytes));
        let mut r = Reader::new(&bytes[..]).unwrap();
        let mut items = Vec::new();
        while let Some(i) = r.next_item().unwrap() {
            items.push(i);
        }
        assert_eq!(items.len(), 4);
        assert_eq!(items[0].time, Timestamp { sec: 0, usec: 15 });
        assert_eq!(
            items[0].kind,
            ItemKind::Connect {
                user: b"alice".to_vec(),
                database: b"db".to_vec()
            }
        );
        assert_eq!(
            items[1].kind,
            ItemKind::Wire {
                messages: b"S\0\0\0\x04".to_vec()
            }
        );
        assert_eq!(items[2].kind, ItemKind::Cancel);
        assert_eq!(r.counts.unwrap().copy_skipped, 3);
    }

    #[test]
    fn damaged_files_are_errors_naming_the_record() {
        let bytes = sample();
        // cut inside the second record
        let cut = &bytes[..24 + 21 + 30 + 10];
        let mut r = Reader::new(cut).unwrap();
        r.next_item().unwrap();
        let e = r.next_item().unwrap_err();
        assert!(e.0.contains("record at byte"), "{e}");
        // an unknown kind
        let mut b = bytes.clone();
        b[24 + 16] = b'?';
        let e = Reader::new(&b[..]).unwrap().next_item().unwrap_err();
        assert!(e.0.contains("unknown kind"), "{e}");
        assert!(Reader::new(&b"PGRIGCAQ"[..]).is_err());
    }
}
