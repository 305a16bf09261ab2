//! Shared by the YCSB test binaries: building a workload from `key=value` options and driving
//! one client's program sans-IO (fabricated replies), recording what each operation ran.
#![allow(dead_code)]

use std::sync::Arc;

use pgrig_engine::workload::{ClientSeed, Params, Reply, Rows, Step, TxProgram, Workload};
use pgrig_workloads::{Native, Options};

/// Workload `name` with `opts` (`"key=value"` each).
pub fn build(name: &str, opts: &[&str]) -> Native {
    let mut o = Options::new();
    for kv in opts {
        let (k, v) = kv.split_once('=').expect("key=value");
        o.set(k, v);
    }
    pgrig_workloads::build(name, &o).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// One statement an operation ran: its id and its parameters as text (`None` = NULL).
#[derive(Clone, Debug)]
pub struct Ran {
    pub stmt: u16,
    pub params: Vec<Option<Vec<u8>>>,
}

/// One operation: its transaction type and what it ran.
#[derive(Clone, Debug)]
pub struct Operation {
    pub tx: usize,
    pub ran: Vec<Ran>,
}

/// One client's program, driven by hand.
pub struct Client {
    pub workload: Arc<dyn Workload>,
    pub program: Box<dyn TxProgram>,
    params: Params,
    rows: Rows,
}

impl Client {
    pub fn new(workload: Arc<dyn Workload>, id: u32, clients: u32, seed: u64) -> Client {
        let program = workload.client(ClientSeed { id, clients, seed });
        Client {
            workload,
            program,
            params: Params::new(),
            rows: Rows::default(),
        }
    }

    /// Runs one operation to its end; every statement "returns" one row.
    pub fn operation(&mut self) -> Operation {
        let tx = self
            .program
            .choose()
            .expect("YCSB programs choose the operation");
        self.program.begin(tx, false);
        let mut ran = Vec::new();
        let mut reply_due = false;
        loop {
            self.params.clear();
            let reply = Reply {
                count: 1,
                rows: &self.rows,
            };
            let step = self
                .program
                .step(reply_due.then_some(&reply), &mut self.params);
            match step {
                Step::Run(stmt) => {
                    ran.push(Ran {
                        stmt,
                        params: self
                            .params
                            .values()
                            .map(|v| v.map(<[u8]>::to_vec))
                            .collect(),
                    });
                    reply_due = true;
                }
                Step::Done => return Operation { tx, ran },
                other => panic!("unexpected step {other:?}"),
            }
        }
    }

    /// The transaction type names, by index.
    pub fn tx_name(&self, tx: usize) -> String {
        self.workload.catalogue().transactions[tx].name.clone()
    }
}

impl Operation {
    /// The record key the operation addresses: the first text parameter that starts with
    /// `user` (the key comes first, except in updates where it comes last).
    pub fn key(&self) -> String {
        let p = &self.ran[0].params;
        let k = p
            .iter()
            .flatten()
            .find(|v| v.starts_with(b"user") && v[4..].iter().all(u8::is_ascii_digit))
            .expect("a key parameter");
        String::from_utf8(k.clone()).unwrap()
    }

    /// The key number of an `insertorder=ordered` key.
    pub fn key_number(&self) -> i64 {
        self.key()[4..].parse().unwrap()
    }
}
