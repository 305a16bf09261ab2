-- sysbench's C random functions and event loop reached through ffi.C, as sysbench's own
-- modules declare them (sysbench_rand_seed.rs compares the lines with sysbench 1.0.20's).
local ffi = require("ffi")

local function dump(tag)
  local C = ffi.C
  local t = {}
  for _ = 1, 5 do
    local buf = ffi.new("uint8_t[?]", 6)
    C.sb_rand_str("#@-#@x", buf)
    t[#t + 1] = table.concat({
      C.sb_rand_uniform(1, 1000), C.sb_rand_default(1, 100000), C.sb_rand_gaussian(1, 1000),
      C.sb_rand_special(1, 1000), C.sb_rand_pareto(1, 1000), tostring(C.sb_rand_uniform_uint64()),
      string.format("%.17g", C.sb_rand_uniform_double()), ffi.string(buf, 6),
    }, ",")
  end
  local h = C.sb_histogram_new(10, 1, 100)
  C.sb_histogram_update(h, 5)
  print(tag .. " " .. table.concat(t, " ") .. "\n")
end

function thread_init() dump("tinit" .. sysbench.tid) end

function thread_run(tid)
  local n = 0
  while ffi.C.sb_more_events(tid) do
    ffi.C.sb_event_start(tid)
    n = n + 1
    dump("loop" .. tid .. "." .. n)
    ffi.C.sb_event_stop(tid)
  end
end

function event() end
