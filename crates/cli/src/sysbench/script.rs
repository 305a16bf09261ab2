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

/// The files `resolve` looked at for `arg` (for the error when none answered): the argument
/// itself, and for a bare name each template with the name put in.
pub fn searched(arg: &str, lua_path: Option<&str>) -> Vec<String> {
    let mut out = vec![arg.to_string()];
    if !arg.contains('/') {
        out.extend(templates(lua_path).iter().map(|t| t.replace('?', arg)));
    }
    out.dedup();
    out
}

/// What a missing script's error adds after sysbench's `FATAL: Cannot find benchmark` line
/// when the command line is a sysbench 0.5 one (`legacy`: its options, or a 0.5 script's
/// name; it already gets a hint) or names `oltp_legacy/`: the places searched, and where
/// sysbench 0.5's scripts come from. Any other command line keeps sysbench's output alone,
/// byte for byte (scripts and sysbench's own tests compare it).
pub fn missing_note(arg: &str, legacy: bool, lua_path: Option<&str>) -> String {
    if !legacy && !arg.contains("oltp_legacy") {
        return String::new();
    }
    format!(
        "NOTE: no file answered at: {}\n{LEGACY_NOTE}",
        searched(arg, lua_path).join(", ")
    )
}

/// Where sysbench 0.5's scripts are: not in Debian's `sysbench` package, but in sysbench
/// 1.0.20's source tree.
const LEGACY_NOTE: &str = "NOTE: sysbench 0.5's scripts (oltp_legacy/) are not installed by \
Debian's sysbench package; they are in sysbench 1.0.20's source tree, tests/include/oltp_legacy/ \
(https://github.com/akopytov/sysbench/tree/1.0.20/tests/include/oltp_legacy): give their path, \
e.g. --test=./oltp_legacy/oltp.lua\n";

/// Whether `path` is a file (a directory is not a script).
pub fn is_file(path: &str) -> bool {
    Path::new(path).is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_0_5_script_names_the_places_searched_and_others_keep_sysbenchs_line() {
        assert_eq!(missing_note("run", false, None), "");
        assert_eq!(missing_note("/nowhere/x.lua", false, None), "");
        assert!(missing_note("oltp.lua", true, Some("/opt/?.lua")).starts_with(
            "NOTE: no file answered at: oltp.lua, /opt/oltp.lua.lua, ./oltp.lua.lua, /usr/share/sysbench/oltp.lua.lua\n"
        ));
        let legacy = missing_note("oltp_legacy/oltp.lua", false, None);
        assert!(legacy.starts_with("NOTE: no file answered at: oltp_legacy/oltp.lua\n"));
        assert!(legacy.contains("tests/include/oltp_legacy"), "{legacy}");
    }

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
