//! `sysbench.rand`: each Lua state's own stream (seeded as sysbench seeds the thread the state
//! belongs to: `pgrig_workloads::sysbench::seeding`) with sysbench's distributions from
//! `pgrig_workloads::sysbench::rand`, the `#`/`@` string templates, and the run-wide
//! `unique()` sequence. The distributions and `string()` are FFI calls (`ffi.rs` says why).

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Arc;

use mlua::{LightUserData, Lua, Table};
use pgrig_workloads::sysbench::rand::{Dist, RandType, Rng, Unique};

use crate::invocation::{Invocation, OptValue};

/// The distributions' parameters (`--rand-spec-*`, `--rand-pareto-h`, `--rand-zipfian-exp`).
#[derive(Clone, Debug)]
pub struct RandParams {
    pub default: RandType,
    pub iter: u32,
    pub pct: u32,
    pub res: u32,
    pub pareto_h: f64,
    pub zipf_exp: f64,
    /// `--percentile` is not 0: an event's end takes a draw (sysbench's latency histogram)
    pub event_draw: bool,
}

impl RandParams {
    /// From the invocation's general options (sysbench's defaults when absent).
    pub fn of(inv: &Invocation) -> RandParams {
        let num = |name: &str, d: f64| {
            inv.general
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| match v {
                    OptValue::Int(i) => Some(*i as f64),
                    OptValue::Str(s) => s.parse().ok(),
                    OptValue::Bool(_) => None,
                })
                .unwrap_or(d)
        };
        RandParams {
            default: RandType::parse(&inv.rand_type).unwrap_or(RandType::Special),
            iter: num("rand_spec_iter", 12.0) as u32,
            pct: num("rand_spec_pct", 1.0) as u32,
            res: num("rand_spec_res", 75.0) as u32,
            pareto_h: num("rand_pareto_h", 0.2),
            zipf_exp: num("rand_zipfian_exp", 0.8),
            event_draw: inv.percentile > 0,
        }
    }

    fn dist(&self, kind: RandType) -> Dist {
        Dist::new(
            kind,
            self.iter,
            self.pct,
            self.res,
            self.pareto_h,
            self.zipf_exp,
        )
    }
}

/// Lua numbers as sysbench's `uint32_t` arguments.
fn u32_of(x: f64) -> u32 {
    x as i64 as u32
}

/// The distributions in the order of their FFI `kind` numbers (the prelude's `KINDS`).
const KINDS: [(&str, Option<RandType>); 6] = [
    ("default", None),
    ("uniform", Some(RandType::Uniform)),
    ("gaussian", Some(RandType::Gaussian)),
    ("special", Some(RandType::Special)),
    ("pareto", Some(RandType::Pareto)),
    ("zipfian", Some(RandType::Zipfian)),
];

/// A state's stream, its distributions and the buffer `string()` writes into.
pub struct RandState {
    rng: Rng,
    dists: Vec<Dist>,
    buf: Vec<u8>,
    event_draw: bool,
}

impl RandState {
    /// sysbench's `sb_rand_<kind>(a, b)` for FFI kind `kind` (0: `default`, then `uniform`,
    /// `gaussian`, `special`, `pareto`, `zipfian`).
    pub fn value(&mut self, kind: usize, a: u32, b: u32) -> u32 {
        let d = &self.dists[kind.min(KINDS.len() - 1)];
        d.default_value(&mut self.rng, a, b)
    }

