//! The five transactions as server-side PL/pgSQL functions (option `procedures=on`, what
//! HammerDB runs): the same statements as [`super::sql`]'s client-side ones, in the same order,
//! with the inputs the programs draw in Rust. Created with `CREATE OR REPLACE` by the
//! workload's preflight (so they always match this binary, and a dataset loaded without them,
//! or by an older pgrig, serves both `procedures=off` and `on` — one load for a study
//! comparing the two); dropped with the tables.
//!
//! New-Order does not raise on the unused item: it returns the item (`out_unused`) and the
//! program ends its transaction block with ROLLBACK, so the engine counts the intended
//! rollback as for client-side SQL (an error would abort the client).

/// The functions' names (for DROP).
pub const NAMES: [&str; 5] = [
    "tpcc_new_order",
    "tpcc_payment",
    "tpcc_order_status",
    "tpcc_delivery",
    "tpcc_stock_level",
];

/// The calls the programs run (the statements' SQL).
pub const CALL_NEW_ORDER: &str =
    "SELECT * FROM tpcc_new_order($1, $2, $3, $4, $5::integer[], $6::integer[], $7::integer[])";
pub const CALL_PAYMENT: &str =
    "SELECT * FROM tpcc_payment($1, $2, $3, $4, $5::integer, $6::text, $7::numeric)";
pub const CALL_ORDER_STATUS: &str =
    "SELECT * FROM tpcc_order_status($1, $2, $3::integer, $4::text)";
pub const CALL_DELIVERY: &str = "SELECT * FROM tpcc_delivery($1, $2)";
pub const CALL_STOCK_LEVEL: &str = "SELECT * FROM tpcc_stock_level($1, $2, $3)";

const NEW_ORDER: &str = r#"CREATE OR REPLACE FUNCTION tpcc_new_order(p_w integer, p_d integer, p_c integer,
  p_all_local integer, p_items integer[], p_supply integer[], p_qty integer[],
  OUT out_o_id integer, OUT out_unused integer, OUT out_total numeric)
LANGUAGE plpgsql AS $f$
DECLARE
  v_w_tax numeric; v_d_tax numeric; v_discount numeric; v_last text; v_credit text;
  v_price numeric; v_name text; v_idata text; v_squant integer; v_sdata text; v_dist text;
  v_amount numeric; v_sum numeric := 0; v_n integer := cardinality(p_items);
BEGIN
  SELECT w_tax INTO STRICT v_w_tax FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d
    RETURNING d_tax, d_next_o_id - 1 INTO STRICT v_d_tax, out_o_id;
  SELECT c_discount, c_last, c_credit INTO STRICT v_discount, v_last, v_credit
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
    VALUES (out_o_id, p_d, p_w, p_c, localtimestamp, v_n, p_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (out_o_id, p_d, p_w);
  FOR i IN 1..v_n LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_name, v_idata FROM item WHERE i_id = p_items[i];
    IF NOT FOUND THEN
      -- the unused item: the caller rolls the transaction back
      out_unused := p_items[i];
      RETURN;
    END IF;
    UPDATE stock SET s_quantity = CASE WHEN s_quantity >= p_qty[i] + 10 THEN s_quantity - p_qty[i]
        ELSE s_quantity - p_qty[i] + 91 END,
      s_ytd = s_ytd + p_qty[i], s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + (p_supply[i] <> p_w)::integer
      WHERE s_i_id = p_items[i] AND s_w_id = p_supply[i]
      RETURNING s_quantity, s_data, CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02
        WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
        WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO STRICT v_squant, v_sdata, v_dist;
    v_amount := p_qty[i] * v_price;
    v_sum := v_sum + v_amount;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
        ol_quantity, ol_amount, ol_dist_info)
      VALUES (out_o_id, p_d, p_w, i, p_items[i], p_supply[i], p_qty[i], v_amount, v_dist);
  END LOOP;
  out_total := round(v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax), 2);
END $f$"#;

/// The customer chosen by last name: the middle one (position n/2 rounded up) sorted by
/// C_FIRST, by the same query the client-side programs send.
const BY_NAME: &str = r#"CREATE OR REPLACE FUNCTION tpcc_customer_by_name(p_w integer, p_d integer, p_last text)
RETURNS integer LANGUAGE plpgsql AS $f$
DECLARE v_ids integer[];
BEGIN
  v_ids := ARRAY(SELECT c_id FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
    ORDER BY c_first);
  IF cardinality(v_ids) = 0 THEN
    RAISE EXCEPTION 'tpcc: no customer with last name % in warehouse % district %', p_last, p_w, p_d;
  END IF;
  RETURN v_ids[(cardinality(v_ids) + 1) / 2];
