//! A YCSB workload's properties, read from pgrig's options under YCSB's property names, with
//! each workload's defaults as YCSB's `workloads/workloada` … `workloadf` files set them over
//! `CoreWorkload`'s own defaults (the bare `ycsb` workload). Every check that can fail happens
//! here, so building the dataset and the programs cannot.

use crate::options::{OptionError, Options};

/// The operations of YCSB's core workload, in the order YCSB adds them to its chooser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl Op {
    pub const ALL: [Op; 5] = [
        Op::Read,
        Op::Update,
        Op::Insert,
        Op::Scan,
        Op::ReadModifyWrite,
    ];

    /// The transaction type's name (the measurement name YCSB reports it under).
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }

    /// The option setting the operation's share.
    pub fn option(self) -> &'static str {
        match self {
            Op::Read => "readproportion",
            Op::Update => "updateproportion",
            Op::Insert => "insertproportion",
            Op::Scan => "scanproportion",
            Op::ReadModifyWrite => "readmodifywriteproportion",
        }
    }
}

/// `requestdistribution`: how the key of a read, update, scan or read-modify-write is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    Uniform,
    /// scrambled Zipfian over the records plus the inserts expected
    Zipfian,
    /// Zipfian over the key numbers counted back from the newest insert
    Latest,
    /// `data` of the keys (the lowest) get `opn` of the operations
    Hotspot {
        data: f64,
        opn: f64,
    },
}

/// `fieldlengthdistribution` (and the scan length's `scanlengthdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthDistribution {
    Constant,
    Uniform,
    Zipfian,
}

/// Every property a workload is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `ycsb-a` … `ycsb-f`, `ycsb`
    pub name: String,
    pub table: String,
    pub recordcount: i64,
    /// only sizes the Zipfian key space (YCSB: records + 2 × operations × insert share)
    pub operationcount: i64,
    pub fieldcount: usize,
    pub fieldlength: i64,
    pub minfieldlength: i64,
    pub fieldlengthdistribution: LengthDistribution,
    pub readallfields: bool,
    pub writeallfields: bool,
    /// share of each operation of [`Op::ALL`], as given (not normalised)
    pub proportions: [f64; 5],
    pub requestdistribution: Distribution,
    pub zipfianconstant: f64,
    /// `insertorder=hashed`
    pub hashed: bool,
    pub zeropadding: usize,
    pub minscanlength: i64,
    pub maxscanlength: i64,
    pub scanlengthdistribution: LengthDistribution,
}

/// The workload names, in order.
pub const NAMES: [&str; 7] = [
    "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f", "ycsb",
];

/// Every option a YCSB workload takes.
pub const KNOWN: &[&str] = &[
    "table",
    "recordcount",
    "operationcount",
    "fieldcount",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "readallfields",
    "writeallfields",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "zipfianconstant",
    "insertorder",
    "zeropadding",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "hotspotdatafraction",
    "hotspotopnfraction",
];

/// One workload file's settings over `CoreWorkload`'s defaults.
struct Preset {
    proportions: [f64; 5],
    distribution: &'static str,
    maxscanlength: u64,
}

fn preset(name: &str) -> Option<Preset> {
    let (proportions, distribution, maxscanlength) = match name {
        "ycsb-a" => ([0.5, 0.5, 0.0, 0.0, 0.0], "zipfian", 1000),
        "ycsb-b" => ([0.95, 0.05, 0.0, 0.0, 0.0], "zipfian", 1000),
        "ycsb-c" => ([1.0, 0.0, 0.0, 0.0, 0.0], "zipfian", 1000),
        "ycsb-d" => ([0.95, 0.0, 0.05, 0.0, 0.0], "latest", 1000),
        "ycsb-e" => ([0.0, 0.0, 0.05, 0.95, 0.0], "zipfian", 100),
        "ycsb-f" => ([0.5, 0.0, 0.0, 0.0, 0.5], "zipfian", 1000),
        "ycsb" => ([0.95, 0.05, 0.0, 0.0, 0.0], "uniform", 1000),
        _ => return None,
    };
    Some(Preset {
        proportions,
        distribution,
        maxscanlength,
    })
}

