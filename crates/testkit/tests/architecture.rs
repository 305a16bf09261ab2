//! `docs/architecture.md` held against the code: every crate has its section, every source file is
//! named in its crate's section, the crate graph block is the one `cargo metadata` gives (rewritten
//! by `UPDATE_ARCHITECTURE=1 cargo test -p pgrig-testkit --test architecture`), and every
//! repository path and `pgrig_…::` crate the document names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const DOC: &str = "docs/architecture.md";
const GRAPH_START: &str = "<!-- crate graph: generated from `cargo metadata` -->";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc() -> String {
    std::fs::read_to_string(root().join(DOC)).expect("read docs/architecture.md")
}

/// The spans between backticks, in order.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The crate names under `crates/`.
fn crate_dirs() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("read crates/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The text of `crates/NAME`'s section (`### \`crates/NAME\`` up to the next heading), plus every
/// `##` section whose heading names `crates/NAME/`.
fn crate_section(doc: &str, name: &str) -> Option<String> {
    let heading = format!("### `crates/{name}`");
    let mut text = String::new();
    let mut found = false;
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with('#') {
            let own = line.trim_end() == heading;
            let extra = line.starts_with("## ") && line.contains(&format!("`crates/{name}/"));
            found |= own;
            inside = own || extra;
        }
        if inside {
            text.push_str(line);
            text.push('\n');
        }
    }
    found.then_some(text)
}

/// Every `.rs` file under `dir`, as module paths relative to it (`args/finish`, `rt/mod`).
fn rust_files(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, &format!("{prefix}{name}/"), out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            out.push(format!("{prefix}{stem}"));
        }
    }
}

/// The module path of a file: `a/b` for `a/b.rs`, `a` for `a/mod.rs`; empty for the crate root.
fn module_segments(file: &str) -> Vec<String> {
    let mut segs: Vec<String> = file.split('/').map(str::to_string).collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    segs
}

/// Whether a backticked span names the module: some leading part of the span (`::`- or
/// `/`-separated, after any `crates/NAME/src/`) equals a trailing part of the module path, so
/// `rt::alarm`, `executor::next_generation` and `crates/wire/src/rt/executor.rs` all name
/// `rt/executor` or `rt/alarm`.
fn span_names(span: &str, crate_name: &str, module: &[String]) -> bool {
    let mut s = span.trim();
    for prefix in [format!("crates/{crate_name}/src/"), "src/".to_string()] {
        if let Some(rest) = s.strip_prefix(prefix.as_str()) {
            s = rest;
        }
    }
    let s = s.split(['(', ' ']).next().unwrap_or_default();
    let s = s.strip_suffix(".rs").unwrap_or(s).replace("::", "/");
    let s = s.strip_suffix("/mod").unwrap_or(&s);
    let segs: Vec<&str> = s.split('/').collect();
    (1..=segs.len().min(module.len())).any(|n| {
        let tail = &module[module.len() - n..];
        segs[..n].iter().zip(tail).all(|(a, b)| *a == b.as_str())
    })
}

#[test]
fn every_crate_and_source_file_is_named_in_its_section() {
    let doc = doc();
    let mut missing_sections = Vec::new();
    let mut missing_files = Vec::new();
    for name in crate_dirs() {
        let Some(section) = crate_section(&doc, &name) else {
            missing_sections.push(format!("### `crates/{name}`"));
            continue;
        };
        let spans = backticked(&section);
        let mut files = Vec::new();
        rust_files(
            &root().join("crates").join(&name).join("src"),
            "",
            &mut files,
        );
        files.sort();
        for file in files {
            let module = module_segments(&file);
            if module.is_empty() {
                continue;
            }
            if !spans.iter().any(|s| span_names(s, &name, &module)) {
                missing_files.push(format!("crates/{name}/src/{file}.rs"));
            }
        }
    }
    assert!(
        missing_sections.is_empty() && missing_files.is_empty(),
        "{DOC} disagrees with the code.\nsections missing ({}):\n  {}\nfiles not named (in backticks: \
         module name or path) in their crate's section ({}):\n  {}\n",
        missing_sections.len(),
        missing_sections.join("\n  "),
        missing_files.len(),
        missing_files.join("\n  ")
    );
}

/// Workspace members and their normal dependencies on other members, from `cargo metadata`.
fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str())
        .map(str::to_string)
        .collect();
    let mut graph = BTreeMap::new();
    for p in packages {
        let deps = p["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(*d))
            .map(str::to_string)
            .collect();
        graph.insert(p["name"].as_str().unwrap_or_default().to_string(), deps);
    }
    graph
}

