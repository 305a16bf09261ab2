//! What the test argument names, the way sysbench 1.0.20 finds a test: a bundled test's name
//! (run natively, pgrig's fast path), else a Lua file — the argument itself when it is a file
//! (`/usr/share/sysbench/oltp_read_write.lua`, `./my.lua`, an executable script's path), else
//! the argument in `LUA_PATH`'s templates and sysbench's defaults (`./NAME.lua`, sysbench's
//! script directory). A file runs through the Lua runtime (`pgrig_lua`).

use std::path::Path;

/// What the test argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Script {
    /// A bundled test, by its name.
    Bundled(String),
    /// A Lua file.
    Custom(String),
    /// Nothing sysbench would find.
    Missing,
}

/// sysbench's tests that are not database tests (pgrig does not run them).
pub const OTHER_BUILT_IN: [&str; 5] = ["fileio", "cpu", "memory", "threads", "mutex"];

/// sysbench's own script directory (Debian's package), searched after `LUA_PATH`.
pub const SCRIPT_DIR: &str = "/usr/share/sysbench";

/// The places a name is looked for: `LUA_PATH`'s templates (`;;` stands for the defaults),
/// then the defaults `./?.lua` and sysbench's script directory.
pub fn templates(lua_path: Option<&str>) -> Vec<String> {
    let defaults = vec!["./?.lua".to_string(), format!("{SCRIPT_DIR}/?.lua")];
    let mut out: Vec<String> = Vec::new();
    if let Some(p) = lua_path {
        for t in p.split(';') {
            if t.is_empty() {
                out.extend(defaults.iter().cloned());
            } else {
                out.push(t.to_string());
            }
        }
    }
    out.extend(defaults);
    out
}

/// Resolves `arg` with `bundled` telling the bundled test names; `exists` tells whether a file
/// exists (the file system, or a test's stand-in); `lua_path` is `LUA_PATH`.
pub fn resolve(
    arg: &str,
    bundled: &dyn Fn(&str) -> bool,
    exists: &dyn Fn(&str) -> bool,
    lua_path: Option<&str>,
) -> Script {
    if bundled(arg) {
        return Script::Bundled(arg.to_string());
    }
    if exists(arg) {
        return Script::Custom(arg.to_string());
    }
    if arg.contains('/') {
        return Script::Missing;
    }
    templates(lua_path)
        .iter()
        .map(|t| t.replace('?', arg))
        .find(|f| exists(f))
        .map_or(Script::Missing, Script::Custom)
}

/// Whether `path` is a file (a directory is not a script).
pub fn is_file(path: &str) -> bool {
    Path::new(path).is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled(n: &str) -> bool {
        ["oltp_read_only", "oltp_point_select"].contains(&n)
    }

    fn exists(f: &str) -> bool {
        [
            "/usr/share/sysbench/oltp_point_select.lua",
            "./oltp_read_only.lua",
            "./mine.lua",
            "mine.lua",
            "/tmp/t.lua",
            "plain",
            "/inc/legacy/oltp.lua",
        ]
        .contains(&f)
    }

    #[test]
    fn bundled_names_are_native_and_paths_are_files() {
        let r = |a: &str| resolve(a, &bundled, &exists, None);
        assert_eq!(
            r("oltp_read_only"),
            Script::Bundled("oltp_read_only".into())
        );
        assert_eq!(
            r("/usr/share/sysbench/oltp_point_select.lua"),
            Script::Custom("/usr/share/sysbench/oltp_point_select.lua".into())
        );
        assert_eq!(
            r("./oltp_read_only.lua"),
            Script::Custom("./oltp_read_only.lua".into())
        );
    }

    #[test]
    fn names_are_looked_up_in_lua_path_then_the_defaults() {
        let r = |a: &str, p: Option<&str>| resolve(a, &bundled, &exists, p);
        assert_eq!(r("/tmp/t.lua", None), Script::Custom("/tmp/t.lua".into()));
        assert_eq!(r("mine", None), Script::Custom("./mine.lua".into()));
        assert_eq!(r("mine.lua", None), Script::Custom("mine.lua".into()));
        assert_eq!(r("plain", None), Script::Custom("plain".into()));
        assert_eq!(
            r("oltp", Some("/inc/legacy/?.lua")),
            Script::Custom("/inc/legacy/oltp.lua".into())
        );
        assert_eq!(r("oltp", None), Script::Missing);
        // NAME.lua is not NAME.lua.lua in the script directory
        assert_eq!(r("oltp_point_select.lua", None), Script::Missing);
        assert_eq!(r("/nowhere/oltp_read_only.lua", None), Script::Missing);
        assert_eq!(r("nosuchtest", None), Script::Missing);
    }
}
