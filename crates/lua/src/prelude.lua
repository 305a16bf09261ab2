-- pgrig-lua's prelude: the Lua half of sysbench 1.0's API, run in every Lua state before the
-- user's script. The Rust half (connections, random numbers, the clock, printing) is the table
-- `__pgrig` that the state is given; everything here is pgrig's own implementation of the
-- behaviour sysbench documents.
local R = __pgrig
__pgrig = nil
-- (a sysbench 0.5 script's options become globals, `--debug` as `debug`: keep the library)
local debug = debug

ffi = require("ffi")
local ffi = ffi
-- the C types and functions sysbench 1.0.20's internal modules declare before a script runs
-- (pgrig's own declarations of the same names, constants and layouts; the functions are the
-- binary's exported symbols, `exports.rs`). `sb_counter_inc` is not among them: scripts that
-- call it declare it themselves, as under sysbench. A script may declare a function again,
-- not a type or constant (LuaJIT: "attempt to redefine").
ffi.cdef[[
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
bool sb_more_events(int thread_id);

typedef enum { DB_ERROR_NONE, DB_ERROR_IGNORABLE, DB_ERROR_FATAL } sql_error_t;
typedef struct { const char *sname; const char *lname; const char opaque[?]; } sql_driver;
typedef struct { uint32_t len; const char *ptr; } sql_value;
typedef struct { void *ptr; sql_value *values; } sql_row;
typedef enum {
  SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR, SB_CNT_RECONNECT,
  SB_CNT_MAX
} sb_counter_type;
typedef struct {
  sql_error_t error; int sql_errno; const char *sql_state; const char *sql_errmsg;
  sql_driver *driver; const char opaque[?];
} sql_connection;
typedef struct { sql_connection *connection; const char opaque[?]; } sql_statement;
typedef struct {
  sb_counter_type counter; uint32_t nrows; uint32_t nfields; sql_statement *statement;
  void *ptr; sql_row row;
} sql_result;
typedef enum {
  SQL_TYPE_NONE, SQL_TYPE_TINYINT, SQL_TYPE_SMALLINT, SQL_TYPE_INT, SQL_TYPE_BIGINT,
  SQL_TYPE_FLOAT, SQL_TYPE_DOUBLE, SQL_TYPE_TIME, SQL_TYPE_DATE, SQL_TYPE_DATETIME,
  SQL_TYPE_TIMESTAMP, SQL_TYPE_CHAR, SQL_TYPE_VARCHAR
} sql_bind_type_t;
typedef struct {
  sql_bind_type_t type; void *buffer; unsigned long *data_len; unsigned long max_len;
  char *is_null;
} sql_bind;
sql_driver *db_create(const char *);
int db_destroy(sql_driver *drv);
sql_connection *db_connection_create(sql_driver *drv);
int db_connection_close(sql_connection *con);
int db_connection_reconnect(sql_connection *con);
void db_connection_free(sql_connection *con);
int db_bulk_insert_init(sql_connection *, const char *, size_t);
int db_bulk_insert_next(sql_connection *, const char *, size_t);
int db_bulk_insert_done(sql_connection *);
sql_result *db_query(sql_connection *con, const char *query, size_t len);
sql_row *db_fetch_row(sql_result *rs);
sql_statement *db_prepare(sql_connection *con, const char *query, size_t len);
int db_bind_param(sql_statement *stmt, sql_bind *params, size_t len);
int db_bind_result(sql_statement *stmt, sql_bind *results, size_t len);
sql_result *db_execute(sql_statement *stmt);
int db_close(sql_statement *stmt);
int db_free_results(sql_result *);

typedef enum {
  SB_ARG_TYPE_NULL, SB_ARG_TYPE_BOOL, SB_ARG_TYPE_INT, SB_ARG_TYPE_SIZE, SB_ARG_TYPE_DOUBLE,
  SB_ARG_TYPE_STRING, SB_ARG_TYPE_LIST, SB_ARG_TYPE_FILE, SB_ARG_TYPE_MAX
} sb_arg_type_t;
typedef bool sb_opt_validate_t(const char *, const char *);
typedef struct {
  const char *name; const char *desc; const char *value; sb_arg_type_t type;
  sb_opt_validate_t *validate;
} sb_arg_t;
int sb_lua_set_test_args(sb_arg_t *args, size_t len);
void sb_print_test_options(void);

typedef struct histogram sb_histogram_t;
sb_histogram_t *sb_histogram_new(size_t size, double range_min, double range_max);
void sb_histogram_delete(sb_histogram_t *h);
void sb_histogram_update(sb_histogram_t *h, double value);
void sb_histogram_print(sb_histogram_t *h);

uint64_t sb_rand_uniform_uint64(void);
uint32_t sb_rand_default(uint32_t, uint32_t);
uint32_t sb_rand_uniform(uint32_t, uint32_t);
uint32_t sb_rand_gaussian(uint32_t, uint32_t);
uint32_t sb_rand_special(uint32_t, uint32_t);
uint32_t sb_rand_pareto(uint32_t, uint32_t);
uint32_t sb_rand_unique(void);
void sb_rand_str(const char *, char *);
double sb_rand_uniform_double(void);
]]
-- sysbench's module path: LUA_PATH (LuaJIT reads it), the script's directory, its scripts
do
  local dir = (R.script_path or ""):match("(.*/)") or "./"
  package.path = package.path .. ";" .. dir .. "?.lua;/usr/share/sysbench/?.lua"
end
io.stdout:setvbuf("line")

sysbench = sysbench or {}
sysbench.version = R.version
sysbench.version_string = "sysbench " .. R.version
sysbench.tid = R.tid
sysbench.hooks = {}
sysbench.opt = {}

-- command line -------------------------------------------------------------------------------
local cmdline = {
  ARG_NONE = 0, ARG_BOOL = 1, ARG_INT = 2, ARG_SIZE = 3, ARG_DOUBLE = 4, ARG_STRING = 5,
  ARG_LIST = 6, ARG_FILE = 7,
  PARALLEL_COMMAND = true,
  argv = R.argv,
  script_path = R.script_path,
  command = R.command,
}
sysbench.cmdline = cmdline

-- the declared type of an option: its explicit type, else from its default's Lua type
local function opt_type(decl)
  if decl[3] ~= nil then return decl[3] end
  local d = decl[2]
  local t = type(d)
  if t == "boolean" then return cmdline.ARG_BOOL
  elseif t == "number" then
    if d == math.floor(d) then return cmdline.ARG_INT end
    return cmdline.ARG_DOUBLE
  elseif t == "table" then return cmdline.ARG_LIST end
  return cmdline.ARG_STRING
end

local function parse_bool(v)
  if v == nil or v == "" then return true end
  v = v:lower()
  if v == "on" or v == "true" or v == "yes" or v == "1" then return true end
  if v == "off" or v == "false" or v == "no" or v == "0" then return false end
  return nil
end

local function split_list(v)
  local t = {}
  for item in string.gmatch(v, "[^,]+") do t[#t + 1] = item end
  return t
end

-- converts option `name`'s value `v` (nil: given without a value) to its declared type
local function convert(name, kind, v)
  if kind == cmdline.ARG_BOOL then return parse_bool(v)
  elseif kind == cmdline.ARG_INT or kind == cmdline.ARG_SIZE then
    local n = tonumber(v or "")
    if n == nil then return nil end
    return math.floor(n)
  elseif kind == cmdline.ARG_DOUBLE then return tonumber(v or "")
  elseif kind == cmdline.ARG_LIST then return split_list(v or "")
  end
  return v or ""
end

local function default_of(decl, kind)
  local d = decl[2]
  if d == nil then
    -- sysbench's values for options declared without a default
    if kind == cmdline.ARG_BOOL then return true end
    if kind == cmdline.ARG_INT or kind == cmdline.ARG_SIZE or kind == cmdline.ARG_DOUBLE then
      return 0
    end
    if kind == cmdline.ARG_LIST then return {} end
    return ""
  end
  return d
end

local test_options_text -- below

-- fills sysbench.opt from the declarations and the command line's script options; returns
-- the first argument no declaration accepts, if any
function cmdline.read_cmdline_options()
  if cmdline.options == nil then
    -- a script without declarations (sysbench 0.5's): every option is also a global (the
    -- general ones typed, the script's as text: `num_threads`, `oltp_table_size`), except
    -- where the script has a function of that name
    for _, o in ipairs(R.script_args) do sysbench.opt[o[1]] = o[2] or "on" end
    for name, v in pairs(sysbench.opt) do
      if type(_G[name]) ~= "function" then _G[name] = v end
    end
    return nil
  end
  local decls = cmdline.options
  for name, decl in pairs(decls) do
    if type(name) ~= "string" or type(decl) ~= "table" or type(decl[1]) ~= "string" then
      error("wrong table structure in sysbench.cmdline.options", 0)
    end
    local kind = opt_type(decl)
    sysbench.opt[(name:gsub("-", "_"))] = default_of(decl, kind)
  end
  for _, o in ipairs(R.script_args) do
    local name, value, raw = o[1], o[2], o[3]
    local decl, key
    for n, d in pairs(decls) do
      if n:gsub("-", "_") == name then decl, key = d, n:gsub("-", "_") end
    end
    if decl == nil then return raw end
    local v = convert(name, opt_type(decl), value)
    if v == nil then return raw end
    sysbench.opt[key] = v
  end
  for _, g in ipairs(R.general_opts) do
    sysbench.opt[g[1]] = g[2]
  end
  R.set_test_options(test_options_text())
  return nil
end

local function type_suffix(kind)
  if kind == cmdline.ARG_BOOL then return "[=on|off]"
  elseif kind == cmdline.ARG_INT or kind == cmdline.ARG_SIZE or kind == cmdline.ARG_DOUBLE then
    return "=N"
  elseif kind == cmdline.ARG_LIST then return "=[LIST,...]" end
  return "=STRING"
end

local function show_default(decl, kind)
  local d = decl[2]
  if d == nil then return "" end
  if kind == cmdline.ARG_BOOL then return d and " [on]" or " [off]" end
  if kind == cmdline.ARG_LIST then return " [" .. table.concat(d, ",") .. "]" end
  return " [" .. tostring(d) .. "]"
end

-- the script's options as `help` lists them
test_options_text = function()
  local decls = cmdline.options or {}
  local names, rows, width = {}, {}, 0
  for name in pairs(decls) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local decl = decls[name]
    local kind = opt_type(decl)
    local left = "  --" .. name .. type_suffix(kind)
    if #left > width then width = #left end
    rows[#rows + 1] = { left, decl[1] .. show_default(decl, kind) }
  end
  local out = {}
  for _, r in ipairs(rows) do
    out[#out + 1] = r[1] .. string.rep(" ", width - #r[1] + 1) .. r[2] .. "\n"
  end
  return table.concat(out) .. "\n"
end

function cmdline.print_test_options()
  print((test_options_text():sub(1, -2)))
end

for _, g in ipairs(R.general_opts) do sysbench.opt[g[1]] = g[2] end
-- sysbench 0.5's globals
test = R.script_path
db_driver = "pgsql"
thread_id = R.tid

-- sql ----------------------------------------------------------------------------------------
sysbench.sql = {
  type = { NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
           TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12 },
  error = { NONE = 0, IGNORABLE = 1, FATAL = 2 },
}
-- where each error value was raised (kept out of the value, which scripts print)
local where_of = setmetatable({}, { __mode = "k" })
local sql_error_mt = {
  __tostring = function(e)
    return string.format("%sSQL error, errno = %d, state = '%s': %s", where_of[e] or "",
                         e.sql_errno or 0, e.sql_state or "", e.sql_errmsg or "")
  end
}

-- "file:line: " of the script's call that led here (the first frame outside this prelude)
local function script_position()
  local level = 3
  while true do
    local info = debug.getinfo(level, "Sl")
    if info == nil then return "" end
    if info.source ~= "=sysbench.lua" and info.what ~= "C" then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
    level = level + 1
  end
end

-- raises the SQL error of a failed statement; `lines` are the driver's FATAL lines, printed
-- unless sysbench.hooks.sql_error_ignorable says the error is ignorable
local function raise(con, errcode, state, msg, lines, query)
  local e = setmetatable({ errcode = errcode, sql_errno = 0, sql_state = state,
                           sql_errmsg = msg, query = query, connection = con }, sql_error_mt)
  where_of[e] = script_position()
  local hook = sysbench.hooks.sql_error_ignorable
  if errcode ~= sysbench.sql.error.IGNORABLE and hook ~= nil and hook(e) then
    e.errcode = sysbench.sql.error.IGNORABLE
  elseif lines ~= "" then
    R.print_raw(lines)
  end
  error(e, 0)
end

-- the hot calls, through LuaJIT's FFI (compiled into traces; an mlua call ends a trace)
local C = {}
for name, f in pairs(R.ffi) do
  if type(f) == "table" then C[name] = ffi.cast(f[1], f[2]) end
end
local param_int, param_text, param_null = C.param_int, C.param_text, C.param_null
-- sysbench's other draws from the thread's stream: two per statement its pgsql driver prepares
-- (the statement's name), one per histogram update (the latency histogram's after each event
-- when --percentile is not 0, and each sysbench.histogram update)
local rand_u64, rand_state = C.rand_u64, ffi.cast("void *", R.ffi.rand_state)
local prepare_draws = R.ps_disable and 0 or 2
local event_draw = R.percentile > 0
local c_execute, c_query = C.execute, C.query
local floor = math.floor
local field_len = ffi.new("int[1]")

-- the outcome of a statement whose status is neither 0 (no rows) nor 1 (rows)
local function failed(con, query, st)
  if st == -2 then error("internal error in pgrig's SQL layer", 3) end
  local errcode, state, msg, lines = con.raw:failure()
  raise(con, errcode or sysbench.sql.error.FATAL, state or "", msg or "", lines or "", query)
end

-- a connection's result set: as in sysbench, the connection's last result (a new statement
-- replaces it); its figures and rows are read from Rust on demand
local rs_methods = {}
function rs_methods:fetch_row()
  local p = self.con.p
  local n = C.fetch(p)
  if n < 0 then return nil end
  local row = {}
  for i = 1, n do
    local s = C.field(p, i - 1, field_len)
    if field_len[0] >= 0 then row[i] = ffi.string(s, field_len[0]) end
  end
  return row
end
function rs_methods:free() C.free_rows(self.con.p) end
local rs_mt = {
  __index = function(rs, k)
    if k == "nrows" then return C.nrows(rs.con.p) end
    if k == "nfields" then return C.nfields(rs.con.p) end
    return rs_methods[k]
  end,
  __tostring = function() return "<sql_result>" end,
}

local bind_mt = {}
bind_mt.__index = bind_mt
bind_mt.__tostring = function() return "<sql_param>" end
function bind_mt:set(v) self.value = v end
function bind_mt:set_rand_str(tmpl) self.value = sysbench.rand.string(tmpl) end

local stmt_mt = {}
stmt_mt.__index = stmt_mt
function stmt_mt:bind_create(type_, maxlen) return setmetatable({ type = type_ }, bind_mt) end
function stmt_mt:bind_param(...)
  self.binds = { ... }
  self.nbinds = select("#", ...)
end
function stmt_mt:execute()
  local con = self.con
  local p, binds = con.p, self.binds
  for i = 1, self.nbinds do
    local v = binds[i].value
    if type(v) == "number" and v == floor(v) and v > -2^63 and v < 2^63 then
      param_int(p, v)
    elseif v == nil then
      param_null(p)
    else
      local s = tostring(v)
      param_text(p, s, #s)
    end
  end
  local st = c_execute(p, self.id)
  if st == 1 then return con.rs end
  if st == 0 then return nil end
  return failed(con, self.sql, st)
end
function stmt_mt:close() self.con.raw:close_stmt(self.id) end
-- sysbench 0.5's db_bind_param(stmt, {values})
function stmt_mt:legacy_bind(params)
  local binds = {}
  for i, v in ipairs(params) do binds[i] = setmetatable({ value = v }, bind_mt) end
  self:bind_param(unpack(binds))
end

local con_mt = {}
con_mt.__index = con_mt
con_mt.__tostring = function() return "<sql_connection>" end
function con_mt:query(q)
  if type(q) == "number" then q = tostring(q) end
  local st = c_query(self.p, q, #q)
  if st == 1 then return self.rs end
  if st == 0 then return nil end
  return failed(self, q, st)
end
function con_mt:query_row(q)
  local rs = self:query(q)
  if rs == nil then return nil end
  local row = rs:fetch_row()
  if row == nil then return nil end
  return unpack(row, 1, rs.nfields)
end
function con_mt:prepare(q)
  for _ = 1, prepare_draws do rand_u64(rand_state) end
  local id = self.raw:prepare(q)
  if id == nil then
    raise(self, sysbench.sql.error.FATAL, "", "prepare failed", "", q)
  end
  return setmetatable({ con = self, id = id, sql = q, binds = {}, nbinds = 0 }, stmt_mt)
end
local BULK_BUFFER = 512 * 1024
function con_mt:bulk_insert_init(q)
  self.bulk_q, self.bulk, self.bulk_len = q, {}, #q
end
function con_mt:bulk_insert_next(v)
  if #self.bulk > 0 and self.bulk_len + #v + 1 > BULK_BUFFER then self:bulk_insert_flush() end
  self.bulk[#self.bulk + 1] = v
  self.bulk_len = self.bulk_len + #v + 1
end
function con_mt:bulk_insert_flush()
  local q = self.bulk_q .. table.concat(self.bulk, ",")
  self.bulk, self.bulk_len = {}, #self.bulk_q
  self:query(q)
end
function con_mt:bulk_insert_done()
  if self.bulk ~= nil and #self.bulk > 0 then self:bulk_insert_flush() end
  self.bulk = nil
end
function con_mt:disconnect() self.raw:disconnect() end
function con_mt:reconnect()
  local err = self.raw:reconnect()
  if err ~= nil then error(err, 0) end
end

local driver_mt = {}
driver_mt.__index = driver_mt
function driver_mt:connect()
  local raw, err = R.connect()
  if raw == nil then error(err, 0) end
  local con = setmetatable({ raw = raw, p = ffi.cast("void *", raw:ptr()) }, con_mt)
  con.rs = setmetatable({ con = con }, rs_mt)
  return con
end
function driver_mt:name() return "pgsql" end
function driver_mt:sql_type() return "pgsql" end

function sysbench.sql.driver(name)
  local err = R.check_driver(name)
  if err ~= nil then error(err, 2) end
  return setmetatable({}, driver_mt)
end

-- random numbers -----------------------------------------------------------------------------
sysbench.rand = R.rand
do
  local value, str, u64 = C.rand_value, C.rand_string, C.rand_u64
  local state = ffi.cast("void *", R.ffi.rand_state)
  -- sysbench hands the bounds to C as uint32_t through LuaJIT's FFI: a number, a boolean or a
  -- numeric cdata converts; anything else (a string too) fails as LuaJIT's conversion does,
  -- naming the function as the script called it (`bad argument #2 to 'sb_rand' (...)`)
  local getinfo, format = debug.getinfo, string.format
  local function u32(v, i)
    local t = type(v)
    if t == "number" then return v end
    if t == "boolean" then return v and 1 or 0 end
    if t == "cdata" and tonumber(v) ~= nil then return tonumber(v) end
    local info = getinfo(2, "n")
    error(format("bad argument #%d to '%s' (cannot convert '%s' to 'unsigned int')",
                        i, info and info.name or "?", t), 3)
  end
  -- in the order of rand.rs's KINDS
  for i, name in ipairs({ "default", "uniform", "gaussian", "special", "pareto", "zipfian" }) do
    local kind = i - 1
    sysbench.rand[name] = function(a, b) return value(state, kind, u32(a, 1), u32(b, 2)) end
  end
  sysbench.rand.uniform_uint64 = function() return u64(state) end
  -- a template that is no string fails on its length, as in sysbench
  sysbench.rand.string = function(fmt)
    local n = #fmt
    return ffi.string(str(state, fmt, n), n)
  end
end

-- histograms ---------------------------------------------------------------------------------
do
  local new = R.histogram_new
  local h_mt = {}
  h_mt.__index = h_mt
  function h_mt:update(v) rand_u64(rand_state); self.h:update(v) end
  function h_mt:print() self.h:print() end
  sysbench.histogram = { new = function(...) return setmetatable({ h = new(...) }, h_mt) end }
end

-- reports ------------------------------------------------------------------------------------
-- a report's figures per second
local function rates(stat)
  local t = stat.time_interval
  local per = function(x) if t > 0 then return x / t end return 0 end
  return per(stat.events), per(stat.reads + stat.writes + stat.other), per(stat.reads),
         per(stat.writes), per(stat.other), per(stat.errors), per(stat.reconnects)
end

function sysbench.report_default(stat)
  local tps, qps, r, w, o, err, rec = rates(stat)
  print(string.format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) " ..
                        "lat (ms,%u%%): %4.2f err/s %4.2f reconn/s: %4.2f",
                      stat.time_total, stat.threads_running, tps, qps, r, w, o,
                      sysbench.opt.percentile, stat.latency_pct * 1000, err, rec))
end

function sysbench.report_csv(stat)
  local tps, qps, r, w, o, err, rec = rates(stat)
  print(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
                      stat.time_total, stat.threads_running, tps, qps, r, w, o,
                      stat.latency_pct * 1000, err, rec))
end

local json_open = false
function sysbench.report_json(stat)
  local tps, qps, r, w, o, err, rec = rates(stat)
  local obj = string.format([[
  {
    "time": %4.0f,
    "threads": %u,
    "tps": %4.2f,
    "qps": {
      "total": %4.2f,
      "reads": %4.2f,
      "writes": %4.2f,
      "other": %4.2f
    },
    "latency": %4.2f,
    "errors": %4.2f,
    "reconnects": %4.2f
  }]], stat.time_total, stat.threads_running, tps, qps, r, w, o,
    stat.latency_pct * 1000, err, rec)
  if stat.latency_min ~= nil then -- (only the cumulative report has it)
    if json_open then print("\n]") json_open = false end
    print("[\n" .. obj .. "\n]")
  elseif json_open then
    io.stdout:write(",\n" .. obj)
    io.stdout:flush()
  else
    io.stdout:write("[\n" .. obj)
    io.stdout:flush()
    json_open = true
  end
end

-- the runtime's entry points (called from Rust) -----------------------------------------------
__pgrig_rt = {}

-- runs event(tid): "ok", "stop" (it returned a value that ends the thread), "restart" (an
-- ignorable SQL error), or "fatal" and the message
function __pgrig_rt.event(tid)
  local ok, ret = pcall(event, tid)
  if ok then
    if ret ~= nil and ret ~= false then return "stop" end
    if event_draw then rand_u64(rand_state) end
    return "ok"
  end
  if type(ret) == "table" and ret.errcode == sysbench.sql.error.IGNORABLE then
    local hook = sysbench.hooks.before_restart_event
    if hook ~= nil then hook(ret) end
    return "restart"
  end
  return "fatal", tostring(ret)
end

-- calls f(...): nil, or the error's message
function __pgrig_rt.call(f, ...)
  local ok, err = pcall(f, ...)
  if ok then return nil end
  return tostring(err)
end

-- sysbench 0.5's API, kept by 1.0 ------------------------------------------------------------
local legacy_con
local function con_0_5()
  if legacy_con == nil then legacy_con = sysbench.sql.driver():connect() end
  return legacy_con
end
function db_connect() con_0_5() end
function db_disconnect()
  if legacy_con ~= nil then legacy_con:disconnect() legacy_con = nil end
end
function db_query(q) return con_0_5():query(q) end
function db_bulk_insert_init(q) return con_0_5():bulk_insert_init(q) end
function db_bulk_insert_next(v) return con_0_5():bulk_insert_next(v) end
function db_bulk_insert_done() return con_0_5():bulk_insert_done() end
function db_prepare(q) return con_0_5():prepare(q) end
function db_bind_param(stmt, params) return stmt:legacy_bind(params) end
function db_execute(stmt) return stmt:execute() end
function db_close(stmt) return stmt:close() end
function db_store_results(rs) return rs end
function db_free_results(rs) if rs ~= nil then rs:free() end end
DB_ERROR_NONE, DB_ERROR_RESTART_TRANSACTION, DB_ERROR_FAILED = 0, 1, 2

sb_rand = sysbench.rand.default
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
-- the next value of the run-wide unique sequence that lies in [a, b] (0 and 2^32 - 1 when
-- absent), as sysbench's compatibility module draws it
function sb_rand_uniq(a, b)
  if a == nil then a = 0 end
  if b == nil then b = 4294967295 end
  local v
  repeat v = sysbench.rand.unique() until v >= a and v <= b
  return v
end
-- the low 32 bits of the next 64-bit value, as a number
sb_rnd = function() return tonumber(sysbench.rand.uniform_uint64() % 4294967296) end
sb_rand_str = sysbench.rand.string
sb_rnd_str = sysbench.rand.string
