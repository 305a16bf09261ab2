//! The study file's schema (TOML, `version = 1`): plain serde structs with
//! `deny_unknown_fields`, and [`parse`], which turns any error into one naming the file, line,
//! column and key. The matrix and the workload keep their keys in file order with their
//! positions ([`Entries`]), so that a bad key or value is reported where it was written.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{line_col, StudyError};

/// The newest schema version this pgrig understands.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    /// Schema version; omitted means 1.
    pub version: Option<Spanned<u32>>,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// One target (omitted: a throwaway local server).
    #[serde(default)]
    pub target: Option<TargetSpec>,
    /// Several named targets to compare (each a matrix dimension named `target`).
    #[serde(default)]
    pub targets: Option<Vec<TargetSpec>>,
    /// Server settings for every target (a target's own `settings` win).
    #[serde(default)]
    pub settings: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub dataset: Option<DatasetSpec>,
    /// The base workload; the matrix overrides its keys per point.
    #[serde(default)]
    pub workload: Option<Spanned<Entries>>,
    #[serde(default)]
    pub matrix: Entries,
    /// A steps study: each step's changes apply on top of the previous step's (`[[steps]]`);
    /// the steps form a dimension named `step`, outermost after the targets.
    #[serde(default)]
    pub steps: Vec<StepSpec>,
    /// Zipped keys: `threads = "clients"` gives `threads` the value `clients` has at each point.
    #[serde(default)]
    pub zip: Entries,
    /// Repetitions of every point (also accepted inside `[matrix]`).
    #[serde(default)]
    pub repetitions: Option<u32>,
    /// The order of the runs: every repetition of a point before the next point (default), or
    /// `interleaved`: repetition 1 of every point, then repetition 2, … (points compared across
    /// a machine that drifts).
    #[serde(default)]
    pub order: Order,
    #[serde(default)]
    pub collect: CollectSpec,
}

/// One `[[steps]]` entry: its name and the keys it changes (workload keys, `options.NAME`,
/// `settings.NAME`), kept in file order with their positions.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    pub name: Spanned<String>,
    #[serde(default)]
    pub set: Entries,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// A name for reports (`[[targets]]`); default "local" or the URL's host.
    #[serde(default)]
    pub name: Option<String>,
    /// `postgresql://` URI or conninfo of an external server; omitted: a throwaway local server.
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    /// Server settings applied before the runs.
    #[serde(default)]
    pub settings: BTreeMap<String, toml::Value>,
    /// Throwaway server only: test tuning (fsync off, ...). Default false (durable behaviour).
    #[serde(default)]
    pub fast: bool,
    /// Throwaway server only: directory of initdb/postgres.
    #[serde(default)]
    pub bin_dir: Option<String>,
    /// Throwaway server only: connect over TCP to 127.0.0.1 (scram-sha-256, generated password)
    /// instead of the unix socket. Default false.
    #[serde(default)]
    pub tcp: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub enum Order {
    /// Points one after the other, each with all its repetitions.
    #[default]
    #[serde(rename = "points")]
    Points,
    /// Repetitions outermost: the points alternate.
    #[serde(rename = "interleaved")]
    Interleaved,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Reinit {
    /// Before the first repetition of every run (each repetition starts on fresh tables).
    #[serde(rename = "per-run")]
    PerRun,
    /// Before the first repetition of every point.
    #[serde(rename = "per-point")]
    PerPoint,
    /// Once, before the first run of each target.
    #[default]
    #[serde(rename = "once")]
    Once,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// `tpcb` (pgbench's tables) or `none`.
    #[serde(default)]
    pub builtin: Option<String>,
    #[serde(default = "one_i32")]
    pub scale: i32,
    #[serde(default)]
    pub unlogged: bool,
    #[serde(default = "hundred")]
    pub fillfactor: i32,
    #[serde(default)]
    pub partitions: i32,
    /// `range` or `hash` (with `partitions`).
    #[serde(default)]
    pub partition_method: Option<String>,
    #[serde(default)]
    pub foreign_keys: bool,
    /// A SQL file creating the tables the CSV files load, run like setup files before them.
    #[serde(default)]
    pub schema: Option<Spanned<String>>,
    /// CSV files to load: a directory (`csv = "dir/"`) or a table with `dir`, COPY options and
    /// per-table overrides (read by [`crate::csv_spec`]).
    #[serde(default)]
    pub csv: Option<toml::Value>,
    /// SQL files run in order after the builtin data (paths relative to the study file).
    #[serde(default)]
    pub setup: Vec<Spanned<String>>,
    #[serde(default)]
    pub reinit: Reinit,
}

fn one_i32() -> i32 {
    1
}
fn hundred() -> i32 {
    100
}

/// `relation_sizes = true` (every user table) or a list of table names.
#[derive(Debug, Clone, PartialEq)]
pub enum RelationSizes {
    All(bool),
    Tables(Vec<String>),
}

impl<'de> Deserialize<'de> for RelationSizes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::Boolean(b) => Ok(RelationSizes::All(b)),
            toml::Value::Array(a) => a
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    o => Err(o),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(RelationSizes::Tables)
                .map_err(|o| {
                    serde::de::Error::custom(format!("relation_sizes: {o} is not a table name"))
                }),
            o => Err(serde::de::Error::custom(format!(
                "relation_sizes must be true, false or a list of table names, not {o}"
            ))),
        }
    }
}

