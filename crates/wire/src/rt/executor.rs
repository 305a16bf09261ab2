//! A single-threaded executor for one worker thread: tasks in a slab, a FIFO of woken task ids,
//! wakers that are just the task id (no reference counting, no atomics), and a loop that polls
//! every woken task before asking the reactor for more events, so one `epoll_wait` serves all
//! sockets that became ready together.
//!
//! Wakers must be used on the executor's own thread (all our futures are: sockets, timers and
//! join handles of this thread). A wake from another thread or a finished executor is ignored,
//! never misrouted: the waker carries its executor's generation.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::thread::LocalKey;

use super::reactor;

type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Id reserved for the future passed to [`block_on`].
const MAIN: usize = u32::MAX as usize;

/// Executor generations: unique per `block_on` across threads (a waker names its executor).
const _: () = assert!(
    usize::BITS == 64,
    "wakers pack a task id and a generation in 64 bits"
);

static NEXT_GENERATION: AtomicU32 = AtomicU32::new(1);

/// Generations a thread takes from [`NEXT_GENERATION`] at a time: a `block_on` per statement
/// (the Lua path) would otherwise write that shared counter at every statement of every
/// thread, moving its cache line between the cores each time.
const GENERATION_BLOCK: u32 = 1024;

#[derive(Default)]
struct Exec {
    tasks: Vec<Option<Task>>,
    free: Vec<usize>,
    queued: Vec<bool>,
    main_queued: bool,
}

thread_local! {
    static EXEC: RefCell<Option<Exec>> = const { RefCell::new(None) };
    static READY: RefCell<VecDeque<usize>> = const { RefCell::new(VecDeque::new()) };
    static GENERATION: Cell<u32> = const { Cell::new(0) };
    /// this thread's reserved generations: the next one and the end of its block
    static RESERVED: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
    /// reactor turns this thread made ([`turns`])
    static TURNS: Cell<u64> = const { Cell::new(0) };
}

/// How many times this thread's executor has turned its reactor (waited for events and fired
/// the timers due): a task that sees the count move knows the thread's timers had their
/// chance meanwhile, and need not yield for them.
#[inline]
pub fn turns() -> u64 {
    local(&TURNS, Cell::get)
}

/// `key`'s value for `f`, through `LocalKey::try_with`: std marks it `#[inline]` and not
/// `with`, which stays an out-of-line call (through the key's accessor) when called from
/// another codegen unit, as `block_on`'s instances in the engine are. Every executor access
/// of the hot path comes here.
#[inline]
fn local<T: 'static, R>(key: &'static LocalKey<T>, f: impl FnOnce(&T) -> R) -> R {
    match key.try_with(f) {
        Ok(r) => r,
        Err(_) => thread_ending(),
    }
}

#[cold]
fn thread_ending() -> ! {
    panic!("pgrig_wire::rt: the executor used while its thread's locals are torn down")
}

/// A generation no other executor (of any thread) has had, nor will have before the counter
/// wraps (2^32 executors); never 0, which marks "no executor".
pub(super) fn next_generation() -> u32 {
    local(&RESERVED, |r| {
        let (mut next, mut end) = r.get();
        while next == end {
            next = NEXT_GENERATION.fetch_add(GENERATION_BLOCK, Ordering::Relaxed);
            end = next.wrapping_add(GENERATION_BLOCK);
            if next == 0 || end < next {
                // the block that holds 0 (once per wrap of the counter): take the next one
                end = next;
            }
        }
        r.set((next + 1, end));
        next
    })
}

fn encode(id: usize) -> *const () {
    let generation = local(&GENERATION, Cell::get) as usize;
    ((id << 32) | generation) as *const ()
}

