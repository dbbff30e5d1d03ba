-- Reads the raw samples written by bench/run.sh and writes the summary table
-- (medians and ratios) and a detail table (every sample's spread).
--
--   lua5.4 bench/report.lua <raw> <table.md> <detail.md>
--
-- Raw lines: "<key> <run> <value>" or "<key> <run> k=v k=v ...", or
-- "<key> <run> FAIL ..." / "<key> 0 SKIP".
local rawf, tablef, detailf = arg[1], arg[2], arg[3]
assert(rawf and tablef and detailf, "usage: report.lua <raw> <table.md> <detail.md>")

local samples, failed, skipped, order = {}, {}, {}, {}
for line in io.lines(rawf) do
  local key, _, rest = line:match("^(%S+)%s+(%d+)%s*(.*)$")
  if key then
    if not samples[key] then
      samples[key] = {}
      order[#order + 1] = key
    end
    if rest:match("^SKIP") then
      skipped[key] = true
    elseif rest:match("^FAIL") then
      failed[key] = (failed[key] or 0) + 1
    else
      for tok in rest:gmatch("%S+") do
        local k, v = tok:match("^([%w_]+)=(%S+)$")
        if not k then k, v = "v", tok end
        local list = samples[key][k] or {}
        samples[key][k] = list
        list[#list + 1] = assert(tonumber(v), "bad sample: " .. line)
      end
    end
  end
end

local function median(list)
  if not list or #list == 0 then return nil end
  local s = { table.unpack(list) }
  table.sort(s)
  local m = #s // 2
  if #s % 2 == 1 then return s[m + 1] end
  return (s[m] + s[m + 1]) / 2
end

local function med(key, metric)
  return samples[key] and median(samples[key][metric or "v"])
end

-- number formatting
local function fmt_ns(v) return string.format(v < 100 and "%.1f" or "%.0f", v) end
local function fmt_rate(v)
  if v >= 1e6 then return string.format("%.2fM", v / 1e6) end
  if v >= 1e3 then return string.format("%.0fk", v / 1e3) end
  return string.format("%.0f", v)
end
local function fmt_bytes(v) return string.format("%.0f", v) end
local function fmt_x(v) return string.format("%.2fx", v) end

-- the cell for one implementation: the median, or why there is none
local function cell(key, metric, fmt)
  if not samples[key] then return "—" end
  if skipped[key] then return "n/a" end
  local m = med(key, metric)
  if not m then return "FAIL" end
  local s = fmt(m)
  if failed[key] then s = s .. " (" .. failed[key] .. " failed)" end
  return s
end

local IMPLS = { "corosched", "stock", "cqueues", "luv", "c" }

-- ratios: cost of corosched over another column's cost
--   lower = true: the metric is a cost (ns, bytes); else a rate (threads/s)
local function cost_ratio(row, other)
  local a = med(row.prefix .. ".corosched", row.metric)
  local b = med(row.prefix .. "." .. other, row.metric)
  if not a or not b or a == 0 or b == 0 then return nil end
  if row.lower then return a / b end
  return b / a
end

local function verdict(ok) return ok and "PASS" or "FAIL" end

local function ratio_text(row)
  local parts = {}
  if row.goal_diff then
    local a = med(row.prefix .. ".corosched", row.metric)
    local b = med(row.prefix .. ".stock", row.metric)
    if a and b then
      local d = a - b
      parts[#parts + 1] = string.format("%+.0f B vs bare coroutine (goal <= %d: %s)",
                                        d, row.goal_diff, verdict(d <= row.goal_diff))
    else
      parts[#parts + 1] = "goal <= " .. row.goal_diff .. " B: no data"
    end
  end
  for _, other in ipairs(row.vs) do
    local r = cost_ratio(row, other)
    local name = other == "stock" and (row.stock_name or "stock") or other == "c" and "C" or other
    if r then
      local s = fmt_x(r) .. " " .. name
      if other == "stock" and row.goal then
        s = s .. string.format(" (goal <= %.1fx: %s)", row.goal, verdict(r <= row.goal))
      end
      parts[#parts + 1] = s
    elseif other == "stock" and row.goal then
      parts[#parts + 1] = string.format("goal <= %.1fx stock: no data", row.goal)
    end
  end
  if row.extra then parts[#parts + 1] = row.extra() end
  return table.concat(parts, "; ")
end

local ROWS = {
  { title = "1. switch, 1 thread (ns/switch)", prefix = "switch1", lower = true,
    fmt = fmt_ns, goal = 1.5, vs = { "stock", "cqueues", "luv", "c" } },
  { title = "1. switch, 1,000 threads (ns/switch)", prefix = "switch1k", lower = true,
    fmt = fmt_ns, goal = 1.5, vs = { "stock", "cqueues", "luv", "c" } },
  { title = "2. spawn + wait, trivial thread (threads/s)", prefix = "spawn",
    fmt = fmt_rate, goal = 2, vs = { "stock", "cqueues" }, cost = true },
  { title = "3. spawn 200,000 that sleep(0) and end (threads/s)", prefix = "spawn200k",
    metric = "rate", fmt = fmt_rate, vs = { "stock", "cqueues" },
    extra = function()
      local live = med("spawn200k.corosched", "live")
      local running = med("spawn200k.corosched", "running")
      return live and string.format("%d threads alive after the spawn loop, %d of them not ended",
                                    live, running or -1) or nil
    end },
  { title = "3. same, peak RSS growth (bytes/thread)", prefix = "spawn200k",
    metric = "rss", lower = true, fmt = fmt_bytes, vs = { "stock", "cqueues" } },
  { title = "4. parked 10,000, Lua heap (bytes/thread)", prefix = "parked",
    metric = "gc", lower = true, fmt = fmt_bytes, goal_diff = 300,
    vs = { "cqueues", "luv" } },
  { title = "4. parked 10,000, RSS (bytes/thread)", prefix = "parked",
    metric = "rss", lower = true, fmt = fmt_bytes, goal_diff = 300,
    vs = { "cqueues", "luv" } },
  { title = "(info) user coroutine resume/yield inside a light thread (ns)",
    prefix = "usercoro", lower = true, fmt = fmt_ns, vs = { "stock" },
    stock_name = "stock (switch1.stock)" },
  { title = "(info) coroutine resume/yield, corosched loaded, outside cs.run (ns)",
    prefix = "plaincoro", lower = true, fmt = fmt_ns, vs = { "stock" },
    stock_name = "stock (switch1.stock)" },
}

-- the info rows compare with the stock figure of the 1-thread switch
samples["plaincoro.stock"] = samples["switch1.stock"]
samples["usercoro.stock"] = samples["switch1.stock"]

local header = { "benchmark", "corosched", "stock", "cqueues", "luv", "C", "ratio (corosched vs) / goal" }
local lines = {}
for _, row in ipairs(ROWS) do
  local r = { row.title }
  for _, impl in ipairs(IMPLS) do
    r[#r + 1] = cell(row.prefix .. "." .. impl, row.metric, row.fmt)
  end
  if row.cost then
    -- show cost ratios for a rate: how many times more time per thread
    r[#r + 1] = ratio_text(row):gsub("(%d%.%d%dx) ", "%1 cost of ")
  else
    r[#r + 1] = ratio_text(row)
  end
  lines[#lines + 1] = r
end

-- aligned markdown
local function render(hdr, rows, aligns)
  local w = {}
  for i, h in ipairs(hdr) do w[i] = utf8.len(h) end
  for _, r in ipairs(rows) do
    for i, c in ipairs(r) do w[i] = math.max(w[i], utf8.len(c)) end
  end
  local function pad(s, n, right)
    local fill = string.rep(" ", n - utf8.len(s))
    return right and fill .. s or s .. fill
  end
  local out = {}
  local function emit(r)
    local cells = {}
    for i, c in ipairs(r) do cells[i] = pad(c, w[i], aligns[i] == "r") end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  emit(hdr)
  local sep = {}
  for i = 1, #hdr do
    sep[i] = aligns[i] == "r" and string.rep("-", w[i] - 1) .. ":" or string.rep("-", w[i])
  end
  out[#out + 1] = "| " .. table.concat(sep, " | ") .. " |"
  for _, r in ipairs(rows) do emit(r) end
  return table.concat(out, "\n") .. "\n"
end

local f = assert(io.open(tablef, "w"))
f:write(render(header, lines, { "l", "r", "r", "r", "r", "r", "l" }))
-- timed measurements whose process got less than 90% of a core
local starved = {}
for _, key in ipairs(order) do
  local b = med(key, "busy")
  if b and b < 0.9 then starved[#starved + 1] = string.format("%s %.0f%%", key, 100 * b) end
end
if #starved > 0 then
  f:write("\nWarning: some timed loops had less than 90% of a core (median CPU/wall: ",
          table.concat(starved, ", "), "): other processes competed for the\n",
          "2 cores, or the process blocked. If every implementation shows it, the machine\n",
          "was busy: rerun when it is quiet, or with BENCH_CLOCK=cpu.\n")
end
f:close()

-- detail: every key and metric, n, min, median, max, spread
local drows = {}
for _, key in ipairs(order) do
  if skipped[key] then
    drows[#drows + 1] = { key, "", "0", "", "skipped", "", "" }
  else
    local metrics = {}
    for m in pairs(samples[key]) do metrics[#metrics + 1] = m end
    table.sort(metrics)
    if #metrics == 0 then
      drows[#drows + 1] = { key, "", "0", "", "all failed", "", "" }
    end
    for _, m in ipairs(metrics) do
      local list = samples[key][m]
      local s = { table.unpack(list) }
      table.sort(s)
      local md = median(s)
      local spread = md ~= 0 and string.format("%.1f%%", 100 * (s[#s] - s[1]) / md) or ""
      drows[#drows + 1] = { key, m, tostring(#s) .. (failed[key] and ("+" .. failed[key] .. " failed") or ""),
        string.format("%.6g", s[1]), string.format("%.6g", md), string.format("%.6g", s[#s]), spread }
    end
  end
end
f = assert(io.open(detailf, "w"))
f:write("## Every measurement\n\n",
        "Metric `v` is the script's single number (ns/switch or threads/s); `rate`\n",
        "threads/s, `rss`/`gc` bytes per thread, `live` threads alive after the spawn\n",
        "loop and `running` those of them not yet ended, `busy` CPU time / wall time\n",
        "of the timed part (1 = had a core to itself and never blocked).\n",
        "Spread = (max - min) / median.\n\n")
f:write(render({ "key", "metric", "runs", "min", "median", "max", "spread" }, drows,
               { "l", "l", "r", "r", "r", "r", "r" }))
f:close()
