//! The coordination database, spoken through pgrig's own wire driver on a current-thread tokio
//! runtime: simple-protocol statements and text rows. The URL's password is never shown.

use pgrig_wire::{Config, ConnArgs, Connection};

use crate::FleetError;

pub struct Db {
    rt: tokio::runtime::Runtime,
    conn: Connection,
    /// the URL with passwords masked, for messages
    pub shown: String,
    /// what the database is to pgrig, for messages (`coordinator "URL"`, `the target`)
    said: String,
}

impl Db {
    /// Connects to the coordination database at `url` (a postgresql:// URI or a conninfo;
    /// libpq's environment and password file apply).
    pub fn connect(url: &str) -> Result<Db, FleetError> {
        let args = ConnArgs {
            dbname: Some(url.to_string()),
            ..Default::default()
        };
        let shown = format!("the coordinator at \"{}\"", pgrig_wire::mask_passwords(url));
        let mut db = Db::connect_args(&args, &shown)?;
        db.shown = pgrig_wire::mask_passwords(url);
        db.said = format!("coordinator \"{}\"", db.shown);
        Ok(db)
    }

    /// Connects with `args` (libpq's environment and password file apply); `what` names the
    /// database in messages.
    pub fn connect_args(args: &ConnArgs, what: &str) -> Result<Db, FleetError> {
        let fail = |e: &dyn std::fmt::Display| {
            FleetError::new(format!(
                "could not reach {what}: {}",
                pgrig_wire::mask_passwords(e.to_string().trim_end())
            ))
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(&e))?;
        let cfg = Config::from_args(args, "pgrig-fleet").map_err(|e| fail(&e))?;
        let conn = rt
            .block_on(async {
                tokio::time::timeout(
                    std::time::Duration::from_secs(20),
                    Connection::connect(&cfg),
                )
                .await
            })
            .map_err(|_| fail(&"timed out after 20 s"))?
            .map_err(|e| fail(&e))?;
        let (shown, said) = (what.to_string(), what.to_string());
        let mut db = Db {
            rt,
            conn,
            shown,
            said,
        };
        db.exec("SET standard_conforming_strings = on; SET client_min_messages = warning")?;
        Ok(db)
    }

    /// Runs `sql` (one or more statements).
    pub fn exec(&mut self, sql: &str) -> Result<(), FleetError> {
        self.rows(sql).map(|_| ())
    }

    /// The rows of the last statement of `sql`, as text (NULL as `None`).
    pub fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, FleetError> {
        let conn = &mut self.conn;
        let results = self
            .rt
            .block_on(conn.simple_query(sql))
            .map_err(|e| FleetError::new(format!("{}: {}", self.said, e.to_string().trim_end())))?;
        Ok(results.last().map_or_else(Vec::new, |r| {
            r.rows
                .iter()
                .map(|row| {
                    (0..r.columns.len())
                        .map(|i| row.get(i).map(String::from))
                        .collect()
                })
                .collect()
        }))
    }

    /// The first column of the first row.
    pub fn value(&mut self, sql: &str) -> Result<Option<String>, FleetError> {
        Ok(self
            .rows(sql)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }
}

pub use pgrig_wire::quote::literal as lit;

/// A field parsed, or an error naming it.
pub fn parse<T: std::str::FromStr>(v: Option<&str>, what: &str) -> Result<T, FleetError> {
    v.and_then(|s| s.parse().ok()).ok_or_else(|| {
        FleetError::new(format!(
            "unexpected {what} in the coordination schema: {v:?}"
        ))
    })
}
