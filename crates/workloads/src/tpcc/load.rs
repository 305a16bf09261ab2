//! TPC-C's initial population (clause 4.3.3.1) as row sources for the generic loader: every
//! row computed alone from the dataset seed and its row number, rows ordered by warehouse so a
//! warehouse range is a row range. Order lines (5..15 per order) are addressed through a small
//! index of where each order's lines start.

use std::sync::{Arc, OnceLock};

use pgrig_init::dataset::{CopyFormat, RowSource};
use pgrig_init::generic::LoadPlan;

use super::copyrow::Row;
use super::rand::{last_name, mix, NurandC, Permutation, Rng};
use super::schema;

pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3000;
pub const ITEMS: i64 = 100_000;
/// Orders 2101..=3000 of each district are undelivered (NEW-ORDER rows).
pub const FIRST_NEW_ORDER: i64 = 2101;

/// What every row is derived from.
#[derive(Clone, Copy, Debug)]
pub struct Gen {
    pub warehouses: i64,
    pub seed: u64,
    pub c: NurandC,
    /// The load's timestamp (C_SINCE, H_DATE, O_ENTRY_D), microseconds since 1970.
    pub now_us: i64,
}

impl Gen {
    pub fn new(warehouses: i64, seed: u64) -> Self {
        let now_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        Gen {
            warehouses,
            seed,
            c: NurandC::load(seed),
            now_us,
        }
    }

    /// O_OL_CNT of order `o` of district `(w, d)`: 5..=15.
    pub fn ol_cnt(&self, w: i64, d: i64, o: i64) -> i64 {
        let h = mix(self.seed ^ 0x4F4C_434E_5400_0000 ^ (((w * 16 + d) << 12) + o) as u64);
        5 + (h % 11) as i64
    }

    /// O_C_ID of order `o` of district `(w, d)`: a permutation of the district's customers.
    pub fn order_customer(&self, w: i64, d: i64, o: i64) -> i64 {
        let p = Permutation::new(CUSTOMERS as u32, mix(self.seed ^ ((w * 16 + d) as u64)));
        i64::from(p.apply((o - 1) as u32)) + 1
    }
}

/// The load plan: drop, create, the nine tables' rows, keys, ANALYZE.
pub fn plan(warehouses: i64, partitions: i64, seed: u64) -> LoadPlan {
    let gen = Gen::new(warehouses, seed);
    let lines = Arc::new(OnceLock::new());
    let sources: Vec<Box<dyn RowSource + Send>> = [
        Table::Warehouse,
        Table::District,
        Table::Customer,
        Table::History,
        Table::Orders,
        Table::NewOrder,
        Table::OrderLine,
        Table::Item,
        Table::Stock,
    ]
    .into_iter()
    .map(|table| {
        Box::new(Source {
            table,
            gen,
            lines: lines.clone(),
        }) as Box<dyn RowSource + Send>
    })
    .collect();
    LoadPlan {
        drop: schema::drop(),
        create: schema::create(warehouses, partitions, seed, gen.c),
        sources,
        keys: schema::keys(),
        after: schema::after(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Table {
    Warehouse,
    District,
    Customer,
    History,
    Orders,
    NewOrder,
    OrderLine,
    Item,
    Stock,
}

/// Where each order's lines start: per district the first line's row number, per order its
/// first line's offset within the district.
struct LineIndex {
    district_base: Vec<i64>,
    offsets: Vec<u16>,
}

impl LineIndex {
    fn new(gen: &Gen) -> Self {
        let n = (gen.warehouses * DISTRICTS) as usize;
        let mut district_base = Vec::with_capacity(n + 1);
        let mut offsets = Vec::with_capacity(n * CUSTOMERS as usize);
        let mut total = 0i64;
        for w in 1..=gen.warehouses {
            for d in 1..=DISTRICTS {
                district_base.push(total);
                let mut off = 0i64;
                for o in 1..=CUSTOMERS {
                    offsets.push(off as u16);
                    off += gen.ol_cnt(w, d, o);
                }
                total += off;
            }
        }
        district_base.push(total);
        LineIndex {
            district_base,
            offsets,
        }
    }

    fn total(&self) -> i64 {
        *self.district_base.last().unwrap_or(&0)
    }

    /// Row `k` → (district index, order id, line number).
    fn locate(&self, k: i64) -> (i64, i64, i64) {
        let di = self.district_base.partition_point(|&b| b <= k) - 1;
        let r = (k - self.district_base[di]) as u16;
        let offs = &self.offsets[di * CUSTOMERS as usize..(di + 1) * CUSTOMERS as usize];
        let oi = offs.partition_point(|&x| x <= r) - 1;
        (di as i64, oi as i64 + 1, i64::from(r - offs[oi]) + 1)
    }
}

struct Source {
    table: Table,
    gen: Gen,
    /// built on first use (a run that only builds the workload does not need it)
    lines: Arc<OnceLock<LineIndex>>,
}

impl Source {
    fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.gen))
    }
}

