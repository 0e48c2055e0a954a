"""The in-guest half of "what did it try?" for Lua on the Wasm tier (``core.attempts``).

Lua's standard library reaches beyond the sandbox in three places the WASI
layer never sees as such: ``os.execute`` and ``io.popen`` (this build has
no shell: they fail inside the guest) and ``os.getenv`` of a name that was
not given. This chunk, run before the program (``lua -e``), wraps them to
report each attempt over the report channel (``/.attempts``) and then do
what they did before. Files are seen by the host (``attempt_watch``).

The channel is opened by the first report, not before: a run that tries
nothing never opens, writes or closes it (a hello world makes 16 host calls
instead of 21; its time moved within the noise, the chunk's own compile
being most of what the watch costs: ``bench/attempts_cost.py``). A program
cannot close what is not open yet; once it is, closing it is recorded by
the host as before. What opens and writes it was taken when the chunk ran
(``io.open``, ``setmetatable``, ``string.format``...), so a program that
replaces those first still has its attempts reported (it used to fail
inside the wrapper when ``string.format`` was gone).

Lua closes every open file when it ends; the chunk's last word (a
finalizer made right after the channel, so run before the channel is
closed) tells the host that this close is the runtime ending
(``attempt_watch.END_OF_REPORT``).

Blind spots: a program that saved the original functions first cannot
(it runs after this chunk), but one that reaches them through ``debug``
or closes the channel can; a closed channel is recorded by the host.
"""

from typing import Final

#: One line (``lua -e`` takes a chunk); no global names are left behind.
WATCH: Final = (
    "do "
    "local open, setmetatable, tostring, type, pcall, error = io.open, setmetatable, tostring, type, pcall, error "
    "local format = string.format "
    "local channel, ending "
    "local function quote(s) "
    "return '\"' .. tostring(s):sub(1, 300):gsub('[%c\"\\\\]', function(c) "
    "return format('\\\\u%04x', c:byte()) end) .. '\"' end "
    "local function say(kind, target, verdict) "
    "if channel == nil then "
    "channel = open('/.attempts', 'w') or false "
    "if channel then "
    "channel:setvbuf('line') "
    # Finalized before the channel at lua_close (finalizers run newest first): the runtime is ending. An upvalue
    # of say, which every wrapper holds, so it lives as long as they do.
    "ending = setmetatable({}, {__gc = function() channel:write('{\"end\": true}\\n') end}) "
    "end "
    "end "
    "if channel then "
    "channel:write('{\"kind\": \"', kind, '\", \"target\": ', quote(target), "
    "', \"verdict\": \"', verdict, '\"}\\n') "
    "end "
    "end "
    "local execute, popen, getenv = os.execute, io.popen, os.getenv "
    "local no = 'refused: no processes in this sandbox' "
    "os.execute = function(command, ...) "
    "if command ~= nil then say('process_spawn', command, no) end "
    "return execute(command, ...) end "
    "io.popen = function(command, ...) say('process_spawn', command, no) "
    "local ok, file, message = pcall(popen, command, ...) "
    "if ok then return file, message end "
    "error((tostring(file):gsub('^%(command line%):%d+: ', '')), 2) end "
    "os.getenv = function(name) local value = getenv(name) "
    "if value == nil and type(name) == 'string' then say('env_lookup', name, 'refused: not given to the program') end "
    "return value end "
    "end"
)