fn schedule(data: *const ()) {
    let raw = data as usize;
    let (id, generation) = (raw >> 32, (raw & 0xffff_ffff) as u32);
    // (a wake while the thread's locals are torn down finds no executor: nothing to wake)
    if GENERATION.try_with(Cell::get) != Ok(generation) {
        // a waker of a finished executor (or of another thread's): nothing to wake
        return;
    }
    let fresh = EXEC.try_with(|e| {
        let Ok(mut e) = e.try_borrow_mut() else {
            // Woken from inside a poll (the task itself or a sibling): queue unconditionally;
            // a duplicate entry only costs one spurious poll.
            return true;
        };
        let Some(e) = e.as_mut() else { return false };
        if id == MAIN {
            !std::mem::replace(&mut e.main_queued, true)
        } else {
            match e.queued.get_mut(id) {
                Some(q) => !std::mem::replace(q, true),
                None => true,
            }
        }
    });
    if fresh == Ok(true) {
        let _ = READY.try_with(|r| r.borrow_mut().push_back(id));
    }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(
    |data| RawWaker::new(data, &VTABLE),
    schedule,
    schedule,
    |_| {},
);

fn waker(id: usize) -> Waker {
    // SAFETY: the vtable functions treat `data` as a plain integer; nothing to free.
    unsafe { Waker::from_raw(RawWaker::new(encode(id), &VTABLE)) }
}

/// Runs `main` (and everything it spawns) to completion on this thread.
pub fn block_on<F: Future>(main: F) -> F::Output {
    let outer = local(&EXEC, |e| e.borrow_mut().replace(Exec::default()));
    assert!(outer.is_none(), "pgrig_wire::rt::block_on cannot be nested");
    local(&GENERATION, |g| g.set(next_generation()));
    local(&READY, |r| r.borrow_mut().clear());
    let mut main = std::pin::pin!(main);
    let main_waker = waker(MAIN);
    local(&READY, |r| r.borrow_mut().push_back(MAIN));
    let out = loop {
        let mut done = None;
        while let Some(id) = local(&READY, |r| r.borrow_mut().pop_front()) {
            if id == MAIN {
                local(&EXEC, |e| {
                    e.borrow_mut().as_mut().map(|e| e.main_queued = false)
                });
                if let Poll::Ready(v) = main.as_mut().poll(&mut Context::from_waker(&main_waker)) {
                    done = Some(v);
                    break;
                }
            } else {
                poll_task(id);
            }
        }
        if let Some(v) = done {
            break v;
        }
        let idle = local(&READY, |r| r.borrow().is_empty());
        let turned = if super::uring::active() {
            super::uring::turn(idle)
        } else {
            reactor::with(|r| r.turn(idle)).and_then(|r| r)
        };
        if let Err(e) = turned {
            panic!("pgrig_wire::rt: waiting for I/O failed: {e}");
        }
        local(&TURNS, |t| t.set(t.get().wrapping_add(1)));
    };
    let tasks = local(&EXEC, |e| e.borrow_mut().take());
    local(&GENERATION, |g| g.set(0));
    drop(tasks);
    let _ = reactor::with(|r| r.clear_timers());
    out
}

#[inline]
fn poll_task(id: usize) {
    let task = local(&EXEC, |e| {
        let mut e = e.borrow_mut();
        let e = e.as_mut()?;
        if let Some(q) = e.queued.get_mut(id) {
            *q = false;
        }
        e.tasks.get_mut(id)?.take()
    });
    let Some(mut task) = task else { return };
    let w = waker(id);
    let finished = task.as_mut().poll(&mut Context::from_waker(&w)).is_ready();
    local(&EXEC, |e| {
        let mut e = e.borrow_mut();
        let Some(e) = e.as_mut() else { return };
        if finished {
            e.free.push(id);
        } else {
            e.tasks[id] = Some(task);
        }
    });
}

/// Output slot shared by a spawned task and its [`JoinHandle`].
struct Join<T> {
    value: Option<T>,
    waiter: Option<Waker>,
    aborted: bool,
}

/// Awaits a spawned task's output.
pub struct JoinHandle<T> {
    join: Rc<RefCell<Join<T>>>,
}

impl<T> JoinHandle<T> {
    /// Stops polling the task: it is dropped at its next wake-up (or never polled again).
    pub fn abort(&self) {
        self.join.borrow_mut().aborted = true;
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut j = self.join.borrow_mut();
        match j.value.take() {
            Some(v) => Poll::Ready(v),
            None => {
                j.waiter = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Spawns a task on the running [`block_on`] of this thread.
///
/// # Panics
/// Outside [`block_on`].
pub fn spawn_local<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let join = Rc::new(RefCell::new(Join {
        value: None,
        waiter: None,
        aborted: false,
    }));
    let slot = join.clone();
    let task: Task = Box::pin(async move {
        let mut fut = std::pin::pin!(fut);
        let v = std::future::poll_fn(|cx| {
            if slot.borrow().aborted {
                return Poll::Ready(None);
            }
            fut.as_mut().poll(cx).map(Some)
        })
        .await;
        let mut j = slot.borrow_mut();
        if let Some(v) = v {
            j.value = Some(v);
        }
        if let Some(w) = j.waiter.take() {
            w.wake();
        }
    });
    let id = local(&EXEC, |e| {
        let mut e = e.borrow_mut();
        let e = e
            .as_mut()
            .expect("spawn_local outside pgrig_wire::rt::block_on");
        let id = e.free.pop().unwrap_or_else(|| {
            e.tasks.push(None);
            e.queued.push(false);
            e.tasks.len() - 1
        });
        // A task being polled is taken out of its slot but its id is not free, so `id` is
        // never the id of a running task.
        e.queued[id] = true;
        e.tasks[id] = Some(task);
        id
    });
    local(&READY, |r| r.borrow_mut().push_back(id));
    JoinHandle { join }
}
