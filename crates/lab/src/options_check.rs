//! Checking [`ServerOptions`] before anything starts: what would break the configuration files
//! (setting names that are not identifiers, values or hba lines with line breaks) or cannot work
//! (`host` hba lines without TCP, a superuser name a password file cannot hold).

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
