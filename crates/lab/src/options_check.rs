//! Checking [`ServerOptions`] before anything starts: what would break the configuration files
//! (setting names that are not identifiers, values or hba lines with line breaks) or cannot work
//! (`host` hba lines without TCP, a superuser name a password file cannot hold), and, without
//! consent, settings that change who can connect.

use crate::error::LabError;
use crate::options::ServerOptions;

impl ServerOptions {
    /// Checks what would break the configuration files or cannot work: setting names that are
    /// not identifiers, values or hba lines with line breaks, `host` hba lines without `tcp`.
    pub fn check(&self) -> Result<(), LabError> {
        for (name, value) in &self.settings {
            check_setting(name, value).map_err(|reason| LabError::Option {
                option: format!("setting {name:?}"),
                reason,
            })?;
            if !self.allow_access_settings && changes_access(name) {
                return Err(LabError::Option {
                    option: format!("setting {name:?}"),
                    reason: "it changes who can connect to the scratch server, which pgrig keeps \
                             reachable only by its owner (`pgrig server start \
                             --allow-access-settings` sets it anyway)"
                        .into(),
                });
            }
        }
        for line in self.hba.iter().flatten() {
            let bad = |reason: &str| LabError::Option {
                option: format!("pg_hba line {line:?}"),
                reason: reason.to_string(),
            };
            if line.contains(['\n', '\r', '\0']) {
                return Err(bad("it contains a line break or NUL"));
            }
            if !self.tcp && line.trim_start().starts_with("host") {
                return Err(bad(
                    "host lines need TCP, which is off (set ServerOptions::tcp)",
                ));
            }
        }
        if self.superuser.is_empty() || self.superuser.contains(['\n', '\r', '\0', ':', '\\']) {
            return Err(LabError::Option {
                option: "superuser".into(),
                reason: format!("{:?} is not a usable role name", self.superuser),
            });
        }
        Ok(())
    }
}

/// Whether setting `name` changes who can reach the server: where it listens
/// (`listen_addresses`, `unix_socket_directories`), who may enter its socket
/// (`unix_socket_group`, `unix_socket_permissions`), which authentication rules apply
/// (`hba_file`, `ident_file`) or how TLS is set up (`ssl*`). Names are case-insensitive, as the
/// server reads them.
pub fn changes_access(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["listen_addresses", "hba_file", "ident_file"].contains(&n.as_str())
        || n.starts_with("unix_socket_")
        || n.starts_with("ssl")
}

/// Why a `postgresql.conf` setting cannot be written, if it cannot: the name must be an
/// identifier (`work_mem`, `auto_explain.log_min_duration`), the value must stay on one line.
pub fn check_setting(name: &str, value: &str) -> Result<(), String> {
    let ident = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !name.split('.').all(ident) {
        return Err(format!(
            "{name:?} is not a setting name (letters, digits, `_` and `.`)"
        ));
    }
    if value.contains(['\n', '\r', '\0']) {
        return Err(
            "the value contains a line break or NUL, which would break the configuration file"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_change_who_can_connect_need_consent() {
        for name in [
            "unix_socket_permissions",
            "Unix_Socket_Directories",
            "listen_addresses",
            "hba_file",
            "ssl",
            "ssl_ca_file",
        ] {
            let opts = ServerOptions::default().setting(name, "x");
            let err = opts.check().unwrap_err().to_string();
            assert!(err.contains("--allow-access-settings"), "{err}");
            assert!(opts.allow_access_settings(true).check().is_ok());
        }
        assert!(ServerOptions::default()
            .setting("work_mem", "4MB")
            .check()
            .is_ok());
    }

    #[test]
    fn settings_that_would_break_the_configuration_are_refused() {
        assert!(check_setting("work_mem", "4MB").is_ok());
        assert!(check_setting("auto_explain.log_min_duration", "0").is_ok());
        let err = check_setting("work_mem", "4MB\ninclude '/etc/x'").unwrap_err();
        assert!(err.contains("line break"), "{err}");
        assert!(check_setting("a b", "1").is_err());
        assert!(check_setting("", "1").is_err());
        let err = ServerOptions::default()
            .setting("work_mem", "1\r2")
            .check()
            .unwrap_err()
            .to_string();
        assert!(err.contains("work_mem"), "{err}");
    }

    #[test]
    fn host_hba_lines_without_tcp_are_refused() {
        let o = ServerOptions::default().hba(["host all all 127.0.0.1/32 trust"]);
        assert!(o.check().unwrap_err().to_string().contains("tcp"));
        assert!(o.tcp(true).check().is_ok());
    }
}
