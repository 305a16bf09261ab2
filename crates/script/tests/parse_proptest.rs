//! The parser never panics, whatever the input (quotes, backslashes, non-ASCII, control bytes).

use pgrig_script::parse::{parse_expr, parse_script};
use pgrig_script::{QueryMode, VarTable};
use proptest::prelude::*;

fn script_text() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "\\",
        "\\set x ",
        "\\sleep ",
        "\\if ",
        "\\gset",
        "\\;",
        "\\:",
        ";",
        "'",
        "\"",
        "$$",
        "$a$",
        "E'",
        "--",
        "/*",
        "*/",
        "(",
        ")",
        "\n",
        "\r\n",
        " ",
        ":",
        "::",
        ":x",
        "1",
        "9223372036854775808",
        "1e999",
        ".",
        "é",
        "ü",
        "+",
        "-",
        "~",
        "case",
        "when",
        "then",
        "end",
        "is",
        "not",
        "null",
        "abs(",
        ",",
        "\t",
        "\x01",
        "@",
    ]);
    prop::collection::vec(atoms, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn parse_script_never_panics(text in script_text()) {
        for mode in [QueryMode::Simple, QueryMode::Prepared] {
            let mut vars = VarTable::new();
            let _ = parse_script("p.sql", &text, &mut vars, mode, &mut 0);
        }
    }

    #[test]
    fn parse_expr_never_panics(text in script_text()) {
        let mut vars = VarTable::new();
        let _ = parse_expr(&text, &mut vars);
    }

    #[test]
    fn any_unicode_never_panics(text in "\\PC{0,60}") {
        let mut vars = VarTable::new();
        let _ = parse_script("p.sql", &text, &mut vars, QueryMode::Extended, &mut 0);
    }
}
