//! pgbench's tables as a [`Dataset`]: branches, tellers and accounts rows, the three primary
//! keys and the five foreign keys, all spelled like pgbench.

use crate::dataset::{Dataset, RowSource};
use crate::ddl;
use crate::rows::{Rows, Table};
use pgrig_engine::config::InitConfig;

pub struct Pgbench<'a> {
    cfg: &'a InitConfig,
    rows: [Rows; 3],
}

impl<'a> Pgbench<'a> {
    pub fn new(cfg: &'a InitConfig) -> Self {
        let rows = Table::LOAD_ORDER.map(|table| Rows {
            table,
            scale: cfg.scale,
        });
        Pgbench { cfg, rows }
    }
}

impl Dataset for Pgbench<'_> {
    fn sources(&self) -> Vec<&dyn RowSource> {
        self.rows.iter().map(|r| r as &dyn RowSource).collect()
    }

    fn key_statements(&self) -> Vec<String> {
        ddl::primary_keys(self.cfg)
    }

    fn foreign_key_statements(&self) -> Vec<String> {
        ddl::FOREIGN_KEYS.iter().map(|s| s.to_string()).collect()
    }
}
