//! sysbench 1.0.20's options for its OLTP tests: the table of names, defaults and help texts
//! (as `sysbench TEST help` and `sysbench --help` print them), which tests take which, and
//! [`Settings`]: the options parsed and checked for one test.

use crate::options::{OptionError, Options};

use super::rand::{Dist, RandType};
use super::test::Test;

/// What an option's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// `--name=N`
    Int,
    /// `--name[=on|off]`
    Bool,
    /// `--name=STRING`
    Str,
    /// `--name=N` (a number with a fraction)
    Float,
}

/// Where sysbench lists the option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionGroup {
    /// The test's own options (`sysbench TEST help`, "TEST options:").
    Test,
    /// "Pseudo-Random Numbers Generator options:" (`sysbench --help`).
    Rand,
    /// "General database options:" (`sysbench --help`).
    Db,
    /// "General options:" (`sysbench --help`).
    General,
}

/// One option as sysbench knows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionSpec {
    /// sysbench's name (test options with `_`, general ones with `-`; pgrig accepts both).
    pub name: &'static str,
    /// The default as sysbench prints it (`on`, `10000`, `special`, empty for none).
    pub default: &'static str,
    pub help: &'static str,
    pub kind: OptionKind,
    pub group: OptionGroup,
    /// Added by pgrig (or from a later sysbench): 1.0.20 does not know it.
    pub extension: bool,
}

const fn spec(
    name: &'static str,
    default: &'static str,
    help: &'static str,
    kind: OptionKind,
) -> OptionSpec {
    OptionSpec {
        name,
        default,
        help,
        kind,
        group: OptionGroup::Test,
        extension: false,
    }
}

use OptionKind::{Bool, Float, Int, Str};

/// oltp_common's options, in the order sysbench prints them (by name).
pub const OLTP_OPTIONS: [OptionSpec; 18] = [
    spec("auto_inc", "on", "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs", Bool),
    spec("create_secondary", "on", "Create a secondary index in addition to the PRIMARY KEY", Bool),
    spec("delete_inserts", "1", "Number of DELETE/INSERT combinations per transaction", Int),
    spec("distinct_ranges", "1", "Number of SELECT DISTINCT queries per transaction", Int),
    spec("index_updates", "1", "Number of UPDATE index queries per transaction", Int),
    spec("mysql_storage_engine", "innodb", "Storage engine, if MySQL is used", Str),
    spec("non_index_updates", "1", "Number of UPDATE non-index queries per transaction", Int),
    spec("order_ranges", "1", "Number of SELECT ORDER BY queries per transaction", Int),
    spec("pgsql_variant", "", "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0", Str),
    spec("point_selects", "10", "Number of point SELECT queries per transaction", Int),
    spec("range_selects", "on", "Enable/disable all range SELECT queries", Bool),
    spec("range_size", "100", "Range size for range SELECT queries", Int),
    spec("secondary", "off", "Use a secondary index in place of the PRIMARY KEY", Bool),
    spec("simple_ranges", "1", "Number of simple range SELECT queries per transaction", Int),
    spec("skip_trx", "off", "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode", Bool),
    spec("sum_ranges", "1", "Number of SELECT SUM() queries per transaction", Int),
    spec("table_size", "10000", "Number of rows per table", Int),
    spec("tables", "1", "Number of tables", Int),
];

/// select_random_points's own option.
pub const RANDOM_POINTS: OptionSpec = spec(
    "random_points",
    "10",
    "Number of random points in the IN() clause in generated SELECTs",
    Int,
);
/// select_random_ranges's own options.
pub const RANDOM_RANGES: [OptionSpec; 2] = [
    spec("delta", "5", "Size of BETWEEN ranges", Int),
    spec(
        "number_of_ranges",
        "10",
        "Number of random BETWEEN ranges per SELECT",
        Int,
    ),
];

const fn general(
    name: &'static str,
    default: &'static str,
    help: &'static str,
    kind: OptionKind,
    group: OptionGroup,
    extension: bool,
) -> OptionSpec {
    OptionSpec {
        name,
        default,
        help,
        kind,
        group,
        extension,
    }
}

