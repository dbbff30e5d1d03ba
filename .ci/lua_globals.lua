-- make lint: the Lua modules (lua/**/*.lua) read no global but Lua 5.4's
-- own and assign none (a misspelt or not-yet-defined local reads as a nil
-- global otherwise, and only fails when that line runs). Reads luac's
-- listing of each file given.
--
--   lua5.4 .ci/lua_globals.lua FILE...
local STD = {}
for name in ([[_G _VERSION assert collectgarbage coroutine debug dofile error
  getmetatable io ipairs load loadfile math next os package pairs pcall
  print rawequal rawget rawlen rawset require select setmetatable string
  table tonumber tostring type utf8 warn xpcall]]):gmatch("%S+") do
  STD[name] = true
end

local bad = 0
for _, file in ipairs(arg) do
  local p = assert(io.popen("luac5.4 -p -l -l '" .. file .. "' 2>&1"))
  local listing = p:read("a")
  local ok = p:close()
  if not ok then
    io.stderr:write(listing)
    bad = bad + 1
  end
  for line, op, name in listing:gmatch("\n%s*%d+%s+%[(%d+)%]%s+(%u+TABUP)"
                                       .. "[^\n]-_ENV \"([^\"]+)\"") do
    if op == "SETTABUP" or not STD[name] then
      io.stderr:write(("%s:%s: %s global '%s'\n"):format(
        file, line, op == "SETTABUP" and "assigns the" or "reads the",
        name))
      bad = bad + 1
    end
  end
end
os.exit(bad == 0 and 0 or 1)
