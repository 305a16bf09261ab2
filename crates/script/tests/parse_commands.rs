//! Compiling whole scripts: meta-commands, `\gset` merging, `\if` jump targets, SQL parameters,
//! prepared names, `first_line`/line numbers and the legacy `\setrandom`.

use pgrig_script::ast::{Expr, Func};
use pgrig_script::command::{Gset, ShellArg, SleepArg, SqlPart};
use pgrig_script::parse::parse_script;
use pgrig_script::{Command, CommandKind, QueryMode, SqlCommand, Value, VarTable};

fn parse_mode(text: &str, mode: QueryMode) -> (Vec<Command>, VarTable) {
    let mut vars = VarTable::new();
    let cmds = parse_script("t.sql", text, &mut vars, mode, &mut 0).expect("script parses");
    (cmds, vars)
}

fn parse(text: &str) -> (Vec<Command>, VarTable) {
    parse_mode(text, QueryMode::Simple)
}

fn err(text: &str) -> String {
    let mut vars = VarTable::new();
    parse_script("t.sql", text, &mut vars, QueryMode::Simple, &mut 0)
        .expect_err("script fails")
        .to_string()
}

fn sql(c: &Command) -> &SqlCommand {
    match &c.kind {
        CommandKind::Sql(s) => s,
        k => panic!("SQL expected, got {k:?}"),
    }
}

#[test]
fn set_compiles_variable_and_expression() {
    let (c, vars) = parse("\\set x :y + 1\n");
    let CommandKind::Set { var, expr } = &c[0].kind else {
        panic!("set expected")
    };
    assert_eq!(vars.name(*var), "x");
    let y = vars.get("y").expect("y interned");
    assert_eq!(
        *expr,
        Expr::Func {
            func: Func::Add,
            args: vec![Expr::Var(y), Expr::Const(Value::Int(1))].into()
        }
    );
}

#[test]
fn meta_command_names_are_case_insensitive() {
    let (c, _) = parse("\\SET x 1\n\\Sleep 1\n");
    assert_eq!(c[0].kind.meta_name(), "set");
    assert_eq!(c[1].kind.meta_name(), "sleep");
}

#[test]
fn sleep_units_default_to_seconds_and_may_be_glued() {
    let cases = [
        ("\\sleep 5\n", SleepArg::Literal(5), 1_000_000),
        ("\\sleep 10ms\n", SleepArg::Literal(10), 1_000),
        ("\\sleep 7 US\n", SleepArg::Literal(7), 1),
        ("\\sleep +3 s\n", SleepArg::Literal(3), 1_000_000),
        ("\\sleep -2 ms\n", SleepArg::Literal(-2), 1_000),
        ("\\sleep -\n", SleepArg::Literal(0), 1_000_000),
    ];
    for (text, want, want_unit) in cases {
        let (c, _) = parse(text);
        let CommandKind::Sleep { duration, unit_us } = &c[0].kind else {
            panic!("sleep expected")
        };
        assert_eq!((duration, *unit_us), (&want, want_unit), "{text}");
    }
}

#[test]
fn sleep_variable_keeps_its_name() {
    let (c, vars) = parse("\\sleep :t ms\n");
    let CommandKind::Sleep {
        duration: SleepArg::Var { var, name },
        unit_us: 1000,
    } = &c[0].kind
    else {
        panic!("sleep :t expected")
    };
    assert_eq!((vars.name(*var), name.as_str()), ("t", "t"));
}

#[test]
fn sleep_errors() {
    assert_eq!(
        err("\\sleep\n"),
        "t.sql:1: missing argument in command \"sleep\"\n\\sleep"
    );
    assert!(err("\\sleep 1 ms x\n").starts_with("t.sql:1: too many arguments in command \"sleep\""));
    assert!(err("\\sleep x\n").starts_with("t.sql:1: invalid sleep time, must be an integer (x)"));
    assert!(err("\\sleep 1.5\n")
        .starts_with("t.sql:1: unrecognized time unit, must be us, ms or s (.5)"));
}

