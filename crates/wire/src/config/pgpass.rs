//! The password file (`~/.pgpass`, `PGPASSFILE`): `host:port:dbname:user:password` lines with
//! `*` wildcards and `\:` / `\\` escapes; `#` comments. Socket hosts match `localhost`. Files
//! readable by group or others are ignored with libpq's warning.

use std::path::Path;

/// libpq's stand-in host name for Unix-domain sockets.
const DEFAULT_HOST: &str = "localhost";

/// Finds the password for a connection in the text of a password file.
/// `host` is the host as configured (a socket directory or empty string matches `localhost`).
pub fn lookup(contents: &str, host: &str, port: &str, dbname: &str, user: &str) -> Option<String> {
    let host = if host.is_empty() || host.starts_with('/') {
        DEFAULT_HOST
    } else {
        host
    };
    for line in contents.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut rest = line;
        let mut ok = true;
        for want in [host, port, dbname, user] {
            match match_field(rest, want) {
                Some(r) => rest = r,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            return Some(unescape(rest));
        }
    }
    None
}

/// Matches one `:`-terminated field against `want`; returns the text after the colon.
fn match_field<'a>(line: &'a str, want: &str) -> Option<&'a str> {
    if let Some(rest) = line.strip_prefix("*:") {
        return Some(rest);
    }
    let mut chars = line.char_indices();
    let mut want_chars = want.chars();
    while let Some((i, c)) = chars.next() {
        let c = match c {
            ':' => {
                return want_chars.next().is_none().then(|| &line[i + 1..]);
            }
            '\\' => chars.next()?.1,
            c => c,
        };
        if want_chars.next() != Some(c) {
            return None;
        }
    }
    None
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Reads the password file if it is usable; prints libpq's warning (to stderr, as libpq does)
/// and returns `None` when it is not a plain file or is group/world accessible.
pub fn read_file(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        eprintln!(
            "WARNING: password file \"{}\" is not a plain file",
            path.display()
        );
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
            path.display()
        );
        return None;
    }
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
# comment line
db.example:5432:bench:bob:first
*:5433:*:bob:wild\\:card\\\\pw
localhost:5432:*:alice:sockpw
h\\:x:*:*:*:escaped-host
";

    #[test]
    fn exact_match_wins_in_file_order() {
        assert_eq!(
            lookup(FILE, "db.example", "5432", "bench", "bob").as_deref(),
            Some("first")
        );
    }

    #[test]
    fn wildcards_and_password_escapes() {
        assert_eq!(
            lookup(FILE, "any", "5433", "x", "bob").as_deref(),
            Some("wild:card\\pw")
        );
        assert_eq!(lookup(FILE, "any", "5434", "x", "bob"), None);
    }

    #[test]
    fn socket_hosts_match_localhost() {
        assert_eq!(
            lookup(FILE, "/var/run/postgresql", "5432", "d", "alice").as_deref(),
            Some("sockpw")
        );
        assert_eq!(
            lookup(FILE, "", "5432", "d", "alice").as_deref(),
            Some("sockpw")
        );
    }

    #[test]
    fn escaped_colon_in_host_field() {
        assert_eq!(
            lookup(FILE, "h:x", "1", "d", "u").as_deref(),
            Some("escaped-host")
        );
    }

    #[test]
    fn prefix_of_a_field_does_not_match() {
        assert_eq!(
            lookup("db:5432:bench:bob:pw\n", "d", "5432", "bench", "bob"),
            None
        );
        assert_eq!(
            lookup("db:5432:bench:bob:pw\n", "dbx", "5432", "bench", "bob"),
            None
        );
    }

    #[test]
    fn crlf_lines_and_short_lines_are_handled() {
        assert_eq!(
            lookup("h:1:d:u:pw\r\n", "h", "1", "d", "u").as_deref(),
            Some("pw")
        );
        assert_eq!(lookup("h:1:d\n", "h", "1", "d", "u"), None);
    }

    #[test]
    fn group_readable_file_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        std::fs::write(&path, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(read_file(&path), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_file(&path).as_deref(), Some("*:*:*:*:pw\n"));
        assert_eq!(read_file(dir.path()), None);
    }
}
