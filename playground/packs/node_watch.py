"""The in-guest half of "what did it try?" for Node.js on the Docker tier (``core.attempts``).

Node runs ``node -e BOOT /work/main.js ARGS`` (``BOOT`` below): the script
installs the hooks, then runs the program with ``Module.runMain()``, as
``node /work/main.js ARGS`` would (``process.argv``, ``require.main``,
``__filename``, ES modules and the exit status are the same; a stack trace
gains one ``[eval]`` frame below the program's). ``child_process.fork``
passes ``process.execArgv`` on, so a forked child runs the same script.

The report goes to the channel the root wrapper opened as
``wrapper.REPORT_FD`` (a regular file with no name: the script takes
nothing else, so a server or a session, which have no such descriptor, run
without it). One JSON line per attempt, parsed by the host with
``core.attempts.parse_guest_report``, so every record is ``Observer.GUEST``.
The first line says the report started, the last (on ``process`` ``exit``)
that it ended: a run that exits by itself without that last line stopped its
report (closed the channel, removed the listener) and the host records that
(``backends.docker.report``).

What is reported, and how it is seen:

* ``network_connect`` ``host:port``: ``net.Socket.prototype.connect``, which
  ``net``, ``tls``, ``http(s)`` and ``fetch`` (undici) all go through;
* ``dns_lookup`` ``host``: ``dns.lookup`` / ``dns.resolve*`` and their
  promise forms (``net`` looks names up through ``dns.lookup`` too);
* ``process_spawn`` the command line: ``ChildProcess.prototype.spawn``
  (``spawn``, ``exec``, ``execFile``, ``fork``) and ``spawnSync``,
  ``execSync``, ``execFileSync``; the process does run, inside the container;
* ``signal``: ``process.kill``;
* ``env_lookup``: a name missing from ``process.env`` read by the program's
  own code (a caller under ``/work``; node's own look-ups are not).

Connections to the container's own loopback and to the run's egress proxy
(``HTTP_PROXY``, a ``NetPolicy`` run) are not attempts beyond the sandbox.

Blind spots: a program that saved the originals first cannot (it runs after
this script), but one that reaches the native bindings
(``process.binding``), reads ``process.env`` through a reference taken by
node's internals, sets ``Error.stackTraceLimit = 0`` (env look-ups then go
unseen) or truncates its descriptor can; every record here is the guest's
word, never more. A spawned program's own attempts are not seen by this
script (only the Python pack installs a hook of its own).
"""

from typing import Final

#: The ``-e`` script; no global name of its own is left behind.
BOOT: Final = r"""(() => {
'use strict';
const load = globalThis.require;
for (const name of ['module', 'require', 'exports', '__filename', '__dirname']) delete globalThis[name];
const fs = load('fs');
const FD = 4;
let channel = false;
try { const info = fs.fstatSync(FD); channel = info.isFile() && info.nlink === 0; } catch (e) {}
if (channel) {
  const write = fs.writeSync;
  const raw = (text) => { try { write(FD, text); } catch (e) {} };
  const say = (kind, target, verdict) =>
    raw(JSON.stringify({ kind, target: String(target).slice(0, 300), verdict }) + '\n');
  raw('{"start": true}\n');
  process.on('exit', () => raw('{"end": true}\n'));
  let proxy = '';
  try {
    const url = process.env.HTTP_PROXY;
    if (url) { const u = new URL(url); proxy = u.hostname + ':' + (u.port || '80'); }
  } catch (e) {}
  const NET = proxy ? 'refused: only the egress proxy is reachable' : 'refused: no network in this sandbox';
  const RAN = 'allowed: inside the container';
  const local = (host) => !host || host === 'localhost' || host === '::1' || host === '0.0.0.0' || /^127\./.test(host)
    || host === proxy.split(':')[0];
  const net = load('net');
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (...args) {
    try {
      const first = Array.isArray(args[0]) ? args[0][0] : args[0];
      const options = first && typeof first === 'object'
        ? first : { port: first, host: typeof args[1] === 'string' ? args[1] : '' };
      const host = String(options.host || 'localhost'), place = host + ':' + options.port;
      if (options.path === undefined && !local(host) && place !== proxy) say('network_connect', place, NET);
    } catch (e) {}
    return connect.apply(this, args);
  };
  const dns = load('dns');
  const lookups = (space) => {
    const names = ['lookup', 'resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCname', 'resolveMx', 'resolveTxt',
      'resolveSrv', 'resolveNs'];
    for (const name of names) {
      const real = space[name];
      if (typeof real !== 'function') continue;
      space[name] = function (host, ...rest) {
        if (typeof host === 'string' && !local(host)) say('dns_lookup', host, NET);
        return real.call(this, host, ...rest);
      };
    }
  };
  lookups(dns);
  lookups(dns.promises);
  const cp = load('child_process');
  const words = (file, args) => [file, ...(Array.isArray(args) ? args : [])].join(' ');
  const spawn = cp.ChildProcess.prototype.spawn;
  cp.ChildProcess.prototype.spawn = function (options) {
    try { say('process_spawn', Array.isArray(options.args) ? options.args.join(' ') : options.file, RAN); } catch (e) {}
    return spawn.call(this, options);
  };
  const sync = { spawnSync: words, execFileSync: words, execSync: (command) => '/bin/sh -c ' + command };
  for (const name of Object.keys(sync)) {
    const real = cp[name];
    cp[name] = function (...args) {
      try { say('process_spawn', sync[name](...args), RAN); } catch (e) {}
      return real.apply(this, args);
    };
  }
  const kill = process.kill;
  process.kill = function (pid, signal) {
    const what = 'signal ' + (signal === undefined ? 'SIGTERM' : signal) + ' to process ' + pid;
    say('signal', what, 'allowed: only the guest\'s own processes');
    return kill.apply(this, arguments);
  };
  const NAME = /^[A-Z_][A-Z0-9_]*$/;
  const own = Object.prototype.hasOwnProperty;
  process.env = new Proxy(process.env, { get(env, name) {
    if (typeof name === 'string' && NAME.test(name) && !own.call(env, name)) {
      const caller = String(new Error().stack).split('\n')[2] || '';
      if (/[( ]\/work\//.test(caller)) say('env_lookup', name, 'refused: not given to the program');
    }
    return env[name];
  } });
}
load('module').runMain();
})();
"""