#[test]
fn shell_arguments_distinguish_variables_and_double_colons() {
    let (c, vars) = parse("\\setshell r echo :x ::y plain\n\\shell touch :f\n");
    let CommandKind::SetShell { var, args } = &c[0].kind else {
        panic!("setshell expected")
    };
    assert_eq!(vars.name(*var), "r");
    let x = vars.get("x").unwrap();
    assert_eq!(
        *args,
        vec![
            ShellArg::Literal("echo".into()),
            ShellArg::Var {
                var: x,
                name: "x".into()
            },
            ShellArg::Literal(":y".into()),
            ShellArg::Literal("plain".into()),
        ]
    );
    let CommandKind::Shell { args } = &c[1].kind else {
        panic!("shell expected")
    };
    assert_eq!(args.len(), 2);
}

#[test]
fn shell_errors() {
    assert_eq!(
        err("\\setshell x\n"),
        "t.sql:1: missing argument in command \"setshell\"\n\\setshell x"
    );
    assert_eq!(
        err("\\shell\n"),
        "t.sql:1: missing command in command \"shell\"\n\\shell"
    );
}

#[test]
fn too_many_meta_arguments_is_an_error_without_the_line() {
    let text = format!("\\shell {}\n", vec!["a"; 256].join(" "));
    assert_eq!(
        err(&text),
        "t.sql:1: too many arguments in command \"shell\""
    );
    let ok = format!("\\shell {}\n", vec!["a"; 255].join(" "));
    assert_eq!(parse(&ok).0.len(), 1);
}

#[test]
fn gset_attaches_to_the_preceding_sql_command_without_a_command_number() {
    let (c, _) = parse("select 1 as a \\gset p_\nselect 2;\n\\aset\n\\set x 1\n");
    assert_eq!(c.len(), 3);
    assert_eq!(
        sql(&c[0]).gset,
        Some(Gset {
            prefix: "p_".into(),
            all: false
        })
    );
    assert_eq!(
        sql(&c[1]).gset,
        Some(Gset {
            prefix: String::new(),
            all: true
        })
    );
    assert_eq!(sql(&c[0]).text, "select 1 as a ");
}

#[test]
fn gset_placement_errors() {
    assert_eq!(
        err("\\gset\n"),
        "t.sql:1: \\gset must follow an SQL command"
    );
    assert_eq!(
        err("select 1 \\gset\n\\aset\n"),
        "t.sql:2: \\gset must follow an SQL command"
    );
    assert_eq!(
        err("select 1;\n\\set x 1\n\\gset\n"),
        "t.sql:3: \\gset must follow an SQL command (\\set x 1)"
    );
    assert_eq!(
        err("select 1 \\gset a b\n"),
        "t.sql:1: too many arguments in command \"gset\"\n\\gset a b"
    );
}

#[test]
fn if_elif_else_endif_jump_targets() {
    let text = "\\if :a\nselect 1;\n\\elif :b\nselect 2;\n\\else\nselect 3;\n\\endif\nselect 4;\n";
    let (c, _) = parse(text);
    assert!(matches!(c[0].kind, CommandKind::If { next: 2, .. }));
    assert!(matches!(
        c[2].kind,
        CommandKind::Elif {
            next: 4,
            end: 6,
            ..
        }
    ));
    assert!(matches!(c[4].kind, CommandKind::Else { end: 6 }));
    assert!(matches!(c[6].kind, CommandKind::EndIf));
}

#[test]
fn nested_ifs_jump_to_their_own_branches() {
    let text = "\\if 1\n\\if 2\n\\endif\n\\elif 3\n\\endif\n\\if 4\n\\endif\n";
    let (c, _) = parse(text);
    assert!(matches!(c[0].kind, CommandKind::If { next: 3, .. }));
    assert!(matches!(c[1].kind, CommandKind::If { next: 2, .. }));
    assert!(matches!(
        c[3].kind,
        CommandKind::Elif {
            next: 4,
            end: 4,
            ..
        }
    ));
    assert!(matches!(c[5].kind, CommandKind::If { next: 6, .. }));
}

#[test]
fn conditional_structure_errors_use_one_based_command_numbers() {
    assert_eq!(
        err("\\else\n"),
        "condition error in script \"t.sql\" command 1: \\else without matching \\if"
    );
    assert_eq!(
        err("select 1;\n\\if 1\n"),
        "condition error in script \"t.sql\" command 3: \\if without matching \\endif"
    );
    assert_eq!(
        err("\\if 1\n\\else\n\\elif 2\n\\endif\n"),
        "condition error in script \"t.sql\" command 3: \\elif after \\else"
    );
}

