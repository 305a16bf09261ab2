//! Hostile scripts found by fuzzing (issue 21, item 7): each is refused with a pgbench-style
//! error naming the file and line, never a panic or a stack overflow, and what is accepted
//! evaluates and drops on a default-sized (2 MiB) thread stack.

mod eval_common;
use eval_common::Env;
use pgrig_script::parse::parse_script;
use pgrig_script::{CommandKind, QueryMode, ScriptError, VarTable};

fn parse(text: &str) -> Result<Vec<pgrig_script::Command>, ScriptError> {
    let mut vars = VarTable::new();
    parse_script("hostile.sql", text, &mut vars, QueryMode::Simple, &mut 0)
}

/// Runs `f` on a thread with the default 2 MiB stack, as the runner's threads have.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .expect("thread panicked or overflowed")
}

#[test]
fn error_past_column_65535_is_printed_not_a_panic() {
    let text = format!("\\set x {}(\n", " ".repeat(70_000));
    let err = parse(&text).unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.starts_with("hostile.sql:1: syntax error"),
        "{}",
        &shown[..80]
    );
    let caret = shown.lines().last().unwrap();
    assert!(caret.ends_with("^ error found here"));
    assert_eq!(caret.len(), 70_009 + " error found here".len());
}

#[test]
fn a_14000_term_chain_is_refused_with_a_depth_error() {
    for op in ["+", "-", " or ", " and ", "*", "|"] {
        let text = format!("\\set x {}\n", vec!["1"; 14_000].join(op));
        let err = on_small_stack(move || parse(&text).map(|_| ()).unwrap_err().to_string());
        assert!(
            err.starts_with("hostile.sql:1: expression is too complex"),
            "{op}: {}",
            &err[..err.len().min(200)]
        );
    }
}

#[test]
fn deep_right_nesting_is_refused_too() {
    let text = format!("\\set x {}1\n", "-".repeat(20_000));
    let err = on_small_stack(move || parse(&text).map(|_| ()).unwrap_err().to_string());
    assert!(err.starts_with("hostile.sql:1: "), "{}", &err[..200]);
    let text = format!("\\set x 1{}\n", " is null".repeat(20_000));
    assert!(on_small_stack(move || parse(&text).is_err()));
}

#[test]
fn the_longest_accepted_chain_evaluates_on_a_small_stack() {
    // the deepest tree the parser accepts: a maximal left-deep chain inside maximal nesting
    let mut depth = 0;
    for n in (100..5_000).step_by(100) {
        let text = format!("\\set x {}\n", vec!["1"; n].join("+"));
        if parse(&text).is_err() {
            break;
        }
        depth = n;
    }
    assert!(depth >= 1_000, "a 1000-term sum must stay valid");
    let text = format!(
        "\\set x {}{}{}\n",
        "(".repeat(200),
        vec!["1"; depth].join("+"),
        ")".repeat(200)
    );
    let got = on_small_stack(move || {
        let cmds = parse(&text).expect("accepted");
        let CommandKind::Set { expr, .. } = &cmds[0].kind else {
            panic!("not a \\set")
        };
        let v = Env::new(1).show(expr);
        drop(cmds);
        v
    });
    assert_eq!(got, format!("int {depth}"));
}

mod long_expressions {
    use super::*;
    use proptest::prelude::*;

    fn expression() -> impl Strategy<Value = String> {
        let op = prop::sample::select(vec![
            " + ", " - ", " * ", " | ", " and ", " or ", " = ", " < ", " # ",
        ]);
        let term = prop::sample::select(vec!["1", "-1", "(2)", "not 0", "abs(-3)", "~4", "- - 5"]);
        (1usize..3000, op, term, 0usize..300).prop_map(|(n, op, term, nest)| {
            format!(
                "{}{}{}",
                "-(".repeat(nest),
                vec![term; n].join(op),
                ")".repeat(nest)
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Whatever is accepted evaluates and drops on a 2 MiB stack; the rest is an error.
        #[test]
        fn long_and_deep_expressions_are_refused_or_evaluated(e in expression()) {
            let text = format!("\\set x {e}\n");
            let shown = on_small_stack(move || match parse(&text) {
                Ok(cmds) => {
                    let CommandKind::Set { expr, .. } = &cmds[0].kind else {
                        panic!("not a \\set")
                    };
                    Env::new(1).show(expr)
                }
                Err(err) => err.to_string(),
            });
            prop_assert!(!shown.is_empty());
        }
    }
}
