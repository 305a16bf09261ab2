//! The client-side SQL of TPC-C's five transactions (clause 2.4–2.8), one statement per
//! database access the profiles describe, with `$n` parameters, and the calls of their
//! server-side functions ([`super::procs`]); the ids the programs use.

use pgrig_engine::workload::{Catalogue, Statement, StmtId, TxType};

use super::procs;

pub const BEGIN: StmtId = 0;
pub const COMMIT: StmtId = 1;
pub const ROLLBACK: StmtId = 2;
// New-Order
pub const NO_WAREHOUSE: StmtId = 3;
pub const NO_DISTRICT: StmtId = 4;
pub const NO_CUSTOMER: StmtId = 5;
pub const NO_ORDER: StmtId = 6;
pub const NO_NEW_ORDER: StmtId = 7;
pub const NO_ITEM: StmtId = 8;
pub const NO_STOCK: StmtId = 9;
pub const NO_LINE: StmtId = 10;
// Payment
pub const PAY_WAREHOUSE: StmtId = 11;
pub const PAY_DISTRICT: StmtId = 12;
pub const PAY_BY_NAME: StmtId = 13;
pub const PAY_CUSTOMER: StmtId = 14;
pub const PAY_HISTORY: StmtId = 15;
// Order-Status
pub const OS_BY_NAME: StmtId = 16;
pub const OS_CUSTOMER: StmtId = 17;
pub const OS_ORDER: StmtId = 18;
pub const OS_LINES: StmtId = 19;
// Delivery
pub const DL_NEW_ORDER: StmtId = 20;
pub const DL_ORDER: StmtId = 21;
pub const DL_LINES: StmtId = 22;
pub const DL_CUSTOMER: StmtId = 23;
// Stock-Level
pub const SL_DISTRICT: StmtId = 24;
pub const SL_STOCK: StmtId = 25;
// Server-side functions (`procedures=on`, [`super::procs`])
pub const PROC_NEW_ORDER: StmtId = 26;
pub const PROC_PAYMENT: StmtId = 27;
pub const PROC_ORDER_STATUS: StmtId = 28;
pub const PROC_DELIVERY: StmtId = 29;
pub const PROC_STOCK_LEVEL: StmtId = 30;

/// Transaction type indices (the order of [`catalogue`]'s types).
pub const NEW_ORDER: usize = 0;
pub const PAYMENT: usize = 1;
pub const ORDER_STATUS: usize = 2;
pub const DELIVERY: usize = 3;
pub const STOCK_LEVEL: usize = 4;
/// `deferred_delivery=on`: the queued Delivery's business transaction, run after the
/// terminal's Delivery (which then only queues it) and never drawn from the deck.
pub const DELIVERY_DEFERRED: usize = 5;

/// The transaction types' names, as the run document's scripts are named.
pub const TX_NAMES: [&str; 6] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
    "delivery_deferred",
];

/// Delivery's step on NEW-ORDER: the district's oldest undelivered order that no concurrent
/// Delivery holds (`SKIP LOCKED`: under read committed, two Deliveries on one warehouse take
/// the oldest and the next oldest instead of both the oldest, one finding nothing), deleted.
/// No row means the district has no order left to deliver.
pub const DL_OLDEST: &str =
    "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = \
    (SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 \
    ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING no_o_id";

const BY_NAME: &str =
    "SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first";