impl Default for RelationSizes {
    fn default() -> Self {
        RelationSizes::All(false)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectSpec {
    #[serde(default)]
    pub relation_sizes: RelationSizes,
    /// pg_stat_database / checkpointer / bgwriter / WAL deltas per run.
    #[serde(default = "yes")]
    pub server_stats: bool,
    /// Wait events sampled from pg_stat_activity during every run.
    #[serde(default = "yes")]
    pub wait_events: bool,
    /// How often to sample wait events and /proc, in milliseconds.
    #[serde(default = "sample_ms")]
    pub sample_interval_ms: u64,
    /// CPU and I/O of the throwaway server's processes, from /proc.
    #[serde(default = "yes")]
    pub server_processes: bool,
    /// perf profile (folded stacks) of the throwaway server's processes during every run.
    #[serde(default)]
    pub profile: bool,
    /// With `profile`: pgrig's own process profiled too.
    #[serde(default)]
    pub profile_client: bool,
    /// A native workload's consistency checks after every run (TPC-C's conditions), stored
    /// with the run; a failed one is reported.
    #[serde(default)]
    pub consistency: bool,
}

impl Default for CollectSpec {
    fn default() -> Self {
        CollectSpec {
            relation_sizes: RelationSizes::default(),
            server_stats: true,
            wait_events: true,
            sample_interval_ms: sample_ms(),
            server_processes: true,
            profile: false,
            profile_client: false,
            consistency: false,
        }
    }
}

fn yes() -> bool {
    true
}
fn sample_ms() -> u64 {
    200
}

/// A table whose keys stay in file order, each with the position of its key and value
/// (`[matrix]`: its dimensions; `[workload]`: the run options).
#[derive(Debug, Clone, Default)]
pub struct Entries {
    pub entries: Vec<(Spanned<String>, Spanned<toml::Value>)>,
}

impl Entries {
    /// The entry with this key.
    pub fn get(&self, key: &str) -> Option<&(Spanned<String>, Spanned<toml::Value>)> {
        self.entries.iter().find(|(k, _)| k.get_ref() == key)
    }

    /// The entries as a plain table.
    pub fn table(&self) -> toml::Table {
        self.entries
            .iter()
            .map(|(k, v)| (k.get_ref().clone(), v.get_ref().clone()))
            .collect()
    }
}

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(e) = m.next_entry::<Spanned<String>, Spanned<toml::Value>>()? {
                    entries.push(e);
                }
                Ok(Entries { entries })
            }
        }
        d.deserialize_map(V)
    }
}

impl StudyFile {
    /// The `[workload]` table (empty when omitted).
    pub fn workload_table(&self) -> toml::Table {
        self.workload
            .as_ref()
            .map(|w| w.get_ref().table())
            .unwrap_or_default()
    }

    /// Where the `[workload]` table starts (0 when omitted).
    pub fn workload_offset(&self) -> usize {
        self.workload.as_ref().map(|w| w.span().start).unwrap_or(0)
    }

    /// Where a `[workload]` key's value was written, else where the table starts.
    pub fn workload_value_offset(&self, key: &str) -> usize {
        self.workload
            .as_ref()
            .and_then(|w| w.get_ref().get(key))
            .map(|(_, v)| v.span().start)
            .unwrap_or_else(|| self.workload_offset())
    }
}

