//! What the server told us about the session: ParameterStatus values, BackendKeyData (for
//! cancel requests) and the transaction status from the last ReadyForQuery.

use super::backend::TransactionStatus;

#[derive(Debug, Default, Clone)]
pub struct Session {
    params: Vec<(String, String)>,
    /// `(process id, secret key)` from BackendKeyData.
    pub key: Option<(i32, i32)>,
    pub tx_status: TransactionStatus,
    version_num: i32,
}

impl Session {
    /// Records a ParameterStatus (allocates only when a value actually changes).
    pub fn set_parameter(&mut self, name: &[u8], value: &[u8]) {
        let name = String::from_utf8_lossy(name);
        let value = String::from_utf8_lossy(value);
        if name == "server_version" {
            self.version_num = parse_server_version(&value);
        }
        match self.params.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) if *v == value => {}
            Some((_, v)) => *v = value.into_owned(),
            None => self.params.push((name.into_owned(), value.into_owned())),
        }
    }

    /// A parameter the server reported (`server_version`, `client_encoding`, `TimeZone`, ...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// All reported parameters.
    pub fn parameters(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// `server_version` as reported.
    pub fn server_version(&self) -> &str {
        self.parameter("server_version").unwrap_or("")
    }

    /// `server_version` as libpq's `PQserverVersion` number (150004 for 15.4), 0 if unknown.
    pub fn server_version_num(&self) -> i32 {
        self.version_num
    }
}

/// libpq's rule: `major.minor` for 10+ (major*10000 + minor), `a.b.c` before
/// (a*10000 + b*100 + c); trailing text such as ` (Debian ...)` or `beta1` is ignored.
pub fn parse_server_version(v: &str) -> i32 {
    let mut nums = [0i32; 3];
    let mut count = 0;
    let mut rest = v.trim_start();
    while count < 3 {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        nums[count] = rest[..digits].parse().unwrap_or(0);
        count += 1;
        rest = &rest[digits..];
        match rest.strip_prefix('.') {
            Some(r) => rest = r,
            None => break,
        }
    }
    match count {
        0 => 0,
        _ if nums[0] >= 10 => nums[0] * 10000 + nums[1],
        _ => nums[0] * 10000 + nums[1] * 100 + nums[2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_version_numbers_follow_libpq() {
        assert_eq!(
            parse_server_version("15.18 (Debian 15.18-0+deb12u1)"),
            150018
        );
        assert_eq!(parse_server_version("16beta1"), 160000);
        assert_eq!(parse_server_version("17devel"), 170000);
        assert_eq!(parse_server_version("9.6.24"), 90624);
        assert_eq!(parse_server_version("9.6beta2"), 90600);
        assert_eq!(parse_server_version("garbage"), 0);
    }

    #[test]
    fn parameters_are_tracked_and_updated() {
        let mut s = Session::default();
        s.set_parameter(b"server_version", b"15.4");
        s.set_parameter(b"application_name", b"a");
        s.set_parameter(b"application_name", b"b");
        assert_eq!(s.server_version_num(), 150004);
        assert_eq!(s.parameter("application_name"), Some("b"));
        assert_eq!(s.parameters().count(), 2);
    }
}
