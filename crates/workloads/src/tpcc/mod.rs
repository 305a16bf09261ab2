//! TPC-C (standard specification revision 5.11) on the native workload interface.
//!
//! * [`schema`]: the nine tables, keys and indexes (optionally range partitioned by warehouse);
//!   [`load`]: the initial population as stateless row sources; [`copyrow`]: COPY rows;
//!   [`rand`]: NURand, the syllable last names and the other value rules.
//! * [`sql`]: the five transactions' statements; [`input`]: their input generation;
//!   [`new_order`], [`payment`], [`order_status`], [`delivery`], [`stock_level`]: their
//!   programs; [`client`]: the card deck, warehouses per mode, keying and think times.
//! * [`check`]: the consistency conditions of clause 3.3.2; [`metrics`]: tpmC-like / NOPM, TPM,
//!   efficiency and the response-time limits from a run document; [`report`]: them as text
//!   lines and JSON.
//!
//! Options: `warehouses` (1), `partitions` (0 = none), `mode` (`nowait`: clients spread over
//! all warehouses, no wait, reported as NOPM; `terminals`: 10 terminals per warehouse with
//! keying and think times, tpmC-like), `load_seed` (the dataset's seed, which fixes the
//! load-time NURand constants; the load stores it and its constants in `tpcc_dataset`, and a run
//! takes the load-time constants from there — a run given another `load_seed` is refused; a
//! dataset without the table, loaded by an older pgrig, uses the option), `think_scale` (1; multiplies the
//! keying and think times — anything but 1 is not the specification's), `rampup` (seconds at the
//! start left out of tpmC-like / NOPM; default a tenth of the run), `procedures` (off; `on`:
//! the five transactions as server-side PL/pgSQL functions, created by the run's preflight),
//! `deferred_delivery` (off; `on`: Delivery queues its request and the `delivery_deferred`
//! transaction executes it, outside the terminal's response time).

pub mod check;
pub mod client;
pub mod copyrow;
pub mod delivery;
pub mod input;
pub mod load;
pub mod metrics;
pub mod new_order;
pub mod order_status;
pub mod payment;
pub mod procs;
pub mod rand;
pub mod report;
pub mod schema;
pub mod sql;
pub mod stock_level;

use std::sync::{Arc, Mutex};

use pgrig_engine::workload::{Catalogue, ClientSeed, TxProgram, Workload};

use crate::{Native, OptionError, Options};
use rand::NurandC;

/// The options every TPC-C workload is built from.
pub const OPTIONS: [&str; 8] = [
    "warehouses",
    "partitions",
    "mode",
    "load_seed",
    "think_scale",
    "rampup",
    "procedures",
    "deferred_delivery",
];

/// The default dataset seed.
pub const DEFAULT_LOAD_SEED: u64 = 15_011_992;

/// How clients run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Any number of clients, no keying or think time, spread over all warehouses (NOPM).
    NoWait,
    /// The specification's terminals: 10 per warehouse, each bound to its warehouse and
    /// district, with keying and think times (tpmC-like).
    Terminals,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::NoWait => "nowait",
            Mode::Terminals => "terminals",
        }
    }
}

/// TPC-C's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub warehouses: i64,
    pub partitions: i64,
    pub mode: Mode,
    pub load_seed: u64,
    pub think_scale: f64,
    /// Seconds at the start left out of tpmC-like / NOPM (the ramp-up; `None`: a tenth of
    /// the run).
    pub rampup_s: Option<u64>,
    /// The transactions as server-side functions ([`procs`]) instead of client-side SQL.
    pub procedures: bool,
    /// Delivery in deferred mode (clause 2.7.2): the terminal's transaction queues the
    /// request, `delivery_deferred` executes it ([`client`]).
    pub deferred_delivery: bool,
    /// `load_seed` was given (a run checks it against the dataset's)
    pub load_seed_given: bool,
}

impl Config {
    pub fn from_options(o: &Options) -> Result<Self, OptionError> {
        o.check_known("tpcc", &OPTIONS)?;
        let warehouses = o.u64("warehouses", 1)?;
        if !(1..=100_000).contains(&warehouses) {
            return Err(OptionError::new(format!(
                "invalid value \"{warehouses}\" for option \"warehouses\": expected 1..100000"
            )));
        }
        let think_scale = o.f64("think_scale", 1.0)?;
        if think_scale < 0.0 {
            return Err(OptionError::new(
                "invalid value for option \"think_scale\": expected a number >= 0",
            ));
        }
        let mode = match o.choice("mode", "nowait", &["nowait", "terminals"])? {
            "terminals" => Mode::Terminals,
            _ => Mode::NoWait,
        };
        Ok(Config {
            warehouses: warehouses as i64,
            partitions: o.u64("partitions", 0)? as i64,
            mode,
            load_seed: o.u64("load_seed", DEFAULT_LOAD_SEED)?,
            think_scale,
            rampup_s: o.get("rampup").map(|_| o.u64("rampup", 0)).transpose()?,
            procedures: o.bool("procedures", false)?,
            deferred_delivery: o.bool("deferred_delivery", false)?,
            load_seed_given: o.get("load_seed").is_some(),
        })
    }
}

