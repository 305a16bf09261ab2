//! The consistency conditions of clause 3.3.2 as SQL: each query returns the keys of the rows
//! that break it (the number of them in the first column, up to ten keys in the second), so a
//! passing condition returns no row. Condition 11 holds only before any Delivery (right after
//! the load).

/// One consistency condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// Its number in clause 3.3.2 (1..=12).
    pub number: u8,
    /// What must hold.
    pub rule: &'static str,
    /// `SELECT count, key` of the offending rows (at most 10).
    pub sql: String,
}

const WD: &str = "format('w_id=%s d_id=%s'";

fn wrap(inner: &str) -> String {
    format!("SELECT count(*) OVER (), k FROM ({inner}) AS bad(k) LIMIT 10")
}

/// Conditions 1–10 and 12, and 11 when `initial` (the database as loaded).
pub fn conditions(initial: bool) -> Vec<Condition> {
    let mut v = vec![
        (1, "W_YTD = sum(D_YTD) per warehouse",
         "SELECT format('w_id=%s', w_id) FROM warehouse LEFT JOIN (SELECT d_w_id, sum(d_ytd) s FROM district GROUP BY d_w_id) d \
          ON d.d_w_id = w_id WHERE w_ytd IS DISTINCT FROM d.s ORDER BY w_id".to_string()),
        (2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district",
         format!("SELECT {WD}, d_w_id, d_id) FROM district \
          LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) m FROM orders GROUP BY 1, 2) o ON o.o_w_id = d_w_id AND o.o_d_id = d_id \
          LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) m FROM new_order GROUP BY 1, 2) n ON n.no_w_id = d_w_id AND n.no_d_id = d_id \
          WHERE d_next_o_id - 1 IS DISTINCT FROM o.m OR (n.m IS NOT NULL AND n.m <> d_next_o_id - 1) ORDER BY d_w_id, d_id")),
        (3, "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district",
         format!("SELECT {WD}, no_w_id, no_d_id) FROM new_order GROUP BY no_w_id, no_d_id \
          HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*) ORDER BY no_w_id, no_d_id")),
        (4, "sum(O_OL_CNT) = rows in ORDER-LINE per district",
         format!("SELECT {WD}, coalesce(o.w, l.w), coalesce(o.d, l.d)) FROM \
          (SELECT o_w_id w, o_d_id d, sum(o_ol_cnt) s FROM orders GROUP BY 1, 2) o FULL JOIN \
          (SELECT ol_w_id w, ol_d_id d, count(*) c FROM order_line GROUP BY 1, 2) l ON l.w = o.w AND l.d = o.d \
          WHERE o.s IS DISTINCT FROM l.c ORDER BY 1")),
        (5, "O_CARRIER_ID is null iff a NEW-ORDER row exists, per order",
         format!("SELECT {WD} || ' o_id=%s', o_w_id, o_d_id, o_id) FROM orders LEFT JOIN new_order \
          ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
          WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL) ORDER BY o_w_id, o_d_id, o_id")),
        (6, "O_OL_CNT = rows in ORDER-LINE per order",
         format!("SELECT {WD} || ' o_id=%s', o_w_id, o_d_id, o_id) FROM orders LEFT JOIN \
          (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) c FROM order_line GROUP BY 1, 2, 3) l \
          ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id \
          WHERE o_ol_cnt IS DISTINCT FROM coalesce(l.c, 0) ORDER BY o_w_id, o_d_id, o_id")),
        (7, "OL_DELIVERY_D is null iff O_CARRIER_ID is null, per order line",
         format!("SELECT {WD} || ' o_id=%s ol_number=%s', ol_w_id, ol_d_id, ol_o_id, ol_number) FROM order_line \
          JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
          WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL) ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number")),
        (8, "W_YTD = sum(H_AMOUNT) per warehouse",
         "SELECT format('w_id=%s', w_id) FROM warehouse LEFT JOIN (SELECT h_w_id, sum(h_amount) s FROM history GROUP BY 1) h \
          ON h.h_w_id = w_id WHERE w_ytd IS DISTINCT FROM coalesce(h.s, 0) ORDER BY w_id".to_string()),
        (9, "D_YTD = sum(H_AMOUNT) per district",
         format!("SELECT {WD}, d_w_id, d_id) FROM district LEFT JOIN \
          (SELECT h_w_id, h_d_id, sum(h_amount) s FROM history GROUP BY 1, 2) h ON h.h_w_id = d_w_id AND h.h_d_id = d_id \
          WHERE d_ytd IS DISTINCT FROM coalesce(h.s, 0) ORDER BY d_w_id, d_id")),
        (10, "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
         format!("SELECT {WD} || ' c_id=%s', c_w_id, c_d_id, c_id) FROM customer {DELIVERED} \
          LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) s FROM history GROUP BY 1, 2, 3) h \
          ON h.h_c_w_id = c_w_id AND h.h_c_d_id = c_d_id AND h.h_c_id = c_id \
          WHERE c_balance IS DISTINCT FROM coalesce(ol.s, 0) - coalesce(h.s, 0) ORDER BY c_w_id, c_d_id, c_id")),
        (12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
         format!("SELECT {WD} || ' c_id=%s', c_w_id, c_d_id, c_id) FROM customer {DELIVERED} \
          WHERE c_balance + c_ytd_payment IS DISTINCT FROM coalesce(ol.s, 0) ORDER BY c_w_id, c_d_id, c_id")),
    ];
    if initial {
        v.push((11, "rows in ORDER - rows in NEW-ORDER = 2100 per district (as loaded)",
         format!("SELECT {WD}, d_w_id, d_id) FROM district \
          LEFT JOIN (SELECT o_w_id, o_d_id, count(*) c FROM orders GROUP BY 1, 2) o ON o.o_w_id = d_w_id AND o.o_d_id = d_id \
          LEFT JOIN (SELECT no_w_id, no_d_id, count(*) c FROM new_order GROUP BY 1, 2) n ON n.no_w_id = d_w_id AND n.no_d_id = d_id \
          WHERE coalesce(o.c, 0) - coalesce(n.c, 0) <> 2100 ORDER BY d_w_id, d_id")));
        v.sort_by_key(|c| c.0);
    }
    v.into_iter()
        .map(|(number, rule, inner)| Condition {
            number,
            rule,
            sql: wrap(&inner),
        })
        .collect()
}

/// Delivered order-line amounts per customer, joined as `ol`.
const DELIVERED: &str = "LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) s FROM orders JOIN order_line \
     ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3) ol \
     ON ol.o_w_id = c_w_id AND ol.o_d_id = c_d_id AND ol.o_c_id = c_id";

/// A condition checked on a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub condition: Condition,
    /// rows breaking it (0 = it holds)
    pub offending: i64,
    /// the first (at most ten) offending keys
    pub keys: Vec<String>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.offending == 0
    }

    pub fn line(&self) -> String {
        line(&self.condition, self.offending, &self.keys)
    }
}

