//! Backend (server → client) messages, parsed without copying: every [`Backend`] borrows from
//! the read buffer. [`frame`] finds message boundaries; [`parse`] decodes one complete message.
//! Malformed input yields [`Error::Protocol`], never a panic.

use std::fmt;

use super::db_error::ErrorFields;
use crate::error::Error;

/// Largest message accepted (libpq's limit for row data is 1 GiB as well).
pub const MAX_MESSAGE_LEN: usize = 1 << 30;

/// Result of looking at the start of the read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A whole message of this many bytes (tag + length + body) is available.
    Complete(usize),
    /// More bytes are needed; `total` is the full message size when the header is known.
    Partial { total: Option<usize> },
}

/// Finds the first message boundary in `buf`.
#[inline]
pub fn frame(buf: &[u8]) -> Result<Frame, Error> {
    if buf.len() < 5 {
        return Ok(Frame::Partial { total: None });
    }
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    if !(4..=MAX_MESSAGE_LEN).contains(&len) {
        return Err(Error::protocol(format!(
            "invalid length {len} for message type '{}'",
            buf[0].escape_ascii()
        )));
    }
    let total = len + 1;
    if buf.len() >= total {
        Ok(Frame::Complete(total))
    } else {
        Ok(Frame::Partial { total: Some(total) })
    }
}

/// Transaction status reported by ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransactionStatus {
    /// `I`: not in a transaction block.
    #[default]
    Idle,
    /// `T`: in a transaction block.
    InTransaction,
    /// `E`: in a failed transaction block (queries rejected until the block ends).
    Failed,
}

impl TransactionStatus {
    #[inline]
    pub(crate) fn from_byte(b: u8) -> Result<TransactionStatus, Error> {
        match b {
            b'I' => Ok(TransactionStatus::Idle),
            b'T' => Ok(TransactionStatus::InTransaction),
            b'E' => Ok(TransactionStatus::Failed),
            other => Err(Error::protocol(format!(
                "unexpected transaction status '{}'",
                other.escape_ascii()
            ))),
        }
    }
}

/// An authentication request (message type `R`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authentication<'a> {
    Ok,
    CleartextPassword,
    Md5Password {
        salt: [u8; 4],
    },
    /// SASL with the offered mechanism names (NUL-separated list, validated).
    Sasl(SaslMechanisms<'a>),
    SaslContinue(&'a [u8]),
    SaslFinal(&'a [u8]),
    /// Kerberos, GSSAPI, SSPI, ...: not supported by this client.
    Unsupported(u32),
}

/// The mechanisms offered by AuthenticationSASL.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SaslMechanisms<'a>(&'a [u8]);

impl<'a> SaslMechanisms<'a> {
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.0.split(|&b| b == 0).take_while(|m| !m.is_empty())
    }
}

impl fmt::Debug for SaslMechanisms<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|m| m.escape_ascii().to_string()))
            .finish()
    }
}

