-- Prints each sysbench.rand distribution's next values, tagged with where they were drawn
-- (sysbench_rand_seed.rs compares the lines with sysbench 1.0.20's).
local N = 6
local EV = tonumber(os.getenv("SEQ_EVENTS") or "3")

-- each dump's lines go out in one print, so that threads' lines do not interleave
local function dump(tag)
  local r = sysbench.rand
  local out = {}
  local function line(name, f)
    local t = {}
    for _ = 1, N do t[#t + 1] = tostring(f()) end
    out[#out + 1] = tag .. " " .. name .. " " .. table.concat(t, " ")
  end
  line("uniform", function() return r.uniform(1, 1000) end)
  line("uniform_wide", function() return r.uniform(0, 4294967295) end)
  line("uniform_wrap", function() return r.uniform(10, 5) end)
  -- Lua numbers as uint32_t arguments (negative, fractional, past 2^32)
  line("uniform_args", function()
    return r.uniform(-5, -1) .. "," .. r.uniform(1.7, 9.9) .. "," .. r.uniform(0, 5e9)
  end)
  line("default", function() return r.default(1, 100000) end)
  line("gaussian", function() return r.gaussian(1, 100000) end)
  line("special", function() return r.special(1, 100000) end)
  line("special_wide", function() return r.special(1, 4000000000) end)
  line("pareto", function() return r.pareto(1, 100000) end)
  line("double", function() return string.format("%.17g", r.uniform_double()) end)
  line("uint64", function() return r.uniform_uint64() end)
  line("string", function() return r.string("##@@-x#.@") end)
  line("sb_rand", function() return sb_rand(1, 5000) end)
  line("sb_rand_uniform", function() return sb_rand_uniform(1, 5000) end)
  line("sb_rand_gaussian", function() return sb_rand_gaussian(1, 5000) end)
  line("sb_rand_special", function() return sb_rand_special(1, 5000) end)
  line("sb_rnd", function() return sb_rnd() end)
  line("sb_rand_str", function() return sb_rand_str("###-@@@") end)
  if os.getenv("SEQ_UNIQUE") then
    line("unique", function() return r.unique() end)
    line("sb_rand_uniq", function() return sb_rand_uniq(0, 2147483647) end)
    line("sb_rand_uniq_default", function() return sb_rand_uniq() end)
  end
  local h = sysbench.histogram.new(10, 1, 100)
  h:update(5)
  print(table.concat(out, "\n") .. "\n")
end

if os.getenv("SEQ_TOP") then dump("body") end

function init() dump("init") end
function done() dump("done") end
function thread_init() dump("tinit" .. sysbench.tid) end
function thread_done() dump("tdone" .. sysbench.tid) end
local events = 0
function event()
  events = events + 1
  dump("event" .. sysbench.tid .. "." .. events)
  if events >= EV then return true end
end
function prepare() dump("prepare") end

sysbench.cmdline.commands = {
  pp = { function() dump("pp" .. sysbench.tid) end, sysbench.cmdline.PARALLEL_COMMAND },
  one = { function() dump("one") end },
}
