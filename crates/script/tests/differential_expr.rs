//! Differential tests of expression evaluation against pgbench 15 (the oracle).
//!
//! Every expression E of `corpus/expressions.txt` (and of a proptest-generated set) becomes the
//! line `\set x debug(E)` of a script. pgbench runs the script (`-n -t 1 -c 1 --random-seed=N
//! -D...`) against a test database and we keep the `debug(...)` lines and error messages of its
//! stderr; pgrig parses the same script with `parse_script` and evaluates it with the same seed
//! states and variables. The lines must be identical, expression by expression.
//!
//! Batching: expressions of a group run as one script, the random state flowing from line to
//! line on both sides. A failing expression aborts the client, so a group is cut into segments
//! after each expression on which pgrig's evaluation fails; each segment is one pgbench run
//! (pgbench must then fail on the segment's last expression too, and nowhere before it).

mod differential_support;

use std::sync::OnceLock;

use differential_support::*;
use pgrig_script::parse::parse_script;
use pgrig_script::{QueryMode, VarTable};

/// One expression to check.
#[derive(Clone, Debug)]
struct Case {
    /// Where it comes from (`expressions.txt:123` or `generated #7`).
    origin: String,
    expr: String,
}

#[derive(Clone, Debug)]
struct Group {
    name: String,
    opts: RunOptions,
    cases: Vec<Case>,
}

/// A failed comparison.
struct Mismatch {
    group: String,
    opts: String,
    origin: String,
    expr: String,
    pgbench: Vec<String>,
    ours: Vec<String>,
    note: String,
}

impl Mismatch {
    fn render(&self) -> String {
        let mut s = format!(
            "--- {} [{}] group \"{}\" (pgbench {})\n    expression: {}\n",
            self.origin, self.note, self.group, self.opts, self.expr
        );
        s += "    pgbench:\n";
        s += &indent(&self.pgbench);
        s += "    pgrig:\n";
        s += &indent(&self.ours);
        s
    }
}

#[derive(Default)]
struct Outcome {
    checked: usize,
    pgbench_runs: usize,
    mismatches: Vec<Mismatch>,
}

fn script_line(expr: &str) -> String {
    format!("\\set x debug({expr})\n")
}

fn db() -> &'static pgrig_testkit::TestDb {
    static DB: OnceLock<pgrig_testkit::TestDb> = OnceLock::new();
    DB.get_or_init(|| pgrig_testkit::fresh_db("differential expr"))
}

/// Parses `corpus/expressions.txt` (format described at its top).
fn load_corpus() -> Vec<Group> {
    let path = corpus_dir().join("expressions.txt");
    let text = std::fs::read_to_string(&path).expect("read expressions.txt");
    let mut groups: Vec<Group> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("@group ") {
            groups.push(Group {
                name: name.trim().to_owned(),
                opts: RunOptions::default(),
                cases: Vec::new(),
            });
            continue;
        }
        let group = groups
            .last_mut()
            .unwrap_or_else(|| panic!("expressions.txt:{lineno}: content before the first @group"));
        if let Some(directive) = line.strip_prefix('@') {
            assert!(
                group.cases.is_empty(),
                "expressions.txt:{lineno}: directive after the group's first expression"
            );
            if let Some(seed) = directive.strip_prefix("seed ") {
                group.opts.seed = seed
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("expressions.txt:{lineno}: bad seed"));
            } else if let Some(def) = directive.strip_prefix("define ") {
                let (name, value) = def
                    .split_once('=')
                    .unwrap_or_else(|| panic!("expressions.txt:{lineno}: @define NAME=VALUE"));
                let value = value
                    .strip_prefix('\'')
                    .and_then(|v| v.strip_suffix('\''))
                    .unwrap_or(value);
                group.opts.defines.push((name.to_owned(), value.to_owned()));
            } else {
                panic!("expressions.txt:{lineno}: unknown directive {line:?}");
            }
            continue;
        }
        group.cases.push(Case {
            origin: format!("expressions.txt:{lineno}"),
            expr: line.to_owned(),
        });
    }
    groups
}

/// One pgbench run: consecutive cases of a group.
struct Segment {
    group: usize,
    /// Indexes into the group's `cases`.
    cases: Vec<usize>,
    script: String,
    ours: Transcript,
}