/// The graph as lines `crate → deps`, each crate above every crate it depends on (ties by name).
fn graph_block(graph: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut depth: BTreeMap<&str, usize> = BTreeMap::new();
    fn height<'a>(
        n: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        memo: &mut BTreeMap<&'a str, usize>,
    ) -> usize {
        if let Some(h) = memo.get(n) {
            return *h;
        }
        let h = g[n]
            .iter()
            .map(|d| 1 + height(d, g, memo))
            .max()
            .unwrap_or(0);
        memo.insert(n, h);
        h
    }
    let mut order: Vec<&str> = graph.keys().map(String::as_str).collect();
    for n in &order {
        height(n, graph, &mut depth);
    }
    order.sort_by_key(|n| (std::cmp::Reverse(depth[n]), *n));
    let width = order.iter().map(|n| n.len()).max().unwrap_or(0);
    let mut block = String::from("```\n");
    for n in order {
        let deps: Vec<&str> = graph[n].iter().map(String::as_str).collect();
        let deps = if deps.is_empty() {
            "(none)".to_string()
        } else {
            deps.join(", ")
        };
        block.push_str(&format!("{n:width$} → {deps}\n"));
    }
    block.push_str("```\n");
    block
}

#[test]
fn crate_graph_block_is_cargo_metadata_graph() {
    let doc = doc();
    let expected = graph_block(&workspace_graph());
    let start = doc.find(GRAPH_START).map(|i| i + GRAPH_START.len() + 1);
    let start = start.unwrap_or_else(|| panic!("{DOC}: no line `{GRAPH_START}`"));
    let len = doc[start..]
        .match_indices("```\n")
        .nth(1)
        .map(|(i, _)| i + 4)
        .unwrap_or_else(|| panic!("{DOC}: no ``` block after `{GRAPH_START}`"));
    let actual = &doc[start..start + len];
    if actual != expected && std::env::var_os("UPDATE_ARCHITECTURE").is_some() {
        let updated = format!("{}{expected}{}", &doc[..start], &doc[start + len..]);
        std::fs::write(root().join(DOC), updated).expect("rewrite docs/architecture.md");
        return;
    }
    let only = |a: &str, b: &str| -> Vec<String> {
        a.lines()
            .filter(|l| !b.lines().any(|m| m == *l))
            .map(|l| format!("  {l}\n"))
            .collect()
    };
    assert!(
        actual == expected,
        "{DOC}'s crate graph is not `cargo metadata`'s (rerun with UPDATE_ARCHITECTURE=1 to \
         rewrite it, then review the diff)\nlines only in the document:\n{}lines only in cargo \
         metadata's:\n{}--- document\n{actual}--- cargo metadata\n{expected}",
        only(actual, &expected).concat(),
        only(&expected, actual).concat()
    );
}

#[test]
fn every_repository_path_and_crate_named_exists() {
    let doc = doc();
    let roots = ["crates/", "docs/", "bench/", ".ci/", "examples/"];
    let crates = crate_dirs();
    let mut missing: Vec<String> = Vec::new();
    for span in backticked(&doc) {
        let path = span.split([' ', ':']).next().unwrap_or_default();
        if path.contains('*') {
            continue;
        }
        if roots.iter().any(|r| path.starts_with(r)) && !root().join(path).exists() {
            missing.push(format!("path `{path}`"));
        }
        // `NAME/src/…`, `NAME/tests/…`: a path inside `crates/NAME`
        let in_crate = crates.iter().any(|c| {
            ["src/", "tests/", "benches/", "examples/"]
                .iter()
                .any(|d| path.starts_with(&format!("{c}/{d}")))
        });
        if in_crate && !root().join("crates").join(path).exists() {
            missing.push(format!("path `{path}` (under crates/)"));
        }
    }
    let members: BTreeSet<String> = workspace_graph().into_keys().collect();
    for (i, _) in doc.match_indices("pgrig_") {
        let name: String = doc[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if doc[i + name.len()..].starts_with("::") && !members.contains(&name.replace('_', "-")) {
            missing.push(format!("crate `{name}::`"));
        }
    }
    missing.dedup();
    assert!(
        missing.is_empty(),
        "{DOC} names what does not exist ({}):\n  {}\n",
        missing.len(),
        missing.join("\n  ")
    );
}
