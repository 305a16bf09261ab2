//! Order-Status (clause 2.6), read-only: the customer (60 % by last name) and their last order
//! with its lines.

use pgrig_engine::workload::{Params, Reply, Step};

use super::input::{Customer, Draw};
use super::new_order::one;
use super::payment::pick_by_name;
use super::rand::last_name;
use super::sql::*;

#[derive(Debug, Default)]
pub struct OrderStatus {
    w: i64,
    d: i64,
    customer: Customer,
    c_id: i64,
    pc: u8,
}

impl OrderStatus {
    /// Draws the inputs (clause 2.6.1).
    pub fn generate(&mut self, g: &mut Draw<'_>) {
        self.w = g.w;
        self.d = g.district();
        self.customer = g.customer();
    }

    pub fn restart(&mut self) {
        self.pc = 0;
    }

    pub fn step(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        let (w, d) = (self.w, self.d);
        Ok(match self.pc {
            1 => Step::Run(BEGIN),
            2 => match self.customer {
                Customer::LastName(n) => {
                    p.int(w).int(d).text_with(|b| last_name(n, b));
                    Step::Run(OS_BY_NAME)
                }
                Customer::Id(c) => {
                    self.pc = 3;
                    self.c_id = c;
                    p.int(w).int(d).int(c);
                    Step::Run(OS_CUSTOMER)
                }
                Customer::None => return Err("order_status: no customer drawn".into()),
            },
            3 => {
                self.c_id = pick_by_name(reply, "order_status")?;
                p.int(w).int(d).int(self.c_id);
                Step::Run(OS_CUSTOMER)
            }
            4 => {
                one(reply, "order_status: customer")?;
                p.int(w).int(d).int(self.c_id);
                Step::Run(OS_ORDER)
            }
            5 => {
                let r = reply.ok_or("order_status: no reply")?;
                match r.int(0, 0) {
                    Some(o) => {
                        p.int(w).int(d).int(o);
                        Step::Run(OS_LINES)
                    }
                    // a customer without orders: nothing more to show
                    None => {
                        self.pc = 6;
                        Step::Run(COMMIT)
                    }
                }
            }
            6 => Step::Run(COMMIT),
            _ => Step::Done,
        })
    }

    /// The next step with `procedures=on`: one autocommitted call.
    pub fn step_proc(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        if self.pc > 1 {
            let r = one(reply, "order_status: function")?;
            self.c_id = r.int(0, 0).ok_or("order_status: no customer")?;
            return Ok(Step::Done);
        }
        p.int(self.w).int(self.d);
        match self.customer {
            Customer::Id(c) => p.int(c).null(),
            Customer::LastName(n) => p.null().text_with(|b| last_name(n, b)),
            Customer::None => return Err("order_status: no customer drawn".into()),
        };
        Ok(Step::Run(PROC_ORDER_STATUS))
    }
}