/// One backend message, borrowed from the read buffer.
#[derive(Debug, Clone, Copy)]
pub enum Backend<'a> {
    Authentication(Authentication<'a>),
    BackendKeyData {
        process_id: i32,
        secret_key: i32,
    },
    ParameterStatus {
        name: &'a [u8],
        value: &'a [u8],
    },
    ReadyForQuery(TransactionStatus),
    ParseComplete,
    BindComplete,
    CloseComplete,
    NoData,
    EmptyQueryResponse,
    PortalSuspended,
    /// CommandComplete with its tag, e.g. `UPDATE 1`.
    CommandComplete(CommandTag<'a>),
    DataRow(DataRow<'a>),
    RowDescription(RowDescription<'a>),
    ParameterDescription(ParameterDescription<'a>),
    /// ErrorResponse.
    Error(ErrorFields<'a>),
    /// NoticeResponse.
    Notice(ErrorFields<'a>),
    Notification {
        process_id: i32,
        channel: &'a [u8],
        payload: &'a [u8],
    },
    CopyInResponse,
    CopyOutResponse,
    CopyBothResponse,
    CopyData(&'a [u8]),
    CopyDone,
    /// NegotiateProtocolVersion: the server does not support some requested option.
    NegotiateProtocolVersion {
        newest_minor: i32,
    },
}

/// The tag of CommandComplete (`SELECT 5`, `INSERT 0 1`, `BEGIN`, ...).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CommandTag<'a>(&'a [u8]);

impl<'a> CommandTag<'a> {
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    pub fn as_str(&self) -> &'a str {
        std::str::from_utf8(self.0).unwrap_or("")
    }

    /// The row count at the end of the tag, if there is one.
    pub fn rows(&self) -> Option<u64> {
        let last = self.0.rsplit(|&b| b == b' ').next()?;
        if last.is_empty() || !last.iter().all(u8::is_ascii_digit) || last.len() == self.0.len() {
            return None;
        }
        std::str::from_utf8(last).ok()?.parse().ok()
    }
}

impl fmt::Debug for CommandTag<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// A DataRow; field framing is validated at parse time.
#[derive(Clone, Copy)]
pub struct DataRow<'a> {
    count: u16,
    fields: &'a [u8],
}

impl<'a> DataRow<'a> {
    fn new(body: &'a [u8]) -> Option<DataRow<'a>> {
        let mut r = Reader(body);
        let count = r.u16()?;
        let fields = r.0;
        for _ in 0..count {
            let len = r.i32()?;
            if len >= 0 {
                r.take(len as usize)?;
            } else if len != -1 {
                return None;
            }
        }
        if !r.0.is_empty() {
            return None;
        }
        Some(DataRow { count, fields })
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Column values in order; `None` is SQL NULL.
    pub fn iter(&self) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
        let mut r = Reader(self.fields);
        (0..self.count).map_while(move |_| {
            let len = r.i32()?;
            if len < 0 {
                Some(None)
            } else {
                r.take(len as usize).map(Some)
            }
        })
    }

    /// The value of column `i`; `None` for SQL NULL or a column out of range.
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        self.iter().nth(i).flatten()
    }

    /// The value of column `i` as text (`None` for NULL, out of range, or invalid UTF-8).
    pub fn get_str(&self, i: usize) -> Option<&'a str> {
        self.get(i).and_then(|v| std::str::from_utf8(v).ok())
    }
}

impl fmt::Debug for DataRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|v| v.map(|b| String::from_utf8_lossy(b))))
            .finish()
    }
}

/// A RowDescription; validated at parse time.
#[derive(Clone, Copy)]
pub struct RowDescription<'a> {
    count: u16,
    fields: &'a [u8],
}

/// One column of a RowDescription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column<'a> {
    pub name: &'a [u8],
    pub table_oid: u32,
    pub column_id: i16,
    pub type_oid: u32,
    pub type_size: i16,
    pub type_modifier: i32,
    pub format: i16,
}

impl<'a> Column<'a> {
    /// The column name as text (lossless for UTF-8 names, `?` otherwise).
    pub fn name_str(&self) -> &'a str {
        std::str::from_utf8(self.name).unwrap_or("?")
    }
}

impl<'a> RowDescription<'a> {
    fn new(body: &'a [u8]) -> Option<RowDescription<'a>> {
        let mut r = Reader(body);
        let count = r.u16()?;
        let fields = r.0;
        for _ in 0..count {
            read_column(&mut r)?;
        }
        if !r.0.is_empty() {
            return None;
        }
        Some(RowDescription { count, fields })
    }

    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn columns(&self) -> impl Iterator<Item = Column<'a>> + 'a {
        let mut r = Reader(self.fields);
        (0..self.count).map_while(move |_| read_column(&mut r))
    }

    /// Column names as text.
    pub fn names(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.columns().map(|c| c.name_str())
    }
}

impl fmt::Debug for RowDescription<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.columns().map(|c| c.name_str()))
            .finish()
    }
}

fn read_column<'a>(r: &mut Reader<'a>) -> Option<Column<'a>> {
    Some(Column {
        name: r.cstr()?,
        table_oid: r.i32()? as u32,
        column_id: r.i16()?,
        type_oid: r.i32()? as u32,
        type_size: r.i16()?,
        type_modifier: r.i32()?,
        format: r.i16()?,
    })
}

/// The parameter type OIDs of a prepared statement.
#[derive(Debug, Clone, Copy)]
pub struct ParameterDescription<'a>(&'a [u8]);