/// The TPC-C workload.
#[derive(Debug)]
pub struct Tpcc {
    pub cfg: Config,
    catalogue: Catalogue,
    /// the load-time constants the dataset records (set by `configure` before the clients)
    loaded: Mutex<Option<NurandC>>,
}

impl Tpcc {
    pub fn new(cfg: Config) -> Self {
        Tpcc {
            cfg,
            catalogue: sql::catalogue_for(cfg.procedures, cfg.deferred_delivery),
            loaded: Mutex::new(None),
        }
    }

    /// The load-time NURand constants: the dataset's, else those of option `load_seed`.
    pub fn load_constants(&self) -> NurandC {
        let loaded = *self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        loaded.unwrap_or_else(|| NurandC::load(self.cfg.load_seed))
    }
}

/// `tpcc_dataset`'s row (`load_seed c_last c_id ol_i_id`) checked against option `load_seed`.
fn dataset_constants(answer: &str, cfg: &Config) -> Result<NurandC, String> {
    let v: Vec<&str> = answer.split_whitespace().collect();
    let int = |i: usize| v.get(i).and_then(|s| s.parse::<i64>().ok());
    let (Some(seed), Some(c_last), Some(c_id), Some(ol_i_id)) = (
        v.first().and_then(|s| s.parse::<u64>().ok()),
        int(1),
        int(2),
        int(3),
    ) else {
        return Err(format!(
            "tpcc: unreadable row in {}: \"{answer}\"",
            schema::DATASET_TABLE
        ));
    };
    if cfg.load_seed_given && cfg.load_seed != seed {
        return Err(format!(
            "invalid value \"{}\" for option \"load_seed\": the dataset was loaded with --load-seed {seed} \
             (C_LAST constant {c_last}); leave the option out or give load_seed={seed}",
            cfg.load_seed
        ));
    }
    Ok(NurandC {
        c_last,
        c_id,
        ol_i_id,
    })
}

impl Workload for Tpcc {
    fn name(&self) -> &str {
        "tpcc"
    }

    fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    fn client(&self, seed: ClientSeed) -> Box<dyn TxProgram> {
        let c = NurandC::run(self.load_constants(), seed.seed);
        Box::new(client::Client::new(self.cfg, c, seed))
    }

    fn preflight(&self) -> Vec<String> {
        let w = self.cfg.warehouses;
        let mut out = vec![format!(
            "DO $$ DECLARE n bigint; BEGIN SELECT count(*) INTO n FROM warehouse; \
             IF n <> {w} THEN RAISE EXCEPTION 'tpcc: the database has % warehouses but the run was given warehouses={w}', n \
             USING HINT = 'load with \"pgrig tpcc load --warehouses {w}\" or give warehouses=' || n; END IF; END $$"
        )];
        if self.cfg.procedures {
            out.extend(procs::create());
        }
        out
    }

    fn dataset_queries(&self) -> Vec<String> {
        vec![schema::DATASET_QUERY.to_string()]
    }

    fn configure(&self, answers: &[Result<Option<String>, String>]) -> Result<(), String> {
        let found = match answers.first() {
            Some(Ok(Some(row))) => Some(dataset_constants(row, &self.cfg)?),
            // no tpcc_dataset (a load by an older pgrig): option load_seed's constants
            _ => None,
        };
        *self.loaded.lock().unwrap_or_else(|e| e.into_inner()) = found;
        Ok(())
    }

    fn scale(&self) -> Option<i64> {
        Some(self.cfg.warehouses)
    }
}

/// The workload names this family answers to.
pub fn names() -> Vec<&'static str> {
    vec!["tpcc"]
}

/// Builds TPC-C from `options`.
pub fn build(_name: &str, options: &Options) -> Result<Native, OptionError> {
    let cfg = Config::from_options(options)?;
    Ok(Native {
        workload: Arc::new(Tpcc::new(cfg)),
        load: load::plan(cfg.warehouses, cfg.partitions, cfg.load_seed),
        cleanup: schema::drop(),
    })
}
