//! Property harness for the password mask (issue 21, "Also": a fuzz target per parser, bounded
//! run time): whatever a password holds, a connection string that gives it to libpq, written
//! unquoted with backslash escapes or single-quoted, masks to text that does not show it, and
//! the mask never panics on arbitrary text.

use super::conninfo;
use super::mask_passwords;
use proptest::prelude::*;

fn password() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 'Z', '7', ' ', '\t', '\\', '\'', '"', '&', '=', '@', ':', '/', '?', '#', 'é',
    ]);
    prop::collection::vec(chars, 1..24).prop_map(|v| v.into_iter().collect())
}

/// `p` as libpq reads it unquoted: every whitespace, backslash and quote escaped.
fn unquoted(p: &str) -> String {
    let mut out = String::new();
    for c in p.chars() {
        if c.is_whitespace() || c == '\\' || c == '\'' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `p` single-quoted, `\'` and `\\` escaped.
fn quoted(p: &str) -> String {
    format!("'{}'", p.replace('\\', "\\\\").replace('\'', "\\'"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_password_libpq_reads_is_never_shown(p in password(), q in any::<bool>(), key in prop::sample::select(vec!["password", "sslpassword", "PASSWORD"])) {
        let value = if q { quoted(&p) } else { unquoted(&p) };
        let cs = format!("host=h {key}={value} user=u");
        let pairs = conninfo::parse(&cs).unwrap();
        prop_assert_eq!(&pairs[1].1, &p);
        // the whole value is masked; a `"` ending an unquoted value before whitespace is taken
        // for the end of a quoted string around the connection string, and stays
        let tail = if !q && p.len() > 1 && p.ends_with('"') { "\"" } else { "" };
        // (a run of backslashes before whitespace is read as escaping it, as a TOML string's
        // `\\ ` would be: the mask may run on over what follows, never stop short)
        let masked = mask_passwords(&cs);
        let head = format!("host=h {key}=****");
        prop_assert!(masked.starts_with(&head), "{:?} -> {:?}", cs, masked);
        let after = format!("{tail} user=u");
        prop_assert!(after.ends_with(&masked[head.len()..]), "{:?} -> {:?}", cs, masked);
    }

    #[test]
    fn a_uri_password_is_never_shown(p in password(), in_query in any::<bool>()) {
        let enc: String = p
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let uri = if in_query {
            format!("postgresql://h/db?user=u&password={enc}&sslmode=disable")
        } else {
            format!("postgresql://u:{enc}@h/db?sslmode=disable")
        };
        let masked = mask_passwords(&format!("connect \"{uri}\" failed"));
        let want = if in_query {
            "connect \"postgresql://h/db?user=u&password=****&sslmode=disable\" failed"
        } else {
            "connect \"postgresql://u:****@h/db?sslmode=disable\" failed"
        };
        prop_assert_eq!(masked, want);
    }

    #[test]
    fn masking_arbitrary_text_never_panics(t in "(password|=|'|\\\\| |&|\\?|://|@|:|x|é|\")*") {
        let _ = mask_passwords(&t);
    }
}

// Fixed cases beside the properties (here, not in pgrig-text, because they need the conninfo
// parser): every password in a connection string libpq reads is masked whole.
#[test]
fn every_password_libpq_reads_is_masked_whole() {
    // each connection string's password, as libpq parses it, appears nowhere in the mask
    for cs in [
        "host=h password=Se\\ CrEt",
        "password = 'it''s' host=h",
        "password='a\\' b' user=x",
        "password=\\'quoted\\' user=x",
        "sslpassword=k\\ e\\ y dbname=d",
        "password=\"dq\"x user=x",
    ] {
        let masked = mask_passwords(cs);
        for (k, v) in conninfo::parse(cs).unwrap_or_default() {
            if k.ends_with("password") && v.len() > 1 {
                assert!(!masked.contains(&v), "{cs:?} -> {masked:?} shows {v:?}");
                for part in v.split_whitespace().filter(|p| p.len() > 1) {
                    assert!(
                        !masked.contains(part),
                        "{cs:?} -> {masked:?} shows {part:?}"
                    );
                }
            }
        }
    }
}