impl Config {
    /// Workload `name`'s properties: its defaults overridden by `o`.
    pub fn from_options(name: &str, o: &Options) -> Result<Config, OptionError> {
        let p = preset(name)
            .ok_or_else(|| OptionError::new(format!("unknown YCSB workload \"{name}\"")))?;
        o.check_known(name, KNOWN)?;
        let mut proportions = [0.0; 5];
        for (i, op) in Op::ALL.iter().enumerate() {
            proportions[i] = non_negative(o, op.option(), p.proportions[i])?;
        }
        if proportions.iter().sum::<f64>() <= 0.0 {
            return Err(OptionError::new(format!(
                "every operation proportion of {name} is 0: set readproportion, updateproportion, insertproportion, scanproportion or readmodifywriteproportion"
            )));
        }
        let c = Config {
            name: name.to_string(),
            table: table_name(o)?,
            recordcount: at_least(o, "recordcount", 1000, 1)?,
            operationcount: at_least(o, "operationcount", 1000, 0)?,
            fieldcount: bounded(o, "fieldcount", 10, 1, 1599)? as usize,
            fieldlength: at_least(o, "fieldlength", 100, 0)?,
            minfieldlength: at_least(o, "minfieldlength", 1, 0)?,
            fieldlengthdistribution: length_distribution(o, "fieldlengthdistribution", true)?,
            readallfields: o.bool("readallfields", true)?,
            writeallfields: o.bool("writeallfields", false)?,
            proportions,
            requestdistribution: distribution(o, p.distribution)?,
            zipfianconstant: zipfian_constant(o)?,
            hashed: o.choice("insertorder", "hashed", &["hashed", "ordered"])? == "hashed",
            zeropadding: bounded(o, "zeropadding", 1, 0, 64)? as usize,
            minscanlength: at_least(o, "minscanlength", 1, 1)?,
            maxscanlength: at_least(o, "maxscanlength", p.maxscanlength, 1)?,
            scanlengthdistribution: length_distribution(o, "scanlengthdistribution", false)?,
        };
        c.check()?;
        Ok(c)
    }

    fn check(&self) -> Result<(), OptionError> {
        if self.minscanlength > self.maxscanlength {
            return Err(OptionError::new(format!(
                "minscanlength ({}) is larger than maxscanlength ({})",
                self.minscanlength, self.maxscanlength
            )));
        }
        if self.fieldlengthdistribution != LengthDistribution::Constant
            && self.minfieldlength > self.fieldlength
        {
            return Err(OptionError::new(format!(
                "minfieldlength ({}) is larger than fieldlength ({})",
                self.minfieldlength, self.fieldlength
            )));
        }
        if self.requestdistribution == Distribution::Latest && self.recordcount < 2 {
            return Err(OptionError::new(
                "requestdistribution=latest needs recordcount of at least 2",
            ));
        }
        if let Distribution::Hotspot { data, opn } = self.requestdistribution {
            let hot = (self.recordcount as f64 * data) as i64;
            if (hot == 0 && opn > 0.0) || (hot == self.recordcount && opn < 1.0) {
                return Err(OptionError::new(format!(
                    "hotspotdatafraction={data} makes {hot} of {} records hot, leaving the {} set empty while hotspotopnfraction={opn} sends operations there",
                    self.recordcount,
                    if hot == 0 { "hot" } else { "cold" }
                )));
            }
        }
        Ok(())
    }

    /// The share of `op` among all operations (0..1).
    pub fn share(&self, op: Op) -> f64 {
        let i = Op::ALL.iter().position(|o| *o == op).unwrap_or(0);
        self.proportions[i] / self.proportions.iter().sum::<f64>()
    }

