//! A YCSB workload and its per-client programs. The workload holds what every client shares
//! (the catalogue, the choosers made once, the insert key sequence); a client's program draws
//! its operation (`choose`), then its key number, field and scan length (`begin`), and writes
//! the key and the field values straight into the engine's reused parameter buffer (`step`):
//! no allocation per operation. A retried operation replays the same key and values; an insert
//! that ended without its reply (it failed) is acknowledged at the next `begin`, so the newest
//! key reads may choose keeps advancing.

use std::sync::Arc;

use pgrig_engine::workload::{Catalogue, ClientSeed, Params, Reply, Step, TxProgram, Workload};

use super::choose::{KeyChooser, Length, OpChooser};
use super::config::{Config, Op};
use super::keys::KeyFormat;
use super::rng::Rng;
use super::sequence::InsertSequence;
use super::sql::{catalogue, Stmts};
use super::value::push_value;

/// What the clients of one workload share.
#[derive(Debug)]
struct Shared {
    ops: OpChooser,
    keys: KeyChooser,
    scan: Length,
    field_length: Length,
    format: KeyFormat,
    stmts: Stmts,
    fields: usize,
    readall: bool,
    writeall: bool,
    inserts: InsertSequence,
}

/// A YCSB core workload (`ycsb-a` … `ycsb-f`, `ycsb`).
#[derive(Debug)]
pub struct Ycsb {
    config: Config,
    catalogue: Catalogue,
    shared: Arc<Shared>,
}

