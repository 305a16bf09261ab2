//! Evaluating tpcb-like's four `\set` lines (and rendering their values for SQL) must not
//! allocate: a counting global allocator fails the test on any allocation in the measured loop.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pgrig_script::ast::{Expr, Func};
use pgrig_script::eval::{eval, EvalCtx};
use pgrig_script::seeding::seed_states;
use pgrig_script::{Value, VarTable, Vars};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // try_with: the thread-local may be gone during thread teardown
    let _ = COUNTING.try_with(|c| {
        if c.get() {
            let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
        }
    });
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn int(v: i64) -> Expr {
    Expr::Const(Value::Int(v))
}
fn call(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func {
        func,
        args: args.into_boxed_slice(),
    }
}

#[test]
fn tpcb_set_lines_evaluate_without_allocating() {
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
            vec![int(1), call(Func::Mul, vec![int(10), s.clone()])],
        ),
        call(
            Func::Random,
            vec![call(Func::Sub, vec![int(0), int(5000)]), int(5000)],
        ),
    ];
    let st = seed_states(5432, 1, 1);
    let mut rng = st.clients[0];
    let mut vars = Vars::with_len(names.len());
    // `-D scale=10`-style string value: converted once, then cached.
    vars.set_str(scale, "10");
    vars.set_value(default_seed, Value::Int(st.default_seed.unwrap()));
    let mut sql = Vec::with_capacity(256);
    let mut gset = String::from("initial value");
    let mut debug = |_: &Value| {};

    let mut run = |count: bool| {
        COUNTING.with(|c| c.set(count));
        for _ in 0..1000 {
            for (e, &t) in exprs.iter().zip(&targets) {
                let mut ctx = EvalCtx {
                    vars: &mut vars,
                    names: &names,
                    rng: &mut rng,
                    default_seed,
                    debug: &mut debug,
                };
                let v = eval(e, &mut ctx).expect("evaluates");
                vars.set_value(t, v);
            }
            sql.clear();
            for &t in &targets {
                assert!(vars.render(t, &mut sql));
                sql.push(b',');
            }
            gset.clear();
            gset.push_str("12345");
            vars.set_str(default_seed, &gset);
            vars.set_value(default_seed, Value::Int(1));
        }
        COUNTING.with(|c| c.set(false));
    };
    run(false); // warm-up: string buffers reach their steady-state size
    ALLOCS.with(|a| a.set(0));
    run(true);
    let n = ALLOCS.with(|a| a.get());
    assert_eq!(n, 0, "allocations while evaluating tpcb-like's \\set lines");
}

#[test]
fn counting_allocator_sees_allocations() {
    COUNTING.with(|c| c.set(true));
    ALLOCS.with(|a| a.set(0));
    let v: Vec<u64> = Vec::with_capacity(std::hint::black_box(10));
    COUNTING.with(|c| c.set(false));
    drop(v);
    assert!(ALLOCS.with(|a| a.get()) >= 1);
}
