//! sysbench 1.0.20's C symbols, exported from the binary so that a script reaches them through
//! `ffi.C` as under sysbench (the cli's `build.rs` puts them in the dynamic symbol table; their
//! types are declared by `prelude.lua`'s `ffi.cdef`, as sysbench's internal modules declare
//! them). Each acts on the calling thread's state — its counters, its event loop, its random
//! stream — found through thread-locals that the thread sets when it makes its Lua state and
//! when its event loop starts:
//!
//! - `sb_counter_inc(tid, type)`: the report line sysbench's counter feeds (other, read,
//!   write, events, ignored errors, reconnects); `sb_event_start/stop`, `sb_more_events`: a
//!   script's own `thread_run` loop, timed and limited as the built-in one;
//! - `sb_rand_*`: the thread's `sysbench.rand` stream; `sb_histogram_*`: a histogram owned by
//!   the script; `sb_print_test_options`: the script's options as `help` prints them;
//!   `sb_lua_set_test_args`: accepted, as pgrig reads `sysbench.cmdline.options` itself;
//! - `db_*`: sysbench's SQL driver API works on its own C structures, which pgrig's
//!   connections are not: each prints a FATAL line naming itself and ends the process with
//!   status 1 (scripts reach SQL through `sysbench.sql`, which works).
//!
//! No function unwinds into LuaJIT: each catches panics.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use pgrig_workloads::sysbench::histogram::Slots;
use pgrig_workloads::sysbench::rand::Unique;

use crate::rand;
use crate::stats::Stats;

/// Whether the thread's loop runs another event.
pub type MoreEvents = Box<dyn FnMut() -> bool>;

thread_local! {
    static STATS: RefCell<Option<(Arc<Stats>, Arc<Unique>)>> = const { RefCell::new(None) };
    static MORE: RefCell<Option<MoreEvents>> = const { RefCell::new(None) };
    static EVENT_START: Cell<Option<Instant>> = const { Cell::new(None) };
    /// events ended through `sb_event_stop` and the seconds spent in them
    static DONE: Cell<(u64, f64)> = const { Cell::new((0, 0.0)) };
    static OPTIONS: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The thread's counters and the run's unique sequence (called when it makes its state).
pub fn enter(stats: Arc<Stats>, unique: Arc<Unique>) {
    STATS.with(|s| *s.borrow_mut() = Some((stats, unique)));
}

/// The thread's event loop starts: `more` answers `sb_more_events`.
pub fn start_loop(more: MoreEvents) {
    MORE.with(|m| *m.borrow_mut() = Some(more));
    DONE.with(|d| d.set((0, 0.0)));
}

/// The loop ended: the events `sb_event_stop` counted and their seconds.
pub fn end_loop() -> (u64, f64) {
    MORE.with(|m| *m.borrow_mut() = None);
    DONE.with(|d| d.replace((0, 0.0)))
}

/// What `sb_print_test_options` prints (the script's options, as `help` lists them).
pub fn set_test_options(text: String) {
    OPTIONS.with(|o| *o.borrow_mut() = text);
}

fn with_stats(f: impl FnOnce(&Stats, &Unique)) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        STATS.with(|s| {
            if let Some((st, u)) = s.borrow().as_ref() {
                f(st, u)
            }
        })
    }));
}

/// sysbench's `sb_counter_type` (`sb_counter_type_t` in its C): OTHER, READ, WRITE, EVENT
/// (the Lua declaration's `SB_CNT_TRX`), ERROR, RECONNECT.
#[no_mangle]
pub extern "C" fn sb_counter_inc(_thread_id: c_int, kind: c_int) {
    with_stats(|s, _| match kind {
        0 => s.other.add(1),
        1 => s.reads.add(1),
        2 => s.writes.add(1),
        3 => s.count_event(),
        4 => s.errors.add(1),
        5 => s.reconnects.add(1),
        _ => {}
    })
}

