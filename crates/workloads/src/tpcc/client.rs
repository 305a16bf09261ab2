//! One client's TPC-C program: which transaction next (the card deck of clause 5.2.4.2, 23
//! cards per deck), which warehouse (its terminal's in terminal mode; in no-wait mode clients
//! are spread so every warehouse is used), the keying and think times of terminal mode
//! (clause 5.2.5: fixed keying, negative-exponential think time capped at 10 × its mean), and
//! the five transactions' state machines.
//!
//! Deferred Delivery (`deferred_delivery=on`, clause 2.7.2): the terminal's Delivery draws its
//! inputs and queues the request in this client (no statement: its response time is the
//! queuing), and the next transaction the client runs is the queued business transaction,
//! `delivery_deferred` — no keying or think time of its own, its latency apart from the
//! terminal's, then the terminal goes on with its think time after the Delivery. A request
//! queued as the run ends stays unexecuted (the Delivery count minus the deferred count).

use pgrig_engine::workload::{ClientSeed, Params, Reply, Step, TxProgram};

use super::delivery::Delivery;
use super::input::Draw;
use super::load::DISTRICTS;
use super::new_order::NewOrder;
use super::order_status::OrderStatus;
use super::payment::Payment;
use super::rand::{mix, NurandC, Rng};
use super::sql::{
    DECK, DELIVERY, DELIVERY_DEFERRED, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL,
};
use super::stock_level::StockLevel;
use super::{Config, Mode};

/// Keying times in seconds, by transaction type (clause 5.2.5.7).
pub const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
/// Mean think times in seconds, by transaction type (clause 5.2.5.7).
pub const THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

const DECK_SIZE: usize = 23;

/// The counter of districts Delivery skipped (no undelivered order), in the run document's
/// `workload_counters`.
pub const SKIPPED_DISTRICTS: &str = "tpcc_delivery_skipped_districts";

pub struct Client {
    cfg: Config,
    c: NurandC,
    rng: Rng,
    deck: [u8; DECK_SIZE],
    card: usize,
    id: i64,
    clients: i64,
    /// terminal mode: the terminal's district
    home_d: Option<i64>,
    /// the previous transaction's type (its think time precedes the next keying time)
    previous: Option<usize>,
    /// a Delivery request queued, not yet executed (deferred mode)
    queued: bool,
    /// districts committed Deliveries found without an undelivered order
    skipped_districts: u64,
    tx: usize,
    new_order: NewOrder,
    payment: Payment,
    order_status: OrderStatus,
    delivery: Delivery,
    stock_level: StockLevel,
}

impl Client {
    pub fn new(cfg: Config, c: NurandC, seed: ClientSeed) -> Self {
        let mut deck = [0u8; DECK_SIZE];
        let mut i = 0;
        for (tx, &cards) in DECK.iter().enumerate() {
            for _ in 0..cards {
                deck[i] = tx as u8;
                i += 1;
            }
        }
        let id = i64::from(seed.id);
        Client {
            cfg,
            c,
            rng: Rng::new(mix(seed.seed) ^ mix(id as u64 + 1)),
            deck,
            card: DECK_SIZE,
            id,
            clients: i64::from(seed.clients.max(1)),
            home_d: (cfg.mode == Mode::Terminals).then_some(id % DISTRICTS + 1),
            previous: None,
            queued: false,
            skipped_districts: 0,
            tx: 0,
            new_order: NewOrder::default(),
            payment: Payment::default(),
            order_status: OrderStatus::default(),
            delivery: Delivery::default(),
            stock_level: StockLevel::default(),
        }
    }

    /// The warehouse of the next transaction.
    fn warehouse(&mut self) -> i64 {
        let w = self.cfg.warehouses;
        match self.cfg.mode {
            Mode::Terminals => (self.id / DISTRICTS) % w + 1,
            Mode::NoWait if self.clients >= w => self.id % w + 1,
            // fewer clients than warehouses: each client cycles over its share at random
            Mode::NoWait => {
                let share = (w - self.id + self.clients - 1) / self.clients;
                self.id + 1 + self.clients * self.rng.range(0, share - 1)
            }
        }
    }

