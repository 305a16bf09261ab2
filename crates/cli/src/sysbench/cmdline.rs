//! sysbench 1.0's command line, parsed as sysbench parses it: arguments without `--` are the
//! test name, then the command (a third one is an error); options are `--name` or
//! `--name=value` only (no separate value argument; `-` and `_` in names alike); an option that
//! is not a general one (or a general boolean with a bad value) is left for the test, which
//! rejects what it does not know with `invalid option: ARG`. pgrig's own options that take a
//! value (`--json FILE`, `--store PATH`, ...) also take it as the next argument. A third bare
//! argument is sysbench's error, followed by a line naming the option whose value it was
//! probably meant to be.

use super::options::{self, find, Section};
use super::seam::OptKind;

/// What the command line says, before the test is known.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CmdLine {
    pub test: Option<String>,
    pub command: Option<String>,
    /// General options as given (sysbench's name, value), later ones win.
    pub general: Vec<(&'static str, Option<String>)>,
    /// Options left for the test: (name with `_`, value, the argument as given).
    pub rest: Vec<(String, Option<String>, String)>,
    /// `--test=NAME` was used (sysbench warns that it is deprecated).
    pub deprecated_test: bool,
}

/// A command line sysbench refuses before doing anything: the message for standard error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrecognized(pub String);

impl CmdLine {
    /// Parses `args` (without the program name).
    pub fn parse(args: &[String]) -> Result<CmdLine, Unrecognized> {
        let mut c = CmdLine::default();
        let mut args = args.iter().peekable();
        // the last option given without a value, if the bare argument after it
        let mut bare_after: Option<&str> = None;
        while let Some(a) = args.next() {
            let Some(body) = a.strip_prefix("--") else {
                if c.test.is_none() {
                    c.test = Some(a.clone());
                } else if c.command.is_none() {
                    c.command = Some(a.clone());
                } else {
                    return Err(unrecognized(a, bare_after, &c));
                }
                continue;
            };
            bare_after = None;
            let (name, mut value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            if value.is_none() {
                if takes_separate_value(name) {
                    value = args.next_if(|v| !v.starts_with("--")).cloned();
                } else if args.peek().is_some_and(|v| !v.starts_with("--")) {
                    bare_after = Some(body);
                }
            }
            if name == "test" {
                c.deprecated_test = true;
                c.test = value;
                continue;
            }
            match find(name) {
                Some(o) if options::accepts(o.kind, value.as_deref()) => {
                    c.general.push((o.name, value));
                }
                _ => c.rest.push((name.replace('-', "_"), value, a.clone())),
            }
        }
        Ok(c)
    }

    /// The last value given for general option `name` (`Some(None)`: given without a value).
    pub fn given(&self, name: &str) -> Option<Option<&str>> {
        self.general
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_deref())
    }

    /// General option `name`'s value, or its default (an empty value counts as not given, as in
    /// sysbench).
    pub fn value(&self, name: &str) -> Option<&str> {
        match self.given(name) {
            Some(Some(v)) if !v.is_empty() => Some(v),
            _ => find(name).and_then(|o| o.default),
        }
    }

    /// A boolean general option.
    pub fn flag(&self, name: &str) -> bool {
        match self.given(name) {
            Some(v) => options::parse_bool(v).unwrap_or(false),
            None => find(name)
                .and_then(|o| o.default)
                .and_then(|d| options::parse_bool(Some(d)))
                .unwrap_or(false),
        }
    }
}

/// pgrig's own options that take a value: the next argument is their value when none follows
/// `=` (`--json FILE`, as pgrig's other commands write it).
fn takes_separate_value(name: &str) -> bool {
    find(name).is_some_and(|o| o.section == Section::Pgrig && o.kind != OptKind::Bool)
}

/// sysbench's error for a third bare argument `a` and, when an option without a value came
/// right before a bare argument, a line naming it (`--tables 2 run`: `2` was read as the
/// command).
fn unrecognized(a: &str, bare_after: Option<&str>, c: &CmdLine) -> Unrecognized {
    let mut msg = format!("Unrecognized command line argument: {a}");
    if let Some(opt) = bare_after {
        let taken = c.command.as_deref().unwrap_or("");
        msg += &format!(
            "\npgrig: --{opt} takes its value after '=' (--{opt}={taken}); '{taken}' was read as the command"
        );
    }
    Unrecognized(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn names_and_commands_are_the_bare_arguments() {
        let c = CmdLine::parse(&args("--threads=4 oltp_read_write --tables=2 run")).unwrap();
        assert_eq!(c.test.as_deref(), Some("oltp_read_write"));
        assert_eq!(c.command.as_deref(), Some("run"));
        assert_eq!(c.value("threads"), Some("4"));
        assert_eq!(c.rest[0].0, "tables");
    }

    #[test]
    fn a_separate_value_is_an_argument_not_a_value() {
        let e = CmdLine::parse(&args("oltp_read_write --tables 2 run")).unwrap_err();
        assert_eq!(
            e.0,
            "Unrecognized command line argument: run\n\
             pgrig: --tables takes its value after '=' (--tables=2); '2' was read as the command"
        );
        let e = CmdLine::parse(&args("a b c")).unwrap_err();
        assert_eq!(e.0, "Unrecognized command line argument: c");
    }

    #[test]
    fn pgrigs_own_options_take_a_separate_value() {
        let c = CmdLine::parse(&args("s.lua --json out.json --store st run")).unwrap();
        assert_eq!(c.given("json"), Some(Some("out.json")));
        assert_eq!(c.given("store"), Some(Some("st")));
        assert_eq!(c.command.as_deref(), Some("run"));
        let c = CmdLine::parse(&args("s.lua run --json=o.json")).unwrap();
        assert_eq!(c.given("json"), Some(Some("o.json")));
        // the next option is no value
        let c = CmdLine::parse(&args("s.lua --json --threads=2 run")).unwrap();
        assert_eq!(c.given("json"), Some(None));
    }

    #[test]
    fn a_bad_general_boolean_is_left_for_the_test() {
        let c = CmdLine::parse(&args("--histogram=maybe x run")).unwrap();
        assert!(c.general.is_empty());
        assert_eq!(c.rest[0].2, "--histogram=maybe");
        let c = CmdLine::parse(&args("--histogram x run")).unwrap();
        assert!(c.flag("histogram"));
    }

    #[test]
    fn dashes_and_underscores_name_the_same_option() {
        let c = CmdLine::parse(&args("--report_interval=3 --table-size=5 x run")).unwrap();
        assert_eq!(c.value("report-interval"), Some("3"));
        assert_eq!(c.rest[0].0, "table_size");
    }
}
