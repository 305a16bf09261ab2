//! Reading log entries as pgreplay reads them: a stderr entry is a line and the lines after it
//! that begin with a tab (the tab removed); a csvlog entry ends at a newline outside double
//! quotes. The line count is the number of newlines consumed so far, which is the line number
//! pgreplay names in its messages.

use std::io::BufRead;

/// Entries of a log file, one at a time.
pub struct EntryReader<R> {
    input: R,
    csv: bool,
    lineno: u64,
}

impl<R: BufRead> EntryReader<R> {
    pub fn new(input: R, csv: bool) -> EntryReader<R> {
        EntryReader {
            input,
            csv,
            lineno: 0,
        }
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
                if quotes % 2 == 0 {
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
    /// file without a newline.
    fn read_line(&mut self, buf: &mut Vec<u8>) -> Result<bool, String> {
        let n = self
            .input
            .read_until(b'\n', buf)
            .map_err(|e| format!("Error reading from input file: {e}"))?;
        if n > 0 && buf.last() == Some(&b'\n') {
            self.lineno += 1;
            Ok(true)
        } else {
            Ok(false)
        }
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
}
