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
    let width = rows
        .iter()
        .map(|(n, k, _, _)| n.len() + suffix(*k).len())
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for (name, kind, help, default) in rows {
        let pad = width - name.len() + 1;
        s += &format!("  --{name}{:<pad$}{help}", suffix(*kind));
        if let Some(d) = default {
            s += &format!(" [{d}]");
        }
        s.push('\n');
    }
    s.push('\n');
    s
}

fn section(section: Section) -> String {
    let rows: Vec<_> = GENERAL_OPTIONS
        .iter()
        .filter(|o| o.section == section)
        .map(|o| (o.name.to_string(), o.kind, o.help, o.default))
        .collect();
    table(&rows)
}

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
    s += "pgsql options:\n";
    s += &section(Section::Pgsql);
    s += "Compiled-in tests (pgrig: sysbench's database tests):\n";
    for t in super::join::TEST_NAMES {
        s += &format!("  {t}\n");
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
