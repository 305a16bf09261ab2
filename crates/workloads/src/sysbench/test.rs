//! The 11 tests by sysbench's names, and [`Test`], the one the other files of the family
//! take (its own file so that they need not import the family's `mod.rs`).

/// The tests, by sysbench's names.
pub const TESTS: [&str; 11] = [
    "bulk_insert",
    "oltp_delete",
    "oltp_insert",
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_write_only",
    "select_random_points",
    "select_random_ranges",
];

/// One of the tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Test {
    BulkInsert,
    OltpDelete,
    OltpInsert,
    OltpPointSelect,
    OltpReadOnly,
    OltpReadWrite,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpWriteOnly,
    SelectRandomPoints,
    SelectRandomRanges,
}

const ALL: [Test; 11] = [
    Test::BulkInsert,
    Test::OltpDelete,
    Test::OltpInsert,
    Test::OltpPointSelect,
    Test::OltpReadOnly,
    Test::OltpReadWrite,
    Test::OltpUpdateIndex,
    Test::OltpUpdateNonIndex,
    Test::OltpWriteOnly,
    Test::SelectRandomPoints,
    Test::SelectRandomRanges,
];

impl Test {
    pub fn parse(name: &str) -> Option<Test> {
        TESTS.iter().position(|t| *t == name).map(|i| ALL[i])
    }

    pub fn name(self) -> &'static str {
        TESTS[ALL.iter().position(|t| *t == self).unwrap_or(0)]
    }
}