END $f$"#;

const PAYMENT: &str = r#"CREATE OR REPLACE FUNCTION tpcc_payment(p_w integer, p_d integer, p_c_w integer,
  p_c_d integer, p_c_id integer, p_c_last text, p_amount numeric,
  OUT out_c_id integer, OUT out_balance numeric)
LANGUAGE plpgsql AS $f$
DECLARE
  w record; d record; c record;
BEGIN
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w
    RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO STRICT w;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d
    RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO STRICT d;
  out_c_id := coalesce(p_c_id, tpcc_customer_by_name(p_c_w, p_c_d, p_c_last));
  UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
      c_payment_cnt = c_payment_cnt + 1,
      c_data = CASE WHEN c_credit = 'BC' THEN substr(format('%s %s %s %s %s %s | ', out_c_id, p_c_d,
        p_c_w, p_d, p_w, p_amount) || c_data, 1, 500) ELSE c_data END
    WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = out_c_id
    RETURNING c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
      c_since, c_credit, c_credit_lim, c_discount, c_balance,
      CASE WHEN c_credit = 'BC' THEN substr(c_data, 1, 200) END AS data INTO STRICT c;
  out_balance := c.c_balance;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (out_c_id, p_c_d, p_c_w, p_d, p_w, localtimestamp, p_amount, w.w_name || '    ' || d.d_name);
END $f$"#;

const ORDER_STATUS: &str = r#"CREATE OR REPLACE FUNCTION tpcc_order_status(p_w integer, p_d integer,
  p_c_id integer, p_c_last text,
  OUT out_c_id integer, OUT out_balance numeric, OUT out_o_id integer, OUT out_lines integer)
LANGUAGE plpgsql AS $f$
DECLARE
  c record; o record; l record;
BEGIN
  out_c_id := coalesce(p_c_id, tpcc_customer_by_name(p_w, p_d, p_c_last));
  SELECT c_balance, c_first, c_middle, c_last INTO STRICT c
    FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = out_c_id;
  out_balance := c.c_balance;
  out_lines := 0;
  SELECT o_id, o_entry_d, o_carrier_id INTO o FROM orders
    WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = out_c_id ORDER BY o_id DESC LIMIT 1;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  out_o_id := o.o_id;
  FOR l IN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
      WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = o.o_id LOOP
    out_lines := out_lines + 1;
  END LOOP;
END $f$"#;

const DELIVERY: &str = r#"CREATE OR REPLACE FUNCTION tpcc_delivery(p_w integer, p_carrier integer,
  OUT out_skipped integer)
LANGUAGE plpgsql AS $f$
DECLARE
  v_o integer; v_c integer; v_total numeric;
BEGIN
  out_skipped := 0;
  FOR v_d IN 1..10 LOOP
    v_o := NULL;
    DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id =
        (SELECT no_o_id FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
          ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING no_o_id INTO v_o;
    IF v_o IS NULL THEN
      out_skipped := out_skipped + 1;
      CONTINUE;
    END IF;
    UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o
      RETURNING o_c_id INTO STRICT v_c;
    WITH l AS (UPDATE order_line SET ol_delivery_d = localtimestamp
        WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o RETURNING ol_amount)
      SELECT coalesce(sum(ol_amount), 0) INTO v_total FROM l;
    UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'tpcc_delivery: customer % of order % (warehouse %, district %) not found',
        v_c, v_o, p_w, v_d;
    END IF;
  END LOOP;
END $f$"#;

const STOCK_LEVEL: &str = r#"CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w integer, p_d integer,
  p_threshold integer, OUT out_low integer)
LANGUAGE plpgsql AS $f$
DECLARE
  v_next integer;
BEGIN
  SELECT d_next_o_id INTO STRICT v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT count(DISTINCT s_i_id) INTO out_low FROM order_line JOIN stock
      ON s_w_id = ol_w_id AND s_i_id = ol_i_id
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
      AND s_quantity < p_threshold;
END $f$"#;

/// `CREATE OR REPLACE FUNCTION` for the six functions (the five and the by-name helper).
pub fn create() -> Vec<String> {
    [
        BY_NAME,
        NEW_ORDER,
        PAYMENT,
        ORDER_STATUS,
        DELIVERY,
        STOCK_LEVEL,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `DROP FUNCTION IF EXISTS` for the six functions.
pub fn drop() -> String {
    let mut names: Vec<&str> = NAMES.to_vec();
    names.push("tpcc_customer_by_name");
    format!("drop function if exists {}", names.join(", "))
}
