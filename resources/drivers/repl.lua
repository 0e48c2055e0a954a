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
--
-- Streaming: the same hook flushes stdout, so a long input's output arrives
-- as it is printed rather than at the end.
--
-- Ctrl-C: while an input runs, a count hook polls /.session/interrupt
-- every HOOK_COUNT VM instructions; when the host set it to "1" the hook
-- raises "interrupted" (and then keeps raising it on every instruction, so
-- a pcall in the user's code cannot swallow it for good). The input fails
-- with status "error"; globals stay. Code in a coroutine created before
-- the input runs without the hook (Lua hooks are per thread) and cannot
-- be interrupted.
do
  local stdin, stdout, stderr = io.stdin, io.stdout, io.stderr
  local control = assert(io.open("/.session/control", "w"))
  local interrupt = io.open("/.session/interrupt", "rb")
  local sethook = debug.sethook
  local HOOK_COUNT = 10000
  local load, select, print, tostring, type = load, select, print, tostring, type
  local xpcall, traceback, getmetatable = xpcall, debug.traceback, getmetatable
  local pack, unpack = table.pack, table.unpack

  -- The session's stdin carries frames: user code reads /.session/stdin instead (io.read, io.lines,
  -- io.stdin), what is typed while the input runs (end of file without a keyboard). Reopened for each
  -- input, so bytes buffered for one input never reach the next.
  local keyboard
  local function new_stdin()
    if keyboard then pcall(keyboard.close, keyboard) end
    keyboard = io.open("/.session/stdin", "rb")
    if keyboard then
      io.input(keyboard)
      io.stdin = keyboard
    else
      io.read = function() return nil end
    end
  end

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

  local interrupted = false

  local function interrupted_hook()
    stdout:flush() -- what a long input printed so far streams out (stdout is block-buffered)
    interrupt:seek("set", 0)
    if interrupt:read(1) == "1" then
      interrupted = true
      sethook(interrupted_hook, "", 1)
      error("interrupted", 2)
    end
  end

  local function handler(err)
    sethook()
    -- An interrupt's traceback starts at the interrupted code, not in the hook.
    local text = traceback(message(err), interrupted and 4 or 2)
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
    interrupted = false
    if interrupt then sethook(interrupted_hook, "", HOOK_COUNT) end
    local results = pack(xpcall(chunk, handler))
    sethook()
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
    new_stdin()
    local ok, status = pcall(run, source)
    sethook()
    if not ok then status = status_of(status) end
    stdout:flush()
    stderr:flush()
    control:write(status, "\n")
    control:flush()
  end
end
