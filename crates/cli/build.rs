//! Exports sysbench's C symbols (`pgrig_lua::exports`: `sb_counter_inc`, `sb_rand_*`, …) from
//! the `pgrig` binary's dynamic symbol table, so that a Lua script's `ffi.C.NAME` finds them as
//! it finds sysbench's: the linker's `--dynamic-list` names them (`ffi-exports.list`), and only
//! them, rather than `-rdynamic`'s every symbol.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let list = std::path::Path::new(&dir).join("ffi-exports.list");
    println!("cargo:rerun-if-changed=ffi-exports.list");
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rustc-link-arg-bins=-Wl,--dynamic-list={}",
        list.display()
    );
}
