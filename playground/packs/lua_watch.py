"""The in-guest half of "what did it try?" for Lua on the Wasm tier (``core.attempts``).

Lua's standard library reaches beyond the sandbox in three places the WASI
layer never sees as such: ``os.execute`` and ``io.popen`` (this build has
no shell: they fail inside the guest) and ``os.getenv`` of a name that was
not given. This chunk, run before the program (``lua -e``), wraps them to
report each attempt over the report channel (``/.attempts``) and then do
what they did before. Files are seen by the host (``attempt_watch``).

Lua closes every open file when it ends; the chunk's last word (a
finalizer made after the channel, so run before the channel is closed)
tells the host that this close is the runtime ending
(``attempt_watch.END_OF_REPORT``).

Blind spots: a program that saved the original functions first cannot
(it runs after this chunk), but one that reaches them through ``debug``
or closes the channel can; a closed channel is recorded by the host.
"""

from typing import Final

#: One line (``lua -e`` takes a chunk); no global names are left behind.
WATCH: Final = (
    "do "
    "local channel = io.open('/.attempts', 'w') "
    "if channel then "
    "channel:setvbuf('line') "
    # Finalized before the channel at lua_close (finalizers run newest first): the runtime is ending. The
    # os.getenv wrapper below holds it, so it lives as long as the wrappers do.
    "local ending = setmetatable({}, {__gc = function() channel:write('{\"end\": true}\\n') end}) "
    "local function quote(s) "
    "return '\"' .. tostring(s):sub(1, 300):gsub('[%c\"\\\\]', function(c) "
    "return string.format('\\\\u%04x', c:byte()) end) .. '\"' end "
    "local function say(kind, target, verdict) "
    "channel:write('{\"kind\": \"', kind, '\", \"target\": ', quote(target), "
    "', \"verdict\": \"', verdict, '\"}\\n') end "
    "local execute, popen, getenv = os.execute, io.popen, os.getenv "
    "local no = 'refused: no processes in this sandbox' "
    "os.execute = function(command, ...) "
    "if command ~= nil then say('process_spawn', command, no) end "
    "return execute(command, ...) end "
    "io.popen = function(command, ...) say('process_spawn', command, no) "
    "local ok, file, message = pcall(popen, command, ...) "
    "if ok then return file, message end "
    "error((tostring(file):gsub('^%(command line%):%d+: ', '')), 2) end "
    "os.getenv = function(name) local _, value = ending, getenv(name) "
    "if value == nil and type(name) == 'string' then say('env_lookup', name, 'refused: not given to the program') end "
    "return value end "
    "end "
    "end"
)
