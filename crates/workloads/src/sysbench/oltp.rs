//! The OLTP tests' transaction program (oltp_read_write, _read_only, _write_only,
//! _point_select, _update_index, _update_non_index, _delete): it walks the plan's groups; each
//! group picks one random table and runs its statements on it, with ids from the `--rand-type`
//! distribution over `1..table_size`, ranges `id .. id + range_size - 1`, new `c`/`pad` digit
//! groups, and each delete followed by the insert of the same id with a new `k`, `c` and `pad`.
//!
//! Values are drawn in the order oltp_common.lua draws them, so a client's stream gives the
//! values sysbench's thread of the same seed gives: the group's table first (even for a group of
//! no statements), a non-index update's `c` before its id, a delete's id, `k`, `c` and `pad`
//! before the delete runs. A retried event draws new values, as sysbench's restarted event does
//! (replaying a unique violation's id would fail again).

use std::sync::Arc;

use pgrig_engine::workload::{Params, Reply, Step, TxProgram};

use super::rand::Rng;
use super::shared::{Group, Shared};
use super::sql::{Kind, C_TEMPLATE, PAD_TEMPLATE};
use super::test::Test;

/// One client's OLTP program.
pub struct Oltp {
    sh: Arc<Shared>,
    rng: Rng,
    /// the plan's group being run
    group: usize,
    /// statements of the group run so far
    done: u32,
    table: u32,
    /// the insert owed after a delete: its id and k (its c and pad in `c`, `pad`)
    pending_insert: Option<(u32, u32)>,
    c: Vec<u8>,
    pad: Vec<u8>,
    /// an event has run (each later one first takes the draw sysbench's latency histogram
    /// took when the previous one ended)
    started: bool,
}

impl Oltp {
    pub fn new(sh: Arc<Shared>, rng: Rng) -> Oltp {
        Oltp {
            sh,
            rng,
            group: 0,
            done: 0,
            table: 1,
            pending_insert: None,
            c: Vec::with_capacity(C_TEMPLATE.len()),
            pad: Vec::with_capacity(PAD_TEMPLATE.len()),
            started: false,
        }
    }

    fn id(&mut self) -> u32 {
        let size = self.sh.settings.table_size;
        self.sh.settings.dist.default_value(&mut self.rng, 1, size)
    }

    /// Writes the parameters of one `kind` statement and returns it.
    fn run(&mut self, kind: Kind, params: &mut Params) -> Step {
        if kind == Kind::NonIndexUpdate {
            // oltp_common sets the new c, then draws the id
            let rng = &mut self.rng;
            params.text_with(|b| rng.string_into(C_TEMPLATE, b));
            let id = self.id();
            params.int(i64::from(id));
            return Step::Run(self.sh.stmt(kind, self.table));
        }
        let id = self.id();
        match kind {
            Kind::PointSelect | Kind::IndexUpdate => {
                params.int(i64::from(id));
            }
            Kind::SimpleRange | Kind::SumRange | Kind::OrderRange | Kind::DistinctRange => {
                let end = i64::from(id) + i64::from(self.sh.settings.range_size) - 1;
                params.int(i64::from(id)).int(end);
            }
            Kind::Delete => {
                // oltp_delete deletes only; the others' deletes come with their insert, whose
                // values are drawn before the delete runs
                if self.sh.settings.test != Test::OltpDelete {
                    let k = self.id();
                    self.pending_insert = Some((id, k));
                    self.c.clear();
                    self.rng.string_into(C_TEMPLATE, &mut self.c);
                    self.pad.clear();
                    self.rng.string_into(PAD_TEMPLATE, &mut self.pad);
                }
                params.int(i64::from(id));
            }
            Kind::Insert | Kind::NonIndexUpdate => {}
        }
        Step::Run(self.sh.stmt(kind, self.table))
    }

    fn insert(&mut self, id: u32, k: u32, params: &mut Params) -> Step {
        let (c, pad) = (&self.c, &self.pad);
        params
            .int(i64::from(id))
            .int(i64::from(k))
            .text_with(|b| b.extend_from_slice(c))
            .text_with(|b| b.extend_from_slice(pad));
        Step::Run(self.sh.stmt(Kind::Insert, self.table))
    }
}

impl TxProgram for Oltp {
    fn begin(&mut self, _tx: usize, retry: bool) {
        if !retry {
            end_of_event_draw(
                &mut self.started,
                &mut self.rng,
                self.sh.settings.percentile,
            );
        }
        self.group = 0;
        self.done = 0;
        self.pending_insert = None;
    }

    fn step(&mut self, _reply: Option<&Reply<'_>>, params: &mut Params) -> Step {
        if let Some((id, k)) = self.pending_insert.take() {
            return self.insert(id, k, params);
        }
        loop {
            let Some(&group) = self.sh.plan.get(self.group) else {
                return Step::Done;
            };
            match group {
                Group::Begin | Group::Commit => {
                    self.group += 1;
                    let s = if group == Group::Begin {
                        self.sh.begin
                    } else {
                        self.sh.commit
                    };
                    return Step::Run(s);
                }
                Group::Repeat(kind, count) => {
                    if count == 0 {
                        // oltp_common draws the table before its loop of no statements
                        self.table = self.rng.uniform(1, self.sh.settings.tables);
                        self.group += 1;
                        continue;
                    }
                    if self.done == count {
                        self.group += 1;
                        self.done = 0;
                        continue;
                    }
                    if self.done == 0 {
                        let tables = self.sh.settings.tables;
                        self.table = self.rng.uniform(1, tables);
                    }
                    self.done += 1;
                    return self.run(kind, params);
                }
            }
        }
    }
}

/// The draw sysbench's latency histogram takes when an event ends (with `--percentile` not 0),
/// taken here when the next event begins.
#[inline]
pub fn end_of_event_draw(started: &mut bool, rng: &mut Rng, percentile: u32) {
    if *started && percentile > 0 {
        rng.next_u64();
    }
    *started = true;
}
