-- Sandbox Playground's Lua REPL driver (run inside Lua WASI as `lua -e <this>`).
--
-- Protocol (see backends/wasm/channel.py): read one frame from stdin (the
-- code's byte length in ASCII decimal, a newline, the code), run it, flush
-- stdout and stderr, write one status line ("ok", "error" or "oom") to
-- /.session/control, repeat. EOF on stdin ends the driver.
--
-- Like lua.c's REPL: the input is first tried as "return <input>" and, if
-- that compiles, its results are printed with print(); globals persist
-- across inputs, locals belong to their input; errors go to stderr with a
-- traceback, chunk name "stdin".
do
  local stdin, stdout, stderr = io.stdin, io.stdout, io.stderr
  local control = assert(io.open("/.session/control", "w"))
  local load, select, print, tostring, type = load, select, print, tostring, type
  local xpcall, traceback, getmetatable = xpcall, debug.traceback, getmetatable
  local pack, unpack = table.pack, table.unpack

  -- The session's stdin carries frames: io.read() in user code sees end of file.
  io.read = function() return nil end

  local function read_frame()
    local head = stdin:read("l")
    local size = head and tonumber(head)
    if not size then return nil end
    if size == 0 then return "" end
    return stdin:read(size)
  end

  local function message(err)
    if type(err) ~= "string" then
      local mt = getmetatable(err)
      if mt and mt.__tostring then
        local ok, text = pcall(tostring, err)
        if ok and type(text) == "string" then return text end
      end
      return "(error object is a " .. type(err) .. " value)"
    end
    return err
  end

  local function handler(err)
    local text = traceback(message(err), 2)
    -- Drop the driver's own frames (everything from the xpcall that ran the input).
    local cut = text:find("\n\t%[C%]: in function 'xpcall'")
    if cut then text = text:sub(1, cut - 1) .. "\n\t[C]: in ?" end
    return text
  end

  local function status_of(err)
    if err == "not enough memory" then return "oom" end
    return "error"
  end

  local function run(source)
    local chunk = load("return " .. source, "=stdin", "t")
    if not chunk then
      local err
      chunk, err = load(source, "=stdin", "t")
      if not chunk then
        stderr:write(message(err), "\n")
        return status_of(err)
      end
    end
    local results = pack(xpcall(chunk, handler))
    if not results[1] then
      stderr:write(tostring(results[2]), "\n")
      return status_of(results[2]:match("^[^\n]*"))
    end
    if results.n > 1 then
      local ok, err = pcall(print, unpack(results, 2, results.n))
      if not ok then
        stderr:write("error calling 'print' (", message(err), ")\n")
        return "error"
      end
    end
    return "ok"
  end

  while true do
    local source = read_frame()
    if source == nil then break end
    local ok, status = pcall(run, source)
    if not ok then status = status_of(status) end
    stdout:flush()
    stderr:flush()
    control:write(status, "\n")
    control:flush()
  end
end