#[test]
fn syntax_errors_win_over_conditional_errors() {
    assert!(err("\\if 1\n\\set x 1 +\n").starts_with("t.sql:2: syntax error in command \"set\""));
}

#[test]
fn else_endif_and_pipeline_commands_take_no_arguments() {
    let (c, _) = parse("\\startpipeline\n\\syncpipeline\n\\endpipeline\n");
    let names: Vec<&str> = c.iter().map(|c| c.kind.meta_name()).collect();
    assert_eq!(names, ["startpipeline", "syncpipeline", "endpipeline"]);
    assert_eq!(
        err("\\syncpipeline x\n"),
        "t.sql:1: unexpected argument in command \"syncpipeline\"\n\\syncpipeline x"
    );
}

#[test]
fn unknown_meta_command_is_invalid() {
    assert_eq!(
        err("\\foo bar\n"),
        "t.sql:1: invalid command in command \"foo\"\n\\foo bar"
    );
}

#[test]
fn lone_backslash_is_ignored() {
    assert_eq!(parse("select 1 \\\n;\n").0.len(), 2);
}

#[test]
fn sql_parts_keep_casts_and_assignments_literal() {
    let (c, vars) = parse("select :x, ':x', 1::int, :::y, :é, a := 1, :x\n");
    let s = sql(&c[0]);
    let x = vars.get("x").unwrap();
    let e = vars.get("é").unwrap();
    assert_eq!(
        s.parts,
        vec![
            SqlPart::Lit("select ".into()),
            SqlPart::Var {
                var: x,
                name: "x".into()
            },
            SqlPart::Lit(", '".into()),
            SqlPart::Var {
                var: x,
                name: "x".into()
            },
            SqlPart::Lit("', 1::int, :::y, ".into()),
            SqlPart::Var {
                var: e,
                name: "é".into()
            },
            SqlPart::Lit(", a := 1, ".into()),
            SqlPart::Var {
                var: x,
                name: "x".into()
            },
            SqlPart::Lit("\n".into()),
        ]
    );
    assert_eq!(
        s.param_sql,
        "select $1, '$2', 1::int, :::y, $3, a := 1, $4\n"
    );
    assert_eq!(s.params, vec![x, x, e, x]);
}

#[test]
fn prepared_names_use_a_counter_shared_across_scripts() {
    let mut vars = VarTable::new();
    let mut counter = 0;
    let a = parse_script(
        "a",
        "select 1;\n\\set x 1\nselect 2;",
        &mut vars,
        QueryMode::Prepared,
        &mut counter,
    )
    .unwrap();
    let b = parse_script(
        "b",
        "select 3;",
        &mut vars,
        QueryMode::Prepared,
        &mut counter,
    )
    .unwrap();
    assert_eq!(sql(&a[0]).prepared_name, "P_0");
    assert_eq!(sql(&a[2]).prepared_name, "P_1");
    assert_eq!(sql(&b[0]).prepared_name, "P_2");
    assert_eq!(counter, 3);
    let (s, _) = parse_mode("select 1;", QueryMode::Extended);
    assert_eq!(sql(&s[0]).prepared_name, "");
}

