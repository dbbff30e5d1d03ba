-- Turns the raw samples of bench/echo.sh into the summary table and the
-- detail table (markdown).
--
--   lua5.4 bench/echo_report.lua RAW TABLE DETAIL IDLE_N SCALE_N SCALE_NOTE
--
-- RAW lines: "<bench>.<impl> <run> key=value ..." or "<bench>.<impl> <run>
-- FAIL ...". Benches: rt_split_100, rt_split_1000, rt_shared_100,
-- rt_shared_1000, idle, scale. Impls: corosched, c, luv, cqueues.
local raw_path, table_path, detail_path = arg[1], arg[2], arg[3]
local idle_n, scale_n = tonumber(arg[4]) or 0, tonumber(arg[5]) or 0
local scale_note = arg[6] or ""

local IMPLS = { "corosched", "c", "luv", "cqueues" }

-- samples[key][field] = { values... }; fails[key] = count
local samples, fails = {}, {}
for line in io.lines(raw_path) do
  local key, rest = line:match("^(%S+)%s+%S+%s*(.*)$")
  if key then
    if rest:match("^FAIL") or rest:match("^SKIP") then
      fails[key] = (fails[key] or 0) + 1
    else
      local s = samples[key] or {}
      samples[key] = s
      for k, v in rest:gmatch("([%w_]+)=(%S+)") do
        s[k] = s[k] or {}
        table.insert(s[k], tonumber(v))
      end
    end
  end
end

local function median(t)
  if not t or #t == 0 then return nil end
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  local m = #c // 2
  if #c % 2 == 1 then return c[m + 1] end
  return (c[m] + c[m + 1]) / 2
end

local function get(key, field)
  return median(samples[key] and samples[key][field])
end

local function fmt_rate(v)
  if not v then return "n/a" end
  if v >= 1e6 then return string.format("%.2fM", v / 1e6) end
  if v >= 1e3 then return string.format("%.0fk", v / 1e3) end
  return string.format("%.0f", v)
end

local function fmt_bytes(v)
  if not v then return "n/a" end
  return string.format("%.0f", v)
end

local function fmt_n(n)
  local s = tostring(math.tointeger(n) or n)
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