    /// `tmpl` with its `#`/`@` filled in, into `out`.
    pub fn string_into(&mut self, tmpl: &[u8], out: &mut Vec<u8>) {
        self.rng.string_into(tmpl, out)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    pub fn double(&mut self) -> f64 {
        self.rng.double()
    }

    /// The draw sysbench takes when an event ends (`sb_event_stop`: its latency histogram's,
    /// unless `--percentile=0`).
    pub fn end_event(&mut self) {
        if self.event_draw {
            self.rng.next_u64();
        }
    }
}

thread_local! {
    /// The stream of the state this thread made last (a thread runs one state at a time), for
    /// sysbench's exported `sb_rand_*` symbols (`exports.rs`).
    static CURRENT: std::cell::RefCell<Option<Rc<Shared>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` on this thread's stream; `None` on a thread without a Lua state.
pub fn with_current<T>(f: impl FnOnce(&mut RandState) -> T) -> Option<T> {
    let r = CURRENT.with(|c| c.borrow().clone())?;
    Some(f(r.get()))
}

/// The state shared by the mlua natives and the FFI calls (which get its address). Lua is
/// single-threaded and neither kind of call re-enters the other, so accesses never overlap.
struct Shared(UnsafeCell<RandState>);

impl Shared {
    #[allow(clippy::mut_from_ref)]
    fn get(&self) -> &mut RandState {
        // SAFETY: see the type's comment: one access at a time.
        unsafe { &mut *self.0.get() }
    }
}

/// `sysbench.rand.<kind>(a, b)` for FFI kind `kind`.
unsafe extern "C" fn value(r: *mut RandState, kind: i32, a: f64, b: f64) -> f64 {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `r` is the address the prelude got from `table`, owned by the registry.
        let r = unsafe { &mut *r };
        let d = &r.dists[(kind.max(0) as usize).min(KINDS.len() - 1)];
        f64::from(d.default_value(&mut r.rng, u32_of(a), u32_of(b)))
    }))
    .unwrap_or(0.0)
}

/// `sysbench.rand.uniform_uint64()`: the next 64 bits (a `uint64_t` cdata in Lua, as in
/// sysbench).
///
/// # Safety
/// Only the prelude calls this, with the address it got from `table`.
unsafe extern "C" fn next_u64(r: *mut RandState) -> u64 {
    // SAFETY: as in `value`.
    let r = unsafe { &mut *r };
    r.rng.next_u64()
}

/// `sysbench.rand.string(tmpl)`: the string (as long as the template) in the state's buffer.
unsafe extern "C" fn string(r: *mut RandState, tmpl: *const u8, len: usize) -> *const u8 {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as in `value`; `tmpl` is a Lua string of `len` bytes.
        let r = unsafe { &mut *r };
        let t: &[u8] = if tmpl.is_null() || len == 0 {
            &[]
        } else {
            // SAFETY: the prelude passes a Lua string of `len` bytes.
            unsafe { std::slice::from_raw_parts(tmpl, len) }
        };
        r.buf.clear();
        r.rng.string_into(t, &mut r.buf);
        r.buf.as_ptr()
    }))
    .unwrap_or(std::ptr::null())
}

/// The `sysbench.rand` table for a state with stream `rng`; the FFI entry points and the
/// state's address go into `ffi` (`rand_value`, `rand_string`, `rand_state`). The state is
/// kept alive by the Lua registry for the state's lifetime.
pub fn table(
    lua: &Lua,
    p: &RandParams,
    rng: Rng,
    unique: Arc<Unique>,
    ffi: &Table,
) -> mlua::Result<Table> {
    let dists = KINDS
        .iter()
        .map(|(_, k)| p.dist(k.unwrap_or(p.default)))
        .collect();
    let shared = Rc::new(Shared(UnsafeCell::new(RandState {
        rng,
        dists,
        buf: Vec::with_capacity(256),
        event_draw: p.event_draw,
    })));
    CURRENT.with(|c| *c.borrow_mut() = Some(shared.clone()));
    let t = lua.create_table()?;
    type Ptr = *const std::ffi::c_void;
    crate::ffi::add(
        lua,
        ffi,
        "rand_value",
        "double (*)(void *, int, double, double)",
        value as Ptr,
    )?;
    crate::ffi::add(
        lua,
        ffi,
        "rand_string",
        "const char *(*)(void *, const char *, size_t)",
        string as Ptr,
    )?;
    crate::ffi::add(
        lua,
        ffi,
        "rand_u64",
        "uint64_t (*)(void *)",
        next_u64 as Ptr,
    )?;
    ffi.raw_set("rand_state", LightUserData(shared.0.get().cast()))?;
    let r = shared.clone();
    t.set(
        "uniform_double",
        lua.create_function(move |_, ()| Ok(r.get().rng.double()))?,
    )?;
    let r = shared.clone();
    t.set(
        "varstring",
        lua.create_function(move |lua, (min, max): (f64, f64)| {
            let r = &mut r.get().rng;
            let len = r.uniform(u32_of(min), u32_of(max)) as usize;
            let out: Vec<u8> = (0..len)
                .map(|_| {
                    let i = r.uniform(0, 35) as u8;
                    if i < 10 {
                        b'0' + i
                    } else {
                        b'a' + i - 10
                    }
                })
                .collect();
            lua.create_string(out)
        })?,
    )?;
    t.set(
        "unique",
        lua.create_function(move |_, ()| Ok(f64::from(unique.next())))?,
    )?;
    // the registry keeps the state alive while the FFI functions may use its address
    lua.set_named_registry_value(
        "pgrig_rand_state",
        lua.create_any_userdata(KeepAlive(shared))?,
    )?;
    Ok(t)
}

/// Holds the rand state for the registry.
struct KeepAlive(#[allow(dead_code)] Rc<Shared>);
