//! sysbench 1.0's command line, parsed as sysbench parses it: arguments without `--` are the
//! test name, then the command (a third one is an error); options are `--name` or
//! `--name=value` only (no separate value argument; `-` and `_` in names alike); an option that
//! is not a general one (or a general boolean with a bad value) is left for the test, which
//! rejects what it does not know with `invalid option: ARG`.

use super::options::{self, find};

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
        for a in args {
            let Some(body) = a.strip_prefix("--") else {
                if c.test.is_none() {
                    c.test = Some(a.clone());
                } else if c.command.is_none() {
                    c.command = Some(a.clone());
                } else {
                    return Err(Unrecognized(format!(
                        "Unrecognized command line argument: {a}"
                    )));
                }
                continue;
            };
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
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
        assert_eq!(e.0, "Unrecognized command line argument: run");
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
