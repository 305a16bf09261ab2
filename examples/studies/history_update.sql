-- TPC-B-like, with the balances kept as history values; old \setrandom syntax, as the study had.
\set naccounts 100000 * :scale
\set nbranches 1 * :scale
\set ntellers 10 * :scale
\setrandom aid 1 :naccounts
\setrandom bid 1 :nbranches
\setrandom tid 1 :ntellers
\setrandom delta -5000 5000
BEGIN;
UPDATE pgbench_accounts SET abalance = hist_add(abalance, :delta) WHERE aid = :aid;
SELECT hist_value(abalance) FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = hist_add(tbalance, :delta) WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = hist_add(bbalance, :delta) WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