    /// The highest key number the Zipfian key space covers: YCSB's `recordcount +
    /// (int) (operationcount × insertproportion × 2)`.
    pub fn zipfian_max(&self) -> i64 {
        let expected = (self.operationcount as f64 * self.proportions[2] * 2.0) as i64;
        self.recordcount + expected
    }
}

fn at_least(o: &Options, key: &str, default: u64, min: u64) -> Result<i64, OptionError> {
    let v = o.u64(key, default)?;
    if v < min || v > i64::MAX as u64 / 4 {
        return Err(OptionError::new(format!(
            "invalid value \"{v}\" for option \"{key}\": expected an integer of at least {min}"
        )));
    }
    Ok(v as i64)
}

/// An integer option within `min..=max` (a table has at most 1600 columns; keys stay short).
fn bounded(o: &Options, key: &str, default: u64, min: u64, max: u64) -> Result<i64, OptionError> {
    let v = o.u64(key, default)?;
    if !(min..=max).contains(&v) {
        return Err(OptionError::new(format!(
            "invalid value \"{v}\" for option \"{key}\": expected an integer from {min} to {max}"
        )));
    }
    Ok(v as i64)
}

fn non_negative(o: &Options, key: &str, default: f64) -> Result<f64, OptionError> {
    let v = o.f64(key, default)?;
    if v < 0.0 {
        return Err(OptionError::new(format!(
            "invalid value \"{v}\" for option \"{key}\": expected a proportion of at least 0"
        )));
    }
    Ok(v)
}

fn fraction(o: &Options, key: &str, default: f64) -> Result<f64, OptionError> {
    let v = o.f64(key, default)?;
    if !(0.0..=1.0).contains(&v) {
        return Err(OptionError::new(format!(
            "invalid value \"{v}\" for option \"{key}\": expected a fraction from 0 to 1"
        )));
    }
    Ok(v)
}

fn distribution(o: &Options, default: &str) -> Result<Distribution, OptionError> {
    let choices = ["uniform", "zipfian", "latest", "hotspot"];
    Ok(match o.choice("requestdistribution", default, &choices)? {
        "uniform" => Distribution::Uniform,
        "zipfian" => Distribution::Zipfian,
        "latest" => Distribution::Latest,
        _ => Distribution::Hotspot {
            data: fraction(o, "hotspotdatafraction", 0.2)?,
            opn: fraction(o, "hotspotopnfraction", 0.8)?,
        },
    })
}

fn length_distribution(
    o: &Options,
    key: &str,
    constant: bool,
) -> Result<LengthDistribution, OptionError> {
    let (default, choices): (&str, &[&str]) = if constant {
        ("constant", &["constant", "uniform", "zipfian"])
    } else {
        ("uniform", &["uniform", "zipfian"])
    };
    Ok(match o.choice(key, default, choices)? {
        "constant" => LengthDistribution::Constant,
        "uniform" => LengthDistribution::Uniform,
        _ => LengthDistribution::Zipfian,
    })
}

fn zipfian_constant(o: &Options) -> Result<f64, OptionError> {
    let v = o.f64("zipfianconstant", super::zipf::ZIPFIAN_CONSTANT)?;
    if v <= 0.0 || v >= 1.0 {
        return Err(OptionError::new(format!(
            "invalid value \"{v}\" for option \"zipfianconstant\": expected a number between 0 and 1 (exclusive)"
        )));
    }
    Ok(v)
}

/// `table`: a plain SQL identifier (it is written into the statements unquoted, as YCSB does).
fn table_name(o: &Options) -> Result<String, OptionError> {
    let t = o.str("table", "usertable");
    let ok = t
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && t.len() <= 63;
    if !ok {
        return Err(OptionError::new(format!(
            "invalid value \"{t}\" for option \"table\": expected a plain SQL name (letters, digits, _)"
        )));
    }
    Ok(t.to_string())
}