#[no_mangle]
pub extern "C" fn sb_event_start(_thread_id: c_int) {
    EVENT_START.with(|e| e.set(Some(Instant::now())));
}

#[no_mangle]
pub extern "C" fn sb_event_stop(_thread_id: c_int) {
    let Some(t0) = EVENT_START.with(|e| e.take()) else {
        return;
    };
    let ns = t0.elapsed().as_nanos() as u64;
    with_stats(|s, _| s.event(ns));
    DONE.with(|d| {
        let (n, busy) = d.get();
        d.set((n + 1, busy + ns as f64 / 1e9));
    });
}

#[no_mangle]
pub extern "C" fn sb_more_events(_thread_id: c_int) -> bool {
    catch_unwind(AssertUnwindSafe(|| {
        MORE.with(|m| m.borrow_mut().as_mut().is_some_and(|f| f()))
    }))
    .unwrap_or(false)
}

fn rand_value(kind: usize, a: u32, b: u32) -> u32 {
    catch_unwind(AssertUnwindSafe(|| {
        rand::with_current(|r| r.value(kind, a, b))
    }))
    .ok()
    .flatten()
    .unwrap_or(0)
}

#[no_mangle]
pub extern "C" fn sb_rand_default(a: u32, b: u32) -> u32 {
    rand_value(0, a, b)
}

#[no_mangle]
pub extern "C" fn sb_rand_uniform(a: u32, b: u32) -> u32 {
    rand_value(1, a, b)
}

#[no_mangle]
pub extern "C" fn sb_rand_gaussian(a: u32, b: u32) -> u32 {
    rand_value(2, a, b)
}

#[no_mangle]
pub extern "C" fn sb_rand_special(a: u32, b: u32) -> u32 {
    rand_value(3, a, b)
}

#[no_mangle]
pub extern "C" fn sb_rand_pareto(a: u32, b: u32) -> u32 {
    rand_value(4, a, b)
}

#[no_mangle]
pub extern "C" fn sb_rand_zipfian(a: u32, b: u32) -> u32 {
    rand_value(5, a, b)
}

#[no_mangle]
pub extern "C" fn sb_rand_uniform_uint64() -> u64 {
    catch_unwind(|| rand::with_current(|r| r.next_u64()))
        .ok()
        .flatten()
        .unwrap_or(0)
}

#[no_mangle]
pub extern "C" fn sb_rand_uniform_double() -> f64 {
    catch_unwind(|| rand::with_current(|r| r.double()))
        .ok()
        .flatten()
        .unwrap_or(0.0)
}

#[no_mangle]
pub extern "C" fn sb_rand_unique() -> u32 {
    let mut v = 0;
    with_stats(|_, u| v = u.next());
    v
}

/// `fmt`'s `#` and `@` filled in, written to `buf` (as many bytes as `fmt` has, no NUL).
///
/// # Safety
/// `fmt` is a NUL-terminated string and `buf` holds at least as many bytes, as sysbench's
/// own contract (its Lua wrapper passes a buffer of the template's length).
#[no_mangle]
pub unsafe extern "C" fn sb_rand_str(fmt: *const c_char, buf: *mut c_char) {
    if fmt.is_null() || buf.is_null() {
        return;
    }
    // SAFETY: per the function's contract.
    let tmpl = unsafe { CStr::from_ptr(fmt) }.to_bytes();
    let mut out = Vec::with_capacity(tmpl.len());
    let filled = catch_unwind(AssertUnwindSafe(|| {
        rand::with_current(|r| r.string_into(tmpl, &mut out))
    }));
    if matches!(filled, Ok(Some(()))) && out.len() == tmpl.len() {
        // SAFETY: `buf` holds `tmpl.len()` bytes, per the contract.
        unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), buf.cast(), out.len()) };
    }
}

