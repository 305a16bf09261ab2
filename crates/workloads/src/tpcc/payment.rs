//! Payment (clause 2.5): the amount is added to the warehouse's and district's year-to-date,
//! the customer (85 % of the home warehouse, 15 % of a remote one; 60 % chosen by last name,
//! the middle one by first name) pays it, bad-credit customers get the payment prepended to
//! C_DATA, and a HISTORY row records it with the warehouse's and district's names.

use std::io::Write;

use pgrig_engine::workload::{Params, Reply, Step};

use super::input::{middle, Customer, Draw};
use super::new_order::one;
use super::rand::last_name;
use super::sql::*;

#[derive(Debug, Default)]
pub struct Payment {
    w: i64,
    d: i64,
    c_w: i64,
    c_d: i64,
    customer: Customer,
    amount_cents: i64,
    pc: u8,
    c_id: i64,
    /// W_NAME, four spaces, D_NAME (H_DATA), reused
    h_data: Vec<u8>,
}

impl Payment {
    /// Draws the inputs (clause 2.5.1).
    pub fn generate(&mut self, g: &mut Draw<'_>) {
        self.w = g.w;
        self.d = g.district();
        if g.rng.range(1, 100) <= 85 || g.warehouses < 2 {
            (self.c_w, self.c_d) = (self.w, self.d);
        } else {
            self.c_w = g.other_warehouse();
            self.c_d = g.district();
        }
        self.customer = g.customer();
        self.amount_cents = g.rng.range(100, 500_000);
    }

    pub fn restart(&mut self) {
        self.pc = 0;
        self.h_data.clear();
    }

    pub fn step(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        let amount = self.amount_cents as f64 / 100.0;
        Ok(match self.pc {
            1 => Step::Run(BEGIN),
            2 => {
                p.int(self.w).decimal(amount, 2);
                Step::Run(PAY_WAREHOUSE)
            }
            3 => {
                let r = one(reply, "payment: warehouse")?;
                self.h_data.clear();
                self.h_data
                    .extend_from_slice(r.get(0, 0).unwrap_or_default());
                self.h_data.extend_from_slice(b"    ");
                p.int(self.w).int(self.d).decimal(amount, 2);
                Step::Run(PAY_DISTRICT)
            }
            4 => {
                let r = one(reply, "payment: district")?;
                self.h_data
                    .extend_from_slice(r.get(0, 0).unwrap_or_default());
                match self.customer {
                    Customer::LastName(n) => {
                        p.int(self.c_w).int(self.c_d).text_with(|b| last_name(n, b));
                        Step::Run(PAY_BY_NAME)
                    }
                    Customer::Id(c) => {
                        self.pc = 5;
                        self.c_id = c;
                        self.update_customer(p)
                    }
                    Customer::None => return Err("payment: no customer drawn".into()),
                }
            }
            5 => {
                self.c_id = pick_by_name(reply, "payment")?;
                self.update_customer(p)
            }
            6 => {
                one(reply, "payment: customer")?;
                p.int(self.c_id)
                    .int(self.c_d)
                    .int(self.c_w)
                    .int(self.d)
                    .int(self.w);
                p.decimal(amount, 2).text(&self.h_data);
                Step::Run(PAY_HISTORY)
            }
            7 => Step::Run(COMMIT),
            _ => Step::Done,
        })
    }

    /// The next step with `procedures=on`: one autocommitted call (the customer by number, or
    /// by last name with a NULL number).
    pub fn step_proc(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        if self.pc > 1 {
            let r = one(reply, "payment: function")?;
            self.c_id = r.int(0, 0).ok_or("payment: no customer")?;
            return Ok(Step::Done);
        }
        p.int(self.w).int(self.d).int(self.c_w).int(self.c_d);
        match self.customer {
            Customer::Id(c) => p.int(c).null(),
            Customer::LastName(n) => p.null().text_with(|b| last_name(n, b)),
            Customer::None => return Err("payment: no customer drawn".into()),
        };
        p.decimal(self.amount_cents as f64 / 100.0, 2);
        Ok(Step::Run(PROC_PAYMENT))
    }

    /// The customer who paid (after the last attempt's customer step).
    pub fn customer_id(&self) -> i64 {
        self.c_id
    }

    fn update_customer(&mut self, p: &mut Params) -> Step {
        let amount = self.amount_cents as f64 / 100.0;
        p.int(self.c_w)
            .int(self.c_d)
            .int(self.c_id)
            .decimal(amount, 2);
        let (c, cd, cw, d, w, cents) = (
            self.c_id,
            self.c_d,
            self.c_w,
            self.d,
            self.w,
            self.amount_cents,
        );
        p.text_with(|b| {
            let _ = write!(
                b,
                "{c} {cd} {cw} {d} {w} {}.{:02} | ",
                cents / 100,
                cents % 100
            );
        });
        Step::Run(PAY_CUSTOMER)
    }
}

/// C_ID of the middle customer of a by-name reply (sorted by C_FIRST).
pub fn pick_by_name(reply: Option<&Reply<'_>>, what: &str) -> Result<i64, String> {
    let r = reply.ok_or_else(|| format!("{what}: no reply"))?;
    if r.count == 0 {
        return Err(format!("{what}: no customer with that last name"));
    }
    r.int(middle(r.count as usize), 0)
        .ok_or_else(|| format!("{what}: customer without c_id"))
}
