//! The `[dataset]` table's `csv` key, checked: `csv = "dir/"` or a table `[dataset.csv]` with
//! `dir`, `jobs`, the COPY options every file shares (`header`, `null`, `delimiter`, `quote`,
//! `escape`, `encoding`) and `[dataset.csv.tables.NAME]` overriding them for one table. The
//! directory's `NAME.csv` files load table `NAME`; what is wrong is reported where the study
//! file says it, before anything runs.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::StudyError;
use crate::spec::Study;

/// COPY's CSV options for one file (`None`: the server's default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvOptions {
    pub header: Option<bool>,
    pub null: Option<String>,
    pub delimiter: Option<char>,
    pub quote: Option<char>,
    pub escape: Option<char>,
    pub encoding: Option<String>,
}

/// One file to load.
#[derive(Debug, Clone)]
pub struct CsvFile {
    /// The table it loads (the file's name without `.csv`).
    pub table: String,
    /// The file as opened and as shown in messages.
    pub path: std::path::PathBuf,
    pub shown: String,
    pub options: CsvOptions,
    /// Its size in bytes when the study was checked (for the progress display).
    pub bytes: u64,
}

/// The CSV files of a dataset, largest first, and how many load at once (0: from the cores).
#[derive(Debug, Clone)]
pub struct CsvSet {
    pub files: Vec<CsvFile>,
    pub jobs: usize,
}

const OPTION_KEYS: [&str; 6] = ["header", "null", "delimiter", "quote", "escape", "encoding"];

/// `[dataset.csv.tables.NAME]`: each table's own COPY options, with where they were written.
fn table_overrides<'a>(
    study: &Study,
    v: &'a toml::Value,
) -> Result<BTreeMap<String, (CsvOptions, [&'a str; 4])>, StudyError> {
    let Some(t) = v.as_table() else {
        return Err(study.error_in(
            &["dataset", "csv", "tables"],
            "dataset csv tables must be a table of tables ([dataset.csv.tables.NAME])",
        ));
    };
    let mut overrides = BTreeMap::new();
    for (name, o) in t {
        let path = ["dataset", "csv", "tables", name.as_str()];
        let Some(o) = o.as_table() else {
            return Err(study.error_in(
                &path,
                format!("dataset csv tables.{name} must be a table of COPY options"),
            ));
        };
        let mut opts = CsvOptions::default();
        for (k, v) in o {
            set_option(&mut opts, k, v)
                .map_err(|m| study.error_in(&[path[0], path[1], path[2], path[3], k], m))?;
        }
        overrides.insert(name.clone(), (opts, path));
    }
    Ok(overrides)
}

/// Resolves the `csv` value of `[dataset]` against `base_dir` (the study file's directory).
pub fn resolve(study: &Study, base_dir: &Path, value: &toml::Value) -> Result<CsvSet, StudyError> {
    let at = |key: &str, m: String| study.error_in(&["dataset", "csv", key], m);
    let (dir, table) = match value {
        toml::Value::String(d) => (d.clone(), toml::map::Map::new()),
        toml::Value::Table(t) => match t.get("dir") {
            Some(toml::Value::String(d)) => (d.clone(), t.clone()),
            _ => {
                return Err(at(
                    "dir",
                    "dataset csv needs `dir`, the directory of the CSV files".into(),
                ))
            }
        },
        _ => {
            return Err(at(
                "",
                "dataset csv must be a directory (csv = \"data/\") or a table with `dir`".into(),
            ))
        }
    };
    let mut shared = CsvOptions::default();
    let mut overrides = BTreeMap::new();
    let mut jobs = 0;
    for (key, v) in &table {
        match key.as_str() {
            "dir" => {}
            "jobs" => {
                jobs = positive(v).ok_or_else(|| {
                    at(
                        "jobs",
                        "dataset csv jobs must be a whole number from 1 to 64".into(),
                    )
                })?
            }
            "tables" => overrides = table_overrides(study, v)?,
            k => set_option(&mut shared, k, v).map_err(|m| at(k, m))?,
        }
    }
    let files = list_files(base_dir, &dir).map_err(|m| at("dir", m))?;
    for (name, (_, path)) in &overrides {
        if !files.iter().any(|(t, _, _)| t == name) {
            return Err(study.error_in(
                path,
                format!("dataset csv tables.{name}: there is no file {name}.csv in \"{dir}\""),
            ));
        }
    }
    let mut out: Vec<CsvFile> = files
        .into_iter()
        .map(|(table, path, bytes)| {
            let options = match overrides.get(&table) {
                Some((o, _)) => merged(&shared, o),
                None => shared.clone(),
            };
            CsvFile {
                shown: path.display().to_string(),
                table,
                path,
                options,
                bytes,
            }
        })
        .collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.table.cmp(&b.table)));
    Ok(CsvSet { files: out, jobs })
}

fn positive(v: &toml::Value) -> Option<usize> {
    v.as_integer()
        .filter(|n| (1..=64).contains(n))
        .map(|n| n as usize)
}

