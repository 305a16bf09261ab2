#!/usr/bin/env sysbench
-- transfer.lua: moves money between accounts in serializable transactions; serialization
-- failures (40001) roll back and restart the event (sysbench's "ignored errors").
-- Runs under sysbench 1.0.20 as it is, and in a pgrig study (lua_script.toml).
sysbench.cmdline.options = {
  accounts = {"Number of accounts", 1000},
}

function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL)")
  con:query(string.format(
    "INSERT INTO accounts SELECT g, 1000 FROM generate_series(1, %d) g", sysbench.opt.accounts))
end

function cleanup()
  sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS accounts")
end

function thread_init()
  con = sysbench.sql.driver():connect()
  move = con:prepare("UPDATE accounts SET balance = balance + ? WHERE id = ?")
  amount, id = move:bind_create(sysbench.sql.type.INT), move:bind_create(sysbench.sql.type.INT)
  move:bind_param(amount, id)
end

function event()
  local n = sysbench.opt.accounts
  con:query("BEGIN ISOLATION LEVEL SERIALIZABLE")
  amount:set(-10); id:set(sysbench.rand.uniform(1, n)); move:execute()
  amount:set(10);  id:set(sysbench.rand.uniform(1, n)); move:execute()
  con:query("COMMIT")
end
