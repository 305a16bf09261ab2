//! Micro-benchmark: tpcb-like's four `\set` lines (`random(1, 100000 * :scale)`, ...) evaluated
//! and assigned per iteration, i.e. the evaluator's cost per tpcb-like transaction. Run with
//! `cargo bench -p pgrig-script --bench eval`; the allocation profiler shows 0 allocations.

use divan::{AllocProfiler, Bencher};
use pgrig_script::ast::{Expr, Func};
use pgrig_script::eval::{eval, EvalCtx};
use pgrig_script::seeding::seed_states;
use pgrig_script::{Prng, Value, VarId, VarTable, Vars};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

fn int(v: i64) -> Expr {
    Expr::Const(Value::Int(v))
}

fn call(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func {
        func,
        args: args.into_boxed_slice(),
    }
}

struct Tpcb {
    names: VarTable,
    vars: Vars,
    rng: Prng,
    default_seed: VarId,
    exprs: [Expr; 4],
    targets: [VarId; 4],
}

fn tpcb(scale_as_string: bool) -> Tpcb {
    let mut names = VarTable::new();
    let scale = names.intern("scale");
    let default_seed = names.intern("default_seed");
    let targets = ["aid", "bid", "tid", "delta"].map(|n| names.intern(n));
    let s = Expr::Var(scale);
    let exprs = [
        call(
            Func::Random,
            vec![int(1), call(Func::Mul, vec![int(100000), s.clone()])],
        ),
        call(
            Func::Random,
            vec![int(1), call(Func::Mul, vec![int(1), s.clone()])],
        ),
        call(
            Func::Random,
            vec![int(1), call(Func::Mul, vec![int(10), s])],
        ),
        call(
            Func::Random,
            vec![call(Func::Sub, vec![int(0), int(5000)]), int(5000)],
        ),
    ];
    let st = seed_states(5432, 1, 1);
    let mut vars = Vars::with_len(names.len());
    if scale_as_string {
        vars.set_str(scale, "10");
    } else {
        vars.set_value(scale, Value::Int(10));
    }
    vars.set_value(default_seed, Value::Int(st.default_seed.unwrap_or(0)));
    Tpcb {
        names,
        vars,
        rng: st.clients[0],
        default_seed,
        exprs,
        targets,
    }
}

fn run_script(t: &mut Tpcb) {
    let mut debug = |_: &Value| {};
    for (e, &target) in t.exprs.iter().zip(&t.targets) {
        let mut ctx = EvalCtx {
            vars: &mut t.vars,
            names: &t.names,
            rng: &mut t.rng,
            default_seed: t.default_seed,
            debug: &mut debug,
        };
        if let Ok(v) = eval(divan::black_box(e), &mut ctx) {
            t.vars.set_value(target, v);
        }
    }
}

/// The four `\set` lines with `:scale` an int (builtin scripts).
#[divan::bench]
fn tpcb_set_lines(bencher: Bencher) {
    let mut t = tpcb(false);
    bencher.bench_local(|| run_script(&mut t));
}

/// Same, `:scale` given as a string (`-D scale=10`): converted once, then cached.
#[divan::bench]
fn tpcb_set_lines_string_scale(bencher: Bencher) {
    let mut t = tpcb(true);
    bencher.bench_local(|| run_script(&mut t));
}

/// The four values rendered as SQL text into a reused buffer (simple-protocol substitution).
#[divan::bench]
fn tpcb_render_values(bencher: Bencher) {
    let mut t = tpcb(false);
    run_script(&mut t);
    let mut buf = Vec::with_capacity(128);
    bencher.bench_local(|| {
        buf.clear();
        for &v in &t.targets {
            t.vars.render(v, &mut buf);
        }
        divan::black_box(&buf);
    });
}
