//! What the test argument names, the way sysbench 1.0.20 finds a test: a bundled test's name,
//! or a Lua file (a path, or `NAME` or `NAME.lua` in the current directory). A file whose name is a bundled
//! test's (`/usr/share/sysbench/oltp_point_select.lua`, `./oltp_read_only.lua`) is that test,
//! run natively; any other Lua file is a custom script, which pgrig does not run (yet).

use std::path::Path;

/// What the test argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Script {
    /// A bundled test, by its name.
    Bundled(String),
    /// A Lua file that is no bundled test.
    Custom(String),
    /// Nothing sysbench would find.
    Missing,
}

/// Resolves `arg` with `bundled` telling the bundled test names; `exists` tells whether a file
/// exists (the file system, or a test's stand-in).
pub fn resolve(arg: &str, bundled: &dyn Fn(&str) -> bool, exists: &dyn Fn(&str) -> bool) -> Script {
    if bundled(arg) {
        return Script::Bundled(arg.to_string());
    }
    let path_like = arg.contains('/') || arg.ends_with(".lua");
    // a bare name: the file NAME, else NAME.lua, in the current directory
    let candidates = if path_like {
        vec![arg.to_string()]
    } else {
        vec![arg.to_string(), format!("{arg}.lua")]
    };
    let Some(file) = candidates.into_iter().find(|f| exists(f)) else {
        return Script::Missing;
    };
    let stem = Path::new(&file)
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.strip_suffix(".lua").unwrap_or(n))
        .unwrap_or_default();
    if bundled(stem) {
        Script::Bundled(stem.to_string())
    } else {
        Script::Custom(file)
    }
}

/// Whether `path` is a file (a directory is not a script).
pub fn is_file(path: &str) -> bool {
    Path::new(path).is_file()
}

/// The message for a custom script (after `FATAL: `).
pub fn custom_message(file: &str, names: &[&str]) -> String {
    format!(
        "custom Lua scripts are not supported (yet): '{file}' is not one of sysbench's bundled tests, which pgrig runs natively by name or path ({})",
        names.join(", ")
    )
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
            "mine.lua",
            "/tmp/t.lua",
            "plain",
        ]
        .contains(&f)
    }

    #[test]
    fn bundled_tests_by_name_and_by_path() {
        let r = |a: &str| resolve(a, &bundled, &exists);
        assert_eq!(
            r("oltp_read_only"),
            Script::Bundled("oltp_read_only".into())
        );
        assert_eq!(
            r("/usr/share/sysbench/oltp_point_select.lua"),
            Script::Bundled("oltp_point_select".into())
        );
        assert_eq!(
            r("./oltp_read_only.lua"),
            Script::Bundled("oltp_read_only".into())
        );
    }

    #[test]
    fn other_files_are_custom_and_missing_ones_missing() {
        let r = |a: &str| resolve(a, &bundled, &exists);
        assert_eq!(r("/tmp/t.lua"), Script::Custom("/tmp/t.lua".into()));
        assert_eq!(r("mine"), Script::Custom("mine.lua".into()));
        assert_eq!(r("mine.lua"), Script::Custom("mine.lua".into()));
        assert_eq!(r("plain"), Script::Custom("plain".into()));
        // sysbench does not look for NAME.lua in its script directory
        assert_eq!(r("oltp_point_select.lua"), Script::Missing);
        assert_eq!(r("/nowhere/oltp_read_only.lua"), Script::Missing);
        assert_eq!(r("nosuchtest"), Script::Missing);
    }
}
