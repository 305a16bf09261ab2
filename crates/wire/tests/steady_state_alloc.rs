//! The hot path must not allocate: after warm-up, prepared Bind/Execute/Sync round trips
//! (encode, one write, read, borrowed parse) perform zero heap allocations on the client.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::{block_on, connect};
use pgrig_wire::Backend;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller upholds GlobalAlloc's contract, which System needs.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCS.with(Cell::get)
}

async fn round_trip(c: &mut pgrig_wire::Connection, i: u32) -> u64 {
    c.bind_with("", "s", |w| {
        w.render(|b| {
            use std::fmt::Write;
            write!(b, "{i}").unwrap();
        })
    });
    c.execute("", 0);
    c.sync();
    c.send().await.unwrap();
    let mut sum = 0;
    loop {
        match c.recv().await.unwrap() {
            Backend::DataRow(row) => sum += row.get(0).map_or(0, |v| v.len() as u64),
            Backend::ReadyForQuery(_) => return sum,
            Backend::Error(e) => panic!("{}", e.code()),
            _ => {}
        }
    }
}

#[test]
fn prepared_round_trips_do_not_allocate_in_steady_state() {
    let db = pgrig_testkit::fresh_db("wire_alloc");
    block_on(async {
        for conninfo in [db.conninfo(), db.tcp_conninfo()] {
            let mut c = connect(&conninfo).await;
            c.parse("s", "SELECT $1::int + 1, 'abc'::text", 1);
            c.sync();
            c.send().await.unwrap();
            c.skip_until_ready().await.unwrap();
            for i in 0..200 {
                round_trip(&mut c, i).await;
            }
            let before = allocations();
            for i in 0..2000 {
                round_trip(&mut c, i).await;
            }
            let n = allocations() - before;
            assert_eq!(n, 0, "{n} allocations in 2000 round trips over {conninfo}");
            c.close().await;
        }
    });
}

#[test]
fn simple_protocol_round_trips_do_not_allocate_in_steady_state() {
    let db = pgrig_testkit::fresh_db("wire_alloc_simple");
    block_on(async {
        let mut c = connect(&db.tcp_conninfo()).await;
        let run = |c: &mut pgrig_wire::Connection| {
            c.query(b"SELECT 1");
        };
        for _ in 0..100 {
            run(&mut c);
            c.send().await.unwrap();
            while !matches!(c.recv().await.unwrap(), Backend::ReadyForQuery(_)) {}
        }
        let before = allocations();
        for _ in 0..1000 {
            run(&mut c);
            c.send().await.unwrap();
            while !matches!(c.recv().await.unwrap(), Backend::ReadyForQuery(_)) {}
        }
        assert_eq!(allocations() - before, 0);
        c.close().await;
    });
}