/// Sets option `key` from `v`; the error names the key and what it accepts.
fn set_option(o: &mut CsvOptions, key: &str, v: &toml::Value) -> Result<(), String> {
    let text = || {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("dataset csv `{key}` must be a string"))
    };
    let one = || -> Result<char, String> {
        let s = text()?;
        let mut c = s.chars();
        match (c.next(), c.next()) {
            (Some(ch), None) if ch.is_ascii() && ch != '\n' && ch != '\r' => Ok(ch),
            _ => Err(format!(
                "dataset csv `{key}` must be one ASCII character other than a line end, not \"{s}\""
            )),
        }
    };
    match key {
        "header" => {
            o.header = Some(
                v.as_bool()
                    .ok_or("dataset csv `header` must be true or false")?,
            )
        }
        "null" => {
            let s = text()?;
            if s.contains(['\n', '\r']) {
                return Err("dataset csv `null` cannot contain a line end".into());
            }
            o.null = Some(s)
        }
        "delimiter" => o.delimiter = Some(one()?),
        "quote" => o.quote = Some(one()?),
        "escape" => o.escape = Some(one()?),
        "encoding" => {
            let s = text()?;
            if s.is_empty()
                || !s
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!(
                    "dataset csv `encoding` \"{s}\" is not an encoding name (e.g. UTF8, LATIN1)"
                ));
            }
            o.encoding = Some(s)
        }
        k => {
            return Err(format!(
                "unknown dataset csv key `{k}`{} (expected dir, jobs, tables or a COPY option: {})",
                crate::error::did_you_mean(
                    k,
                    OPTION_KEYS.iter().copied().chain(["dir", "jobs", "tables"])
                ),
                OPTION_KEYS.join(", ")
            ))
        }
    }
    Ok(())
}

/// `base` with every option `over` sets replaced.
fn merged(base: &CsvOptions, over: &CsvOptions) -> CsvOptions {
    CsvOptions {
        header: over.header.or(base.header),
        null: over.null.clone().or_else(|| base.null.clone()),
        delimiter: over.delimiter.or(base.delimiter),
        quote: over.quote.or(base.quote),
        escape: over.escape.or(base.escape),
        encoding: over.encoding.clone().or_else(|| base.encoding.clone()),
    }
}

/// The `NAME.csv` files of `dir` (relative to `base`): table name, path, size.
fn list_files(base: &Path, dir: &str) -> Result<Vec<(String, std::path::PathBuf, u64)>, String> {
    let path = base.join(dir);
    let shown = path.display().to_string();
    let entries = std::fs::read_dir(&path).map_err(|e| {
        format!(
            "could not read the CSV directory \"{shown}\": {}",
            pgrig_wire::strerror(&e)
        )
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| {
            format!(
                "could not read the CSV directory \"{shown}\": {}",
                pgrig_wire::strerror(&e)
            )
        })?;
        let p = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(table) = name.strip_suffix(".csv") else {
            continue;
        };
        let meta = std::fs::metadata(&p).map_err(|e| {
            format!(
                "could not read \"{}\": {}",
                p.display(),
                pgrig_wire::strerror(&e)
            )
        })?;
        if table.is_empty() || !meta.is_file() {
            continue;
        }
        files.push((table.to_string(), p, meta.len()));
    }
    if files.is_empty() {
        return Err(format!(
            "the CSV directory \"{shown}\" has no NAME.csv files"
        ));
    }
    Ok(files)
}

/// The `COPY ... FROM STDIN` statement loading `f` (client side: pgrig sends the file's bytes).
pub fn copy_statement(f: &CsvFile) -> String {
    use pgrig_wire::quote::{ident, literal};
    let o = &f.options;
    let mut opts = vec!["format csv".to_string()];
    if let Some(h) = o.header {
        opts.push(format!("header {h}"));
    }
    let ch = |c: char| literal(&c.to_string());
    if let Some(n) = &o.null {
        opts.push(format!("null {}", literal(n)));
    }
    if let Some(c) = o.delimiter {
        opts.push(format!("delimiter {}", ch(c)));
    }
    if let Some(c) = o.quote {
        opts.push(format!("quote {}", ch(c)));
    }
    if let Some(c) = o.escape {
        opts.push(format!("escape {}", ch(c)));
    }
    if let Some(e) = &o.encoding {
        opts.push(format!("encoding {}", literal(e)));
    }
    format!(
        "copy {} from stdin with ({})",
        ident(&f.table),
        opts.join(", ")
    )
}

/// Sets COPY option `key` (`null`, `delimiter`, `quote`, `escape`, `encoding`) from its text,
/// checked as in a study file (`pgrig load`'s options).
pub fn set_text_option(o: &mut CsvOptions, key: &str, text: &str) -> Result<(), String> {
    set_option(o, key, &toml::Value::String(text.to_string()))
}

/// Every `NAME.csv` file of `dir` with the same `options` (`pgrig load`'s set); `jobs` 0: from
/// the cores.
pub fn plain_set(dir: &Path, options: &CsvOptions, jobs: usize) -> Result<CsvSet, String> {
    let mut files: Vec<CsvFile> = list_files(Path::new(""), &dir.display().to_string())?
        .into_iter()
        .map(|(table, path, bytes)| CsvFile {
            shown: path.display().to_string(),
            table,
            path,
            options: options.clone(),
            bytes,
        })
        .collect();
    files.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.table.cmp(&b.table)));
    Ok(CsvSet { files, jobs })
}
