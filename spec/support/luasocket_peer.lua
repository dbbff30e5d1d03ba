-- The peer of spec/46's differential probe: a corosched server. The file
-- returns serve(cs, listener), to run in a light thread: it serves each
-- connection by the command on its first line:
--   echo              echoes lines until the client closes
--   send <text>       sends <text> (\n and \r escaped as in Lua), then
--                     waits for the client to close
--   sendclose <text>  sends <text>, then closes
--   stall <text>      sends <text>, waits 0.3 s, sends "late\n", waits
--   collect           reads until the client's FIN, answers "<n> bytes\n"
-- It returns when a connection sends "quit" (once its handlers are done).

local function unescape(s)
  return (s:gsub("\\(.)", { n = "\n", r = "\r", ["\\"] = "\\" }))
end

return function(cs, l)
  local handlers = {}
  while true do
    local c = assert(l:accept())
    local cmd = c:receive("*l")
    if cmd == "quit" or cmd == nil then
      c:close()
      break
    end
    handlers[#handlers + 1] = cs.thread.spawn(function()
      local verb, arg = cmd:match("^(%S+) ?(.*)$")
      if verb == "echo" then
        while true do
          local line = c:receive("*l")
          if not line then break end
          c:send(line .. "\n")
        end
      elseif verb == "send" or verb == "sendclose" or verb == "stall" then
        c:send(unescape(arg))
        if verb == "stall" then
          cs.sleep(0.3)
          c:send("late\n")
        end
        if verb ~= "sendclose" then c:receive("*a") end
      elseif verb == "collect" then
        local all = c:receive("*a") or ""
        c:send(#all .. " bytes\n")
      end
      c:close()
    end)
  end
  for _, t in ipairs(handlers) do assert(cs.thread.wait(t)) end
end
