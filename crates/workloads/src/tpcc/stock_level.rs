//! Stock-Level (clause 2.8), read-only: how many distinct items of the district's last 20
//! orders have a stock below a threshold of 10..20. In terminal mode the district is the
//! terminal's own.

use pgrig_engine::workload::{Params, Reply, Step};

use super::input::Draw;
use super::new_order::one;
use super::sql::*;

#[derive(Debug, Default)]
pub struct StockLevel {
    w: i64,
    d: i64,
    threshold: i64,
    pc: u8,
}

impl StockLevel {
    /// Draws the inputs (clause 2.8.1).
    pub fn generate(&mut self, g: &mut Draw<'_>) {
        self.w = g.w;
        self.d = match g.home_d {
            Some(d) => d,
            None => g.district(),
        };
        self.threshold = g.rng.range(10, 20);
    }

    pub fn restart(&mut self) {
        self.pc = 0;
    }

    pub fn step(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        Ok(match self.pc {
            1 => Step::Run(BEGIN),
            2 => {
                p.int(self.w).int(self.d);
                Step::Run(SL_DISTRICT)
            }
            3 => {
                let r = one(reply, "stock_level: district")?;
                let next = r.int(0, 0).ok_or("stock_level: no d_next_o_id")?;
                p.int(self.w).int(self.d).int(next).int(self.threshold);
                Step::Run(SL_STOCK)
            }
            4 => Step::Run(COMMIT),
            _ => Step::Done,
        })
    }

    /// The next step with `procedures=on`: one autocommitted call.
    pub fn step_proc(&mut self, reply: Option<&Reply<'_>>, p: &mut Params) -> Result<Step, String> {
        self.pc += 1;
        if self.pc > 1 {
            one(reply, "stock_level: function")?;
            return Ok(Step::Done);
        }
        p.int(self.w).int(self.d).int(self.threshold);
        Ok(Step::Run(PROC_STOCK_LEVEL))
    }
}
