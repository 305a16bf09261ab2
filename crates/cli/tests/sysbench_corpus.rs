//! The public-script corpus (issue 35): sysbench scripts nobody on this project wrote, run
//! unmodified under sysbench 1.0.20 and pgrig (through the `sysbench` link) on two fresh
//! databases: the same exit status for every command; for `run` (`--threads=1 --events=N
//! --rand-seed=1`) the same events and transactions, and the same queries by class where they do
//! not depend on the random sequence; the same tables (and row counts) after each command; the
//! same PASSED/FAILED lines of a kit's `check`. The scripts are never copied into this
//! repository: they are read where they live on this machine (sysbench's test-suite copy under
//! `shared/reference`, or a fetched repository at a pinned commit); where a source is missing
//! the script's test goes through `pgrig_testkit::skip` (listed by `./test`, a failure in CI).
//! `sysbench_corpus/README.md` lists origins, licences, command lines and today's results;
//! `sysbench_corpus/harness.rs` the mechanics.

mod harness;

use harness::{check, check_help, missing, Case, Classes, Origin, Tables};

/// sysbench 0.5's scripts as sysbench 1.0.20 ships them for `--test=` (its test-suite copy).
const LEGACY: Origin = Origin::Shared("reference/sysbench-1.0.20-tests/include");
/// Percona-Lab/sysbench-tpcc (Apache-2.0): a TPC-C-like kit for sysbench 1.0.
const TPCC: Origin = Origin::Mirror {
    repo: "Percona-Lab/sysbench-tpcc",
    commit: "585e2b8af327d35866aed7e56837c2134d8835a9",
};
/// dolthub/sysbench-lua-scripts (no licence file): Dolt's/Doltgres's benchmark scripts.
const DOLT: Origin = Origin::Mirror {
    repo: "dolthub/sysbench-lua-scripts",
    commit: "d297075a90d762e2e4f7c7e56049952cfcfa8ac5",
};
/// yugabyte/sysbench (GPL-2.0): YugabyteDB's sysbench fork, its own Lua workloads.
const YUGABYTE: Origin = Origin::Mirror {
    repo: "yugabyte/sysbench",
    commit: "528b6fbacf00340858722a9502e0d3778c577f25",
};
/// akopytov/sysbench (GPL-2.0) at master: the example scripts its `src/lua` ships beside the
/// bundled tests (no database; not counted among the PostgreSQL scripts).
const SYSBENCH_MASTER: Origin = Origin::Mirror {
    repo: "akopytov/sysbench",
    commit: "3ceba0b1e115f8c50d1d045a4574d8ed643bd497",
};
/// digoal/sysbench (BSD-3-Clause): sysbench 0.5 scripts for PostgreSQL (not counted: sysbench
/// 1.0.20 itself refuses them).
const DIGOAL: Origin = Origin::Mirror {
    repo: "digoal/sysbench",
    commit: "d6bf2b8a51d464a287982ad72338f20f03d57d30",
};

const PREPARE_RUN_CLEANUP: &[&str] = &["prepare", "run", "cleanup"];

/// A case with the common defaults (20 events, every class compared, row counts compared).
const fn case(
    name: &'static str,
    origin: Origin,
    dir: &'static str,
    args: &'static [&'static str],
) -> Case {
    Case {
        name,
        origin,
        dir,
        args,
        commands: PREPARE_RUN_CLEANUP,
        events: 20,
        classes: Classes::All,
        tables: Tables::Counts,
        line_markers: &[],
        standard_report: true,
    }
}

fn all_cases() -> Vec<Case> {
    vec![
        LEGACY_OLTP,
        LEGACY_OLTP_SIMPLE,
        LEGACY_SELECT,
        LEGACY_INSERT,
        LEGACY_DELETE,
        LEGACY_UPDATE_INDEX,
        LEGACY_UPDATE_NON_INDEX,
        LEGACY_SELECT_RANDOM_POINTS,
        LEGACY_SELECT_RANDOM_RANGES,
        LEGACY_BULK_INSERT,
        LEGACY_PARALLEL_PREPARE,
        TPCC_KIT,
        DOLT_COVERING_INDEX_SCAN,
        DOLT_GROUPBY_SCAN,
        DOLT_INDEX_JOIN,
        DOLT_INDEX_JOIN_SCAN,
        DOLT_INDEX_SCAN,
        DOLT_TABLE_SCAN,
        DOLT_TYPES_TABLE_SCAN,
        DOLT_OLTP_DELETE_INSERT,
        DOLT_TYPES_DELETE_INSERT,
        DOLT_FULL_TABLE,
        YB_OLTP_READ_WRITE,
        YB_OLTP_JOIN,
        YB_OLTP_MULTI_INSERT,
        YB_OLTP_MULTI_VALUE_INSERT,
        YB_OLTP_PRIMARYKEY_SCAN,
        YB_OLTP_SEQUENTIAL_SCAN,
        YB_OLTP_SIMPLE_RANGES,
        YB_OLTP_SUM_SCAN,
        YB_SELECT_ONE,
        YB_POINT_SELECT_CREATE_LOAD_WARMUP,
        DIGOAL_OLTP_PG_SIMPLE,
        DIGOAL_OLTP_PG,
        EMPTY_TEST,
        PRIME_TEST,
    ]
}