fn statements() -> Vec<Statement> {
    let q = Statement::new;
    vec![
        Statement::simple("begin", "BEGIN"),
        Statement::simple("commit", "COMMIT"),
        Statement::simple("rollback", "ROLLBACK"),
        q("new_order.warehouse", "SELECT w_tax FROM warehouse WHERE w_id = $1").with_rows(),
        q("new_order.district", "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2 RETURNING d_tax, d_next_o_id - 1").with_rows(),
        q("new_order.customer", "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3").with_rows(),
        q("new_order.order", "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES ($1, $2, $3, $4, localtimestamp, $5, $6)"),
        q("new_order.new_order", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)"),
        q("new_order.item", "SELECT i_price, i_name, i_data FROM item WHERE i_id = $1").with_rows(),
        q("new_order.stock", "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= $3 + 10 THEN s_quantity - $3 ELSE s_quantity - $3 + 91 END, \
           s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $4 WHERE s_i_id = $1 AND s_w_id = $2 \
           RETURNING s_quantity, s_data, CASE $5::integer WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 \
           WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END").with_rows(),
        q("new_order.order_line", "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) \
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"),
        q("payment.warehouse", "UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1 RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip").with_rows(),
        q("payment.district", "UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2 RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip").with_rows(),
        q("payment.customer_by_name", BY_NAME).with_rows(),
        q("payment.customer", "UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, c_payment_cnt = c_payment_cnt + 1, \
           c_data = CASE WHEN c_credit = 'BC' THEN substr($5::text || c_data, 1, 500) ELSE c_data END \
           WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 \
           RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, \
           c_credit_lim, c_discount, c_balance, CASE WHEN c_credit = 'BC' THEN substr(c_data, 1, 200) END").with_rows(),
        q("payment.history", "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
           VALUES ($1, $2, $3, $4, $5, localtimestamp, $6, $7)"),
        q("order_status.customer_by_name", BY_NAME).with_rows(),
        q("order_status.customer", "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3").with_rows(),
        q("order_status.order", "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1").with_rows(),
        q("order_status.order_lines", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
           WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"),
        q("delivery.new_order", DL_OLDEST).with_rows(),
        q("delivery.order", "UPDATE orders SET o_carrier_id = $4 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 RETURNING o_c_id").with_rows(),
        q("delivery.order_lines", "WITH l AS (UPDATE order_line SET ol_delivery_d = localtimestamp WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 \
           RETURNING ol_amount) SELECT coalesce(sum(ol_amount), 0) FROM l").with_rows(),
        q("delivery.customer", "UPDATE customer SET c_balance = c_balance + $4, c_delivery_cnt = c_delivery_cnt + 1 \
           WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"),
        q("stock_level.district", "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2").with_rows(),
        q("stock_level.stock", "SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id \
           WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3 - 20 AND ol_o_id < $3 AND s_quantity < $4").with_rows(),
        q("new_order.function", procs::CALL_NEW_ORDER).with_rows(),
        q("payment.function", procs::CALL_PAYMENT).with_rows(),
        q("order_status.function", procs::CALL_ORDER_STATUS).with_rows(),
        q("delivery.function", procs::CALL_DELIVERY).with_rows(),
        q("stock_level.function", procs::CALL_STOCK_LEVEL).with_rows(),
    ]
}

/// The catalogue of client-side SQL (`procedures=off`): every statement, and the five types
/// with the minimum mix's weights.
pub fn catalogue() -> Catalogue {
    catalogue_for(false, false)
}

/// The catalogue: every statement (both ways of running), and the five types with the
/// minimum mix's weights (10/23 New-Order, 10/23 Payment, 1/23 each of the others: the card
/// deck's proportions), each listing the statements it runs — client-side SQL, or with
/// `procedures` its function call (New-Order inside BEGIN and COMMIT or ROLLBACK, the others
/// one autocommitted statement). With `deferred` Delivery runs no statement (it queues the
/// request in the client) and a sixth type, `delivery_deferred` (weight 0), runs Delivery's.
pub fn catalogue_for(procedures: bool, deferred: bool) -> Catalogue {
    let ids = |a: StmtId, b: StmtId| {
        let mut v = vec![BEGIN];
        v.extend(a..=b);
        v.push(COMMIT);
        v
    };
    let types = if procedures {
        [
            (vec![BEGIN, PROC_NEW_ORDER, COMMIT, ROLLBACK], DECK[0]),
            (vec![PROC_PAYMENT], DECK[1]),
            (vec![PROC_ORDER_STATUS], DECK[2]),
            (vec![PROC_DELIVERY], DECK[3]),
            (vec![PROC_STOCK_LEVEL], DECK[4]),
        ]
    } else {
        let mut no = ids(NO_WAREHOUSE, NO_LINE);
        no.push(ROLLBACK);
        [
            (no, DECK[0]),
            (ids(PAY_WAREHOUSE, PAY_HISTORY), DECK[1]),
            (ids(OS_BY_NAME, OS_LINES), DECK[2]),
            (ids(DL_NEW_ORDER, DL_CUSTOMER), DECK[3]),
            (ids(SL_DISTRICT, SL_STOCK), DECK[4]),
        ]
    };
    let mut types = types.to_vec();
    if deferred {
        let delivery = std::mem::take(&mut types[DELIVERY].0);
        types.push((delivery, 0));
    }
    Catalogue {
        statements: statements(),
        transactions: types
            .into_iter()
            .zip(TX_NAMES)
            .map(|((statements, weight), name)| TxType {
                name: name.into(),
                weight,
                statements,
            })
            .collect(),
    }
}

/// Cards of each type in one deck (clause 5.2.4.2's minimum mix over 23 cards).
pub const DECK: [u32; 5] = [10, 10, 1, 1, 1];
