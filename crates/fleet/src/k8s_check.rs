//! What `pgrig k8s manifest` checks before it prints anything, so a mistake fails on the
//! command line rather than in a pod: Kubernetes names (DNS-1123 labels: lowercase letters,
//! digits and `-`, room left for the suffixes), resource quantities, the target's host, user and
//! database (plain names: they are substituted into a conninfo, so `u password=x` would smuggle
//! a password in), and the run's pgbench options, parsed exactly as the coordinator will parse
//! them (unknown options, too few clients for the segments, connection options, which are the
//! workers' own), a Lua script's file name as a ConfigMap key. Also `$`-escaping for
//! Kubernetes' `$(VAR)` expansion in `args`.

/// A DNS-1123 label of at most `max` characters (`what` names the option).
pub fn label(what: &str, v: &str, max: usize) -> Result<(), String> {
    let ok = !v.is_empty()
        && v.len() <= max
        && v.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !v.starts_with('-')
        && !v.ends_with('-');
    if ok {
        return Ok(());
    }
    Err(format!(
        "{what} \"{v}\" is not a Kubernetes name: lowercase letters, digits and '-', starting \
         and ending with a letter or digit, at most {max} characters"
    ))
}

/// A DNS-1123 subdomain (a Secret's name).
pub fn subdomain(what: &str, v: &str) -> Result<(), String> {
    if v.len() <= 253 && v.split('.').all(|part| label(what, part, 63).is_ok()) {
        return Ok(());
    }
    Err(format!(
        "{what} \"{v}\" is not a Kubernetes name: lowercase letters, digits, '-' and '.'"
    ))
}

/// A Secret's key: letters, digits, `-`, `_`, `.`.
pub fn secret_key(v: &str) -> Result<(), String> {
    let ok = !v.is_empty()
        && v.len() <= 253
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        return Ok(());
    }
    Err(format!(
        "--target-secret-key \"{v}\": letters, digits, '-', '_' and '.' only"
    ))
}

/// A ConfigMap key (`what` names the option): letters, digits, `-`, `_`, `.`, at most 253
/// characters, not `.`, `..` or starting with `..` (the API server's rule: the key is a file
/// name in the mounted volume).
pub fn config_map_key(what: &str, v: &str) -> Result<(), String> {
    let chars = v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !v.is_empty() && v.len() <= 253 && chars && v != "." && !v.starts_with("..") {
        return Ok(());
    }
    Err(format!(
        "{what}: the file name {v:?} is not a ConfigMap key (letters, digits, '-', '_' and \
         '.', at most 253 characters, not starting with \"..\"): rename the file"
    ))
}

/// A resource quantity such as `2`, `500m`, `1Gi`, `1.5`.
pub fn quantity(what: &str, v: &str) -> Result<(), String> {
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &v[digits.len()..];
    let number = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit());
    let suffixes = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    if number && suffixes.contains(&suffix) {
        return Ok(());
    }
    Err(format!(
        "{what} \"{v}\" is not a Kubernetes quantity (e.g. 2, 500m, 1Gi)"
    ))
}

/// The target's host, user or database: substituted unquoted into the coordinator's conninfo
/// and URL, so a plain name only (no space, `=`, quote, `@`, `/`, `$`).
pub fn conn_word(what: &str, v: &str) -> Result<(), String> {
    let ok = !v.is_empty()
        && v.len() <= 255
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c));
    if ok {
        return Ok(());
    }
    let hint = if pgrig_wire::mask_passwords(&format!("user={v}")) != format!("user={v}")
        || v.contains('=')
    {
        ": a password never goes into the manifest (it comes from --target-secret)"
    } else {
        ""
    };
    Err(format!(
        "{what} \"{}\" is not a plain name (letters, digits, '-', '_', '.', ':'){hint}",
        pgrig_wire::mask_passwords(v)
    ))
}

/// An image reference: printable, no whitespace.
pub fn image(v: &str) -> Result<(), String> {
    if !v.is_empty() && v.len() <= 512 && v.chars().all(|c| c.is_ascii_graphic()) {
        return Ok(());
    }
    Err(format!("--image \"{v}\" is not an image reference"))
}

/// `v` with every `$` doubled: Kubernetes expands `$(VAR)` in a container's `args` and turns
/// `$$` into `$`, so the pod sees exactly `v`.
pub fn escape_dollars(v: &str) -> String {
    v.replace('$', "$$")
}

/// The run's options as the coordinator in the pod will parse them (`pgrig bench --segments N
/// --coordinator X OPTIONS`): refused when they do not parse, are not a benchmark, give fewer
/// clients than segments or name a connection (the workers' targets are their own). Returns
/// the options digest the coordinator will compute (`crate::protocol::options_digest`)
/// and the run's `-T` seconds, if any.
pub fn bench_options(segments: u32, opts: &[String]) -> Result<(String, Option<u64>), String> {
    let mut argv: Vec<String> = ["pgrig bench", "--segments", &segments.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(["--coordinator".into(), "host=coordinator".into()]);
    argv.extend(opts.iter().cloned());
    let none = |_: &str| None;
    let parsed = pgrig_pgbench_args::parse_pgbench_args("pgrig", &argv, &none)
        .map_err(|e| format!("the pgbench options: {}", e.lines.join("; ")))?;
    let pgrig_pgbench_args::Action::Bench(cfg) = parsed.action else {
        return Err("the pgbench options do not run a benchmark".into());
    };
    if cfg.clients < segments {
        return Err(format!(
            "--segments {segments} needs at least {segments} clients (-c {})",
            cfg.clients
        ));
    }
    let stored = pgrig_pgbench_args::run_options::for_workers(&argv[1..])
        .map_err(|e| format!("the pgbench options: {e}"))?;
    let scripts = crate::scripts::encode(&cfg.scripts);
    let seconds = match cfg.duration {
        pgrig_engine::config::Duration::Seconds(s) => Some(s),
        pgrig_engine::config::Duration::Transactions(_) => None,
    };
    let digest = crate::protocol::options_digest(segments, &stored, &scripts);
    Ok((digest, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_quantities_and_words() {
        assert!(label("--name", "my-bench", 40).is_ok());
        assert!(label("--name", "My_Bench", 40).is_err());
        assert!(label("--name", "-x", 40).is_err());
        assert!(quantity("--cpu", "500m").is_ok());
        assert!(quantity("--memory", "1Gi").is_ok());
        assert!(quantity("--memory", "lots").is_err());
        assert!(conn_word("--target-user", "u password=x").is_err());
        assert!(conn_word("--target-host", "pg.bench.svc").is_ok());
        assert_eq!(escape_dollars("a$(HOME)$$"), "a$$(HOME)$$$$");
        assert!(config_map_key("--lua-script", "oltp_custom.lua").is_ok());
        for bad in [
            "",
            ".",
            "..x.lua",
            "my script.lua",
            "s\u{e9}.lua",
            &"a".repeat(254),
        ] {
            assert!(config_map_key("--lua-script", bad).is_err(), "{bad}");
        }
    }
}
