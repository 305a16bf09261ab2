//! The files of a Lua run's ConfigMap (`pgrig k8s manifest --lua-script FILE [--lua-module
//! FILE]...`): the script and the modules it `require`s, each a key (its file name) of one
//! ConfigMap mounted as the script's directory in every pod — where the Lua runtime looks for
//! modules (`crates/lua/src/prelude.lua`: LUA_PATH, the script's directory, then sysbench's
//! script directory, which pgrig's image does not have). Refused: a file that is missing or not
//! a regular file, text that is not UTF-8, a name that is no ConfigMap key, two files of one
//! name, more than the ConfigMap limit in all. Warned about: a `require("name")` in the text
//! that no file of the ConfigMap answers (a static look, so a `require` in a comment counts).

use std::path::{Path, PathBuf};

/// The API server's limit on a ConfigMap's data, all keys together: 1 MiB.
pub const CONFIG_MAP_MAX: u64 = 1 << 20;

/// One file of the ConfigMap.
pub struct LuaFile {
    /// the key: the file's name
    pub key: String,
    pub text: String,
}

/// The script (first) and the modules, read and checked.
pub fn read(script: &Path, modules: &[PathBuf]) -> Result<Vec<LuaFile>, String> {
    let mut files: Vec<LuaFile> = Vec::new();
    let mut total = 0u64;
    let given = std::iter::once(("--lua-script", script))
        .chain(modules.iter().map(|m| ("--lua-module", m.as_path())));
    for (option, path) in given {
        let f = read_one(option, path)?;
        if files.iter().any(|o| o.key == f.key) {
            return Err(format!(
                "{option} {}: a second file named {} (the ConfigMap's keys are file names)",
                path.display(),
                f.key
            ));
        }
        total += f.text.len() as u64;
        if total > CONFIG_MAP_MAX {
            return Err(format!(
                "{option} {}: the ConfigMap's files come to over its limit of {CONFIG_MAP_MAX} \
                 bytes (1 MiB) in all",
                path.display()
            ));
        }
        files.push(f);
    }
    Ok(files)
}

fn read_one(option: &str, file: &Path) -> Result<LuaFile, String> {
    let shown = file.display();
    let meta =
        std::fs::metadata(file).map_err(|e| format!("{option} {shown}: cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{option} {shown}: not a regular file"));
    }
    if meta.len() > CONFIG_MAP_MAX {
        return Err(format!(
            "{option} {shown}: {} bytes, over a ConfigMap's limit of {CONFIG_MAP_MAX} bytes (1 MiB)",
            meta.len()
        ));
    }
    let key = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    crate::k8s_check::config_map_key(option, &key)?;
    let bytes =
        std::fs::read(file).map_err(|e| format!("{option} {shown}: cannot read it: {e}"))?;
    if bytes.len() as u64 > CONFIG_MAP_MAX {
        return Err(format!(
            "{option} {shown}: over a ConfigMap's limit of {CONFIG_MAP_MAX} bytes (1 MiB)"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{option} {shown}: not UTF-8 (byte {}): a ConfigMap's data holds UTF-8 text",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(LuaFile { key, text })
}

/// Modules of LuaJIT and of sysbench's API, which need no file.
const BUILT_IN: [&str; 12] = [
    "ffi",
    "jit",
    "bit",
    "string",
    "table",
    "math",
    "io",
    "os",
    "debug",
    "coroutine",
    "package",
    "sysbench",
];

/// A warning for each module a file `require`s that no file of the ConfigMap answers, naming
/// where a local copy is (`script`'s directory or `sysbench_dir`, sysbench's script directory).
pub fn unanswered_requires(files: &[LuaFile], script: &Path, sysbench_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = files.iter().flat_map(|f| required(&f.text)).collect();
    names.sort();
    names.dedup();
    let local_dirs = [
        script.parent().map(Path::to_path_buf).unwrap_or_default(),
        sysbench_dir.to_path_buf(),
    ];
    names
        .into_iter()
        .filter(|n| !BUILT_IN.contains(&n.split('.').next().unwrap_or(n)))
        .filter(|n| !files.iter().any(|f| f.key == format!("{n}.lua")))
        .map(|n| {
            let copy = (local_dirs.iter())
                .map(|d| d.join(format!("{n}.lua")))
                .find(|p| p.is_file());
            let fix = match copy {
                Some(p) => format!("add it: --lua-module {}", p.display()),
                None => format!("add its file {n}.lua with --lua-module, or put it in the image"),
            };
            format!(
                "the script requires \"{n}\", which the ConfigMap does not hold, so a pod finds \
                 it only if its image has it on LUA_PATH: {fix}"
            )
        })
        .collect()
}

/// The module names of `require "name"`, `require 'name'` and `require("name")` in `text`.
fn required(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("require") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == ':') {
            continue;
        }
        let rest = text[i + "require".len()..].trim_start();
        let rest = rest.strip_prefix('(').map_or(rest, str::trim_start);
        let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let Some((name, _)) = rest[1..].split_once(q) else {
            continue;
        };
        let plain = !name.is_empty()
            && (name.chars()).all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if plain {
            out.push(name.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_are_found_in_their_three_spellings() {
        let t = "require(\"oltp_common\")\nlocal x = require 'a.b'\nrequire \"c\"\nffi = require(\"ffi\")\nx:require('no') prerequire('no')";
        assert_eq!(required(t), ["oltp_common", "a.b", "c", "ffi"]);
    }

    #[test]
    fn a_module_in_the_config_map_answers_its_require() {
        let files = vec![
            LuaFile {
                key: "s.lua".into(),
                text: "require(\"m\") require(\"ffi\") require(\"gone\")".into(),
            },
            LuaFile {
                key: "m.lua".into(),
                text: String::new(),
            },
        ];
        let w = unanswered_requires(
            &files,
            Path::new("/nonexistent/s.lua"),
            Path::new("/nonexistent"),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("\"gone\""), "{w:?}");
    }
}
