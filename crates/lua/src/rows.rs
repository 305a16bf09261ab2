//! A connection's current result set, flat: every field's bytes in one buffer and a
//! (start, length) cell per field (length -1 for NULL), rows as ranges of cells. Filling it
//! allocates nothing once the buffers have grown (most scripts never fetch a row: sysbench's
//! own scripts discard their results), and a fetch hands out borrowed bytes.

/// Rows of one statement, as the server's text.
#[derive(Default, Debug)]
pub struct Rows {
    bytes: Vec<u8>,
    /// (start in `bytes`, length or -1 for NULL)
    cells: Vec<(u32, i32)>,
    /// index of each row's first cell
    starts: Vec<u32>,
    /// the column count (`Some` when the statement returns rows, even none)
    ncols: Option<usize>,
    /// the next row `fetch` hands out
    pos: usize,
}

impl Rows {
    /// Empties the set for a statement that returns `ncols` columns (`None`: no result set).
    pub fn reset(&mut self, ncols: Option<usize>) {
        self.bytes.clear();
        self.cells.clear();
        self.starts.clear();
        self.ncols = ncols;
        self.pos = 0;
    }

    /// Appends one row of fields (`None` is NULL).
    pub fn push_row<'a>(&mut self, fields: impl Iterator<Item = Option<&'a [u8]>>) {
        self.starts.push(self.cells.len() as u32);
        for f in fields {
            match f {
                Some(b) => {
                    self.cells.push((self.bytes.len() as u32, b.len() as i32));
                    self.bytes.extend_from_slice(b);
                }
                None => self.cells.push((0, -1)),
            }
        }
    }

    pub fn ncols(&self) -> Option<usize> {
        self.ncols
    }

    pub fn nrows(&self) -> usize {
        self.starts.len()
    }

    /// Moves to the next row: its field count, or `None` past the last row.
    pub fn advance(&mut self) -> Option<usize> {
        let i = self.pos;
        let start = *self.starts.get(i)? as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.cells.len(), |&e| e as usize);
        self.pos += 1;
        Some(end - start)
    }

    /// Field `col` of the row [`advance`](Self::advance) moved to (`None`: NULL or no such
    /// field).
    pub fn field(&self, col: usize) -> Option<&[u8]> {
        let row = self.pos.checked_sub(1)?;
        let start = *self.starts.get(row)? as usize;
        let end = self
            .starts
            .get(row + 1)
            .map_or(self.cells.len(), |&e| e as usize);
        let &(at, len) = self.cells[start..end].get(col)?;
        (len >= 0).then(|| &self.bytes[at as usize..at as usize + len as usize])
    }

    /// Drops the rows (`rs:free()`), keeping the buffers.
    pub fn free(&mut self) {
        self.reset(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_in_order_with_nulls() {
        let mut r = Rows::default();
        r.reset(Some(2));
        r.push_row([Some(&b"1"[..]), None].into_iter());
        r.push_row([Some(&b"two"[..]), Some(&b""[..])].into_iter());
        assert_eq!((r.nrows(), r.ncols()), (2, Some(2)));
        assert_eq!(r.advance(), Some(2));
        assert_eq!((r.field(0), r.field(1)), (Some(&b"1"[..]), None));
        assert_eq!(r.advance(), Some(2));
        assert_eq!(
            (r.field(0), r.field(1)),
            (Some(&b"two"[..]), Some(&b""[..]))
        );
        assert_eq!(r.field(2), None);
        assert_eq!(r.advance(), None);
        r.reset(None);
        assert_eq!((r.nrows(), r.ncols(), r.advance()), (0, None, None));
    }
}
