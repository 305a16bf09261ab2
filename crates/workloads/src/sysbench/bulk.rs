//! bulk_insert's client, as sysbench 1.0.20's script and driver behave: every event appends one
//! row `(n,n)` (n = 1, 2, ... per client) to the client's multi-row
//! `INSERT INTO sbtest<t> VALUES(1,1),(2,2),...`, which is sent when the next row would not fit
//! in sysbench's 512 KiB bulk buffer (the event that finds it full pays for the send) and, with
//! what is left, when the client's run ends ([`TxProgram::finish`], sysbench's `thread_done`).
//! So events count rows, and the table holds exactly as many rows as events were counted;
//! "queries" count the INSERTs sent.

use pgrig_engine::workload::{Params, Reply, Step, StmtId, TxProgram};

use super::sql;

/// One client's bulk insert into its own table.
pub struct Bulk {
    /// the client's `INSERT INTO sbtest<t> VALUES$1` statement
    stmt: StmtId,
    /// `INSERT INTO sbtest<t> VALUES`'s length
    head: usize,
    /// the rows not sent yet, comma-separated
    rows: Vec<u8>,
    /// the rows being sent (kept until the server answers, to replay them after a retryable
    /// error)
    sending: Vec<u8>,
    /// the next row's number
    next: u64,
    /// this event's row is added
    added: bool,
}

impl Bulk {
    /// The client of `sbtest<table>`, whose INSERT is statement `stmt`.
    pub fn new(table: u32, stmt: StmtId) -> Bulk {
        Bulk {
            stmt,
            head: sql::bulk_insert_head(table).len(),
            rows: Vec::with_capacity(sql::BULK_PACKET_SIZE),
            sending: Vec::new(),
            next: 1,
            added: false,
        }
    }

    /// Appends the next row; `true` when the rows before it were moved to `sending` first
    /// (they and the row would not fit in one INSERT with its terminating NUL).
    fn add_row(&mut self) -> bool {
        let n = self.next;
        self.next += 1;
        let mut row = Vec::with_capacity(42);
        row.push(b'(');
        pgrig_engine::workload::push_int(&mut row, n as i64);
        row.push(b',');
        pgrig_engine::workload::push_int(&mut row, n as i64);
        row.push(b')');
        let full = !self.rows.is_empty()
            && self.head + self.rows.len() + 1 + row.len() + 1 > sql::BULK_PACKET_SIZE;
        if full {
            std::mem::swap(&mut self.rows, &mut self.sending);
            self.rows.clear();
        }
        if !self.rows.is_empty() {
            self.rows.push(b',');
        }
        self.rows.extend_from_slice(&row);
        full
    }
}

/// The rows `first..=last` of the INSERT into `sbtest<table>` that starts at row `first` (what
/// [`Bulk`] sends; for tests and documentation).
pub fn bulk_batch(table: u32, first: u64) -> (u64, u64) {
    let mut len = sql::bulk_insert_head(table).len();
    let mut n = first;
    loop {
        let row = 2 * digits(n) + 3;
        let comma = usize::from(n > first);
        if n > first && len + row + 1 + comma > sql::BULK_PACKET_SIZE {
            return (first, n - 1);
        }
        len += row + comma;
        n += 1;
    }
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

impl TxProgram for Bulk {
    fn begin(&mut self, _tx: usize, _retry: bool) {
        // a retried event sends `sending` again; a new one adds its row
        if self.sending.is_empty() {
            self.added = false;
        }
    }

    fn step(&mut self, reply: Option<&Reply<'_>>, params: &mut Params) -> Step {
        if reply.is_some() {
            self.sending.clear();
            return Step::Done;
        }
        if !self.added {
            self.added = true;
            if !self.add_row() {
                return Step::Done;
            }
        }
        if self.sending.is_empty() {
            return Step::Done;
        }
        params.raw_with(|b| b.extend_from_slice(&self.sending));
        Step::Run(self.stmt)
    }

    fn finish(&mut self, params: &mut Params) -> Option<StmtId> {
        if self.rows.is_empty() {
            return None;
        }
        params.raw_with(|b| b.extend_from_slice(&self.rows));
        self.rows.clear();
        Some(self.stmt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of each INSERT a client sends for `events` events.
    fn batches(events: u64) -> Vec<(u64, u64)> {
        let mut b = Bulk::new(1, 0);
        let mut out = Vec::new();
        let mut first = 1;
        let mut params = Params::new();
        let mut close = |p: &Params, first: &mut u64| {
            let (Some(v), _) = p.get(0).unwrap() else {
                panic!("no rows")
            };
            let rows = v.iter().filter(|&&c| c == b'(').count() as u64;
            out.push((*first, *first + rows - 1));
            *first += rows;
        };
        for _ in 0..events {
            b.begin(0, false);
            params.clear();
            if let Step::Run(_) = b.step(None, &mut params) {
                close(&params, &mut first);
                let reply = Reply {
                    count: 1,
                    rows: &Default::default(),
                };
                assert_eq!(b.step(Some(&reply), &mut params), Step::Done);
            }
        }
        params.clear();
        if b.finish(&mut params).is_some() {
            close(&params, &mut first);
        }
        out
    }

    #[test]
    fn each_insert_holds_what_sysbenchs_buffer_holds() {
        // read from the server's log of a sysbench 1.0.20 run: 1..39033, 39034..76480, ...
        assert_eq!(
            batches(100_000),
            vec![(1, 39033), (39034, 76480), (76481, 100_000)]
        );
        assert_eq!(bulk_batch(1, 39034), (39034, 76480));
        assert_eq!(batches(3), vec![(1, 3)]);
        assert!(batches(0).is_empty());
    }

    #[test]
    fn the_text_is_sysbenchs() {
        let mut b = Bulk::new(7, 0);
        for _ in 0..3 {
            b.begin(0, false);
            assert_eq!(b.step(None, &mut Params::new()), Step::Done);
        }
        let mut p = Params::new();
        assert_eq!(b.finish(&mut p), Some(0));
        let mut sent = Vec::new();
        pgrig_engine::workload::inline_params(&sql::bulk_insert(7), &p, &mut sent);
        assert_eq!(sent, b"INSERT INTO sbtest7 VALUES(1,1),(2,2),(3,3)");
    }
}