const VC: &str = "character varying";
const CH: &str = "character";
const INT: &str = "integer";
const NUM: &str = "numeric";
const TS: &str = "timestamp without time zone";

const WAREHOUSE_COLS: [&str; 9] = [INT, VC, VC, VC, VC, CH, CH, NUM, NUM];
const DISTRICT_COLS: [&str; 11] = [INT, INT, VC, VC, VC, VC, CH, CH, NUM, NUM, INT];
const CUSTOMER_COLS: [&str; 21] = [
    INT, INT, INT, VC, CH, VC, VC, VC, VC, CH, CH, CH, TS, CH, NUM, NUM, NUM, NUM, INT, INT, VC,
];
const HISTORY_COLS: [&str; 8] = [INT, INT, INT, INT, INT, TS, NUM, VC];
const ORDERS_COLS: [&str; 8] = [INT, INT, INT, INT, TS, INT, INT, INT];
const NEW_ORDER_COLS: [&str; 3] = [INT, INT, INT];
const ORDER_LINE_COLS: [&str; 10] = [INT, INT, INT, INT, INT, INT, TS, INT, NUM, CH];
const ITEM_COLS: [&str; 5] = [INT, INT, VC, NUM, VC];
const STOCK_COLS: [&str; 17] = [
    INT, INT, INT, CH, CH, CH, CH, CH, CH, CH, CH, CH, CH, INT, INT, INT, VC,
];

impl RowSource for Source {
    fn table(&self) -> &str {
        schema::TABLES[self.table as usize]
    }

    fn rows(&self) -> i64 {
        let w = self.gen.warehouses;
        match self.table {
            Table::Warehouse => w,
            Table::District => w * DISTRICTS,
            Table::Customer | Table::History | Table::Orders => w * DISTRICTS * CUSTOMERS,
            Table::NewOrder => w * DISTRICTS * (CUSTOMERS - FIRST_NEW_ORDER + 1),
            Table::OrderLine => self.lines().total(),
            Table::Item => ITEMS,
            Table::Stock => w * ITEMS,
        }
    }

    fn push_row(&self, buf: &mut Vec<u8>, k: i64, format: CopyFormat) {
        let mut r = Rng::for_row(self.gen.seed, self.table as u64 + 1, k);
        let g = &self.gen;
        match self.table {
            Table::Warehouse => warehouse(buf, format, &mut r, k + 1),
            Table::District => district(buf, format, &mut r, k / DISTRICTS + 1, k % DISTRICTS + 1),
            Table::Customer => customer(buf, format, &mut r, g, k),
            Table::History => history(buf, format, &mut r, g, k),
            Table::Orders => order(buf, format, &mut r, g, k),
            Table::NewOrder => {
                let per = CUSTOMERS - FIRST_NEW_ORDER + 1;
                let mut row = Row::begin(buf, format, 3);
                row.int(FIRST_NEW_ORDER + k % per)
                    .int((k / per) % DISTRICTS + 1)
                    .int(k / (per * DISTRICTS) + 1);
                row.end();
            }
            Table::OrderLine => order_line(buf, format, &mut r, g, self.lines(), k),
            Table::Item => item(buf, format, &mut r, k + 1),
            Table::Stock => stock(buf, format, &mut r, k % ITEMS + 1, k / ITEMS + 1),
        }
    }

    fn binary_columns(&self) -> Option<&'static [&'static str]> {
        Some(match self.table {
            Table::Warehouse => &WAREHOUSE_COLS,
            Table::District => &DISTRICT_COLS,
            Table::Customer => &CUSTOMER_COLS,
            Table::History => &HISTORY_COLS,
            Table::Orders => &ORDERS_COLS,
            Table::NewOrder => &NEW_ORDER_COLS,
            Table::OrderLine => &ORDER_LINE_COLS,
            Table::Item => &ITEM_COLS,
            Table::Stock => &STOCK_COLS,
        })
    }
}

/// Name, two streets, city, state, zip (WAREHOUSE and DISTRICT).
fn address(row: &mut Row<'_>, r: &mut Rng, name: bool) {
    if name {
        row.text_with(|b| r.astring(b, 6, 10));
    }
    row.text_with(|b| r.astring(b, 10, 20))
        .text_with(|b| r.astring(b, 10, 20))
        .text_with(|b| r.astring(b, 10, 20))
        .text_with(|b| r.astring(b, 2, 2))
        .text_with(|b| r.zip(b));
}

fn warehouse(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, w: i64) {
    let mut row = Row::begin(buf, f, 9);
    row.int(w);
    address(&mut row, r, true);
    row.num(r.range(0, 2000), 4).num(30_000_000, 2);
    row.end();
}

