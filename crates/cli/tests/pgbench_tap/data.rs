//! The TAP cases as data (`cases.toml`, described in its header): the file's shape and its
//! expansion into one flat list of [`Case`]s (the suites' loops expanded as the suites do).

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    case: Vec<Case>,
    error: Vec<ErrorCase>,
    option: Vec<OptionCase>,
    script: Vec<ScriptCase>,
}

/// One pgbench invocation of the suites and what it must produce.
#[derive(Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub suite: String,
    pub name: String,
    pub args: String,
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    #[serde(default)]
    pub extra_args: String,
    pub status: i32,
    pub stdout: Vec<String>,
    pub stderr: Vec<String>,
    #[serde(default)]
    pub init: bool,
    #[serde(default)]
    pub tablespace: bool,
    pub sql: Option<String>,
    #[serde(default)]
    pub env: HashMap<String, String>,
    pub runs: Option<u32>,
    pub after: Option<After>,
    pub logs: Option<Logs>,
    #[serde(default)]
    pub serial: bool,
    pub awaiting: Option<String>,
    /// The case provokes a server race (the reason): a failing attempt is repeated, up to three
    /// attempts on fresh databases, for either tool.
    pub races: Option<String>,
    pub newer: Option<String>,
    pub newer_client: Option<String>,
    /// 002's cases run against no database (the suite runs without a server).
    #[serde(default)]
    pub no_server: bool,
}

/// SQL run after the command and the regexes its output must match.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct After {
    pub sql: String,
    pub stdout: Vec<String>,
}

/// check_pgbench_logs: `files` files named `prefix.N[.N]`, `min_lines..=max_lines` lines each,
/// every line matching `line`.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Logs {
    pub prefix: String,
    pub files: usize,
    pub min_lines: usize,
    pub max_lines: usize,
    pub line: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorCase {
    name: String,
    status: i32,
    stderr: Vec<String>,
    script: String,
    awaiting: Option<String>,
    newer: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionCase {
    name: String,
    args: String,
    stderr: Vec<String>,
    awaiting: Option<String>,
    newer: Option<String>,
    newer_client: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCase {
    name: String,
    stderr: Vec<String>,
    file: String,
    text: String,
    awaiting: Option<String>,
    newer: Option<String>,
}

/// Every case of `cases.toml`, the loops expanded.
pub fn load() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pgbench_tap/cases.toml");
    let text = std::fs::read_to_string(path).expect("cases.toml");
    let file: File = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut cases = file.case;
    cases.extend(file.error.into_iter().map(error_case));
    cases.extend(file.option.into_iter().map(option_case));
    cases.extend(file.script.into_iter().map(script_case));
    for c in &mut cases {
        c.no_server = c.suite == "002";
    }
    cases
}

/// 001's error loop: `-n -t 1`, the -D variables, `-M prepared`; stdout empty for status 1,
/// `processed: 0/1` otherwise; the script named after the test.
fn error_case(e: ErrorCase) -> Case {
    let stdout = if e.status == 1 {
        "^$"
    } else {
        "processed: 0/1"
    };
    let file = format!("001_pgbench_error_{}", e.name.replace(' ', "_"));
    Case {
        suite: "001".into(),
        name: format!("pgbench script error: {}", e.name),
        args: "-n -t 1 -Dfoo=bla -Dnull=null -Dtrue=true -Done=1 -Dzero=0.0 -Dbadtrue=trueXXX \
               -Dmaxint=9223372036854775807 -Dminint=-9223372036854775808 -M prepared"
            .into(),
        files: BTreeMap::from([(file, e.script)]),
        status: e.status,
        stdout: vec![stdout.into()],
        stderr: e.stderr,
        awaiting: e.awaiting,
        newer: e.newer,
        ..Case::default()
    }
}

/// 002's option loop: status 1, empty stdout.
fn option_case(o: OptionCase) -> Case {
    Case {
        suite: "002".into(),
        name: format!("pgbench option error: {}", o.name),
        args: o.args,
        status: 1,
        stdout: vec!["^$".into()],
        stderr: o.stderr,
        awaiting: o.awaiting,
        newer: o.newer,
        newer_client: o.newer_client,
        ..Case::default()
    }
}

/// 002's script loop: no options, the script, status 1, empty stdout.
fn script_case(s: ScriptCase) -> Case {
    Case {
        suite: "002".into(),
        name: format!("pgbench option error: {}", s.name),
        files: BTreeMap::from([(s.file, s.text)]),
        status: 1,
        stdout: vec!["^$".into()],
        stderr: s.stderr,
        awaiting: s.awaiting,
        newer: s.newer,
        ..Case::default()
    }
}
