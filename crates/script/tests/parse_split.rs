//! Splitting scripts into commands (psql lexer rules), checked against behaviour observed with
//! pgbench 15 (`--debug` shows what is sent, `-r` shows `first_line`).

use pgrig_script::lexer::{split_script, Chunk};

/// The SQL texts and meta-command texts of a script, in order (`\` prefix marks meta-commands).
fn pieces(script: &str) -> Vec<String> {
    split_script(script)
        .into_iter()
        .map(|c| match c {
            Chunk::Sql(s) => s.text,
            Chunk::Meta(m) => m.text.to_owned(),
        })
        .collect()
}

fn sql(script: &str) -> Vec<(String, usize, usize)> {
    split_script(script)
        .into_iter()
        .filter_map(|c| match c {
            Chunk::Sql(s) => Some((s.text, s.line, s.statements)),
            Chunk::Meta(_) => None,
        })
        .collect()
}

#[test]
fn sql_ends_at_unquoted_semicolon_and_keeps_it() {
    assert_eq!(pieces("select 1; select 2;\n"), ["select 1;", "select 2;"]);
}

#[test]
fn last_command_needs_no_semicolon() {
    assert_eq!(pieces("select 1;\nselect 2\n"), ["select 1;", "select 2\n"]);
}

#[test]
fn semicolon_inside_single_quotes_does_not_end_command() {
    assert_eq!(pieces("select 'a;b''c;'; x;"), ["select 'a;b''c;';", "x;"]);
}

#[test]
fn backslash_is_literal_in_standard_strings() {
    assert_eq!(pieces("select '\\'; x;"), ["select '\\';", "x;"]);
}

#[test]
fn e_string_backslash_escapes_a_quote() {
    assert_eq!(
        pieces("select E'\\';' as a; x;"),
        ["select E'\\';' as a;", "x;"]
    );
    assert_eq!(pieces("select e'\\\\'; x;"), ["select e'\\\\';", "x;"]);
}

#[test]
fn e_inside_an_identifier_does_not_start_an_e_string() {
    assert_eq!(pieces("select ee'\\'; x;"), ["select ee'\\';", "x;"]);
}

#[test]
fn semicolon_inside_double_quoted_identifier_does_not_end_command() {
    assert_eq!(
        pieces("select 1 as \"a;\"\"b\"; x;"),
        ["select 1 as \"a;\"\"b\";", "x;"]
    );
}

#[test]
fn semicolon_inside_dollar_quote_does_not_end_command() {
    assert_eq!(
        pieces("select $$;$$, $a$ $$; $a$; x;"),
        ["select $$;$$, $a$ $$; $a$;", "x;"]
    );
}

#[test]
fn dollar_after_identifier_is_part_of_it_but_after_number_starts_a_quote() {
    assert_eq!(pieces("select a$$b; x;"), ["select a$$b;", "x;"]);
    assert_eq!(pieces("select 1$$;$$; x;"), ["select 1$$;$$;", "x;"]);
    assert_eq!(pieces("select $1; x;"), ["select $1;", "x;"]);
}

#[test]
fn semicolon_inside_comments_does_not_end_command() {
    assert_eq!(
        pieces("select /* a; /* b; */ c; */ 1; x;"),
        ["select /* a; /* b; */ c; */ 1;", "x;"]
    );
    assert_eq!(
        pieces("select 1 -- a;\n, 2; x;"),
        ["select 1 -- a;\n, 2;", "x;"]
    );
}

#[test]
fn semicolon_inside_parentheses_does_not_end_command() {
    assert_eq!(pieces("select (1;\n2); x;"), ["select (1;\n2);", "x;"]);
}

#[test]
fn parenthesis_depth_survives_a_meta_command() {
    assert_eq!(
        pieces("select (1 \\sleep 0\n; select 2);\n"),
        ["select (1 ", "\\sleep 0", "; select 2);"]
    );
}

