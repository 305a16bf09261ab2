//! `--help` (sysbench's usage and the general options pgrig takes) and `TEST help` (the test's
//! options), in sysbench's layout: `  --name=N   help [default]`, names padded to the longest.

use super::options::{Section, GENERAL_OPTIONS};
use super::seam::{OptKind, TestOption};

fn suffix(kind: OptKind) -> &'static str {
    match kind {
        OptKind::Int | OptKind::Float => "=N",
        OptKind::Bool => "[=on|off]",
        OptKind::Str => "=STRING",
    }
}

/// Option lines as sysbench's `sb_print_options` writes them, then a blank line.
fn table(rows: &[(String, OptKind, &str, Option<&str>)]) -> String {
    let suffix_of = |n: &str, k: OptKind| shown_suffix(n).unwrap_or(suffix(k));
    let width = rows
        .iter()
        .map(|(n, k, _, _)| n.len() + suffix_of(n, *k).len())
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for (name, kind, help, default) in rows {
        let pad = width - name.len() + 1;
        s += &format!("  --{name}{:<pad$}{help}", suffix_of(name, *kind));
        if let Some(d) = default {
            s += &format!(" [{d}]");
        }
        s.push('\n');
    }
    s.push('\n');
    s
}

/// How `--help` writes an option's value where sysbench names it otherwise than its kind.
fn shown_suffix(name: &str) -> Option<&'static str> {
    match name {
        "thread-stack-size" => Some("=SIZE"),
        "report-checkpoints" => Some("=[LIST,...]"),
        "config-file" => Some("=FILENAME"),
        _ => None,
    }
}

fn section(section: Section) -> String {
    let rows: Vec<_> = GENERAL_OPTIONS
        .iter()
        .filter(|o| o.section == section)
        .map(|o| {
            // sysbench shows no default driver when it has several (pgrig's is pgsql)
            let default = o.default.filter(|_| o.name != "db-driver");
            (o.name.to_string(), o.kind, o.help, default)
        })
        .collect();
    table(&rows)
}

/// sysbench's built-in tests that are no database tests, with its descriptions.
const NON_DATABASE_TESTS: [(&str, &str); 5] = [
    ("fileio", "File I/O test"),
    ("cpu", "CPU performance test"),
    ("memory", "Memory functions speed test"),
    ("threads", "Threads subsystem performance test"),
    ("mutex", "Mutex performance test"),
];

/// `sysbench --help`.
pub fn general() -> String {
    let mut s = String::from(
        "Usage:\n  sysbench [options]... [testname] [command]\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\n",
    );
    s += "General options:\n";
    s += &section(Section::General);
    s += "Pseudo-Random Numbers Generator options:\n";
    s += &section(Section::Rand);
    s += "Log options:\n";
    s += &section(Section::Verbosity);
    s += &section(Section::Log);
    s += "General database options:\n\n";
    s += &section(Section::Db);
    s += "\nCompiled-in database drivers:\n  pgsql - PostgreSQL driver\n\n";
    s += "pgsql options:\n";
    s += &section(Section::Pgsql);
    s += "Database tests (pgrig runs these natively by name, and any Lua script by path):\n";
    for t in super::join::TEST_NAMES {
        s += &format!("  {t}\n");
    }
    // sysbench's list; pgrig implements none of these (they are not database tests)
    s += "\nsysbench's other tests (not in pgrig):\nCompiled-in tests:\n";
    for (t, what) in NON_DATABASE_TESTS {
        s += &format!("  {t} - {what}\n");
    }
    s += "\nSee 'sysbench <testname> help' for a list of options for each test.\n\n";
    s
}

/// `sysbench TEST help`.
pub fn test(test: &str, options: &[TestOption]) -> String {
    let mut sorted: Vec<&TestOption> = options.iter().filter(|o| o.own).collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let rows: Vec<_> = sorted
        .iter()
        .map(|o| {
            (
                o.name.clone(),
                o.kind,
                o.help.as_str(),
                o.default.as_deref(),
            )
        })
        .collect();
    format!("{test} options:\n{}", table(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_help_pads_names_as_sysbench() {
        let o = |name: &str, kind, d: &str| TestOption {
            name: name.into(),
            kind,
            help: format!("about {name}"),
            default: Some(d.into()),
            own: true,
        };
        let s = test(
            "t",
            &[
                o("tables", OptKind::Int, "1"),
                o("auto_inc", OptKind::Bool, "on"),
            ],
        );
        assert_eq!(
            s,
            "t options:\n  --auto_inc[=on|off] about auto_inc [on]\n  --tables=N          about tables [1]\n\n"
        );
    }
}