/// Compares every case of `groups` with pgbench; `file_prefix` names the script files.
fn check(groups: &[Group], file_prefix: &str) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut out = Outcome::default();
    let mut segments: Vec<Segment> = Vec::new();
    // Expressions pgrig cannot parse are checked alone with pgbench (which should reject them
    // too, at parse time, if the corpus is right).
    let mut rejected: Vec<(usize, usize, String)> = Vec::new();

    for (gi, group) in groups.iter().enumerate() {
        let mut accepted: Vec<usize> = Vec::new();
        for (ci, case) in group.cases.iter().enumerate() {
            let mut table = VarTable::new();
            let mut counter = 0;
            match parse_script(
                "check.sql",
                &script_line(&case.expr),
                &mut table,
                QueryMode::Simple,
                &mut counter,
            ) {
                Ok(_) => accepted.push(ci),
                Err(e) => rejected.push((gi, ci, format!("pgbench: error: {e}"))),
            }
        }
        // Cut the accepted cases into segments where pgrig's client aborts.
        let mut start = 0;
        while start < accepted.len() {
            let mut end = accepted.len();
            let (script, ours) = loop {
                let script: String = accepted[start..end]
                    .iter()
                    .map(|&ci| script_line(&group.cases[ci].expr))
                    .collect();
                let name = format!("{file_prefix}_{}.sql", segments.len());
                match replay(&name, &script, &group.opts) {
                    Replay::Ran(t) => match t.aborted_at {
                        Some(k) if start + k + 1 < end => end = start + k + 1,
                        _ => break (script, t),
                    },
                    Replay::Rejected(e) => panic!(
                        "pgrig rejects a script whose lines it accepts one by one:\n{e}\n{script}"
                    ),
                }
            };
            segments.push(Segment {
                group: gi,
                cases: accepted[start..end].to_vec(),
                script,
                ours,
            });
            start = end;
        }
    }

    let db = db();
    let indexes: Vec<usize> = (0..segments.len()).collect();
    let runs = parallel_map(&indexes, 3, |&i| {
        let seg = &segments[i];
        let name = format!("{file_prefix}_{i}.sql");
        run_pgbench(db, dir.path(), &name, &seg.script, &groups[seg.group].opts)
    });
    out.pgbench_runs = runs.len();

    for (seg, run) in segments.iter().zip(runs) {
        let group = &groups[seg.group];
        let opts = group.opts.describe();
        let theirs = match run {
            PgbenchRun::Ran(t) => t,
            PgbenchRun::Failed { code, stderr } => {
                for &ci in &seg.cases {
                    let case = &group.cases[ci];
                    out.checked += 1;
                    out.mismatches.push(Mismatch {
                        group: group.name.clone(),
                        opts: opts.clone(),
                        origin: case.origin.clone(),
                        expr: case.expr.clone(),
                        pgbench: stderr.lines().map(str::to_owned).collect(),
                        ours: vec!["(script accepted)".into()],
                        note: format!("pgbench rejected the segment, exit {code:?}"),
                    });
                }
                continue;
            }
        };
        assert!(
            theirs.other.is_empty(),
            "unexpected stderr lines from pgbench: {:?}",
            theirs.other
        );
        for (k, &ci) in seg.cases.iter().enumerate() {
            let case = &group.cases[ci];
            out.checked += 1;
            let (p, o) = (theirs.lines_of(k), seg.ours.lines_of(k));
            let not_reached = theirs.aborted_at.is_some_and(|a| a < k);
            if p != o {
                out.mismatches.push(Mismatch {
                    group: group.name.clone(),
                    opts: opts.clone(),
                    origin: case.origin.clone(),
                    expr: case.expr.clone(),
                    pgbench: p.to_vec(),
                    ours: o.to_vec(),
                    note: if not_reached {
                        "not reached: pgbench aborted earlier".into()
                    } else {
                        format!("script line {}", k + 1)
                    },
                });
            }
        }
    }

    for (gi, ci, ours) in rejected {
        let group = &groups[gi];
        let case = &group.cases[ci];
        out.checked += 1;
        let name = format!("{file_prefix}_rejected.sql");
        std::fs::write(dir.path().join(&name), script_line(&case.expr)).unwrap();
        let pg = run_pgbench_parse_only(dir.path(), &name);
        let ours = ours.replace("check.sql", &name);
        let theirs: Vec<String> = pg.stderr.lines().map(str::to_owned).collect();
        let ours: Vec<String> = ours.lines().map(str::to_owned).collect();
        if theirs != ours {
            out.mismatches.push(Mismatch {
                group: group.name.clone(),
                opts: group.opts.describe(),
                origin: case.origin.clone(),
                expr: case.expr.clone(),
                pgbench: theirs,
                ours,
                note: "pgrig rejects the expression at parse time".into(),
            });
        }
    }
    out
}

