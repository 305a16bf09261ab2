//! Reading log entries as pgreplay reads them: a stderr entry is a line and the lines after it
//! that begin with a tab (the tab removed); a csvlog entry ends at a newline outside double
//! quotes. The line count is the number of newlines consumed so far, which is the line number
//! pgreplay names in its messages.
//!
//! An entry is at most [`MAX_ENTRY`] bytes: a longer one (a runaway line, `/dev/zero` as the log)
//! is refused naming the line it starts on, before it is held in memory.

use std::io::{BufRead, Read};

/// The longest log entry read, continuation lines included: 64 MiB (a statement that long is
/// far past what a log that replays well holds; the bound keeps a hostile or mistaken input from
/// costing more memory than a few times this).
pub const MAX_ENTRY: usize = 64 << 20;

/// Marks the error of an entry past [`MAX_ENTRY`] (callers name the file in it).
pub const TOO_LONG: &str = "a log entry longer than 64 MiB";

/// Entries of a log file, one at a time.
pub struct EntryReader<R> {
    input: R,
    csv: bool,
    lineno: u64,
    max_entry: usize,
}

impl<R: BufRead> EntryReader<R> {
    pub fn new(input: R, csv: bool) -> EntryReader<R> {
        EntryReader {
            input,
            csv,
            lineno: 0,
            max_entry: MAX_ENTRY,
        }
    }

    /// The same with another bound on an entry's length (tests).
    pub fn with_max_entry(mut self, max_entry: usize) -> EntryReader<R> {
        self.max_entry = max_entry;
        self
    }

    /// Newlines consumed so far.
    pub fn lineno(&self) -> u64 {
        self.lineno
    }

    /// The next entry without its final newline; empty at the end of the input.
    pub fn next_entry(&mut self) -> Result<Vec<u8>, String> {
        let mut entry = Vec::new();
        if self.csv {
            let mut quotes = 0usize;
            loop {
                let start = entry.len();
                if !self.read_line(&mut entry)? {
                    break;
                }
                quotes += entry[start..].iter().filter(|&&b| b == b'"').count();
                if quotes.is_multiple_of(2) {
                    break;
                }
            }
        } else {
            if self.read_line(&mut entry)? {
                while self.peek()? == Some(b'\t') {
                    self.input.consume(1);
                    if !self.read_line(&mut entry)? {
                        break;
                    }
                }
            }
        }
        if entry.last() == Some(&b'\n') {
            entry.pop();
        }
        Ok(entry)
    }

    /// Appends one line (with its newline); false when nothing was left or the line ended the
    /// file without a newline. An entry growing past the bound is refused.
    fn read_line(&mut self, buf: &mut Vec<u8>) -> Result<bool, String> {
        let room = (self.max_entry + 1).saturating_sub(buf.len());
        let n = (&mut self.input)
            .take(room as u64)
            .read_until(b'\n', buf)
            .map_err(|e| format!("Error reading from input file: {e}"))?;
        if buf.len() > self.max_entry {
            return Err(format!(
                "Error reading line {}: {TOO_LONG} (pgrig reads entries up to {} bytes, \
                 continuation lines included; is this a PostgreSQL log?)",
                self.entry_start(buf),
                self.max_entry
            ));
        }
        if n > 0 && buf.last() == Some(&b'\n') {
            self.lineno += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// The line the entry in `buf` starts on.
    fn entry_start(&self, buf: &[u8]) -> u64 {
        let before_last = &buf[..buf.len().saturating_sub(1)];
        let newlines = before_last.iter().filter(|&&b| b == b'\n').count() as u64;
        (self.lineno + 1).saturating_sub(newlines)
    }

    fn peek(&mut self) -> Result<Option<u8>, String> {
        let b = self
            .input
            .fill_buf()
            .map_err(|e| format!("Error reading from input file: {e}"))?;
        Ok(b.first().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_lines_and_csv_quotes() {
        let mut r = EntryReader::new(&b"a\n\tb\nc\n"[..], false);
        assert_eq!(r.next_entry().unwrap(), b"a\nb");
        assert_eq!(r.lineno(), 2);
        assert_eq!(r.next_entry().unwrap(), b"c");
        assert_eq!(r.next_entry().unwrap(), b"");
        let mut r = EntryReader::new(&b"x,\"a\nb\",y\nz\n"[..], true);
        assert_eq!(r.next_entry().unwrap(), b"x,\"a\nb\",y");
        assert_eq!(r.lineno(), 2);
    }

    #[test]
    fn an_entry_past_the_bound_is_refused_naming_the_line_it_starts_on() {
        let mut r = EntryReader::new(&b"a\nbbbbbbbbbbbb\nc\n"[..], false).with_max_entry(8);
        assert_eq!(r.next_entry().unwrap(), b"a");
        let e = r.next_entry().unwrap_err();
        assert!(e.contains("line 2") && e.contains(TOO_LONG), "{e}");
        // continuation lines count toward the bound; the entry starts on line 1
        let mut r = EntryReader::new(&b"abc\n\tdef\n\tghi\n"[..], false).with_max_entry(8);
        let e = r.next_entry().unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        // exactly the bound is fine
        let mut r = EntryReader::new(&b"1234567\nx\n"[..], false).with_max_entry(8);
        assert_eq!(r.next_entry().unwrap(), b"1234567");
        let mut r = EntryReader::new(&b"x,\"1234\n5678\n"[..], true).with_max_entry(8);
        assert!(r.next_entry().unwrap_err().contains("line 1"));
    }
}
