//! Parse errors compared byte for byte with pgbench itself (testkit's oracle, no server needed:
//! script errors are reported before connecting). The tests fail when pgbench is absent.

use std::path::Path;
use std::process::Command;

use pgrig_script::parse::parse_script;
use pgrig_script::{QueryMode, VarTable};

/// Malformed scripts (each must fail to parse in pgbench 15 and in pgrig).
const CASES: &[&str] = &[
    // expression syntax errors and their columns
    "\\set i 1 +\n",
    "\\set i 1 +",
    "\\set x 1 + \n",
    "\\set x 1 +   \r\n",
    "\\set x (1 + \\\n  foo(2))\n",
    "\\set x 1 + foo(2, 3) + 4\n",
    "\\set x 1 + abs(2, 3) + 4\n",
    "\\set x 1 + abs(2, 3\n",
    "\\set x foo + 1\n",
    "\\set x 1 foo\n",
    "\\set x abs 1\n",
    "\\set x 9223372036854775808\n",
    "\\set x 99999999999999999999 + 1\n",
    "\\set x 1 < 2 < 3\n",
    "\\set x 1 = 2 <> 3\n",
    "\\set x 1e999\n",
    "\\set x 1e-400\n",
    "\\set x 1 @ 2\n",
    "\\set x @@\n",
    "\\set x 1 + @\\\\ 1\n",
    "\\set x 1 + \\\\@ 1\n",
    "\\set x (\\\\\n",
    "\\set x ::x\n",
    "\\set x 1 @?$ 2\n",
    "\\set x\n",
    "\\set\n",
    "\\set 1\n",
    "\\set x 1 IS 2\n",
    "\\set x case end\n",
    "\\set x case when 1 then 2\n",
    "\\set x case 1 when 1 then 2 end\n",
    "\\set x case when 1 then 2 else 3 else 4 end\n",
    "\\set x least()\n",
    "\\set x greatest( )  + 1\n",
    "\\set x pi(1)\n",
    "\\set x hash()\n",
    "\\set x hash(1,2,3)\n",
    "\\set x permute(1)\n",
    "\\set x random_zipfian(1,2)\n",
    "\\set x Abs(1) + ABS(2, 3)\n",
    "\\set x abs(1,)\n",
    "\\set x abs(,,1)\n",
    "\\set x not\n",
    "\\set x 1 is not\n",
    "\\set x -(9223372036854775808)\n",
    "\\set x 1 + -9223372036854775808 +\n",
    "\\set x 1 != != 2\n",
    "\\set x 1 =< 2\n",
    "\\set x 1.5.5\n",
    "\\set x 1e\n",
    "\\set x .\n",
    "\\set x 1 and or 2\n",
    "\\set x 1 # ~\n",
    "\\set x 1 + \\\r\n 2 +\r\n",
    "\\set x 1 2\\\n3",
    "\\set x 1 +\\\n\\\n",
    "\\SET x 1 +\n",
    "\\if\n",
    "\\if 1 2\n",
    "\\if 1\n\\elif\n\\endif\n",
    "-- comment\n\n  \\set x 1 +  \r\n",
    "select 1;\n\\set x é\n",
    // meta-command argument errors
    "\\sleep 1 week\n",
    "\\sleep 10xyz\n",
    "\\sleep 1 ms extra\n",
    "\\sleep\n",
    "\\sleep abc\n",
    "\\sleep 10ms us\n",
    "\\sleep 1.5\n",
    "\\sleep +5x\n",
    "\\sleep :x week\n",
    "\\sleep 1 \\\n week\n",
    "\\sleep 1\\\n0 week\n",
    "\\sleep 1 \\\n\\\n week",
    "\\setshell x\n",
    "\\setshell\n",
    "\\shell\n",
    "\\else x\n",
    "\\endif 1\n",
    "\\startpipeline 1\n",
    "\\endpipeline x\n",
    "\\foo bar\n",
    "SELECT 1 \\foo\n",
    "select e'\\';' \\x\n",
    // \gset placement
    "\\gset\n",
    "\\aset\n",
    "select 1 \\gset a b\n",
    "select 1 \\gset\n\\aset p\n",
    "select 1;\n\\set x 1\n\\gset\n",
    // conditional structure
    "\\elif 1\n",
    "\\else\n",
    "\\endif\n",
    "\\if 1\n",
    "\\if 1\n\\else\n\\else\n\\endif\n",
    "\\if 1\n\\else\n\\elif 1\n\\endif\n",
    "\\if 1\n\\endif\n\\endif\n",
    "select 1;\n\\if 1\n\\if 0\nselect 2;\n\\endif\n",
];

/// pgbench's exit status and stderr for `script` saved as `dir/name` (no server needed: the
/// script is rejected before connecting).
fn pgbench_stderr_named(dir: &Path, name: &str, script: &str) -> (Option<i32>, String) {
    std::fs::write(dir.join(name), script).expect("write script");
    let out = Command::new(pgrig_testkit::pgbench_oracle())
        .args(["-n", "-t", "1", "-f", name])
        .current_dir(dir)
        .env("PGHOST", "/nonexistent-pgrig-socket-dir")
        .env("PGPORT", "1")
        .output()
        .expect("run pgbench");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// pgrig's stderr for `script` saved as `name`, in pgbench's words (an empty script is
/// rejected by the engine with pgbench's message), compared with pgbench's: a description of
/// the mismatch, or `None`.
fn mismatch(dir: &Path, name: &str, script: &str, label: &str) -> Option<String> {
    let (code, expected) = pgbench_stderr_named(dir, name, script);
    let mut vars = VarTable::new();
    let got = match parse_script(name, script, &mut vars, QueryMode::Simple, &mut 0) {
        Ok(c) if c.is_empty() => {
            format!("pgbench: error: empty command list for script \"{name}\"\n")
        }
        Ok(_) => "(parsed fine)\n".to_string(),
        Err(e) => format!("pgbench: error: {e}\n"),
    };
    (code != Some(1) || got != expected)
        .then(|| format!("{label}\n  pgbench ({code:?}):\n{expected}\n  pgrig:\n{got}"))
}

/// Fails with every mismatch listed.
fn assert_no_mismatches(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn parse_errors_match_pgbench_byte_for_byte() {
    assert!(CASES.len() >= 40);
    let dir = std::env::temp_dir().join(format!("pgrig-parse-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut failures = Vec::new();
    for script in CASES {
        failures.extend(mismatch(
            &dir,
            "bad.sql",
            script,
            &format!("script {script:?}"),
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_no_mismatches(&failures);
}

/// Every file of `tests/corpus/malformed/` must fail in pgrig with pgbench's exact stderr
/// (file name, line, message, detail, the offending line and the caret). Deliberately not in
/// the corpus: `\setrandom`, which pgbench 15 rejects and pgrig accepts for old scripts.
#[test]
fn corpus_malformed_scripts_match_pgbench_byte_for_byte() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/malformed");
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .expect("corpus directory")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "only {} malformed scripts", files.len());
    let dir = std::env::temp_dir().join(format!("pgrig-corpus-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let script = std::fs::read_to_string(path).expect("read script");
        failures.extend(mismatch(&dir, &name, &script, &name));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_no_mismatches(&failures);
}
