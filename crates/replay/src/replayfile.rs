//! pgreplay's replay file: per item, the recorded time (seconds since 2000-01-01 and
//! microseconds, 32 bits each), the session ID (64 bits), the type (1 byte), the type's
//! strings (32-bit length, 0x80000000 for NULL, then the bytes) and a newline; all big-endian.

use std::io::{self, Read, Write};

use crate::error::Error;
use crate::item::{Item, ItemKind};
use crate::time::Timestamp;

const NULL_VALUE: u32 = 0x8000_0000;

fn put_str(o: &mut Vec<u8>, s: Option<&[u8]>) {
    match s {
        None => o.extend_from_slice(&NULL_VALUE.to_be_bytes()),
        Some(s) => {
            o.extend_from_slice(&(s.len() as u32).to_be_bytes());
            o.extend_from_slice(s);
        }
    }
}

/// The bytes of one item in a replay file.
pub fn encode(item: &Item) -> Vec<u8> {
    let mut o = Vec::with_capacity(32);
    o.extend_from_slice(&(item.time.sec as u32).to_be_bytes());
    o.extend_from_slice(&item.time.usec.to_be_bytes());
    o.extend_from_slice(&item.session.to_be_bytes());
    o.push(item.kind.code());
    match &item.kind {
        ItemKind::Connect { user, database } => {
            put_str(&mut o, Some(user));
            put_str(&mut o, Some(database));
        }
        ItemKind::Disconnect | ItemKind::Cancel => {}
        ItemKind::Execute { statement } => put_str(&mut o, Some(statement)),
        // not pgreplay's: a capture's messages (the cli refuses to write them to a replay file)
        ItemKind::Wire { messages } => put_str(&mut o, Some(messages)),
        ItemKind::Prepare { name, statement } => {
            put_str(&mut o, Some(statement));
            put_str(&mut o, Some(name));
        }
        ItemKind::ExecPrepared { name, values } => {
            put_str(&mut o, Some(name));
            o.extend_from_slice(&(values.len() as u16).to_be_bytes());
            for v in values {
                put_str(&mut o, v.as_deref());
            }
        }
    }
    o.push(b'\n');
    o
}

/// Writes items to a replay file.
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Writer<W> {
        Writer { out }
    }

    pub fn write(&mut self, item: &Item) -> io::Result<()> {
        self.out.write_all(&encode(item))
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Reads items from a replay file.
pub struct Reader<R: Read> {
    input: R,
}

fn unexpected_eof() -> Error {
    Error::new("Error: unexpected end of file on input file")
}

impl<R: Read> Reader<R> {
    pub fn new(input: R) -> Reader<R> {
        Reader { input }
    }

    fn exact<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut b = [0u8; N];
        self.input.read_exact(&mut b).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => unexpected_eof(),
            _ => Error(format!("Error reading from input file: {e}")),
        })?;
        Ok(b)
    }

    fn string(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let len = u32::from_be_bytes(self.exact::<4>()?);
        if len == NULL_VALUE {
            return Ok(None);
        }
        let mut v = Vec::new();
        (&mut self.input)
            .take(u64::from(len))
            .read_to_end(&mut v)
            .map_err(|e| Error(format!("Error reading from input file: {e}")))?;
        if v.len() != len as usize {
            return Err(unexpected_eof());
        }
        Ok(Some(v))
    }

    fn text(&mut self) -> Result<Vec<u8>, Error> {
        Ok(self.string()?.unwrap_or_default())
    }

    /// The next item, `None` at a clean end of file.
    pub fn next_item(&mut self) -> Result<Option<Item>, Error> {
        let mut first = [0u8; 1];
        loop {
            match self.input.read(&mut first) {
                Ok(0) => return Ok(None),
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error(format!("Error reading from input file: {e}"))),
            }
        }
        let rest = self.exact::<3>()?;
        let sec = u32::from_be_bytes([first[0], rest[0], rest[1], rest[2]]);
        let usec = u32::from_be_bytes(self.exact::<4>()?);
        let session = u64::from_be_bytes(self.exact::<8>()?);
        let code = self.exact::<1>()?[0];
        let kind = match code {
            0 => ItemKind::Connect {
                user: self.text()?,
                database: self.text()?,
            },
            1 => ItemKind::Disconnect,
            2 => ItemKind::Execute {
                statement: self.text()?,
            },
            3 => {
                let statement = self.text()?;
                ItemKind::Prepare {
                    name: self.text()?,
                    statement,
                }
            }
            4 => {
                let name = self.text()?;
                let count = u16::from_be_bytes(self.exact::<2>()?);
                let values = (0..count)
                    .map(|_| self.string())
                    .collect::<Result<Vec<_>, _>>()?;
                ItemKind::ExecPrepared { name, values }
            }
            5 => ItemKind::Cancel,
            t => return Err(Error(format!("Error: unknown type {t} encountered"))),
        };
        if self.exact::<1>()?[0] != b'\n' {
            return Err(Error::new("Error: missing new-line at end of line"));
        }
        Ok(Some(Item {
            time: Timestamp {
                sec: i64::from(sec),
                usec,
            },
            session,
            kind,
        }))
    }
}
