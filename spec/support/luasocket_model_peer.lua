-- The peer of spec/48's randomized differential test: a corosched server.
-- The file returns serve(cs, listener), to run in a light thread; each
-- connection's first line is the script the peer follows for it:
--   D close|hold HEX/MS HEX/MS ...
--                 for each item: sleeps MS ms, then sends the bytes HEX
--                 stands for (two hex digits a byte, "-" for none); then
--                 closes ("close"), or reads and drops what the client
--                 sends until its FIN or close, and closes ("hold")
--   E             echoes each line (the CRs dropped; within 5 ms) until
--                 the client's FIN or close, then sends "<n> bytes\n" (n:
--                 the bytes read after the script line; not after a
--                 reset) and closes
-- It returns once the listener is closed and every connection is done.
-- Nothing here depends on timing but the pauses: a client that waits
-- long enough (spec/48 waits 80 ms at least) has seen all the peer sends.

local function unhex(h)
  if h == "-" then return "" end
  return (h:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
end

local function follow(cs, c, script)
  local words = {}
  for w in script:gmatch("%S+") do words[#words + 1] = w end
  if words[1] == "D" then
    for i = 3, #words do
      local hex, ms = words[i]:match("^([%x-]+)/(%d+)$")
      if tonumber(ms) > 0 then cs.sleep(tonumber(ms) / 1000) end
      c:send(unhex(hex))
    end
    if words[2] == "hold" then c:receive("*a") end
  elseif words[1] == "E" then
    -- (polls of "*a": a receive that says "closed" closes a cosocket,
    -- and the count could not go out; the end is "*a"'s success)
    local n, rest = 0, ""
    c:settimeout(5)
    while true do
      local data, err, partial = c:receive("*a")
      local got = data or partial or ""
      n = n + #got
      rest = rest .. got
      for line in rest:gmatch("([^\n]*)\n") do
        c:send((line:gsub("\r", "")) .. "\n")
      end
      rest = rest:match("[^\n]*$")
      if data then c:send(n .. " bytes\n") end
      if err ~= "timeout" then break end
    end
  end
end

return function(cs, l)
  local handlers = {}
  while true do
    local c = l:accept()
    if not c then break end
    handlers[#handlers + 1] = cs.thread.spawn(function()
      c:settimeout(20000)
      local script = c:receive("*l")
      if script then follow(cs, c, script) end
      c:close()
    end)
  end
  for _, t in ipairs(handlers) do cs.thread.wait(t) end
end