impl<'a> ParameterDescription<'a> {
    pub fn len(&self) -> usize {
        self.0.len() / 4
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn types(&self) -> impl Iterator<Item = u32> + 'a {
        self.0
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
    }
}

/// Decodes one complete message (`msg` is exactly one frame as reported by [`frame`]).
pub fn parse(msg: &[u8]) -> Result<Backend<'_>, Error> {
    let tag = *msg
        .first()
        .ok_or_else(|| Error::protocol("empty message"))?;
    let body = msg
        .get(5..)
        .ok_or_else(|| Error::protocol("truncated message header"))?;
    parse_body(tag, body).ok_or_else(|| {
        Error::protocol(format!(
            "malformed message of type '{}' ({} bytes)",
            tag.escape_ascii(),
            body.len()
        ))
    })?
}

fn parse_body(tag: u8, body: &[u8]) -> Option<Result<Backend<'_>, Error>> {
    let mut r = Reader(body);
    let msg = match tag {
        b'R' => Backend::Authentication(parse_auth(&mut r)?),
        b'K' => {
            let process_id = r.i32()?;
            let secret_key = r.i32()?;
            Backend::BackendKeyData {
                process_id,
                secret_key,
            }
        }
        b'S' => Backend::ParameterStatus {
            name: r.cstr()?,
            value: r.cstr()?,
        },
        b'Z' => match TransactionStatus::from_byte(r.u8()?) {
            Ok(s) => Backend::ReadyForQuery(s),
            Err(e) => return Some(Err(e)),
        },
        b'1' => Backend::ParseComplete,
        b'2' => Backend::BindComplete,
        b'3' => Backend::CloseComplete,
        b'n' => Backend::NoData,
        b'I' => Backend::EmptyQueryResponse,
        b's' => Backend::PortalSuspended,
        b'C' => Backend::CommandComplete(CommandTag(r.cstr()?)),
        b'D' => Backend::DataRow(DataRow::new(body)?),
        b'T' => Backend::RowDescription(RowDescription::new(body)?),
        b't' => {
            let n = r.u16()? as usize;
            let types = r.take(n * 4)?;
            Backend::ParameterDescription(ParameterDescription(types))
        }
        b'E' => Backend::Error(ErrorFields::new(body)?),
        b'N' => Backend::Notice(ErrorFields::new(body)?),
        b'A' => Backend::Notification {
            process_id: r.i32()?,
            channel: r.cstr()?,
            payload: r.cstr()?,
        },
        b'G' => Backend::CopyInResponse,
        b'H' => Backend::CopyOutResponse,
        b'W' => Backend::CopyBothResponse,
        b'd' => Backend::CopyData(body),
        b'c' => Backend::CopyDone,
        b'v' => Backend::NegotiateProtocolVersion {
            newest_minor: r.i32()?,
        },
        other => {
            return Some(Err(Error::protocol(format!(
                "unexpected message type '{}'",
                other.escape_ascii()
            ))))
        }
    };
    Some(Ok(msg))
}

fn parse_auth<'a>(r: &mut Reader<'a>) -> Option<Authentication<'a>> {
    let code = r.i32()? as u32;
    Some(match code {
        0 => Authentication::Ok,
        3 => Authentication::CleartextPassword,
        5 => {
            let s = r.take(4)?;
            Authentication::Md5Password {
                salt: [s[0], s[1], s[2], s[3]],
            }
        }
        10 => Authentication::Sasl(SaslMechanisms(r.0)),
        11 => Authentication::SaslContinue(r.0),
        12 => Authentication::SaslFinal(r.0),
        other => Authentication::Unsupported(other),
    })
}

/// A bounds-checked big-endian cursor.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    #[inline]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    fn i16(&mut self) -> Option<i16> {
        self.u16().map(|v| v as i16)
    }

    #[inline]
    fn i32(&mut self) -> Option<i32> {
        self.take(4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn cstr(&mut self) -> Option<&'a [u8]> {
        let nul = self.0.iter().position(|&b| b == 0)?;
        let s = &self.0[..nul];
        self.0 = &self.0[nul + 1..];
        Some(s)
    }
}
