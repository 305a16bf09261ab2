//! Where the `sysbench` command line meets `pgrig_workloads::sysbench`: the [`Tests`] the
//! command line runs, answered by the workloads' test list and option table.

use pgrig_workloads::sysbench::{self as wl, OptionGroup, OptionKind, Test};
use pgrig_workloads::{Native, OptionError, Options};

use super::general::Exit;
use super::seam::{OptKind, TestOption, Tests};

/// sysbench 1.0's database tests.
pub const TEST_NAMES: &[&str] = &wl::TESTS;

/// The workloads crate's sysbench family.
pub struct Workloads;

impl Tests for Workloads {
    fn has(&self, test: &str) -> bool {
        Test::parse(test).is_some()
    }

    fn options(&self, test: &str) -> Vec<TestOption> {
        let Some(t) = Test::parse(test) else {
            return Vec::new();
        };
        wl::options_for(t)
            .into_iter()
            .map(|o| TestOption {
                name: o.name.to_string(),
                kind: match o.kind {
                    OptionKind::Int => OptKind::Int,
                    OptionKind::Float => OptKind::Float,
                    OptionKind::Bool => OptKind::Bool,
                    OptionKind::Str => OptKind::Str,
                },
                help: o.help.to_string(),
                default: (!o.default.is_empty()).then(|| o.default.to_string()),
                own: o.group == OptionGroup::Test,
            })
            .collect()
    }

    fn build(&self, test: &str, options: &Options) -> Result<Native, OptionError> {
        wl::build(test, options)
    }

    fn cleanup_refusal(&self, test: &str, options: &Options) -> Option<String> {
        let s = wl::settings(test, options).ok()?;
        s.cleanup_refusal().map(String::from)
    }
}

/// The tests of `pgrig_workloads::sysbench`.
pub fn tests() -> &'static dyn Tests {
    &Workloads
}

/// The test's workload; options it refuses are `FATAL: ...`.
pub fn build(test: &str, options: &Options) -> Result<Native, Exit> {
    tests()
        .build(test, options)
        .map_err(|e| Exit::fatal(e.message))
}
