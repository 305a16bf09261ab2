//! An OS error's text the way C's `strerror` prints it: [`strerror`], the one such helper of the
//! workspace (PostgreSQL's tools print `%m` so, and pgrig's messages mirror theirs).

use std::io;

/// An OS error's text the way C's `strerror` prints it (without Rust's ` (os error N)` suffix).
pub fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strerror_drops_rust_suffix() {
        // ECONNREFUSED is 111 on Linux, the one platform pgrig builds for
        let e = io::Error::from_raw_os_error(111);
        assert_eq!(strerror(&e), "Connection refused");
    }

    #[test]
    fn strerror_keeps_a_message_without_an_os_error() {
        let e = io::Error::other("plain (text)");
        assert_eq!(strerror(&e), "plain (text)");
    }
}