    /// A negative-exponential think time with mean `mean_s`, capped at 10 × the mean, in µs.
    fn think_us(&mut self, mean_s: f64) -> u64 {
        let t = (-self.rng.unit().ln() * mean_s).min(10.0 * mean_s);
        (t * self.cfg.think_scale * 1e6) as u64
    }
}

impl TxProgram for Client {
    fn choose(&mut self) -> Option<usize> {
        if self.queued {
            return Some(DELIVERY_DEFERRED);
        }
        if self.card == DECK_SIZE {
            // Fisher-Yates shuffle of a fresh deck
            for i in (1..DECK_SIZE).rev() {
                let j = self.rng.range(0, i as i64) as usize;
                self.deck.swap(i, j);
            }
            self.card = 0;
        }
        self.card += 1;
        Some(usize::from(self.deck[self.card - 1]))
    }

    fn delay_us(&mut self, tx: usize) -> u64 {
        if self.cfg.mode != Mode::Terminals || tx == DELIVERY_DEFERRED {
            return 0;
        }
        let think = match self.previous.replace(tx) {
            Some(prev) => self.think_us(THINK_S[prev]),
            None => 0,
        };
        think + (KEYING_S[tx] * self.cfg.think_scale * 1e6) as u64
    }

    fn begin(&mut self, tx: usize, retry: bool) {
        self.tx = tx;
        if tx == DELIVERY_DEFERRED {
            // the queued request's inputs, drawn by the terminal's Delivery
            self.delivery.restart();
            return;
        }
        if !retry {
            let w = self.warehouse();
            let mut g = Draw {
                rng: &mut self.rng,
                c: self.c,
                warehouses: self.cfg.warehouses,
                w,
                home_d: self.home_d,
            };
            match tx {
                NEW_ORDER => self.new_order.generate(&mut g),
                PAYMENT => self.payment.generate(&mut g),
                ORDER_STATUS => self.order_status.generate(&mut g),
                DELIVERY => self.delivery.generate(&mut g),
                _ => self.stock_level.generate(&mut g),
            }
        }
        match tx {
            NEW_ORDER => self.new_order.restart(),
            PAYMENT => self.payment.restart(),
            ORDER_STATUS => self.order_status.restart(),
            DELIVERY => self.delivery.restart(),
            _ => self.stock_level.restart(),
        }
    }

    fn step(&mut self, reply: Option<&Reply<'_>>, params: &mut Params) -> Step {
        let (r, p) = (reply, params);
        let deferred = self.cfg.deferred_delivery;
        let r = match (self.tx, self.cfg.procedures) {
            (DELIVERY, _) if deferred => {
                self.queued = true;
                Ok(Step::Done)
            }
            (DELIVERY_DEFERRED, procedures) => {
                let s = if procedures {
                    self.delivery.step_proc(r, p)
                } else {
                    self.delivery.step(r, p)
                };
                if matches!(s, Ok(Step::Done)) {
                    self.queued = false;
                }
                s
            }
            (NEW_ORDER, false) => self.new_order.step(r, p),
            (NEW_ORDER, true) => self.new_order.step_proc(r, p),
            (PAYMENT, false) => self.payment.step(r, p),
            (PAYMENT, true) => self.payment.step_proc(r, p),
            (ORDER_STATUS, false) => self.order_status.step(r, p),
            (ORDER_STATUS, true) => self.order_status.step_proc(r, p),
            (DELIVERY, false) => self.delivery.step(r, p),
            (DELIVERY, true) => self.delivery.step_proc(r, p),
            (STOCK_LEVEL, false) => self.stock_level.step(r, p),
            (STOCK_LEVEL, true) => self.stock_level.step_proc(r, p),
            (other, _) => Err(format!("tpcc: no transaction type {other}")),
        };
        let executed = self.tx == DELIVERY_DEFERRED || (self.tx == DELIVERY && !deferred);
        if executed && matches!(r, Ok(Step::Done)) {
            // the business transaction committed (a retried attempt's skips are not counted)
            self.skipped_districts += u64::from(self.delivery.skipped);
        }
        r.unwrap_or_else(Step::Abort)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![(SKIPPED_DISTRICTS, self.skipped_districts)]
    }
}
