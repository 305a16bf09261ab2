//! TPC-C's nine tables (clause 1.3) as PostgreSQL DDL: created without keys, optionally range
//! partitioned by warehouse (every table but ITEM), then the primary keys and the two secondary
//! indexes the transactions need (customers by last name, orders by customer) built after the
//! load, then ANALYZE. Beside them, `tpcc_dataset`: one row with the load's seed and NURand
//! constants, from which a run derives its own (clause 2.1.6.1).

use super::rand::NurandC;

/// The tables, in loading order.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "orders",
    "new_order",
    "order_line",
    "item",
    "stock",
];

/// Each table's columns (after the name) and its warehouse column (partition key).
const COLUMNS: [(&str, &str, &str); 9] = [
    (
        "warehouse",
        "w_id integer not null, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), \
         w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2)",
        "w_id",
    ),
    (
        "district",
        "d_id integer not null, d_w_id integer not null, d_name varchar(10), d_street_1 varchar(20), \
         d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4), \
         d_ytd numeric(12,2), d_next_o_id integer",
        "d_w_id",
    ),
    (
        "customer",
        "c_id integer not null, c_d_id integer not null, c_w_id integer not null, c_first varchar(16), \
         c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), \
         c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, \
         c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance numeric(12,2), \
         c_ytd_payment numeric(12,2), c_payment_cnt integer, c_delivery_cnt integer, c_data varchar(500)",
        "c_w_id",
    ),
    (
        "history",
        "h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer, h_w_id integer not null, \
         h_date timestamp, h_amount numeric(6,2), h_data varchar(24)",
        "h_w_id",
    ),
    (
        "orders",
        "o_id integer not null, o_d_id integer not null, o_w_id integer not null, o_c_id integer, \
         o_entry_d timestamp, o_carrier_id integer, o_ol_cnt integer, o_all_local integer",
        "o_w_id",
    ),
    (
        "new_order",
        "no_o_id integer not null, no_d_id integer not null, no_w_id integer not null",
        "no_w_id",
    ),
    (
        "order_line",
        "ol_o_id integer not null, ol_d_id integer not null, ol_w_id integer not null, \
         ol_number integer not null, ol_i_id integer, ol_supply_w_id integer, ol_delivery_d timestamp, \
         ol_quantity integer, ol_amount numeric(6,2), ol_dist_info char(24)",
        "ol_w_id",
    ),
    (
        "item",
        "i_id integer not null, i_im_id integer, i_name varchar(24), i_price numeric(5,2), i_data varchar(50)",
        "",
    ),
    (
        "stock",
        "s_i_id integer not null, s_w_id integer not null, s_quantity integer, s_dist_01 char(24), \
         s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), \
         s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd integer, \
         s_order_cnt integer, s_remote_cnt integer, s_data varchar(50)",
        "s_w_id",
    ),
];

/// `DROP TABLE IF EXISTS` for every table, and the server-side functions ([`super::procs`]).
pub fn drop() -> Vec<String> {
    vec![
        format!(
            "drop table if exists {}, {DATASET_TABLE} cascade",
            TABLES.join(", ")
        ),
        super::procs::drop(),
    ]
}

/// The table recording the load's seed and NURand constants.
pub const DATASET_TABLE: &str = "tpcc_dataset";

/// The query a run asks the dataset: `load_seed c_last c_id ol_i_id` as one text value.
pub const DATASET_QUERY: &str =
    "select concat_ws(' ', load_seed, c_last, c_id, ol_i_id) from tpcc_dataset";

/// `CREATE TABLE` statements; with `partitions` > 1, every table with a warehouse column is
/// range partitioned into that many contiguous warehouse ranges. First, [`DATASET_TABLE`] with
/// the load's seed and constants `c`.
pub fn create(warehouses: i64, partitions: i64, seed: u64, c: NurandC) -> Vec<String> {
    let mut out = vec![
        format!(
            "create table {DATASET_TABLE} (load_seed numeric(20) not null, c_last integer not null, \
             c_id integer not null, ol_i_id integer not null, loaded_at timestamptz not null default now())"
        ),
        format!(
            "insert into {DATASET_TABLE} (load_seed, c_last, c_id, ol_i_id) values ({seed}, {}, {}, {})",
            c.c_last, c.c_id, c.ol_i_id
        ),
    ];
    for (table, cols, wcol) in COLUMNS {
        if partitions > 1 && !wcol.is_empty() {
            out.push(format!(
                "create table {table} ({cols}) partition by range ({wcol})"
            ));
            let per = ((warehouses + partitions - 1) / partitions).max(1);
            let mut lo = 1;
            let mut p = 1;
            while lo <= warehouses {
                let hi = if p == partitions {
                    warehouses + 1
                } else {
                    (lo + per).min(warehouses + 1)
                };
                out.push(format!(
                    "create table {table}_{p} partition of {table} for values from ({lo}) to ({hi})"
                ));
                lo = hi;
                p += 1;
            }
        } else {
            out.push(format!("create table {table} ({cols})"));
        }
    }
    out
}

/// Primary keys and the secondary indexes (built concurrently after the load).
pub fn keys() -> Vec<String> {
    [
        "alter table warehouse add primary key (w_id)",
        "alter table district add primary key (d_w_id, d_id)",
        "alter table customer add primary key (c_w_id, c_d_id, c_id)",
        "create index customer_last_name on customer (c_w_id, c_d_id, c_last, c_first)",
        "alter table orders add primary key (o_w_id, o_d_id, o_id)",
        "create index orders_customer on orders (o_w_id, o_d_id, o_c_id, o_id)",
        "alter table new_order add primary key (no_w_id, no_d_id, no_o_id)",
        "alter table order_line add primary key (ol_w_id, ol_d_id, ol_o_id, ol_number)",
        "alter table item add primary key (i_id)",
        "alter table stock add primary key (s_w_id, s_i_id)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Run after the keys.
pub fn after() -> Vec<String> {
    vec!["analyze".into()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_cover_every_warehouse_once() {
        let sql = create(10, 3, 1, NurandC::load(1));
        let wh: Vec<_> = sql
            .iter()
            .filter(|s| s.contains("partition of warehouse "))
            .collect();
        assert_eq!(wh.len(), 3);
        assert!(wh[0].ends_with("from (1) to (5)"), "{}", wh[0]);
        assert!(wh[2].ends_with("from (9) to (11)"), "{}", wh[2]);
        assert!(sql
            .iter()
            .any(|s| s == &format!("create table item ({})", COLUMNS[7].1)));
    }
}
