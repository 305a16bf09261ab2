//! The hot calls from Lua into Rust, through LuaJIT's FFI: plain `extern "C"` functions whose
//! addresses the prelude casts to C function pointers (`R.ffi`: name → C type and address).
//! LuaJIT compiles FFI calls into its traces, where a call through the Lua C API (an mlua
//! function) ends the trace and costs a stack crossing with value conversions; sysbench's own
//! API is FFI calls for the same reason. A statement is thus: its parameters (`param_*`), then
//! `execute` or `query` — no Lua value crosses, nothing is allocated. The rare calls (connect,
//! prepare, close, errors) stay mlua methods of [`ConOwner`].
//!
//! Every function catches panics (a panic must not unwind into LuaJIT); the pointers are the
//! ones [`ConOwner`] and the rand state hand out, valid while their Lua owners live (a script
//! that forges a pointer can crash its process, as it can with `ffi` anyway).

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{IntoLuaMulti, LightUserData, Lua, Table, UserData, UserDataMethods, Value};

use crate::sql::LuaCon;

/// A status for a call that panicked: the prelude raises an internal error.
const PANICKED: i32 = -2;

fn guard<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

/// # Safety
/// `c` is a pointer a live [`ConOwner`] handed out (the prelude's only source of them).
unsafe fn con<'a>(c: *mut LuaCon) -> &'a mut LuaCon {
    // SAFETY: per the function's contract; Lua is single-threaded and these calls do not
    // re-enter Lua, so no other reference to the connection is live.
    unsafe { &mut *c }
}

/// # Safety
/// `p` points to `len` readable bytes (a Lua string, which LuaJIT passes as `const char *`).
unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: per the function's contract.
    unsafe { std::slice::from_raw_parts(p, len) }
}

unsafe extern "C" fn param_text(c: *mut LuaCon, s: *const u8, len: usize) {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out; `s` is a Lua string of `len` bytes.
    guard((), || unsafe { con(c).param_text(bytes(s, len)) })
}

unsafe extern "C" fn param_int(c: *mut LuaCon, v: f64) {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    guard((), || unsafe { con(c).param_int(v) })
}

unsafe extern "C" fn param_null(c: *mut LuaCon) {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    guard((), || unsafe { con(c).param_null() })
}

unsafe extern "C" fn execute(c: *mut LuaCon, stmt: i32) -> i32 {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    guard(PANICKED, || unsafe { con(c).execute(stmt.max(0) as usize) })
}

unsafe extern "C" fn query(c: *mut LuaCon, s: *const u8, len: usize) -> i32 {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out; `s` is a Lua string of `len` bytes.
    guard(PANICKED, || unsafe { con(c).query(bytes(s, len)) })
}

unsafe extern "C" fn nrows(c: *mut LuaCon) -> i32 {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    guard(0, || unsafe { con(c).rows.nrows() as i32 })
}

unsafe extern "C" fn nfields(c: *mut LuaCon) -> i32 {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    guard(0, || unsafe { con(c).rows.ncols().unwrap_or(0) as i32 })
}

/// Moves to the next row: its field count, or -1 past the last.
unsafe extern "C" fn fetch(c: *mut LuaCon) -> i32 {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    guard(-1, || unsafe {
        con(c).rows.advance().map_or(-1, |n| n as i32)
    })
}

/// Field `col` of the current row: its bytes, the length in `*len` (-1: NULL).
unsafe extern "C" fn field(c: *mut LuaCon, col: i32, len: *mut i32) -> *const u8 {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    let (p, n) = guard((std::ptr::null(), -1), || unsafe {
        match con(c).rows.field(col.max(0) as usize) {
            Some(b) => (b.as_ptr(), b.len() as i32),
            None => (std::ptr::null(), -1),
        }
    });
    if !len.is_null() {
        // SAFETY: the prelude passes its own `int[1]`.
        unsafe { *len = n };
    }
    p
}

unsafe extern "C" fn free_rows(c: *mut LuaCon) {
    // SAFETY: only the prelude calls this, with a connection a live [`ConOwner`] handed out.
    guard((), || unsafe { con(c).rows.free() })
}

/// Adds `name` → {C type, address} to `t`.
pub fn add(lua: &Lua, t: &Table, name: &str, ctype: &str, f: *const c_void) -> mlua::Result<()> {
    let entry = lua.create_table()?;
    entry.raw_set(1, ctype)?;
    entry.raw_set(2, LightUserData(f as *mut c_void))?;
    t.raw_set(name, entry)
}

/// The connection functions, for `R.ffi`.
pub fn connection_table(lua: &Lua, t: &Table) -> mlua::Result<()> {
    type Ptr = *const c_void;
    add(
        lua,
        t,
        "param_text",
        "void (*)(void *, const char *, size_t)",
        param_text as Ptr,
    )?;
    add(
        lua,
        t,
        "param_int",
        "void (*)(void *, double)",
        param_int as Ptr,
    )?;
    add(lua, t, "param_null", "void (*)(void *)", param_null as Ptr)?;
    add(lua, t, "execute", "int (*)(void *, int)", execute as Ptr)?;
    add(
        lua,
        t,
        "query",
        "int (*)(void *, const char *, size_t)",
        query as Ptr,
    )?;
    add(lua, t, "nrows", "int (*)(void *)", nrows as Ptr)?;
    add(lua, t, "nfields", "int (*)(void *)", nfields as Ptr)?;
    add(lua, t, "fetch", "int (*)(void *)", fetch as Ptr)?;
    add(
        lua,
        t,
        "field",
        "const char *(*)(void *, int, int *)",
        field as Ptr,
    )?;
    add(lua, t, "free_rows", "void (*)(void *)", free_rows as Ptr)
}

/// Owns a connection for Lua (`con.raw`); `con.p` is its pointer for the FFI calls.
pub struct ConOwner(*mut LuaCon);

impl ConOwner {
    pub fn new(c: LuaCon) -> ConOwner {
        ConOwner(Box::into_raw(Box::new(c)))
    }

    fn con(&mut self) -> &mut LuaCon {
        // SAFETY: the box lives as long as `self`; Lua is single-threaded and the methods
        // below are never called while an FFI call runs.
        unsafe { &mut *self.0 }
    }
}

impl Drop for ConOwner {
    fn drop(&mut self) {
        // SAFETY: created by `Box::into_raw` in `new`, dropped once.
        drop(unsafe { Box::from_raw(self.0) });
    }
}

impl UserData for ConOwner {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("ptr", |_, this, ()| Ok(LightUserData(this.0.cast())));
        m.add_method_mut("prepare", |_, this, sql: mlua::LuaString| {
            Ok(this.con().prepare(&sql.to_str()?))
        });
        m.add_method_mut("close_stmt", |_, this, id: usize| {
            this.con().close_stmt(id);
            Ok(())
        });
        m.add_method_mut("disconnect", |_, this, ()| {
            this.con().disconnect();
            Ok(())
        });
        m.add_method_mut("reconnect", |_, this, ()| Ok(this.con().reconnect().err()));
        // the last failure: errcode, SQLSTATE, message, the driver's lines
        m.add_method_mut("failure", |lua, this, ()| match this.con().take_failure() {
            Some(f) => (f.errcode, f.state, f.msg, f.lines).into_lua_multi(lua),
            None => Value::Nil.into_lua_multi(lua),
        });
    }
}
