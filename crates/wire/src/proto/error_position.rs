//! libpq's `LINE n: ...` / `^` cursor lines that point at an error position inside the query
//! text (reportErrorPosition in fe-protocol3.c): tabs shown as spaces, the line containing the
//! position extracted, and long lines cut to about 60 screen columns with `...` around (wide
//! characters count two columns, as libpq counts them).

const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// Screen columns of one character as libpq counts them: wide (East Asian) characters take
/// two, anything that would take none (controls, combining marks) one.
fn columns(c: char) -> usize {
    if c.is_ascii() {
        return 1;
    }
    unicode_width::UnicodeWidthChar::width(c)
        .filter(|&w| w > 0)
        .unwrap_or(1)
}

/// Appends the two context lines for 1-based character position `pos` in `query`
/// (nothing if the position is outside the query). The window and the cursor are measured in
/// screen columns.
pub fn write_error_position(out: &mut String, query: &str, pos: u32) {
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let Some(loc) = (pos as usize).checked_sub(1) else {
        return;
    };
    // screen offset of each character, and of the end
    let mut scr = Vec::with_capacity(chars.len() + 1);
    let mut off = 0;
    for &c in &chars {
        scr.push(off);
        off += columns(c);
    }
    scr.push(off);
    let mut line = 1;
    let mut beg = 0;
    let mut end = chars.len();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\r' || c == '\n' {
            if i < loc {
                if c == '\r' || i == 0 || chars[i - 1] != '\r' {
                    line += 1;
                }
                beg = i + 1;
            } else {
                end = i;
                break;
            }
        }
    }
    if loc > end {
        return;
    }
    let (mut beg_cut, mut end_cut) = (false, false);
    if scr[end] - scr[beg] > DISPLAY_SIZE {
        if scr[beg] + DISPLAY_SIZE >= scr[loc] + MIN_RIGHT_CUT {
            while scr[end] - scr[beg] > DISPLAY_SIZE {
                end -= 1;
            }
            end_cut = true;
        } else {
            while scr[loc] + MIN_RIGHT_CUT < scr[end] {
                end -= 1;
                end_cut = true;
            }
            while scr[end] - scr[beg] > DISPLAY_SIZE {
                beg += 1;
                beg_cut = true;
            }
        }
    }
    let prefix = format!("LINE {line}: {}", if beg_cut { "..." } else { "" });
    out.push('\n');
    out.push_str(&prefix);
    out.extend(&chars[beg..end]);
    if end_cut {
        out.push_str("...");
    }
    out.push('\n');
    let indent = prefix.len() + (scr[loc] - scr[beg]);
    out.extend(std::iter::repeat_n(' ', indent));
    out.push('^');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(query: &str, pos: u32) -> String {
        let mut s = String::new();
        write_error_position(&mut s, query, pos);
        s
    }

    #[test]
    fn points_at_the_position_on_the_first_line() {
        assert_eq!(ctx("SELEC 1", 1), "\nLINE 1: SELEC 1\n        ^");
        assert_eq!(
            ctx("select * from nope", 15),
            "\nLINE 1: select * from nope\n                      ^"
        );
    }

    #[test]
    fn finds_the_line_and_replaces_tabs() {
        assert_eq!(
            ctx("select 1,\n\tbad thing", 12),
            "\nLINE 2:  bad thing\n         ^"
        );
        assert_eq!(ctx("a\r\nb\r\nc x", 9), "\nLINE 3: c x\n          ^");
    }

    #[test]
    fn long_lines_are_cut_around_the_position() {
        let q = format!(
            "select {} from t where zzz = 1 and yyyyyyyyyyyyyy = 2",
            "x, ".repeat(40)
        );
        let pos = q.find("zzz").unwrap() as u32 + 1;
        let s = ctx(&q, pos);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[1].starts_with("LINE 1: ..."), "{s}");
        assert!(lines[1].ends_with("..."), "{s}");
        let caret = lines[2].find('^').unwrap();
        assert_eq!(&lines[1][caret..caret + 3], "zzz");
        let q = "x".repeat(100);
        let s = ctx(&q, 2);
        assert!(s.lines().nth(1).unwrap().ends_with("x..."));
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(
            ctx("SELECT '日本語', 'é' FROM;", 23),
            format!("\nLINE 1: SELECT '日本語', 'é' FROM;\n{}^", " ".repeat(33))
        );
    }

    #[test]
    fn out_of_range_positions_print_nothing() {
        assert_eq!(ctx("abc", 0), "");
        assert_eq!(ctx("abc", 10), "");
    }
}