#[test]
fn begin_atomic_body_keeps_its_semicolons() {
    let s = "create or replace function f() returns int language sql begin atomic select 1; select 2; end; x;";
    assert_eq!(
        pieces(s),
        ["create or replace function f() returns int language sql begin atomic select 1; select 2; end;", "x;"]
    );
    assert_eq!(pieces("select begin; x;"), ["select begin;", "x;"]);
}

#[test]
fn empty_statements_are_commands() {
    assert_eq!(pieces("select 1 ; ;; x;"), ["select 1 ;", ";", ";", "x;"]);
}

#[test]
fn leading_whitespace_and_dash_comments_are_stripped() {
    assert_eq!(
        sql("-- c1\n  -- c2\n\n  select 1 -- t\n , 2 ;"),
        [("select 1 -- t\n , 2 ;".to_string(), 4, 1)]
    );
}

#[test]
fn leading_block_comment_is_kept() {
    assert_eq!(pieces("/* block */ select 4;"), ["/* block */ select 4;"]);
}

#[test]
fn comment_only_chunks_are_dropped_but_block_comments_are_commands() {
    assert_eq!(pieces("select 1; -- tail"), ["select 1;"]);
    assert_eq!(pieces("select 1;\n\n  \n"), ["select 1;"]);
    assert_eq!(pieces("select 1; /* tail */"), ["select 1;", "/* tail */"]);
}

#[test]
fn backslash_semicolon_glues_statements_and_counts_them() {
    assert_eq!(
        sql("select 1 \\; select 2 \\; \\; select 3 ;"),
        [("select 1 ; select 2 ; ; select 3 ;".to_string(), 1, 3)]
    );
}

#[test]
fn backslash_colon_is_a_literal_colon() {
    assert_eq!(pieces("select \\:x;"), ["select :x;"]);
}

#[test]
fn sql_before_a_meta_command_needs_no_semicolon() {
    assert_eq!(
        pieces("select 6 \\gset\nselect 7 \\gset p_\n"),
        ["select 6 ", "\\gset", "select 7 ", "\\gset p_"]
    );
}

#[test]
fn meta_command_runs_to_end_of_line_with_continuations() {
    assert_eq!(
        pieces("\\set x 1 \\\n  + 2 \nselect 1;"),
        ["\\set x 1 \\\n  + 2 ", "select 1;"]
    );
    assert_eq!(
        pieces("\\set x 1 \\\r\n + 2\r\nx;"),
        ["\\set x 1 \\\r\n + 2\r", "x;"]
    );
}

#[test]
fn lone_backslash_before_newline_is_not_a_continuation() {
    assert_eq!(pieces("select 1 \\\n, 2;"), ["select 1 ", "\\", ", 2;"]);
}

#[test]
fn meta_command_display_text_drops_carriage_return() {
    let chunks = split_script("\\sleep 1 \\\n   \r\n");
    let Chunk::Meta(m) = &chunks[0] else {
        panic!("meta expected")
    };
    assert_eq!(m.display_text(), "\\sleep 1 \\\n   ");
}

#[test]
fn line_numbers_are_one_based_and_count_stripped_lines() {
    let chunks = split_script("-- c\n\n\\set x 1\n\n  select 1\n;\n\\sleep 1");
    let lines: Vec<usize> = chunks
        .iter()
        .map(|c| match c {
            Chunk::Sql(s) => s.line,
            Chunk::Meta(m) => m.line,
        })
        .collect();
    assert_eq!(lines, [3, 5, 7]);
}

#[test]
fn unterminated_quote_runs_to_end_of_input() {
    assert_eq!(
        pieces("select 'abc; \\sleep 1\n"),
        ["select 'abc; \\sleep 1\n"]
    );
    assert_eq!(
        pieces("select /* abc; \\sleep 1\n"),
        ["select /* abc; \\sleep 1\n"]
    );
    assert_eq!(
        pieces("select $q$ abc; \\sleep 1\n"),
        ["select $q$ abc; \\sleep 1\n"]
    );
}

#[test]
fn non_ascii_text_is_handled_on_char_boundaries() {
    assert_eq!(
        pieces("select 'é;' as ü, :é; \\set ä 1\n"),
        ["select 'é;' as ü, :é;", "\\set ä 1"]
    );
}
