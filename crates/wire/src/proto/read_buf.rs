//! The receive buffer shared by every I/O backend: bytes are read into [`ReadBuf::spare`],
//! committed with [`ReadBuf::filled`], and complete messages are taken out with
//! [`ReadBuf::next_frame`] / [`ReadBuf::consume`]. It is allocated once, grows only for messages
//! larger than itself, and compacts by moving the unread tail to the front.

use super::backend::{frame, Frame};
use crate::error::Error;

/// Default capacity: comfortably holds a round trip's worth of small messages.
pub const DEFAULT_CAPACITY: usize = 4 * 1024;

/// Minimum free space offered to a read.
const MIN_READ: usize = 4 * 1024;

/// A read that fills all the space it was offered means more is probably waiting (answers of
/// many rows, e.g. sysbench's 100-row ranges): the buffer then doubles, up to this, so the rest
/// comes in fewer reads. A client whose answers are small keeps the default size.
const ADAPTIVE_LIMIT: usize = 64 * 1024;

pub struct ReadBuf {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Default for ReadBuf {
    fn default() -> Self {
        ReadBuf::with_capacity(DEFAULT_CAPACITY)
    }
}

impl ReadBuf {
    pub fn with_capacity(cap: usize) -> ReadBuf {
        ReadBuf {
            buf: vec![0; cap.max(MIN_READ)],
            start: 0,
            end: 0,
        }
    }

    /// Unconsumed bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// True if no unconsumed bytes are buffered.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Size of the next complete message, or `None` if more bytes must be read first.
    #[inline]
    pub fn next_frame(&self) -> Result<Option<usize>, Error> {
        match frame(self.data())? {
            Frame::Complete(n) => Ok(Some(n)),
            Frame::Partial { .. } => Ok(None),
        }
    }

    /// Takes `n` bytes (a frame length from [`next_frame`](Self::next_frame)) off the front.
    #[inline]
    pub fn consume(&mut self, n: usize) -> &[u8] {
        let s = self.start;
        self.start = (s + n).min(self.end);
        &self.buf[s..self.start]
    }

    /// Free space to read into; compacts or grows so at least the pending message fits.
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start == self.end {
            // all consumed (the usual case between round trips): the whole buffer, unframed
            self.start = 0;
            self.end = 0;
            return &mut self.buf[..];
        }
        let pending = self.end - self.start;
        let want = match frame(self.data()) {
            Ok(Frame::Partial { total: Some(total) }) => total.max(pending + MIN_READ),
            _ => pending + MIN_READ,
        };
        if self.buf.len() - self.end < MIN_READ || self.buf.len() < want {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.start = 0;
                self.end = pending;
            }
            if self.buf.len() < want {
                self.buf.resize(want.next_power_of_two(), 0);
            }
        }
        &mut self.buf[self.end..]
    }

    /// Records that `n` bytes were written into [`spare`](Self::spare).
    #[inline]
    pub fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.len());
        if n > 0 && self.end == self.buf.len() && self.buf.len() < ADAPTIVE_LIMIT {
            let grown = (self.buf.len() * 2).min(ADAPTIVE_LIMIT);
            self.buf.resize(grown, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(rb: &mut ReadBuf, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let spare = rb.spare();
            let n = spare.len().min(rest.len());
            spare[..n].copy_from_slice(&rest[..n]);
            rb.filled(n);
            rest = &rest[n..];
        }
    }

    #[test]
    fn partial_message_waits_for_more_bytes() {
        let mut rb = ReadBuf::default();
        feed(&mut rb, b"Z\0\0\0\x05");
        assert_eq!(rb.next_frame().unwrap(), None);
        feed(&mut rb, b"I1\0\0\0\x04");
        assert_eq!(rb.next_frame().unwrap(), Some(6));
        assert_eq!(rb.consume(6), b"Z\0\0\0\x05I");
        assert_eq!(rb.next_frame().unwrap(), Some(5));
        rb.consume(5);
        assert!(rb.is_empty());
    }

    #[test]
    fn message_larger_than_buffer_grows_it() {
        let mut rb = ReadBuf::with_capacity(4096);
        let mut msg = vec![b'd'];
        msg.extend_from_slice(&(100_004u32).to_be_bytes());
        msg.extend(std::iter::repeat_n(7u8, 100_000));
        feed(&mut rb, &msg[..10]);
        assert_eq!(rb.next_frame().unwrap(), None);
        feed(&mut rb, &msg[10..]);
        assert_eq!(rb.next_frame().unwrap(), Some(100_005));
        assert_eq!(rb.consume(100_005), &msg[..]);
    }

    #[test]
    fn full_reads_grow_the_offer_and_small_ones_do_not() {
        let mut rb = ReadBuf::default();
        // small answers, consumed as they come: the offer stays at the default
        for _ in 0..100 {
            feed(&mut rb, b"1\0\0\0\x04");
            rb.consume(5);
            assert_eq!(rb.spare().len(), DEFAULT_CAPACITY);
        }
        // a read that fills its whole offer: the next offer is larger, up to the limit
        let mut offers = Vec::new();
        for _ in 0..6 {
            let n = rb.spare().len();
            offers.push(n);
            rb.spare().fill(b'D');
            rb.filled(n);
            rb.consume(rb.data().len());
        }
        assert_eq!(offers, [4096, 8192, 16384, 32768, 65536, 65536]);
    }

    #[test]
    fn compaction_keeps_unread_tail() {
        let mut rb = ReadBuf::with_capacity(4096);
        let one = b"1\0\0\0\x04";
        for _ in 0..2000 {
            feed(&mut rb, one);
            assert_eq!(rb.next_frame().unwrap(), Some(5));
            assert_eq!(rb.consume(5), one);
        }
        feed(&mut rb, b"2\0\0");
        assert_eq!(rb.next_frame().unwrap(), None);
        feed(&mut rb, b"\0\x04");
        assert_eq!(rb.consume(5), b"2\0\0\0\x04");
    }
}
