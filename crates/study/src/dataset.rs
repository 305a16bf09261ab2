//! The study's data: pgbench's tables through the engine's init (scale, unlogged, fillfactor,
//! partitions, foreign keys), a schema file and a directory of CSV files loaded client side
//! ([`crate::csv_load`], then `ANALYZE`), and/or custom setup SQL files run in order, statement
//! by statement as `psql -f` runs them ([`crate::setup_sql`]).

use std::path::Path;

use pgrig_engine::config::{ConnArgs, InitConfig, PartitionMethod};
use pgrig_engine::sink::Sink;
use pgrig_engine::{EngineError, StopHandle};

use crate::csv_spec::CsvSet;
use crate::db::Db;
use crate::error::StudyError;
use crate::plan::Plan;
use crate::setup_sql::{split, Statement};
use crate::spec::{DatasetSpec, Reinit, Study};
use crate::target::Endpoint;

/// The dataset, resolved: what to create and the setup files' text.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub init: Option<InitConfig>,
    /// The schema file creating the CSV files' tables, run before they load.
    pub schema: Option<SetupFile>,
    /// The CSV files, loaded after the schema (then the setup files, then `ANALYZE`).
    pub csv: Option<CsvSet>,
    /// The setup files, in order, already split into statements.
    pub setup: Vec<SetupFile>,
}

/// One setup file: its path (as shown in messages) and its statements.
#[derive(Debug, Clone)]
pub struct SetupFile {
    pub path: String,
    pub statements: Vec<Statement>,
}

impl Dataset {
    /// Resolves the `[dataset]` table. Without one: pgbench's tables at scale 1 when some point
    /// uses a builtin script and a target is a throwaway server, else nothing (an external
    /// server's existing tables are used as they are).
    pub fn resolve(study: &Study, plan: &Plan, base_dir: &Path) -> Result<Dataset, StudyError> {
        let spec = match &study.spec.dataset {
            Some(d) => d.clone(),
            None => DatasetSpec {
                // external servers keep the data they have unless a [dataset] says otherwise
                builtin: Some(
                    if plan.points.iter().any(|p| p.workload.uses_builtin())
                        && plan.targets.iter().any(|t| t.url.is_none())
                    {
                        "tpcb"
                    } else {
                        "none"
                    }
                    .into(),
                ),
                scale: 1,
                unlogged: false,
                fillfactor: 100,
                partitions: 0,
                partition_method: None,
                foreign_keys: false,
                schema: None,
                csv: None,
                setup: Vec::new(),
                reinit: Reinit::Once,
            },
        };
        let builtin = spec.builtin.clone().unwrap_or_else(|| {
            if spec.setup.is_empty() && spec.schema.is_none() && spec.csv.is_none() {
                "tpcb"
            } else {
                "none"
            }
            .into()
        });
        let init = match builtin.as_str() {
            "tpcb" | "pgbench" => Some(pgbench_init(study, &spec)?),
            "none" => None,
            o => {
                return Err(study.error_in(
                    &["dataset", "builtin"],
                    format!("unknown dataset builtin \"{o}\" (expected tpcb or none)"),
                ))
            }
        };
        let setup = spec
            .setup
            .iter()
            .map(|f| read_setup_file(study, base_dir, f))
            .collect::<Result<_, _>>()?;
        let schema = match &spec.schema {
            Some(f) => Some(read_setup_file(study, base_dir, f)?),
            None => None,
        };
        let csv = match &spec.csv {
            Some(v) => Some(crate::csv_spec::resolve(study, base_dir, v)?),
            None => None,
        };
        Ok(Dataset {
            init,
            schema,
            csv,
            setup,
        })
    }

    /// pgbench's tables at `scale`, made as `pgbench -i` makes them, with its progress
    /// (`pgrig run`'s data).
    pub fn pgbench(scale: i32) -> Dataset {
        Dataset {
            init: Some(InitConfig {
                scale,
                ..Default::default()
            }),
            schema: None,
            csv: None,
            setup: Vec::new(),
        }
    }

    /// (Re)creates the data on `endpoint`; `stop` (Ctrl-C) cancels the initialisation.
    pub fn create(
        &self,
        endpoint: &Endpoint,
        sink: &dyn Sink,
        stop: &StopHandle,
    ) -> Result<(), StudyError> {
        self.init_tables(endpoint.conn_args(None)?, sink, stop)?;
        run_files(endpoint, self.schema.iter())?;
        if let Some(csv) = &self.csv {
            crate::csv_load::load(csv, &endpoint.conninfo, sink, stop)?;
        }
        run_files(endpoint, self.setup.iter())?;
        if self.csv.is_some() {
            let mut db = Db::connect(&endpoint.conninfo, "the target")?;
            db.query("analyze")?;
        }
        Ok(())
    }

