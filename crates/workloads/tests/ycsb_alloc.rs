//! No allocation per operation: after a warm-up (buffers reach their working size), thousands
//! of operations of every workload — keys, values, scans, inserts through the shared sequence,
//! the `latest` chooser extending ζ — run with a counting global allocator seeing none. Only the
//! test's own thread is counted: the harness's other threads may allocate meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use pgrig_engine::workload::{ClientSeed, Params, Reply, Rows, Step};
use pgrig_workloads::Options;

struct Counting;

thread_local! {
    /// Whether this thread's allocations are counted (no destructor, const: usable inside the
    /// allocator).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

fn count(on: bool) {
    COUNTING.with(|c| c.set(on));
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn run_ops(
    program: &mut dyn pgrig_engine::workload::TxProgram,
    params: &mut Params,
    rows: &Rows,
    n: usize,
) {
    for _ in 0..n {
        let tx = program.choose().unwrap();
        program.begin(tx, false);
        let mut first = true;
        loop {
            params.clear();
            let reply = Reply { count: 1, rows };
            match program.step((!first).then_some(&reply), params) {
                Step::Run(_) => first = false,
                Step::Done => break,
                other => panic!("{other:?}"),
            }
        }
    }
}

#[test]
fn operations_do_not_allocate() {
    // one test in this binary: nothing else allocates while counting; the counter counts
    count(true);
    std::hint::black_box(Box::new(7u64));
    count(false);
    assert!(
        ALLOCATIONS.load(Ordering::SeqCst) >= 1,
        "the counting allocator is in use"
    );
    let mut extra = Options::new();
    extra.set("writeallfields", "true");
    let cases: [(&str, Options); 7] = [
        ("ycsb-a", Options::new()),
        ("ycsb-b", Options::new()),
        ("ycsb-c", Options::new()),
        ("ycsb-d", Options::new()),
        ("ycsb-e", Options::new()),
        ("ycsb-f", Options::new()),
        ("ycsb-a", extra),
    ];
    for (name, opts) in cases {
        let native = pgrig_workloads::build(name, &opts).unwrap();
        let mut program = native.workload.client(ClientSeed {
            id: 0,
            clients: 1,
            seed: 3,
        });
        let mut params = Params::new();
        let rows = Rows::default();
        run_ops(program.as_mut(), &mut params, &rows, 1_000);
        ALLOCATIONS.store(0, Ordering::SeqCst);
        count(true);
        run_ops(program.as_mut(), &mut params, &rows, 20_000);
        count(false);
        let n = ALLOCATIONS.load(Ordering::SeqCst);
        assert_eq!(n, 0, "{name}: {n} allocations in 20000 operations");
    }
}