/// The general options the workloads read (random numbers, prepared statements, threads).
pub const GENERAL_OPTIONS: [OptionSpec; 14] = [
    general("rand-type", "special", "random numbers distribution {uniform,gaussian,special,pareto} [zipfian: pgrig, as sysbench 1.1]", Str, OptionGroup::Rand, false),
    general("rand-spec-iter", "12", "number of iterations used for numbers generation", Int, OptionGroup::Rand, false),
    general("rand-spec-pct", "1", "percentage of values to be treated as 'special' (for special distribution)", Int, OptionGroup::Rand, false),
    general("rand-spec-res", "75", "percentage of 'special' values to use (for special distribution)", Int, OptionGroup::Rand, false),
    general("rand-seed", "0", "seed for random number generator. When 0, the current time is used as a RNG seed.", Int, OptionGroup::Rand, false),
    general("rand-pareto-h", "0.2", "parameter h for pareto distribution", Float, OptionGroup::Rand, false),
    general("rand-zipfian-exp", "0.8", "shape parameter (exponent, theta) for the Zipfian distribution (sysbench 1.1)", Float, OptionGroup::Rand, true),
    general("db-ps-mode", "auto", "prepared statements usage mode {auto, disable}", Str, OptionGroup::Db, false),
    general("analyze", "off", "pgrig: ANALYZE the tables at the end of prepare (off: leave them to autovacuum, as sysbench does)", Bool, OptionGroup::Db, true),
    general("threads", "1", "number of threads to use (bulk_insert's tables, select_random_*'s slices)", Int, OptionGroup::Db, false),
    // their threads take their random seeds before the workers' (`seeding`)
    general("report-interval", "0", "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports", Int, OptionGroup::General, false),
    general("rate", "0", "average transactions rate. 0 for unlimited rate", Int, OptionGroup::General, false),
    // each event's latency goes into sysbench's histogram, which draws from the thread's stream
    general("percentile", "95", "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations", Int, OptionGroup::General, false),
    general("report-checkpoints", "", "dump full statistics and reset all counters at specified points in time", Str, OptionGroup::General, false),
];

/// Every option `test` reads: its own (as `sysbench TEST help` lists them) then the general ones.
pub fn options_for(test: Test) -> Vec<&'static OptionSpec> {
    let mut v: Vec<&'static OptionSpec> = Vec::new();
    if test != Test::BulkInsert {
        v.extend(OLTP_OPTIONS.iter());
    }
    match test {
        Test::SelectRandomPoints => v.push(&RANDOM_POINTS),
        Test::SelectRandomRanges => v.extend(RANDOM_RANGES.iter()),
        _ => {}
    }
    v.sort_by_key(|o| o.name);
    v.extend(GENERAL_OPTIONS.iter());
    v
}

/// `test`'s options, parsed and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub test: Test,
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub skip_trx: bool,
    pub secondary: bool,
    pub create_secondary: bool,
    pub random_points: u32,
    pub number_of_ranges: u32,
    pub delta: u32,
    /// `--threads`: bulk_insert's number of tables.
    pub threads: u32,
    /// `--db-ps-mode=disable`: run in the simple query mode (values inlined, as sysbench's
    /// client-side emulation sends them).
    pub ps_disabled: bool,
    pub dist: Dist,
    /// pgrig's `analyze` (default off, sysbench's end state): ANALYZE the tables at the end
    /// of `prepare`.
    pub analyze: bool,
    /// `--rand-seed` (0 = the run's seed; `prepare` does not use it, as in sysbench).
    pub rand_seed: u64,
    /// sysbench's background threads of `run` (`--report-interval`, `--rate`,
    /// `--report-checkpoints`), which take their random seeds before the workers.
    pub background: u32,
    /// `--percentile` (0: sysbench keeps no latency histogram, so draws nothing per event)
    pub percentile: u32,
}