local rows = {}
local function row(t) rows[#rows + 1] = t end

-- how busy the client process was (CPU time / wall time), median
local function busy(key)
  local sm = samples[key]
  if not sm or not sm.rate or not sm.cpu_us then return nil end
  local b = {}
  for i = 1, math.min(#sm.rate, #sm.cpu_us) do
    b[i] = sm.rate[i] * sm.cpu_us[i] / 1e6
  end
  return median(b)
end

-- round-trip rows: cells hold rt/s, others show their ratio to C too
local function rt_row(bench, label, goal)
  local c = get(bench .. ".c", "rate")
  local cells, r = {}, nil
  for _, impl in ipairs(IMPLS) do
    local v = get(bench .. "." .. impl, "rate")
    local s = fmt_rate(v)
    if v and c and impl ~= "c" and impl ~= "corosched" then
      s = string.format("%s (%.2fx)", s, v / c)
    end
    cells[impl] = s
  end
  local cs = get(bench .. ".corosched", "rate")
  local verdict = "info"
  if cs and c then
    r = cs / c
    if goal then
      verdict = string.format(">= %.2fx: %s", goal, r >= goal and "PASS" or "FAIL")
    end
  elseif goal then
    verdict = "n/a"
  end
  local b = busy(bench .. ".c")
  if goal and b and b < 0.85 then -- the client was not the bottleneck
    verdict = string.format("%s (unsure: C client only %.0f%% busy, the "
                            .. "server core was the bottleneck)", verdict, b * 100)
  end
  row { label, cells, r and string.format("%.2fx", r) or "n/a", verdict }
end

-- the client's own CPU time per round trip (robust to a slow server), or
-- (key "user_us") the part of it spent in user space
local function cpu_row(bench, label, key)
  key = key or "cpu_us"
  local c = get(bench .. ".c", key)
  local cells = {}
  for _, impl in ipairs(IMPLS) do
    local v = get(bench .. "." .. impl, key)
    local s = v and string.format("%.2f", v) or "n/a"
    if v and c and impl ~= "c" and impl ~= "corosched" then
      s = string.format("%s (%.2fx)", s, v / c)
    end
    cells[impl] = s
  end
  local cs = get(bench .. ".corosched", key)
  local ratio = "n/a"
  if cs and c and key == "cpu_us" then
    ratio = string.format("%.2fx C's cost (%.2fx speed)", cs / c, c / cs)
  elseif cs and c then
    ratio = string.format("%.2fx C's (%+.2f us)", cs / c, cs - c)
  end
  row { label, cells, ratio, "info" }
end

rt_row("rt_split_100", "1. echo round trips/s, C=100 (client core 0, server core 1)", 0.95)
rt_row("rt_split_1000", "1. echo round trips/s, C=1000 (client core 0, server core 1)", 0.90)
cpu_row("rt_split_100", "1. (info) client CPU us per round trip, C=100 (as above)")
cpu_row("rt_split_1000", "1. (info) client CPU us per round trip, C=1000 (as above)")
cpu_row("rt_split_100", "1. (info) of which user space (the rest: the kernel), C=100", "user_us")
cpu_row("rt_split_1000", "1. (info) of which user space (the rest: the kernel), C=1000", "user_us")
rt_row("rt_shared_100", "1. echo round trips/s, C=100, client and server both on core 0", nil)
rt_row("rt_shared_1000", "1. echo round trips/s, C=1000, client and server both on core 0", nil)

do -- memory per idle connection
  local cells = {}
  for _, impl in ipairs(IMPLS) do
    cells[impl] = fmt_bytes(get("idle." .. impl, "per_conn"))
  end
  local cs, c = get("idle.corosched", "per_conn"), get("idle.c", "per_conn")
  row { string.format("2. RSS per idle connection parked in receive, %s connections (bytes)",
                      fmt_n(idle_n)),
        cells, (cs and c) and string.format("%.1fx", cs / c) or "n/a",
        cs and string.format("<= 1600 B: %s", cs <= 1600 and "PASS" or "FAIL") or "n/a" }
  cells = {}
  for _, impl in ipairs(IMPLS) do
    cells[impl] = impl == "c" and "—" or fmt_bytes(get("idle." .. impl, "heap"))
  end
  row { "2. (info) of which Lua heap (bytes per connection)", cells, "—", "info" }
end

do -- scale: per-round-trip cost = the client's CPU time per round trip
  local cells = {}
  local function ratio(impl)
    local v = get("scale." .. impl, "cpu_us")
    local base = get("rt_split_100." .. impl, "cpu_us")
    return v and base and v / base
  end
  for _, impl in ipairs(IMPLS) do
    local v, k = get("scale." .. impl, "rate"), ratio(impl)
    cells[impl] = fmt_rate(v)
    if k then cells[impl] = string.format("%s (CPU/rt %.2fx)", cells[impl], k) end
  end
  local cs, c = get("scale.corosched", "rate"), get("scale.c", "rate")
  local k, kc = ratio("corosched"), ratio("c")
  local verdict = "n/a"
  if k then
    verdict = string.format("CPU/rt %.2fx its C=100, <= 1.3x: %s%s", k,
                            k <= 1.3 and "PASS" or "FAIL",
                            kc and string.format(" (C client: %.2fx)", kc) or "")
  end
  row { string.format("3. echo round trips/s, %s connections%s (cores as row 1)",
                      fmt_n(scale_n), scale_note),
        cells, (cs and c) and string.format("%.2fx", cs / c) or "n/a", verdict }
end

-- the summary table, columns aligned
local header = { "benchmark", "corosched", "C (libevent)", "luv", "cqueues",
                 "ratio corosched vs C", "goal met?" }
local lines = {}
for _, r in ipairs(rows) do
  lines[#lines + 1] = { r[1], r[2].corosched, r[2].c, r[2].luv, r[2].cqueues,
                        r[3], r[4] }
end
local width = {}
for i, h in ipairs(header) do width[i] = utf8.len(h) end
for _, l in ipairs(lines) do
  for i, v in ipairs(l) do width[i] = math.max(width[i], utf8.len(v)) end
end
local function fmt_line(l, right)
  local out = {}
  for i, v in ipairs(l) do
    local pad = string.rep(" ", width[i] - utf8.len(v))
    out[i] = (i > 1 and i < 6 and right) and pad .. v or v .. pad
  end
  return "| " .. table.concat(out, " | ") .. " |"
end
local t = { fmt_line(header, false) }
local sep = {}
for i = 1, #header do
  sep[i] = string.rep("-", width[i] - 1) .. ((i > 1 and i < 6) and ":" or "-")
end
t[#t + 1] = "| " .. table.concat(sep, " | ") .. " |"
for _, l in ipairs(lines) do t[#t + 1] = fmt_line(l, true) end
local f = assert(io.open(table_path, "w"))
f:write(table.concat(t, "\n"), "\n")
f:close()

-- the detail table: every measurement's median, spread and CPU cost
local keys = {}
for k in pairs(samples) do keys[#keys + 1] = k end
for k in pairs(fails) do if not samples[k] then keys[#keys + 1] = k end end
local order = { rt_split_100 = 1, rt_split_1000 = 2, rt_shared_100 = 3,
                rt_shared_1000 = 4, idle = 5, scale = 6 }
local iorder = { corosched = 1, c = 2, luv = 3, cqueues = 4 }
table.sort(keys, function(a, b)
  local ba, ia = a:match("^(.-)%.(.*)$")
  local bb, ib = b:match("^(.-)%.(.*)$")
  if ba ~= bb then return (order[ba] or 9) < (order[bb] or 9) end
  return (iorder[ia] or 9) < (iorder[ib] or 9)
end)
local d = {
  "| measurement | median | min | max | spread | runs | CPU us per round trip (median) |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
}
for _, k in ipairs(keys) do
  local s = samples[k] or {}
  local field = s.rate and "rate" or "per_conn"
  local v = s[field] or {}
  local mn, mx = math.huge, -math.huge
  for _, x in ipairs(v) do mn = math.min(mn, x); mx = math.max(mx, x) end
  local med = median(v)
  local f1 = field == "rate" and fmt_rate or fmt_bytes
  local cpu = median(s.cpu_us)
  d[#d + 1] = string.format("| %s (%s) | %s | %s | %s | %s | %d%s | %s |", k,
    field == "rate" and "rt/s" or "bytes/conn",
    f1(med), #v > 0 and f1(mn) or "n/a", #v > 0 and f1(mx) or "n/a",
    med and string.format("%.0f%%", (mx - mn) / med * 100) or "n/a", #v,
    fails[k] and string.format(" (+%d failed)", fails[k]) or "",
    cpu and string.format("%.2f", cpu) or "—")
end
f = assert(io.open(detail_path, "w"))
f:write(table.concat(d, "\n"), "\n")
f:close()