/// Every corpus source is on this machine: one line naming all that are missing (through
/// [`pgrig_testkit::skip`]: listed by `./test`, a failure in CI).
#[test]
fn the_corpus_sources_are_on_this_machine() {
    let mut gone: Vec<String> = all_cases()
        .iter()
        .filter_map(|c| missing(&c.origin))
        .collect();
    gone.dedup();
    if !gone.is_empty() {
        pgrig_testkit::skip(&format!("corpus sources missing: {gone:?}"));
    }
}

/// The corpus holds at least 15 scripts that sysbench 1.0.20 runs on PostgreSQL.
#[test]
fn the_corpus_counts_at_least_fifteen_scripts_sysbench_runs() {
    let counted = all_cases()
        .iter()
        .filter(|c| !c.name.starts_with("digoal") && !c.name.ends_with("_test"))
        .count();
    assert!(counted >= 15, "{counted}");
}

/// sysbench 0.5's `oltp.lua` (`--test=`).
const LEGACY_OLTP: Case = case(
    "legacy_oltp",
    LEGACY,
    "oltp_legacy",
    &[
        "--test={dir}/oltp.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_oltp_lua_runs_as_under_sysbench() {
    check(&LEGACY_OLTP);
}

/// sysbench 0.5's `oltp_simple.lua`.
const LEGACY_OLTP_SIMPLE: Case = case(
    "legacy_oltp_simple",
    LEGACY,
    "oltp_legacy",
    &[
        "--test={dir}/oltp_simple.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_oltp_simple_lua_runs_as_under_sysbench() {
    check(&LEGACY_OLTP_SIMPLE);
}

/// sysbench 0.5's `select.lua`, by path as a blog's script runs it.
const LEGACY_SELECT: Case = case(
    "legacy_select",
    LEGACY,
    "oltp_legacy",
    &[
        "{dir}/select.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_select_lua_runs_as_under_sysbench() {
    check(&LEGACY_SELECT);
}

/// sysbench 0.5's `insert.lua`.
const LEGACY_INSERT: Case = case(
    "legacy_insert",
    LEGACY,
    "oltp_legacy",
    &[
        "--test={dir}/insert.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_insert_lua_runs_as_under_sysbench() {
    check(&LEGACY_INSERT);
}

/// sysbench 0.5's `delete.lua` (a DELETE of a deleted id is "other": the split depends on the keys).
const LEGACY_DELETE: Case = Case {
    classes: Classes::TotalUntilSameRand,
    ..case(
        "legacy_delete",
        LEGACY,
        "oltp_legacy",
        &[
            "--test={dir}/delete.lua",
            "--oltp-table-size=100",
            "--oltp-tables-count=2",
        ],
    )
};

#[test]
fn legacy_delete_lua_runs_as_under_sysbench() {
    check(&LEGACY_DELETE);
}

/// sysbench 0.5's `update_index.lua`.
const LEGACY_UPDATE_INDEX: Case = case(
    "legacy_update_index",
    LEGACY,
    "oltp_legacy",
    &[
        "--test={dir}/update_index.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_update_index_lua_runs_as_under_sysbench() {
    check(&LEGACY_UPDATE_INDEX);
}

/// sysbench 0.5's `update_non_index.lua`.
const LEGACY_UPDATE_NON_INDEX: Case = case(
    "legacy_update_non_index",
    LEGACY,
    "oltp_legacy",
    &[
        "{dir}/update_non_index.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_update_non_index_lua_runs_as_under_sysbench() {
    check(&LEGACY_UPDATE_NON_INDEX);
}

/// sysbench 0.5's `select_random_points.lua`.
const LEGACY_SELECT_RANDOM_POINTS: Case = case(
    "legacy_select_random_points",
    LEGACY,
    "oltp_legacy",
    &[
        "--test={dir}/select_random_points.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_select_random_points_lua_runs_as_under_sysbench() {
    check(&LEGACY_SELECT_RANDOM_POINTS);
}

/// sysbench 0.5's `select_random_ranges.lua`.
const LEGACY_SELECT_RANDOM_RANGES: Case = case(
    "legacy_select_random_ranges",
    LEGACY,
    "oltp_legacy",
    &[
        "--test={dir}/select_random_ranges.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_select_random_ranges_lua_runs_as_under_sysbench() {
    check(&LEGACY_SELECT_RANDOM_RANGES);
}

/// sysbench 0.5's `bulk_insert.lua`.
const LEGACY_BULK_INSERT: Case = case(
    "legacy_bulk_insert",
    LEGACY,
    "oltp_legacy",
    &[
        "--test={dir}/bulk_insert.lua",
        "--oltp-table-size=100",
        "--oltp-tables-count=2",
    ],
);

#[test]
fn legacy_bulk_insert_lua_runs_as_under_sysbench() {
    check(&LEGACY_BULK_INSERT);
}

/// sysbench 0.5's `parallel_prepare.lua`: `run` with one event per thread creates and fills the tables.
const LEGACY_PARALLEL_PREPARE: Case = Case {
    commands: &["run", "cleanup"],
    events: 1,
    ..case(
        "legacy_parallel_prepare",
        LEGACY,
        "oltp_legacy",
        &[
            "--test={dir}/parallel_prepare.lua",
            "--oltp-table-size=100",
            "--oltp-tables-count=2",
        ],
    )
};

#[test]
fn legacy_parallel_prepare_lua_runs_as_under_sysbench() {
    check(&LEGACY_PARALLEL_PREPARE);
}

/// Percona-Lab/sysbench-tpcc `tpcc.lua` (README's command lines, `--db-driver=pgsql`, scale 1): prepare (30 s pause of its own), run, its `check` command, cleanup.
const TPCC_KIT: Case = Case {
    commands: &["prepare", "run", "check", "cleanup"],
    classes: Classes::NoneUntilSameRand,
    tables: Tables::NamesUntilSameRand,
    line_markers: &["PASSED", "FAILED"],
    ..case(
        "tpcc_kit",
        TPCC,
        "",
        &["./tpcc.lua", "--tables=1", "--scale=1"],
    )
};

#[test]
fn percona_sysbench_tpcc_prepare_run_check_cleanup_as_under_sysbench() {
    check(&TPCC_KIT);
}

/// dolthub `covering_index_scan_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_COVERING_INDEX_SCAN: Case = case(
    "dolt_covering_index_scan",
    DOLT,
    "",
    &[
        "covering_index_scan_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_covering_index_scan_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_COVERING_INDEX_SCAN);
}

/// dolthub `groupby_scan_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_GROUPBY_SCAN: Case = case(
    "dolt_groupby_scan",
    DOLT,
    "",
    &[
        "groupby_scan_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_groupby_scan_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_GROUPBY_SCAN);
}

/// dolthub `index_join_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_INDEX_JOIN: Case = case(
    "dolt_index_join",
    DOLT,
    "",
    &[
        "index_join_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_index_join_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_INDEX_JOIN);
}

/// dolthub `index_join_scan_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_INDEX_JOIN_SCAN: Case = case(
    "dolt_index_join_scan",
    DOLT,
    "",
    &[
        "index_join_scan_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_index_join_scan_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_INDEX_JOIN_SCAN);
}

/// dolthub `index_scan_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_INDEX_SCAN: Case = case(
    "dolt_index_scan",
    DOLT,
    "",
    &[
        "index_scan_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_index_scan_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_INDEX_SCAN);
}

/// dolthub `table_scan_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_TABLE_SCAN: Case = case(
    "dolt_table_scan",
    DOLT,
    "",
    &[
        "table_scan_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_table_scan_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_TABLE_SCAN);
}

/// dolthub `types_table_scan_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_TYPES_TABLE_SCAN: Case = case(
    "dolt_types_table_scan",
    DOLT,
    "",
    &[
        "types_table_scan_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_types_table_scan_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_TYPES_TABLE_SCAN);
}

/// dolthub `oltp_delete_insert_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_OLTP_DELETE_INSERT: Case = case(
    "dolt_oltp_delete_insert",
    DOLT,
    "",
    &[
        "oltp_delete_insert_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_oltp_delete_insert_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_OLTP_DELETE_INSERT);
}

/// dolthub `types_delete_insert_postgres.lua` (its `run-postgres-scripts.sh` options).
const DOLT_TYPES_DELETE_INSERT: Case = Case {
    classes: Classes::TotalUntilSameRand,
    ..case(
        "dolt_types_delete_insert",
        DOLT,
        "",
        &[
            "types_delete_insert_postgres.lua",
            "--table-size=100",
            "--db-ps-mode=disable",
        ],
    )
};

#[test]
fn dolt_types_delete_insert_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_TYPES_DELETE_INSERT);
}

/// dolthub `full_table_postgres.lua` (its `run-postgres-scripts.sh` options); its cleanup fails under both.
const DOLT_FULL_TABLE: Case = case(
    "dolt_full_table",
    DOLT,
    "",
    &[
        "full_table_postgres.lua",
        "--table-size=100",
        "--db-ps-mode=disable",
    ],
);

#[test]
fn dolt_full_table_postgres_lua_runs_as_under_sysbench() {
    check(&DOLT_FULL_TABLE);
}

/// yugabyte/sysbench `src/lua/oltp_read_write.lua`.
const YB_OLTP_READ_WRITE: Case = case(
    "yb_oltp_read_write",
    YUGABYTE,
    "src/lua",
    &["oltp_read_write.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_oltp_read_write_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_READ_WRITE);
}

/// yugabyte/sysbench `src/lua/oltp_join.lua`.
const YB_OLTP_JOIN: Case = case(
    "yb_oltp_join",
    YUGABYTE,
    "src/lua",
    &["oltp_join.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_oltp_join_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_JOIN);
}

/// yugabyte/sysbench `src/lua/oltp_multi_insert.lua`.
const YB_OLTP_MULTI_INSERT: Case = case(
    "yb_oltp_multi_insert",
    YUGABYTE,
    "src/lua",
    &["oltp_multi_insert.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_oltp_multi_insert_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_MULTI_INSERT);
}

/// yugabyte/sysbench `src/lua/oltp_multi_value_insert.lua`.
const YB_OLTP_MULTI_VALUE_INSERT: Case = case(
    "yb_oltp_multi_value_insert",
    YUGABYTE,
    "src/lua",
    &[
        "oltp_multi_value_insert.lua",
        "--table-size=100",
        "--tables=2",
    ],
);

#[test]
fn yugabyte_oltp_multi_value_insert_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_MULTI_VALUE_INSERT);
}

/// yugabyte/sysbench `src/lua/oltp_primarykey_scan.lua`.
const YB_OLTP_PRIMARYKEY_SCAN: Case = case(
    "yb_oltp_primarykey_scan",
    YUGABYTE,
    "src/lua",
    &["oltp_primarykey_scan.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_oltp_primarykey_scan_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_PRIMARYKEY_SCAN);
}

/// yugabyte/sysbench `src/lua/oltp_sequential_scan.lua`.
const YB_OLTP_SEQUENTIAL_SCAN: Case = case(
    "yb_oltp_sequential_scan",
    YUGABYTE,
    "src/lua",
    &["oltp_sequential_scan.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_oltp_sequential_scan_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_SEQUENTIAL_SCAN);
}

/// yugabyte/sysbench `src/lua/oltp_simple_ranges.lua`.
const YB_OLTP_SIMPLE_RANGES: Case = case(
    "yb_oltp_simple_ranges",
    YUGABYTE,
    "src/lua",
    &["oltp_simple_ranges.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_oltp_simple_ranges_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_SIMPLE_RANGES);
}

/// yugabyte/sysbench `src/lua/oltp_sum_scan.lua`.
const YB_OLTP_SUM_SCAN: Case = case(
    "yb_oltp_sum_scan",
    YUGABYTE,
    "src/lua",
    &["oltp_sum_scan.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_oltp_sum_scan_lua_runs_as_under_sysbench() {
    check(&YB_OLTP_SUM_SCAN);
}

/// yugabyte/sysbench `src/lua/select_one.lua`.
const YB_SELECT_ONE: Case = case(
    "yb_select_one",
    YUGABYTE,
    "src/lua",
    &["select_one.lua", "--table-size=100", "--tables=2"],
);

#[test]
fn yugabyte_select_one_lua_runs_as_under_sysbench() {
    check(&YB_SELECT_ONE);
}

/// yugabyte/sysbench `oltp_point_select.lua` through its `oltp_common.lua`'s custom commands `create`, `load` and `warmup` (MySQL only: an assertion under both).
const YB_POINT_SELECT_CREATE_LOAD_WARMUP: Case = Case {
    commands: &["create", "load", "warmup", "run", "cleanup"],
    ..case(
        "yb_point_select_create_load_warmup",
        YUGABYTE,
        "src/lua",
        &["oltp_point_select.lua", "--table-size=100", "--tables=2"],
    )
};

#[test]
fn yugabyte_oltp_point_select_custom_create_load_warmup_commands_as_under_sysbench() {
    check(&YB_POINT_SELECT_CREATE_LOAD_WARMUP);
}

/// digoal/sysbench `oltp_pg_simple.lua`: sysbench 1.0.20 refuses its string table size in `sb_rand` (exit 1).
const DIGOAL_OLTP_PG_SIMPLE: Case = case(
    "digoal_oltp_pg_simple",
    DIGOAL,
    "sysbench/lua",
    &[
        "--test={dir}/oltp_pg_simple.lua",
        "--oltp-table-size=200",
        "--oltp-tables-count=1",
    ],
);

#[test]
fn digoal_oltp_pg_simple_lua_fails_as_under_sysbench() {
    check(&DIGOAL_OLTP_PG_SIMPLE);
}

/// digoal/sysbench `oltp_pg.lua` (server-side PREPARE/EXECUTE): likewise refused by sysbench 1.0.20.
const DIGOAL_OLTP_PG: Case = case(
    "digoal_oltp_pg",
    DIGOAL,
    "sysbench/lua",
    &[
        "--test={dir}/oltp_pg.lua",
        "--oltp-table-size=200",
        "--oltp-tables-count=1",
    ],
);

#[test]
fn digoal_oltp_pg_lua_fails_as_under_sysbench() {
    check(&DIGOAL_OLTP_PG);
}

/// The JSON lines a `report_cumulative` hook of sysbench's examples prints whose values do not
/// depend on timing.
const HOOK_COUNTS: &[&str] = &[
    "\"errors\":",
    "\"events\":",
    "\"other\":",
    "\"reads\":",
    "\"reconnects\":",
    "\"threads_running\":",
    "\"writes\":",
];

/// sysbench's `empty-test.lua`: its own options table and a `report_cumulative` hook printing
/// every field of the cumulative statistics.
const EMPTY_TEST: Case = Case {
    commands: &["run"],
    line_markers: HOOK_COUNTS,
    standard_report: false,
    ..case(
        "empty_test",
        SYSBENCH_MASTER,
        "src/lua",
        &["empty-test.lua"],
    )
};

#[test]
fn sysbench_empty_test_lua_report_hook_as_under_sysbench() {
    check(&EMPTY_TEST);
}

/// sysbench's `prime-test.lua` (`--cpu-max-prime`, as its header runs it): a CPU event and the
/// same hook.
const PRIME_TEST: Case = Case {
    commands: &["run"],
    line_markers: HOOK_COUNTS,
    standard_report: false,
    ..case(
        "prime_test",
        SYSBENCH_MASTER,
        "src/lua",
        &["prime-test.lua", "--cpu-max-prime=2000"],
    )
};

#[test]
fn sysbench_prime_test_lua_report_hook_as_under_sysbench() {
    check(&PRIME_TEST);
}

/// `SCRIPT help` prints the same (normalised) under both tools, for every script of a source.
fn help_of(origin_name: &str) {
    let cases: Vec<Case> = all_cases()
        .into_iter()
        .filter(|c| c.name.starts_with(origin_name))
        .collect();
    assert!(!cases.is_empty(), "{origin_name}");
    check_help(&cases.iter().collect::<Vec<_>>());
}

#[test]
fn legacy_scripts_help_as_under_sysbench() {
    help_of("legacy_");
}

#[test]
fn percona_sysbench_tpcc_help_as_under_sysbench() {
    help_of("tpcc_");
}

#[test]
fn dolt_scripts_help_as_under_sysbench() {
    help_of("dolt_");
}

#[test]
fn yugabyte_scripts_help_as_under_sysbench() {
    help_of("yb_");
}

#[test]
fn digoal_scripts_help_as_under_sysbench() {
    help_of("digoal_");
}

#[test]
fn sysbench_example_scripts_help_as_under_sysbench() {
    help_of("empty_test");
    help_of("prime_test");
}