#[test]
fn more_than_255_parameters_fail_in_extended_and_prepared_modes() {
    let text = format!(
        "select {};",
        (0..256)
            .map(|i| format!(":v{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for mode in [QueryMode::Extended, QueryMode::Prepared] {
        let mut vars = VarTable::new();
        let e = parse_script("t", &text, &mut vars, mode, &mut 0)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!("statement has too many arguments (maximum is 255): {text}")
        );
    }
    assert_eq!(parse(&text).0.len(), 1, "simple mode has no limit");
    let ok = format!(
        "select {};",
        (0..255)
            .map(|i| format!(":v{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_eq!(parse_mode(&ok, QueryMode::Prepared).0.len(), 1);
}

#[test]
fn first_line_and_line_numbers_for_report() {
    let long = format!("select '{}';", "a".repeat(200));
    let text = format!("-- c\n\n  select 1\n  , 2;\n\\set x 1 \\\n  + 2 \n{long}\n");
    let (c, _) = parse(&text);
    assert_eq!((c[0].line, c[0].first_line.as_str()), (3, "select 1"));
    assert_eq!(
        (c[1].line, c[1].first_line.as_str()),
        (5, "\\set x 1 \\\n  + 2 ")
    );
    assert_eq!(c[2].first_line.len(), 127);
    assert_eq!(c[2].line, 7);
}

#[test]
fn first_line_is_cut_on_a_char_boundary() {
    let text = format!("select '{}';", "é".repeat(100));
    let (c, _) = parse(&text);
    assert_eq!(c[0].first_line.len(), 126);
}

#[test]
fn compound_command_counts_statements() {
    let (c, _) = parse("select 1 \\; select 2 \\; \\; select 3;\nselect 4;\n");
    assert_eq!(sql(&c[0]).statements, 3);
    assert_eq!(sql(&c[0]).text, "select 1 ; select 2 ; ; select 3;");
    assert_eq!(sql(&c[1]).statements, 1);
}

#[test]
fn setrandom_compiles_to_random_functions() {
    let (c, vars) = parse(
        "\\setrandom a 1 10\n\\setrandom b :lo :hi uniform\n\\setrandom c 1 100 gaussian 2.5\n\\setrandom d 1 100 EXPONENTIAL :t\n",
    );
    let get = |i: usize| match &c[i].kind {
        CommandKind::Set {
            var,
            expr: Expr::Func { func, args },
        } => (vars.name(*var).to_owned(), *func, args.len()),
        k => panic!("set expected, got {k:?}"),
    };
    assert_eq!(get(0), ("a".into(), Func::Random, 2));
    assert_eq!(get(1), ("b".into(), Func::Random, 2));
    assert_eq!(get(2), ("c".into(), Func::RandomGaussian, 3));
    assert_eq!(get(3), ("d".into(), Func::RandomExponential, 3));
    assert!(vars.get("lo").is_some() && vars.get("t").is_some());
}

#[test]
fn setrandom_errors() {
    assert_eq!(
        err("\\setrandom a 1\n"),
        "t.sql:1: missing arguments in command \"setrandom\"\n\\setrandom a 1"
    );
    assert!(err("\\setrandom a 1 2 zipf\n")
        .starts_with("t.sql:1: unexpected argument (zipf) in command"));
    assert!(err("\\setrandom a 1 2 gaussian\n")
        .starts_with("t.sql:1: missing parameter (gaussian) in command"));
    assert!(err("\\setrandom a 1 2 gaussian 3 4\n")
        .starts_with("t.sql:1: too many arguments (gaussian)"));
    assert!(
        err("\\setrandom a 1 2 uniform 4\n").starts_with("t.sql:1: too many arguments (uniform)")
    );
    assert!(err("\\setrandom a x 2\n")
        .starts_with("t.sql:1: invalid number (x) in command \"setrandom\""));
}

#[test]
fn builtin_scripts_parse() {
    for b in &pgrig_script::builtin::BUILTINS {
        let mut vars = VarTable::new();
        let c = parse_script(b.desc, b.script, &mut vars, QueryMode::Prepared, &mut 0)
            .expect("builtin parses");
        assert!(!c.is_empty());
        assert!(vars.get("scale").is_some() && vars.get("aid").is_some());
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    let samples = [
        "\\",
        "\\\\",
        "\\set",
        "\\set x",
        "\\sleep :",
        "$",
        "$$",
        "$a",
        "'",
        "E'\\",
        "/*",
        "--",
        "\\;",
        "\\:",
        ":",
        "\\set x é",
        "\\set x (((",
        "\\if",
        "\\gset",
        "select :",
        "\r\n\\\r\n",
        "\\set x 1\\",
        "\\setrandom",
    ];
    for s in samples {
        for suffix in ["", "\n", "\r\n", " x\n"] {
            let mut vars = VarTable::new();
            let _ = parse_script(
                "t",
                &format!("{s}{suffix}"),
                &mut vars,
                QueryMode::Extended,
                &mut 0,
            );
        }
    }
}
