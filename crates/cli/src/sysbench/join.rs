//! Where the `sysbench` command line meets `pgrig_workloads`: the [`Tests`] the command line
//! runs, answered by the workloads crate's registry.

use pgrig_workloads::{Native, OptionError, Options};

use super::seam::{TestOption, Tests};

/// sysbench 1.0's database tests, in its order.
pub const TEST_NAMES: &[&str] = &[
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
];

/// The workloads crate's sysbench family.
pub struct Workloads;

impl Tests for Workloads {
    fn has(&self, test: &str) -> bool {
        TEST_NAMES.contains(&test) && pgrig_workloads::is_native(test)
    }

    fn options(&self, _test: &str) -> Vec<TestOption> {
        Vec::new()
    }

    fn build(&self, test: &str, options: &Options) -> Result<Native, OptionError> {
        pgrig_workloads::build(test, options)
    }
}