/// Fails with a readable report unless every mismatch is a listed known difference (and every
/// listed known difference still differs).
fn assert_outcome(what: &str, out: Outcome, known: &[String]) {
    let mut report = String::new();
    let mut unexpected = 0;
    let mut known_hits = Vec::new();
    for m in &out.mismatches {
        if known.iter().any(|k| k == &m.expr) {
            known_hits.push(m.expr.clone());
            continue;
        }
        unexpected += 1;
        report += &m.render();
    }
    eprintln!(
        "{what}: {} expressions checked in {} pgbench runs: {} identical, {} differ ({} of them \
         listed in KNOWN_DIFFERENCES.md)",
        out.checked,
        out.pgbench_runs,
        out.checked - out.mismatches.len(),
        out.mismatches.len(),
        known_hits.len()
    );
    let stale: Vec<&String> = known.iter().filter(|k| !known_hits.contains(k)).collect();
    if unexpected > 0 {
        panic!(
            "{what}: {unexpected} of {} expressions evaluate differently in pgrig and pgbench:\n{report}",
            out.checked
        );
    }
    assert!(
        stale.is_empty() || what != "corpus",
        "these KNOWN_DIFFERENCES.md entries now match pgbench; remove them: {stale:?}"
    );
}

#[test]
fn corpus_expressions_evaluate_like_pgbench() {
    let groups = load_corpus();
    let total: usize = groups.iter().map(|g| g.cases.len()).sum();
    assert!(total >= 300, "the corpus shrank to {total} expressions");
    let out = check(&groups, "corpus");
    assert_eq!(out.checked, total, "every corpus expression was checked");
    assert_outcome("corpus", out, &known_differences("expr"));
}