impl Ycsb {
    pub fn new(config: Config) -> Ycsb {
        let ops = OpChooser::new(&config);
        let (catalogue, stmts) = catalogue(&config, &ops);
        let shared = Shared {
            keys: KeyChooser::new(&config),
            scan: Length::new(
                config.scanlengthdistribution,
                config.minscanlength,
                config.maxscanlength,
            ),
            field_length: Length::new(
                config.fieldlengthdistribution,
                config.minfieldlength,
                config.fieldlength,
            ),
            format: KeyFormat {
                hashed: config.hashed,
                zeropadding: config.zeropadding,
            },
            stmts,
            fields: config.fieldcount,
            readall: config.readallfields,
            writeall: config.writeallfields,
            inserts: InsertSequence::new(config.recordcount),
            ops,
        };
        Ycsb {
            config,
            catalogue,
            shared: Arc::new(shared),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The key number the next insert will get (`recordcount` before any).
    pub fn next_insert(&self) -> i64 {
        self.shared.inserts.peek()
    }

    fn key_literal(&self, n: i64) -> String {
        let mut k = Vec::new();
        self.shared.format.push(&mut k, n);
        String::from_utf8_lossy(&k).into_owned()
    }
}

impl Workload for Ycsb {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    fn client(&self, seed: ClientSeed) -> Box<dyn TxProgram> {
        Box::new(Program {
            shared: Arc::clone(&self.shared),
            keys: self.shared.keys.clone(),
            rng: Rng::new(seed.seed, u64::from(seed.id)),
            op: Op::Read,
            key: 0,
            field: 0,
            write_field: 0,
            scan: 0,
            values: 0,
            phase: 0,
            pending_insert: None,
        })
    }

    /// The last loaded record must exist and, when the workload inserts, the first key it
    /// will insert must not (an earlier run's inserts would collide).
    fn preflight(&self) -> Vec<String> {
        let c = &self.config;
        let last = self.key_literal(c.recordcount - 1);
        let mut checks = format!(
            "IF NOT EXISTS (SELECT 1 FROM {t} WHERE YCSB_KEY = '{last}') THEN RAISE EXCEPTION '{t} lacks key {last} (record {n}): load the {name} dataset with recordcount={r} first'; END IF;",
            t = c.table,
            n = c.recordcount - 1,
            name = c.name,
            r = c.recordcount
        );
        if c.share(Op::Insert) > 0.0 {
            let n = self.next_insert();
            let first = self.key_literal(n);
            checks.push_str(&format!(
                " IF EXISTS (SELECT 1 FROM {t} WHERE YCSB_KEY = '{first}') THEN RAISE EXCEPTION '{t} already holds key {first} (record {n}), inserted by an earlier run: reload the dataset before running {name}, whose inserts start there'; END IF;",
                t = c.table,
                name = c.name
            ));
        }
        vec![format!("DO $pgrig$BEGIN {checks} END$pgrig$")]
    }
}

/// One client's program.
struct Program {
    shared: Arc<Shared>,
    /// this client's key chooser (the `latest` one extends its ζ as inserts land)
    keys: KeyChooser,
    rng: Rng,
    op: Op,
    key: i64,
    /// the field read when not all are
    field: usize,
    /// the field written when not all are
    write_field: usize,
    scan: i64,
    /// the seed of this operation's values (replayed on a retry)
    values: u64,
    phase: u8,
    /// an insert's key number, until its reply came
    pending_insert: Option<i64>,
}

impl Program {
    fn acknowledge(&mut self) -> Result<(), String> {
        match self.pending_insert.take() {
            Some(n) => self.shared.inserts.acknowledge(n).map_err(|_| {
                "too many inserts in flight (more than 65536 unacknowledged insert keys)".into()
            }),
            None => Ok(()),
        }
    }

    fn push_key(&self, p: &mut Params) {
        let (format, key) = (self.shared.format, self.key);
        p.text_with(|b| format.push(b, key));
    }

    /// The values of every field (`all`) or of the chosen one, each its own length.
    fn push_values(&self, p: &mut Params, all: bool) {
        let mut rng = Rng::new(self.values, 0);
        let n = if all { self.shared.fields } else { 1 };
        for _ in 0..n {
            let len = self.shared.field_length.next(&mut rng) as usize;
            p.text_with(|b| push_value(b, len, &mut rng));
        }
    }
}

impl TxProgram for Program {
    fn choose(&mut self) -> Option<usize> {
        Some(self.shared.ops.next(&mut self.rng))
    }

    fn begin(&mut self, tx: usize, retry: bool) {
        self.phase = 0;
        if retry {
            return;
        }
        // an insert whose reply never came failed: let the newest-key limit move past it
        let _ = self.acknowledge();
        let shared = Arc::clone(&self.shared);
        self.op = shared.ops.ops.get(tx).map_or(Op::Read, |o| o.0);
        self.key = if self.op == Op::Insert {
            let n = shared.inserts.take();
            self.pending_insert = Some(n);
            n
        } else {
            self.keys.next(&mut self.rng, &shared.inserts)
        };
        let fields = shared.fields as u64;
        if !shared.readall && self.op != Op::Update {
            self.field = self.rng.below(fields) as usize;
        }
        if !shared.writeall && matches!(self.op, Op::Update | Op::ReadModifyWrite) {
            self.write_field = self.rng.below(fields) as usize;
        }
        if self.op == Op::Scan {
            self.scan = shared.scan.next(&mut self.rng);
        }
        self.values = self.rng.next_u64();
    }

    fn step(&mut self, _reply: Option<&Reply<'_>>, p: &mut Params) -> Step {
        let s = self.shared.stmts;
        let (writeall, phase) = (self.shared.writeall, self.phase);
        self.phase += 1;
        match (self.op, phase) {
            (Op::Read, 0) | (Op::ReadModifyWrite, 0) => {
                self.push_key(p);
                let a = if self.op == Op::Read {
                    s.read
                } else {
                    s.rmw_read
                };
                Step::Run(a.stmt(self.field))
            }
            (Op::Update, 0) | (Op::ReadModifyWrite, 1) => {
                self.push_values(p, writeall);
                self.push_key(p);
                let a = if self.op == Op::Update {
                    s.update
                } else {
                    s.rmw_update
                };
                Step::Run(a.stmt(self.write_field))
            }
            (Op::Insert, 0) => {
                self.push_key(p);
                self.push_values(p, true);
                Step::Run(s.insert)
            }
            (Op::Scan, 0) => {
                self.push_key(p);
                p.int(self.scan);
                Step::Run(s.scan.stmt(self.field))
            }
            (Op::Insert, _) => match self.acknowledge() {
                Ok(()) => Step::Done,
                Err(e) => Step::Abort(e),
            },
            _ => Step::Done,
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.acknowledge();
    }
}
