//! `sysbench.rand`: each Lua state's own stream (the run seed and the thread number, as the
//! native workloads derive theirs) with sysbench's distributions from
//! `pgrig_workloads::sysbench::rand`, the `#`/`@` string templates, and the run-wide
//! `unique()` sequence.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Lua, Table};
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

/// The `sysbench.rand` table for a state with stream `rng`.
pub fn table(lua: &Lua, p: &RandParams, rng: Rng, unique: Arc<Unique>) -> mlua::Result<Table> {
    let rng = Rc::new(RefCell::new(rng));
    let t = lua.create_table()?;
    let kinds = [
        ("default", p.default),
        ("uniform", RandType::Uniform),
        ("gaussian", RandType::Gaussian),
        ("special", RandType::Special),
        ("pareto", RandType::Pareto),
        ("zipfian", RandType::Zipfian),
    ];
    for (name, kind) in kinds {
        let (d, rng) = (p.dist(kind), rng.clone());
        let f = lua.create_function(move |_, (a, b): (f64, f64)| {
            Ok(f64::from(d.default_value(
                &mut rng.borrow_mut(),
                u32_of(a),
                u32_of(b),
            )))
        })?;
        t.set(name, f)?;
    }
    let r = rng.clone();
    t.set(
        "uniform_uint64",
        lua.create_function(move |_, ()| Ok(r.borrow_mut().next_u64() as i64 as f64))?,
    )?;
    let r = rng.clone();
    t.set(
        "uniform_double",
        lua.create_function(move |_, ()| Ok(r.borrow_mut().double()))?,
    )?;
    let r = rng.clone();
    t.set(
        "string",
        lua.create_function(move |lua, tmpl: mlua::LuaString| {
            let mut out = Vec::with_capacity(tmpl.as_bytes().len());
            r.borrow_mut().string_into(&tmpl.as_bytes(), &mut out);
            lua.create_string(out)
        })?,
    )?;
    let r = rng.clone();
    t.set(
        "varstring",
        lua.create_function(move |lua, (min, max): (f64, f64)| {
            let mut r = r.borrow_mut();
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
    Ok(t)
}