impl Settings {
    /// Parses `options` for `test`: unknown names (did-you-mean), bad values and sysbench's own
    /// checks are errors naming the option.
    pub fn parse(test: Test, options: &Options) -> Result<Settings, OptionError> {
        let known: Vec<&str> = options_for(test).iter().map(|o| o.name).collect();
        if test != Test::BulkInsert {
            // bulk_insert declares no options, so sysbench takes any
            options.check_known(test.name(), &known)?;
        }
        let int = |name: &str, default: u64| -> Result<u32, OptionError> {
            let v = options.u64(name, default)?;
            u32::try_from(v).map_err(|_| {
                OptionError::new(format!(
                    "invalid value \"{v}\" for option \"{name}\": expected at most {}",
                    u32::MAX
                ))
            })
        };
        let kind = options.choice("rand-type", "special", &RandType::NAMES)?;
        let iter = int("rand-spec-iter", 12)?;
        if iter == 0 {
            return Err(OptionError::new(
                "invalid value \"0\" for option \"rand-spec-iter\": expected at least 1",
            ));
        }
        let pareto_h = options.f64("rand-pareto-h", 0.2)?;
        let zipf_exp = options.f64("rand-zipfian-exp", 0.8)?;
        if zipf_exp < 0.0 {
            return Err(OptionError::new("--rand-zipfian-exp must be >= 0"));
        }
        let dist = Dist::new(
            RandType::parse(kind).unwrap_or(RandType::Special),
            iter,
            int("rand-spec-pct", 1)?,
            int("rand-spec-res", 75)?,
            pareto_h,
            zipf_exp,
        );
        let mut s = Settings {
            test,
            tables: int("tables", 1)?,
            table_size: table_size(options)?,
            range_size: int("range_size", 100)?,
            point_selects: int("point_selects", 10)?,
            simple_ranges: int("simple_ranges", 1)?,
            sum_ranges: int("sum_ranges", 1)?,
            order_ranges: int("order_ranges", 1)?,
            distinct_ranges: int("distinct_ranges", 1)?,
            index_updates: int("index_updates", 1)?,
            non_index_updates: int("non_index_updates", 1)?,
            delete_inserts: int("delete_inserts", 1)?,
            range_selects: options.bool("range_selects", true)?,
            auto_inc: options.bool("auto_inc", true)?,
            skip_trx: options.bool("skip_trx", false)?,
            secondary: options.bool("secondary", false)?,
            create_secondary: options.bool("create_secondary", true)?,
            random_points: int("random_points", 10)?,
            number_of_ranges: int("number_of_ranges", 10)?,
            delta: int("delta", 5)?,
            threads: int("threads", 1)?.max(1),
            ps_disabled: options.choice("db-ps-mode", "auto", &["auto", "disable"])? == "disable",
            dist,
            analyze: options.bool("analyze", false)?,
            rand_seed: options.u64("rand-seed", 0)?,
            background: super::seeding::background_threads(
                options.u64("report-interval", 0)? > 0,
                options.u64("rate", 0)? > 0,
                options
                    .get("report-checkpoints")
                    .is_some_and(|v| !v.trim().is_empty()),
            ),
            percentile: int("percentile", 95)?,
        };
        if test == Test::OltpPointSelect {
            // oltp_point_select runs one point select per event whatever --point_selects says
            s.point_selects = 1;
        }
        s.check()?;
        Ok(s)
    }

    fn check(&self) -> Result<(), OptionError> {
        if self.test != Test::BulkInsert && self.tables == 0 {
            return Err(OptionError::new(
                "invalid value \"0\" for option \"tables\": expected at least 1",
            ));
        }
        if self.test == Test::SelectRandomPoints && self.random_points == 0 {
            return Err(OptionError::new(
                "invalid value \"0\" for option \"random_points\": expected at least 1",
            ));
        }
        if self.test == Test::SelectRandomRanges && self.number_of_ranges == 0 {
            return Err(OptionError::new(
                "invalid value \"0\" for option \"number_of_ranges\": expected at least 1",
            ));
        }
        Ok(())
    }

    /// Why `cleanup` refuses these settings: select_random_* check `--tables` there only (their
    /// `prepare` and `run` take any number of tables and use `sbtest1`), as in sysbench.
    pub fn cleanup_refusal(&self) -> Option<&'static str> {
        let single = matches!(
            self.test,
            Test::SelectRandomPoints | Test::SelectRandomRanges
        );
        (single && self.tables != 1).then_some("this benchmark does not support --tables > 1")
    }

    /// The rows `prepare` loads per table (oltp_insert with `--auto_inc=off` starts empty, so
    /// its unique ids never collide with loaded ones).
    pub fn rows_per_table(&self) -> u32 {
        if self.test == Test::OltpInsert && !self.auto_inc {
            0
        } else {
            self.table_size
        }
    }
}

/// `--table_size`: a negative size is an empty table, as sysbench's `prepare` makes it (its
/// run then draws ids past the integer range, as sysbench's does).
fn table_size(options: &Options) -> Result<u32, OptionError> {
    match options.get("table_size").map(str::trim) {
        Some(v) if v.starts_with('-') && v[1..].parse::<u64>().is_ok() => Ok(0),
        _ => {
            let v = options.u64("table_size", 10000)?;
            u32::try_from(v).map_err(|_| {
                OptionError::new(format!(
                    "invalid value \"{v}\" for option \"table_size\": expected at most {}",
                    u32::MAX
                ))
            })
        }
    }
}