/// Checks every condition (11 too when `initial`) on the server `config` names, in one
/// repeatable-read transaction (one snapshot for all of them).
pub fn run(config: &pgrig_wire::Config, initial: bool) -> Result<Vec<Outcome>, pgrig_wire::Error> {
    let mut conn = pgrig_wire::Connection::connect_rt(config)?;
    pgrig_wire::rt::block_on(async move {
        conn.execute_simple("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await?;
        let mut out = Vec::new();
        for condition in conditions(initial) {
            let res = conn.simple_query(&condition.sql).await?;
            let rows = res.into_iter().next().map(|r| r.rows).unwrap_or_default();
            let offending = rows
                .first()
                .and_then(|r| r.get(0))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let keys = rows
                .iter()
                .filter_map(|r| r.get(1).map(str::to_string))
                .collect();
            out.push(Outcome {
                condition,
                offending,
                keys,
            });
        }
        conn.execute_simple("COMMIT").await?;
        conn.close().await;
        Ok(out)
    })
}

/// The number of WAREHOUSE rows.
pub fn count_warehouses(config: &pgrig_wire::Config) -> Result<i64, pgrig_wire::Error> {
    let mut conn = pgrig_wire::Connection::connect_rt(config)?;
    pgrig_wire::rt::block_on(async move {
        let res = conn.simple_query("SELECT count(*) FROM warehouse").await?;
        conn.close().await;
        Ok(res
            .first()
            .and_then(|r| r.rows.first())
            .and_then(|r| r.get(0))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0))
    })
}

/// One condition's report line: `3.3.2.N  pass  rule` or `... FAIL ... (n rows: keys...)`.
pub fn line(c: &Condition, offending: i64, keys: &[String]) -> String {
    if offending == 0 {
        format!("3.3.2.{:<2} pass  {}", c.number, c.rule)
    } else {
        let more = if offending > keys.len() as i64 {
            ", ..."
        } else {
            ""
        };
        format!(
            "3.3.2.{:<2} FAIL  {} ({offending} offending: {}{more})",
            c.number,
            c.rule,
            keys.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eleven_only_for_the_initial_state() {
        let n: Vec<u8> = conditions(false).iter().map(|c| c.number).collect();
        assert_eq!(n, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
        assert_eq!(conditions(true).len(), 12);
    }

    #[test]
    fn lines_name_the_offenders() {
        let c = &conditions(false)[0];
        assert!(line(c, 0, &[]).contains("pass"));
        let l = line(c, 11, &["w_id=1".into()]);
        assert!(
            l.contains("FAIL") && l.contains("w_id=1, ...") && l.contains("11 offending"),
            "{l}"
        );
    }
}
