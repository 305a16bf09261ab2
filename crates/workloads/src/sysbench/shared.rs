//! What the clients of one sysbench test share: the settings, the statement groups of an OLTP
//! event ([`Group`]), the statement ids and the unique-number sequence.

use pgrig_engine::workload::StmtId;

use super::options::Settings;
use super::rand::Unique;
use super::sql::Kind;

/// One step of an OLTP event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Begin,
    /// `count` statements of a kind on one random table (`Kind::Delete` = delete + insert
    /// pairs).
    Repeat(Kind, u32),
    Commit,
}

/// What every client of a run shares.
#[derive(Debug)]
pub struct Shared {
    pub settings: Settings,
    pub plan: Vec<Group>,
    pub begin: StmtId,
    pub commit: StmtId,
    /// Statement id on `sbtest1` per kind (table `t` is `+ t - 1`).
    pub first: [StmtId; 9],
    /// The test's single statement (oltp_insert: per table), for the non-OLTP programs.
    pub single: StmtId,
    pub unique: Unique,
}

impl Shared {
    pub fn stmt(&self, kind: Kind, table: u32) -> StmtId {
        self.first[kind as usize] + (table - 1) as StmtId
    }
}
