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
            if let Some(reason) = owned_by_pgrig(name) {
                return Err(LabError::Option {
                    option: format!("setting {name:?}"),
                    reason: reason.into(),
                });
            }
            if !self.allow_access_settings && changes_access(name, value) {
                return Err(LabError::Option {
                    option: format!("setting {name:?}"),
                    reason: access_reason(),
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

/// Settings that reach the access settings or run code on the server, by name alone: those that
/// read other configuration files (`include*`, `config_file`, `hba_file`, `ident_file`,
/// `data_directory`), choose where it listens and who enters its socket (`listen_addresses`,
/// `unix_socket_*`, `krb_*`, `db_user_namespace`), write where it is told
/// (`external_pid_file`), choose where libraries and extensions are found
/// (`dynamic_library_path`, `extension_destdir`, `extension_control_path`) or run commands
/// (`archive_command`, `restore_command`, `archive_cleanup_command`, `recovery_end_command`,
/// and `ssl_passphrase_command` among `ssl*`). Checked against PostgreSQL 15–18's documented
/// settings and configuration-file directives.
const ACCESS_BY_NAME: &[&str] = &[
    "include",
    "include_if_exists",
    "include_dir",
    "config_file",
    "data_directory",
    "hba_file",
    "ident_file",
    "external_pid_file",
    "listen_addresses",
    "krb_server_keyfile",
    "krb_caseins_users",
    "db_user_namespace",
    "dynamic_library_path",
    "extension_destdir",
    "extension_control_path",
    "archive_command",
    "restore_command",
    "archive_cleanup_command",
    "recovery_end_command",
];

/// Settings naming libraries the server loads: harmless while every name is a bare library name
/// (found in the server's own library directory, installed with PostgreSQL), so
/// `shared_preload_libraries = 'pg_stat_statements'` needs no consent; a path (`/` or `\`)
/// loads code from anywhere and does.
const LIBRARY_SETTINGS: &[&str] = &[
    "shared_preload_libraries",
    "local_preload_libraries",
    "session_preload_libraries",
    "jit_provider",
    "archive_library",
    "oauth_validator_libraries",
];

/// Whether setting `name = value` changes who can reach the server or what it runs: see
/// [`ACCESS_BY_NAME`] and [`LIBRARY_SETTINGS`]; also TLS (`ssl*`). Names are case-insensitive,
/// as the server reads them.
pub fn changes_access(name: &str, value: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if LIBRARY_SETTINGS.contains(&n.as_str()) {
        return value.contains(['/', '\\']);
    }
    ACCESS_BY_NAME.contains(&n.as_str()) || n.starts_with("unix_socket_") || n.starts_with("ssl")
}

/// Why pgrig refuses `name` whatever the consent: `port` is pgrig's to choose (its state,
/// connection strings and `server status` say where the server is).
pub fn owned_by_pgrig(name: &str) -> Option<&'static str> {
    name.eq_ignore_ascii_case("port")
        .then_some("pgrig chooses the port and records it; a different one would leave it connecting elsewhere")
}

/// The refusal of a setting that changes who can connect, naming the consent.
pub fn access_reason() -> String {
    "it changes who can connect to the scratch server or what it runs (another configuration \
     file, listening, authentication, TLS, a library path or a shell command), and pgrig keeps \
     it reachable only by its owner (`pgrig server start --allow-access-settings` sets it anyway)"
        .into()
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
            "include",
            "Include_Dir",
            "include_if_exists",
            "config_file",
            "data_directory",
            "dynamic_library_path",
            "archive_command",
            "restore_command",
            "ssl_passphrase_command",
            "external_pid_file",
            "krb_server_keyfile",
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
    fn libraries_from_the_servers_own_directory_need_no_consent_but_paths_do() {
        for name in [
            "shared_preload_libraries",
            "session_preload_libraries",
            "jit_provider",
        ] {
            let ok = ServerOptions::default().setting(name, "pg_stat_statements, auto_explain");
            assert!(ok.check().is_ok(), "{name}");
            for path in [
                "/tmp/evil",
                "$libdir/../../../tmp/evil",
                "a, \"x/y\"",
                "..\\x",
            ] {
                let opts = ServerOptions::default().setting(name, path);
                let err = opts.check().unwrap_err().to_string();
                assert!(
                    err.contains("--allow-access-settings"),
                    "{name}={path}: {err}"
                );
                assert!(opts.allow_access_settings(true).check().is_ok());
            }
        }
    }

    #[test]
    fn the_port_is_pgrigs_even_with_consent() {
        let opts = ServerOptions::default()
            .allow_access_settings(true)
            .setting("PORT", "5433");
        assert!(opts.check().unwrap_err().to_string().contains("port"));
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