/// Where every key, value and array item of the file was written: the whole document as a tree
/// of spans, so that a check made after parsing can still point at what it rejects.
#[derive(Debug, Clone, Default)]
pub struct Located {
    /// A table's keys with their values.
    pub keys: Vec<(Spanned<String>, Spanned<Located>)>,
    /// An array's items.
    pub items: Vec<Spanned<Located>>,
}

impl<'de> Deserialize<'de> for Located {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Located;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any TOML value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Located, A::Error> {
                let mut keys = Vec::new();
                while let Some(e) = m.next_entry::<Spanned<String>, Spanned<Located>>()? {
                    keys.push(e);
                }
                Ok(Located {
                    keys,
                    items: Vec::new(),
                })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Located, A::Error> {
                let mut items = Vec::new();
                while let Some(e) = a.next_element::<Spanned<Located>>()? {
                    items.push(e);
                }
                Ok(Located {
                    keys: Vec::new(),
                    items,
                })
            }
            fn visit_bool<E>(self, _: bool) -> Result<Located, E> {
                Ok(Located::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Located, E> {
                Ok(Located::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Located, E> {
                Ok(Located::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Located, E> {
                Ok(Located::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Located, E> {
                Ok(Located::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// A parsed study file with its text and name (for messages).
#[derive(Debug, Clone)]
pub struct Study {
    pub file: String,
    pub text: String,
    pub spec: StudyFile,
    /// Where everything in `text` was written.
    pub located: Located,
}

impl Study {
    /// Where a workload key of the study was written (its matrix values, else its `[workload]`
    /// value).
    pub fn key_at(&self, key: &str) -> usize {
        match self.spec.matrix.get(key) {
            Some((_, v)) => v.span().start,
            None => self.spec.workload_value_offset(key),
        }
    }

    /// An error at byte `offset` of the study file.
    pub fn error_at(&self, offset: usize, message: impl Into<String>) -> StudyError {
        error_at(&self.file, &self.text, offset, message)
    }

    /// Where the value at `path` was written (`["dataset", "scale"]`, `["targets", "1",
    /// "name"]`: a number indexes an array), else where its nearest written parent was; 0 when
    /// nothing of it was written.
    pub fn at(&self, path: &[&str]) -> usize {
        let mut node = &self.located;
        let mut at = 0;
        for seg in path {
            let next = match seg.parse::<usize>() {
                Ok(i) if !node.items.is_empty() => node.items.get(i),
                _ => node
                    .keys
                    .iter()
                    .find(|(k, _)| k.get_ref() == seg)
                    .map(|(_, v)| v),
            };
            match next {
                Some(v) => {
                    at = v.span().start;
                    node = v.get_ref();
                }
                None => break,
            }
        }
        at
    }

    /// An error at the value of `path` (see [`Study::at`]).
    pub fn error_in(&self, path: &[&str], message: impl Into<String>) -> StudyError {
        self.error_at(self.at(path), message)
    }
}

pub fn error_at(file: &str, text: &str, offset: usize, message: impl Into<String>) -> StudyError {
    let (line, column) = line_col(text, offset);
    StudyError::Invalid {
        file: file.to_string(),
        line,
        column,
        message: message.into(),
    }
}

/// Largest study file read: 1 MiB (the examples are a few KB). Parsing costs about 40 times a
/// file's size in memory, so a 16 MB file reached 550 MB before the matrix limit refused it;
/// refused first, it costs nothing.
pub const MAX_STUDY_FILE: usize = 1 << 20;

fn too_big(file: &str, what: String) -> StudyError {
    StudyError::Refused(format!(
        "{file}: a study file may hold at most {MAX_STUDY_FILE} bytes (1 MiB); {what}"
    ))
}

/// Reads and parses a study file (refused past [`MAX_STUDY_FILE`] before it is read whole).
pub fn load(path: &std::path::Path) -> Result<Study, StudyError> {
    use std::io::Read;
    let read_err = |source| StudyError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    let mut bytes = Vec::new();
    file.take(MAX_STUDY_FILE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    let name = path.display().to_string();
    if bytes.len() > MAX_STUDY_FILE {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let what = if size > MAX_STUDY_FILE as u64 {
            format!("this one is {size} bytes")
        } else {
            "this one holds more".to_string()
        };
        return Err(too_big(&name, what));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        read_err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })?;
    parse(&name, &text)
}

/// Parses study text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Study, StudyError> {
    if text.len() > MAX_STUDY_FILE {
        return Err(too_big(file, format!("this one is {} bytes", text.len())));
    }
    let spec: StudyFile = toml::from_str(text).map_err(|e| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        error_at(file, text, offset, with_suggestion(e.message().trim_end()))
    })?;
    if let Some(v) = &spec.version {
        if *v.get_ref() != SCHEMA_VERSION {
            return Err(error_at(
                file,
                text,
                v.span().start,
                format!(
                    "unsupported study schema version {} (this pgrig reads version {SCHEMA_VERSION})",
                    v.get_ref()
                ),
            ));
        }
    }
    let located: Located = toml::from_str(text).unwrap_or_default();
    let study = Study {
        file: file.to_string(),
        text: text.to_string(),
        spec,
        located,
    };
    if study.spec.name.trim().is_empty() {
        return Err(study.error_in(&["name"], "the study needs a name (name = \"…\")"));
    }
    Ok(study)
}

/// serde's "unknown field `scael`, expected one of `a`, `b`" with the nearest known field.
fn with_suggestion(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let hint = crate::error::did_you_mean(field, known);
    match hint.is_empty() {
        true => message.to_string(),
        false => format!("unknown field `{field}`{hint}{expected}"),
    }
}

/// Text of a scalar TOML value as PostgreSQL or pgbench would take it (`on`, `64MB`, `4`).
pub fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "on" } else { "off" }.to_string()),
        _ => None,
    }
}

/// A workload's `options` table, each value a scalar: else the key `options` and why.
pub fn scalar_options(
    options: &std::collections::BTreeMap<String, toml::Value>,
) -> Result<(), (&'static str, String)> {
    match options.iter().find(|(_, v)| scalar_text(v).is_none()) {
        Some((k, _)) => Err((
            "options",
            format!("option \"{k}\" must be a string, number or boolean"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_file_line_column_and_key() {
        let text = "name = \"x\"\n[dataset]\nscale = 1\nscael = 2\n";
        let e = parse("s.toml", text).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "s.toml:4:1: unknown field `scael` (did you mean `scale`?), expected one of"
            ),
            "{e}"
        );
    }

    #[test]
    fn matrix_keeps_file_order_and_positions() {
        let text = "name = \"x\"\n[matrix]\nclients = [1, 4]\nisolation = [\"serializable\"]\n";
        let s = parse("s.toml", text).unwrap();
        let keys: Vec<&str> = s
            .spec
            .matrix
            .entries
            .iter()
            .map(|(k, _)| k.get_ref().as_str())
            .collect();
        assert_eq!(keys, ["clients", "isolation"]);
        assert_eq!(
            line_col(text, s.spec.matrix.entries[1].0.span().start),
            (4, 1)
        );
    }

    #[test]
    fn at_finds_keys_array_items_and_falls_back_to_the_parent() {
        let text = "name = \"x\"\n[[targets]]\nname = \"a\"\n[[targets]]\nname = \"b\"\nsettings = { w = 1 }\n";
        let s = parse("s.toml", text).unwrap();
        assert_eq!(line_col(text, s.at(&["targets", "1", "name"])), (5, 8));
        assert_eq!(
            line_col(text, s.at(&["targets", "1", "settings", "w"])),
            (6, 18)
        );
        assert_eq!(line_col(text, s.at(&["targets", "1", "nope"])), (4, 1));
        assert_eq!(s.at(&["dataset", "scale"]), 0);
    }

    #[test]
    fn wrong_version_is_refused() {
        let e = parse("s.toml", "version = 2\nname = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("s.toml:1:11: unsupported study schema version 2"),
            "{e}"
        );
    }

    #[test]
    fn reinit_values() {
        let s = parse(
            "s.toml",
            "name = \"x\"\n[dataset]\nreinit = \"per-point\"\n",
        )
        .unwrap();
        assert_eq!(s.spec.dataset.unwrap().reinit, Reinit::PerPoint);
        let e = parse("s.toml", "name = \"x\"\n[dataset]\nreinit = \"always\"\n").unwrap_err();
        assert!(e.to_string().starts_with("s.toml:3:10:"), "{e}");
    }

    #[test]
    fn target_settings_and_relation_sizes() {
        let s = parse(
            "s.toml",
            "name = \"x\"\n[target]\nsettings = { autovacuum = \"off\" }\n[collect]\nrelation_sizes = [\"a\"]\n",
        )
        .unwrap();
        assert!(s.spec.target.unwrap().settings.contains_key("autovacuum"));
        assert_eq!(
            s.spec.collect.relation_sizes,
            RelationSizes::Tables(vec!["a".into()])
        );
    }
}
