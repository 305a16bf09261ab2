//! New-Order (clause 2.4): 5..15 lines, 1 % of transactions end on an unused item and roll back,
//! each line supplied by a remote warehouse with probability 1 %. Lines are sent in (supply
//! warehouse, item) order so concurrent New-Orders lock stock rows in one order (fewer
//! deadlocks); the unused item stays the last line.

use pgrig_engine::workload::{Params, Reply, Step};

use super::input::{int_array, parse_cents, Draw};
use super::load::ITEMS;
use super::sql::*;

#[derive(Clone, Copy, Debug, Default)]
struct Line {
    item: i64,
    supply_w: i64,
    quantity: i64,
}

/// One New-Order: its inputs and where it is.
#[derive(Debug, Default)]
pub struct NewOrder {
    w: i64,
    d: i64,
    c: i64,
    lines: [Line; 15],
    n: usize,
    all_local: bool,
    /// the last line's item is unused: the transaction rolls back
    pub rollback: bool,
    pc: u8,
    line: usize,
    o_id: i64,
    price_cents: i64,
}

impl NewOrder {
    /// Draws the inputs (clause 2.4.1).
    pub fn generate(&mut self, g: &mut Draw<'_>) {
        self.w = g.w;
        self.d = g.district();
        self.c = g.customer_id();
        self.n = g.rng.range(5, 15) as usize;
        self.rollback = g.rng.range(1, 100) == 1;
        self.all_local = true;
        for i in 0..self.n {
            let remote = g.warehouses > 1 && g.rng.range(1, 100) == 1;
            let supply_w = if remote { g.other_warehouse() } else { g.w };
            self.all_local &= supply_w == g.w;
            self.lines[i] = Line {
                item: g.item_id(),
                supply_w,
                quantity: g.rng.range(1, 10),
            };
        }
        let n = self.n;
        self.lines[..n].sort_unstable_by_key(|l| (l.supply_w, l.item));
        if self.rollback {
            self.lines[n - 1].item = ITEMS + 1;
        }
    }

    /// Back to the first step (a new attempt with the same inputs).
    pub fn restart(&mut self) {
        self.pc = 0;
        self.line = 0;
    }

    pub fn step(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        let (w, d) = (self.w, self.d);
        self.pc += 1;
        Ok(match self.pc {
            1 => Step::Run(BEGIN),
            2 => {
                p.int(w);
                Step::Run(NO_WAREHOUSE)
            }
            3 => {
                one(reply, "warehouse")?;
                p.int(w).int(d);
                Step::Run(NO_DISTRICT)
            }
            4 => {
                let r = one(reply, "district")?;
                self.o_id = r.int(0, 1).ok_or("new_order: no d_next_o_id")?;
                p.int(w).int(d).int(self.c);
                Step::Run(NO_CUSTOMER)
            }
            5 => {
                one(reply, "customer")?;
                p.int(self.o_id).int(d).int(w).int(self.c);
                p.int(self.n as i64).int(i64::from(self.all_local));
                Step::Run(NO_ORDER)
            }
            6 => {
                p.int(self.o_id).int(d).int(w);
                Step::Run(NO_NEW_ORDER)
            }
            7 => {
                p.int(self.lines[self.line].item);
                Step::Run(NO_ITEM)
            }
            8 => self.after_item(reply, p)?,
            9 => {
                let r = one(reply, "stock")?;
                let l = self.lines[self.line];
                p.int(self.o_id).int(d).int(w).int(self.line as i64 + 1);
                p.int(l.item).int(l.supply_w).int(l.quantity);
                p.decimal((l.quantity * self.price_cents) as f64 / 100.0, 2);
                p.text(r.get(0, 2).unwrap_or_default());
                Step::Run(NO_LINE)
            }
            10 => {
                self.line += 1;
                if self.line < self.n {
                    self.pc = 7;
                    p.int(self.lines[self.line].item);
                    Step::Run(NO_ITEM)
                } else {
                    Step::Run(COMMIT)
                }
            }
            11 => Step::Done,
            // after the intended ROLLBACK
            _ => Step::RolledBack,
        })
    }

    /// The next step with `procedures=on`: BEGIN, the function, then COMMIT — or ROLLBACK when
    /// it met the unused item (it returns the item instead of raising, so the program ends
    /// the block as the client-side one does).
    pub fn step_proc(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        Ok(match self.pc {
            1 => Step::Run(BEGIN),
            2 => {
                p.int(self.w).int(self.d).int(self.c);
                p.int(i64::from(self.all_local));
                let lines = &self.lines[..self.n];
                p.text_with(|b| int_array(b, lines.iter().map(|l| l.item)));
                p.text_with(|b| int_array(b, lines.iter().map(|l| l.supply_w)));
                p.text_with(|b| int_array(b, lines.iter().map(|l| l.quantity)));
                Step::Run(PROC_NEW_ORDER)
            }
            3 => {
                let r = one(reply, "new_order: function")?;
                match r.int(0, 1) {
                    None => Step::Run(COMMIT),
                    Some(item) if self.rollback && item == ITEMS + 1 => {
                        self.pc = 100;
                        Step::Run(ROLLBACK)
                    }
                    Some(item) => return Err(format!("new_order: item {item} not found")),
                }
            }
            4 => Step::Done,
            _ => Step::RolledBack,
        })
    }

    fn after_item(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        let r = reply.ok_or("new_order: no reply")?;
        if r.count == 0 {
            if self.rollback && self.line + 1 == self.n {
                self.pc = 100;
                return Ok(Step::Run(ROLLBACK));
            }
            return Err(format!(
                "new_order: item {} not found",
                self.lines[self.line].item
            ));
        }
        self.price_cents = r
            .get(0, 0)
            .and_then(parse_cents)
            .ok_or("new_order: item without price")?;
        let l = self.lines[self.line];
        p.int(l.item).int(l.supply_w).int(l.quantity);
        p.int(i64::from(l.supply_w != self.w)).int(self.d);
        Ok(Step::Run(NO_STOCK))
    }
}

/// The reply, which must have exactly one row.
pub fn one<'a, 'b>(reply: Option<&'a Reply<'b>>, what: &str) -> Result<&'a Reply<'b>, String> {
    match reply {
        Some(r) if r.count == 1 => Ok(r),
        Some(r) => Err(format!("{what}: expected one row, got {}", r.count)),
        None => Err(format!("{what}: no reply")),
    }
}