fn district(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, w: i64, d: i64) {
    let mut row = Row::begin(buf, f, 11);
    row.int(d).int(w);
    address(&mut row, r, true);
    row.num(r.range(0, 2000), 4)
        .num(3_000_000, 2)
        .int(CUSTOMERS + 1);
    row.end();
}

/// Row `k` of a per-customer table → (warehouse, district, customer/order id).
fn wdc(k: i64) -> (i64, i64, i64) {
    (
        k / (DISTRICTS * CUSTOMERS) + 1,
        (k / CUSTOMERS) % DISTRICTS + 1,
        k % CUSTOMERS + 1,
    )
}

fn customer(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, g: &Gen, k: i64) {
    let (w, d, c) = wdc(k);
    let mut row = Row::begin(buf, f, 21);
    row.int(c).int(d).int(w);
    row.text_with(|b| r.astring(b, 8, 16)).text(b"OE");
    let name = if c <= 1000 {
        c - 1
    } else {
        r.nurand(255, 0, 999, g.c.c_last)
    };
    row.text_with(|b| last_name(name, b));
    address(&mut row, r, false);
    row.text_with(|b| r.nstring(b, 16)).ts(g.now_us);
    let credit: &[u8] = if r.range(1, 100) <= 10 { b"BC" } else { b"GC" };
    row.text(credit)
        .num(5_000_000, 2)
        .num(r.range(0, 5000), 4)
        .num(-1000, 2)
        .num(1000, 2)
        .int(1)
        .int(0)
        .text_with(|b| r.astring(b, 300, 500));
    row.end();
}

fn history(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, g: &Gen, k: i64) {
    let (w, d, c) = wdc(k);
    let mut row = Row::begin(buf, f, 8);
    row.int(c)
        .int(d)
        .int(w)
        .int(d)
        .int(w)
        .ts(g.now_us)
        .num(1000, 2);
    row.text_with(|b| r.astring(b, 12, 24));
    row.end();
}

fn order(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, g: &Gen, k: i64) {
    let (w, d, o) = wdc(k);
    let mut row = Row::begin(buf, f, 8);
    row.int(o)
        .int(d)
        .int(w)
        .int(g.order_customer(w, d, o))
        .ts(g.now_us);
    if o < FIRST_NEW_ORDER {
        row.int(r.range(1, 10));
    } else {
        row.null();
    }
    row.int(g.ol_cnt(w, d, o)).int(1);
    row.end();
}

fn order_line(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, g: &Gen, idx: &LineIndex, k: i64) {
    let (di, o, n) = idx.locate(k);
    let (w, d) = (di / DISTRICTS + 1, di % DISTRICTS + 1);
    let delivered = o < FIRST_NEW_ORDER;
    let mut row = Row::begin(buf, f, 10);
    row.int(o)
        .int(d)
        .int(w)
        .int(n)
        .int(r.range(1, ITEMS))
        .int(w);
    if delivered {
        row.ts(g.now_us);
    } else {
        row.null();
    }
    row.int(5)
        .num(if delivered { 0 } else { r.range(1, 999_999) }, 2)
        .text_with(|b| r.astring(b, 24, 24));
    row.end();
}

fn item(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, i: i64) {
    let mut row = Row::begin(buf, f, 5);
    row.int(i).int(r.range(1, 10_000));
    row.text_with(|b| r.astring(b, 14, 24))
        .num(r.range(100, 10_000), 2)
        .text_with(|b| r.data_with_original(b));
    row.end();
}

fn stock(buf: &mut Vec<u8>, f: CopyFormat, r: &mut Rng, i: i64, w: i64) {
    let mut row = Row::begin(buf, f, 17);
    row.int(i).int(w).int(r.range(10, 100));
    for _ in 0..10 {
        row.text_with(|b| r.astring(b, 24, 24));
    }
    row.int(0)
        .int(0)
        .int(0)
        .text_with(|b| r.data_with_original(b));
    row.end();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_lines_are_addressed_by_row() {
        let g = Gen::new(2, 5);
        let idx = LineIndex::new(&g);
        let mut k = 0;
        for w in 1..=2 {
            for d in 1..=DISTRICTS {
                for o in 1..=CUSTOMERS {
                    for n in 1..=g.ol_cnt(w, d, o) {
                        if k % 997 == 0 || o == CUSTOMERS {
                            assert_eq!(idx.locate(k), ((w - 1) * DISTRICTS + d - 1, o, n));
                        }
                        k += 1;
                    }
                }
            }
        }
        assert_eq!(idx.total(), k);
    }

    #[test]
    fn text_rows_have_one_field_per_column() {
        let p = plan(1, 0, 3);
        for src in &p.sources {
            let mut b = Vec::new();
            src.push_row(&mut b, src.rows() - 1, CopyFormat::Text);
            let fields = b.split(|&c| c == b'\t').count();
            assert_eq!(
                Some(fields),
                src.binary_columns().map(|c| c.len()),
                "{}: {}",
                src.table(),
                String::from_utf8_lossy(&b)
            );
        }
    }
}