    /// Creates the tables of the engine's initialisation (when the dataset has them) through
    /// `conn`; `stop` (Ctrl-C) cancels it. Its errors are the engine's (levelled lines and
    /// pgbench's exit status).
    pub fn init_tables(
        &self,
        conn: ConnArgs,
        sink: &dyn Sink,
        stop: &StopHandle,
    ) -> Result<(), EngineError> {
        let Some(init) = &self.init else {
            return Ok(());
        };
        let cfg = InitConfig {
            conn,
            ..init.clone()
        };
        let opts = pgrig_init::InitOptions {
            stop: stop.clone(),
            ..Default::default()
        };
        pgrig_init::run_init_with(&cfg, sink, &opts)
    }
}

/// Runs the statements of `files` in order (the schema file, the setup files).
fn run_files<'a>(
    endpoint: &Endpoint,
    mut files: impl Iterator<Item = &'a SetupFile>,
) -> Result<(), StudyError> {
    let Some(first) = files.next() else {
        return Ok(());
    };
    let mut db = Db::connect(&endpoint.conninfo, "the target")?;
    for f in std::iter::once(first).chain(files) {
        for st in &f.statements {
            db.execute(&st.sql, st.copy_data.as_deref())
                .map_err(|e| StudyError::Setup {
                    file: f.path.clone(),
                    line: st.line,
                    message: e.to_string().trim_end().to_string(),
                })?;
        }
    }
    Ok(())
}

impl SetupFile {
    /// Reads and splits the SQL file at `path` (`pgrig load --schema`).
    pub fn read(path: &Path) -> Result<SetupFile, StudyError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| StudyError::Data {
            place: shown.clone(),
            message: format!("could not read: {}", pgrig_wire::strerror(&e)),
        })?;
        SetupFile::of_text(shown, &text)
    }

    /// The file `shown`'s text split into statements; a split error names the file and line.
    fn of_text(shown: String, text: &str) -> Result<SetupFile, StudyError> {
        let statements = split(text).map_err(|e| StudyError::Setup {
            file: shown.clone(),
            line: e.line,
            message: e.message,
        })?;
        Ok(SetupFile {
            path: shown,
            statements,
        })
    }
}

/// Reads and splits one setup file; a missing file is reported where the study names it.
fn read_setup_file(
    study: &Study,
    base_dir: &Path,
    f: &toml::Spanned<String>,
) -> Result<SetupFile, StudyError> {
    let path = base_dir.join(f.get_ref());
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        study.error_at(
            f.span().start,
            format!("could not read setup file \"{shown}\": {e}"),
        )
    })?;
    SetupFile::of_text(shown, &text)
}

/// pgbench's tables as the `[dataset]` table asks for them (`builtin = "tpcb"`), checked.
fn pgbench_init(study: &Study, spec: &DatasetSpec) -> Result<InitConfig, StudyError> {
    let partition_method = match spec.partition_method.as_deref() {
        None => None,
        Some("range") => Some(PartitionMethod::Range),
        Some("hash") => Some(PartitionMethod::Hash),
        Some(o) => {
            return Err(study.error_in(
                &["dataset", "partition_method"],
                format!("dataset partition_method \"{o}\" (expected range or hash)"),
            ))
        }
    };
    let bad = |key: &str, why: &str| study.error_in(&["dataset", key], why);
    if spec.scale < 1 {
        return Err(bad("scale", "dataset scale must be at least 1"));
    }
    if !(10..=100).contains(&spec.fillfactor) {
        return Err(bad("fillfactor", "dataset fillfactor must be 10..100"));
    }
    if spec.partitions < 0 {
        return Err(bad("partitions", "dataset partitions must be 0 or more"));
    }
    let mut steps = String::from("dtgvp");
    if spec.foreign_keys {
        steps.push('f');
    }
    Ok(InitConfig {
        steps,
        scale: spec.scale,
        fillfactor: spec.fillfactor,
        quiet: true,
        partitions: spec.partitions,
        partition_method,
        unlogged: spec.unlogged,
        ..Default::default()
    })
}
