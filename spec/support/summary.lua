-- Output handler: busted's plain terminal output, plus one closing line
-- "busted: N passed, N failed, N skipped" that CI log readers recognise.
return function(options)
  local busted = require "busted"
  local handler = require "busted.outputHandlers.plainTerminal"(options)

  busted.subscribe({ "suite", "end" }, function()
    io.write(("busted: %d passed, %d failed, %d skipped\n"):format(
      handler.successesCount,
      handler.failuresCount + handler.errorsCount,
      handler.pendingsCount))
    io.flush()
    return nil, true
  end)

  return handler
end
