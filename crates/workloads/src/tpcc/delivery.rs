//! Delivery (clause 2.7), run in one database transaction for all ten districts (not deferred):
//! per district the oldest undelivered order leaves NEW-ORDER, gets its carrier, its lines
//! their delivery date, and its customer the lines' total added to the balance. The oldest order
//! is taken `FOR UPDATE SKIP LOCKED` ([`super::sql::DL_OLDEST`]): a concurrent Delivery on the
//! same warehouse holding it makes this one take the next oldest, so a district is skipped (and
//! counted in `skipped`) only when it has no undelivered order left.

use pgrig_engine::workload::{Params, Reply, Step};

use super::input::Draw;
use super::load::DISTRICTS;
use super::new_order::one;
use super::sql::*;

#[derive(Debug, Default)]
pub struct Delivery {
    w: i64,
    carrier: i64,
    pc: u8,
    d: i64,
    o_id: i64,
    c_id: i64,
    /// districts skipped (no undelivered order) in the last attempt
    pub skipped: u32,
}

impl Delivery {
    /// Draws the inputs (clause 2.7.1).
    pub fn generate(&mut self, g: &mut Draw<'_>) {
        self.w = g.w;
        self.carrier = g.rng.range(1, 10);
    }

    pub fn restart(&mut self) {
        self.pc = 0;
        self.d = 0;
        self.skipped = 0;
    }

    pub fn step(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        let w = self.w;
        Ok(match self.pc {
            1 => Step::Run(BEGIN),
            2 => self.next_district(p),
            3 => {
                let r = reply.ok_or("delivery: no reply")?;
                match r.int(0, 0) {
                    Some(o) => {
                        self.o_id = o;
                        p.int(w).int(self.d).int(o).int(self.carrier);
                        Step::Run(DL_ORDER)
                    }
                    None => {
                        self.skipped += 1;
                        self.pc = 2;
                        self.next_district(p)
                    }
                }
            }
            4 => {
                let r = one(reply, "delivery: order")?;
                self.c_id = r.int(0, 0).ok_or("delivery: order without customer")?;
                p.int(w).int(self.d).int(self.o_id);
                Step::Run(DL_LINES)
            }
            5 => {
                let r = one(reply, "delivery: order lines")?;
                p.int(w).int(self.d).int(self.c_id);
                p.text(r.get(0, 0).unwrap_or(b"0"));
                Step::Run(DL_CUSTOMER)
            }
            6 => {
                one(reply, "delivery: customer")?;
                self.pc = 2;
                self.next_district(p)
            }
            _ => Step::Done,
        })
    }

    /// The next step with `procedures=on`: one autocommitted call returning the districts
    /// skipped.
    pub fn step_proc(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        if self.pc > 1 {
            let r = one(reply, "delivery: function")?;
            self.skipped = r.int(0, 0).ok_or("delivery: no skipped count")? as u32;
            return Ok(Step::Done);
        }
        p.int(self.w).int(self.carrier);
        Ok(Step::Run(PROC_DELIVERY))
    }

    /// The next district's oldest new order, or COMMIT after the tenth.
    fn next_district(&mut self, p: &mut Params) -> Step {
        self.d += 1;
        if self.d > DISTRICTS {
            self.pc = 7;
            return Step::Run(COMMIT);
        }
        p.int(self.w).int(self.d);
        Step::Run(DL_NEW_ORDER)
    }
}