/// A histogram for the script (`NULL` for a size outside 1..=1000000, as `sysbench.histogram.new`
/// refuses it).
#[no_mangle]
pub extern "C" fn sb_histogram_new(size: usize, range_min: f64, range_max: f64) -> *mut Slots {
    if !(1..=1_000_000).contains(&size) {
        return std::ptr::null_mut();
    }
    catch_unwind(|| Box::into_raw(Box::new(Slots::with_range(size, range_min, range_max))))
        .unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `h` is `NULL` or a pointer `sb_histogram_new` returned and not yet deleted.
#[no_mangle]
pub unsafe extern "C" fn sb_histogram_delete(h: *mut Slots) {
    if !h.is_null() {
        // SAFETY: per the function's contract.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// # Safety
/// As [`sb_histogram_delete`]; a live histogram.
#[no_mangle]
pub unsafe extern "C" fn sb_histogram_update(h: *mut Slots, value: f64) {
    // SAFETY: per the function's contract; the script's thread alone uses it.
    if let Some(h) = unsafe { h.as_mut() } {
        let _ = catch_unwind(AssertUnwindSafe(|| h.add(value)));
    }
}

/// # Safety
/// As [`sb_histogram_update`].
#[no_mangle]
pub unsafe extern "C" fn sb_histogram_print(h: *mut Slots) {
    // SAFETY: per the function's contract.
    if let Some(h) = unsafe { h.as_ref() } {
        if let Ok(text) = catch_unwind(AssertUnwindSafe(|| h.render())) {
            print!("{text}");
        }
    }
}

/// Accepted and ignored (0: success): pgrig reads a script's `sysbench.cmdline.options`
/// itself, where sysbench registers them with its C option parser through this call.
#[no_mangle]
pub extern "C" fn sb_lua_set_test_args(_args: *mut c_void, _len: usize) -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn sb_print_test_options() {
    let text = OPTIONS.with(|o| o.borrow().clone());
    print!("{text}");
}

/// A `db_*` call: sysbench's SQL driver API, which pgrig's connections do not implement.
fn unsupported(name: &str) -> ! {
    println!(
        "FATAL: ffi.C.{name}() is sysbench's C driver API, which pgrig does not provide: \
         use sysbench.sql (drv:connect(), con:query(), con:prepare()) instead"
    );
    std::process::exit(1)
}

macro_rules! db_unsupported {
    ($($name:ident),* $(,)?) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name() -> ! {
                unsupported(stringify!($name))
            }
        )*
        /// The `db_*` functions' names, in [`addresses`]' order after the others.
        pub const DB_FUNCTIONS: &[&str] = &[$(stringify!($name)),*];
        fn db_addresses() -> Vec<*const c_void> {
            vec![$($name as *const c_void),*]
        }
    };
}

db_unsupported!(
    db_create,
    db_destroy,
    db_connection_create,
    db_connection_close,
    db_connection_reconnect,
    db_connection_free,
    db_bulk_insert_init,
    db_bulk_insert_next,
    db_bulk_insert_done,
    db_query,
    db_fetch_row,
    db_prepare,
    db_bind_param,
    db_bind_result,
    db_execute,
    db_close,
    db_free_results,
);

/// Every exported function's address: taken by each new state, so that the linker keeps them
/// all (nothing else in the binary calls them).
pub fn addresses() -> Vec<*const c_void> {
    type P = *const c_void;
    let mut v: Vec<P> = vec![
        sb_counter_inc as P,
        sb_event_start as P,
        sb_event_stop as P,
        sb_more_events as P,
        sb_rand_default as P,
        sb_rand_uniform as P,
        sb_rand_gaussian as P,
        sb_rand_special as P,
        sb_rand_pareto as P,
        sb_rand_zipfian as P,
        sb_rand_uniform_uint64 as P,
        sb_rand_uniform_double as P,
        sb_rand_unique as P,
        sb_rand_str as P,
        sb_histogram_new as P,
        sb_histogram_delete as P,
        sb_histogram_update as P,
        sb_histogram_print as P,
        sb_lua_set_test_args as P,
        sb_print_test_options as P,
    ];
    v.extend(db_addresses());
    v
}