mod generated {
    //! Random expression *text* from a grammar-directed generator: always syntactically valid
    //! (every operator operand that is not a leaf is parenthesised), typed at random, so about
    //! half of them fail at run time (type errors, overflow, empty ranges, ...).

    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    fn int_literal() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (0i64..20).prop_map(|i| i.to_string()),
            2 => prop::sample::select(vec![
                "0", "1", "2", "3", "7", "10", "42", "63", "64", "65", "100", "1000", "3037000500",
                "4611686018427387904", "9223372036854775807", "-9223372036854775808",
                "-9223372036854775807", "(-1)", "(-7)",
            ])
            .prop_map(str::to_owned),
            1 => any::<i64>().prop_map(|i| if i < 0 {
                if i == i64::MIN { "-9223372036854775808".into() } else { format!("(-{})", -i) }
            } else {
                i.to_string()
            }),
        ]
    }

    fn double_literal() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::sample::select(vec![
                "0.0", "(-0.0)", "0.5", "1.5", "2.5", "-2.5", "3.5", "1.", ".5", "1e3", "1e300",
                "1e-300", "1e15", "1e16", "123.456", "0.1", "9.5", "1e18", "9.3e18",
                "3.14159265358979",
            ])
            .prop_map(str::to_owned),
            1 => (-1.0e6f64..1.0e6).prop_map(|d| if d < 0.0 { format!("(-{})", -d) } else { format!("{d}") }),
            1 => (0u32..1000, -300i32..300).prop_map(|(m, e)| format!("{m}e{e}")),
        ]
    }

    fn leaf() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => int_literal(),
            4 => double_literal(),
            1 => prop::sample::select(vec!["TRUE", "FALSE", "true", "False"]).prop_map(str::to_owned),
            1 => Just("NULL".to_owned()),
            2 => prop::sample::select(vec![
                ":scale", ":client_id", ":default_seed", ":random_seed", ":x", ":t", ":i",
                ":d", ":n", ":w", "pi()",
            ])
            .prop_map(str::to_owned),
        ]
    }

    /// Parenthesises `e` unless it is a plain token.
    fn p(e: &str) -> String {
        let plain = e.starts_with('(')
            || e.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':'));
        if plain {
            e.to_owned()
        } else {
            format!("({e})")
        }
    }

    pub fn expr() -> impl Strategy<Value = String> {
        leaf().prop_recursive(4, 24, 3, |inner| {
            let binop = prop::sample::select(vec![
                "+", "-", "*", "/", "%", "=", "<>", "!=", "<", "<=", ">", ">=", "&", "|", "#",
                "<<", ">>", "AND", "OR",
            ]);
            let un = prop::sample::select(vec!["-", "+", "~", "NOT "]);
            let post = prop::sample::select(vec![
                " IS NULL", " IS NOT NULL", " IS TRUE", " IS FALSE", " IS NOT TRUE",
                " IS NOT FALSE", " ISNULL", " NOTNULL",
            ]);
            let f1 = prop::sample::select(vec![
                "abs", "int", "double", "sqrt", "exp", "ln", "debug", "hash", "hash_fnv1a",
                "greatest", "least",
            ]);
            let f2 = prop::sample::select(vec![
                "pow", "power", "mod", "hash", "hash_murmur2", "hash_fnv1a", "permute", "random",
                "greatest", "least",
            ]);
            let f3 = prop::sample::select(vec![
                "permute", "random_gaussian", "random_exponential", "random_zipfian", "greatest",
                "least",
            ]);
            let small = (-5i64..50).prop_map(|i| if i < 0 { format!("({i})") } else { i.to_string() });
            prop_oneof![
                4 => (inner.clone(), binop, inner.clone())
                    .prop_map(|(a, op, b)| format!("{} {op} {}", p(&a), p(&b))),
                1 => (un, inner.clone()).prop_map(|(op, a)| format!("{op}{}", p(&a))),
                1 => (inner.clone(), post).prop_map(|(a, op)| format!("{}{op}", p(&a))),
                2 => (f1, inner.clone()).prop_map(|(f, a)| format!("{f}({a})")),
                2 => (f2, inner.clone(), inner.clone()).prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
                1 => (f3, inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(f, a, b, c)| format!("{f}({a}, {b}, {c})")),
                1 => (small.clone(), small.clone(), 0u8..4, inner.clone()).prop_map(|(a, b, kind, c)| {
                    match kind {
                        0 => format!("random({a}, {b})"),
                        1 => format!("random_gaussian({a}, {b}, {})", p(&c)),
                        2 => format!("random_exponential({a}, {b}, {})", p(&c)),
                        _ => format!("random_zipfian({a}, {b}, {})", p(&c)),
                    }
                }),
                1 => (inner.clone(), inner.clone(), inner.clone(), any::<bool>()).prop_map(|(c, a, b, has_else)| {
                    if has_else {
                        format!("CASE WHEN {c} THEN {a} ELSE {b} END")
                    } else {
                        format!("CASE WHEN {c} THEN {a} WHEN {b} THEN 1 END")
                    }
                }),
                1 => (inner.clone(), inner).prop_map(|(a, b)| format!("debug({a}) + debug({b})")),
            ]
        })
    }

    /// `n` expressions from a fixed-seed proptest runner (reproducible across runs).
    pub fn sample(n: usize, seed: u64) -> Vec<String> {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
        let mut runner = TestRunner::new_with_rng(Config::default(), rng);
        let strategy = expr();
        (0..n)
            .map(|_| strategy.new_tree(&mut runner).expect("generate").current())
            .collect()
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn generated_expressions_evaluate_like_pgbench() {
    let n = env_usize("PGRIG_DIFF_CASES", 150);
    let seed = env_usize("PGRIG_DIFF_SEED", 20240515) as u64;
    let exprs = generated::sample(n, seed);
    let mut opts = RunOptions::default();
    for (k, v) in [
        ("t", "t"),
        ("i", " 12"),
        ("d", "2.5"),
        ("n", "null"),
        ("w", "word"),
    ] {
        opts.defines.push((k.into(), v.into()));
    }
    let group = Group {
        name: format!("generated, PGRIG_DIFF_SEED={seed}"),
        opts,
        cases: exprs
            .into_iter()
            .enumerate()
            .map(|(i, expr)| Case {
                origin: format!("generated #{i}"),
                expr,
            })
            .collect(),
    };
    let out = check(&[group], "generated");
    assert_eq!(out.checked, n);
    assert_outcome("generated", out, &known_differences("expr"));
}

#[test]
fn generated_expressions_are_reproducible() {
    assert_eq!(generated::sample(20, 7), generated::sample(20, 7));
    assert_ne!(generated::sample(20, 7), generated::sample(20, 8));
}
