/*
 * Sandbox Playground's Node compatibility layer for the QuickJS driver: the core (driver.c runs it at set-up).
 *
 * What programs written for Node reach for, beyond fs, process and readline (the node layer in
 * driver.c): CommonJS (module.exports, exports, __filename, __dirname, require.main, require() of the
 * program's own .js/.cjs/.json files), and the modules path, events, util, assert (and assert/strict),
 * crypto (hashes, HMAC, random values, randomUUID), os, url, buffer, string_decoder, timers and
 * timers/promises; the globals Buffer, URL, URLSearchParams, crypto (Web Crypto's getRandomValues,
 * randomUUID and subtle.digest) and structuredClone. Everything is plain JavaScript over the sandbox's
 * WASI: no network, no processes (those stay the node layer's refusals).
 *
 * Each module lives in a file of its own beside this one (path.js, events.js ...), a function of the
 * shared helpers (``x``) that returns what it makes. The build embeds every file (recipes.py writes
 * node_compat.h); this core gets their sources (``sources``) and compiles one only when a program first
 * uses it (``part``): parsing all of them at every cold start cost 7 ms. The snapshot's capture makes
 * them all (``preload``), so a run from the snapshot pays for none.
 *
 * (native, modules, inspect, format, sources) -> moduleSource(name): ``modules`` is the node layer's
 * table that require() reads (entries here are getters: a module is made on first use);
 * ``moduleSource`` gives an ES module's source for ``import x from 'path'`` (driver.c's module loader
 * asks it).
 */
(function (native, modules, inspect, format, sources) {
'use strict';
const g = globalThis;
const define = (o, name, value, enumerable = false) => Object.defineProperty(o, name, { value, writable: true, configurable: true, enumerable });
/* ``o[name]`` made by ``make`` on first use; ``enumerable`` for a name that must show among o's keys (fs's, which
   import { readFile } from 'fs' looks for). */
const lazy = (o, name, make, enumerable = false) => Object.defineProperty(o, name, {
  configurable: true, enumerable,
  get() { const v = make(); define(o, name, v, enumerable); return v; },
  set(v) { define(o, name, v, enumerable); },
});
function typeError(message, code) { const e = new TypeError(message); e.code = code; return e; }
/* A stream's failure, as Node reports it: an 'error' event when someone listens, else thrown (uncaught). */
function emitError(emitter, e) {
  if (!emitter.listenerCount('error')) throw e;
  emitter.emit('error', e);
}
const describe = (v) => v === null ? 'null' : typeof v === 'object' ? 'an instance of ' + ((v.constructor && v.constructor.name) || 'Object') : 'type ' + typeof v + ' (' + inspect(v, 0, [], false) + ')';
function str(v, name) {
  if (typeof v !== 'string') throw typeError('The "' + name + '" argument must be of type string. Received ' + describe(v), 'ERR_INVALID_ARG_TYPE');
  return v;
}
const show = (v) => inspect(v, 0, [], false);
/* util.inspect's and console.dir's ``depth`` option: the levels of nesting shown (2 by default). As in Node, a
   depth given as null, undefined or not a number shows all; one given in util.inspect's old (value, showHidden,
   depth) form (``options`` a number, null or undefined here) shows all for null only. The printer shows an
   object while its own depth is at most 2, so starting deeper or shallower shows fewer or more levels. */
function inspectWith(v, options) {
  let levels = 2;
  if (options !== null && typeof options === 'object') {
    if ('depth' in options) levels = options.depth === null ? Infinity : Number(options.depth);
  } else if (options !== undefined) levels = options === null ? Infinity : Number(options);
  return inspect(v, 2 - (Number.isNaN(levels) ? Infinity : levels), [], false);
}
const CUSTOM = Symbol.for('nodejs.util.inspect.custom');
const HEX = '0123456789abcdef';
/* A file of ours (path.js ...), compiled and run on first use, under the name a stack trace shows. */
const loaded = new Map();
function part(file) {
  if (!loaded.has(file)) loaded.set(file, native.compile(sources[file], '<node:' + file + '>')(x));
  return loaded.get(file);
}
const x = { g, define, lazy, typeError, emitError, str, describe, inspect, inspectWith, format, show, CUSTOM, HEX, native, load: part };
const P = () => part('path').path;
/* A module of ours under its name and 'node:' + its name: ``make`` runs on first require (or import). */
function provide(name, make) {
  let made, done = false;
  const once = () => { if (!done) { made = make(); done = true; } return made; };
  for (const key of [name, 'node:' + name]) Object.defineProperty(modules, key, { get: once, enumerable: true, configurable: true });
}
for (const [name, file] of [['path', 'path'], ['path/posix', 'path'], ['events', 'events'], ['util', 'util'], ['assert', 'assert'],
  ['assert/strict', 'assert'], ['buffer', 'buffer'], ['string_decoder', 'buffer'], ['crypto', 'crypto'], ['url', 'url']])
  provide(name, () => part(file)[name]);
/* Intl in English (intl.js), and in place of QuickJS's own toLocaleString, toLocaleDateString,
   toLocaleTimeString and localeCompare (which ignored locale and options), methods that use it. */
lazy(g, 'Intl', () => part('intl').Intl);
for (const [proto, name, key] of [[Number.prototype, 'toLocaleString', 'numberToLocaleString'], [BigInt.prototype, 'toLocaleString', 'bigintToLocaleString'],
  [Date.prototype, 'toLocaleString', 'toLocaleString'], [Date.prototype, 'toLocaleDateString', 'toLocaleDateString'],
  [Date.prototype, 'toLocaleTimeString', 'toLocaleTimeString'], [String.prototype, 'localeCompare', 'localeCompare']]) {
  const method = { [name](...args) { return part('intl').methods[key](this, ...args); } }[name];
  Object.defineProperty(method, 'length', { value: name === 'localeCompare' ? 1 : 0 });
  define(proto, name, method);
}
lazy(g, 'Buffer', () => part('buffer').Buffer);
lazy(g, 'URL', () => part('url').URL);
lazy(g, 'URLSearchParams', () => part('url').URLSearchParams);
lazy(g, 'crypto', () => part('crypto').webcrypto);
for (const name of ['Event', 'CustomEvent', 'EventTarget', 'AbortController', 'AbortSignal']) lazy(g, name, () => part('web')[name]);
provide('perf_hooks', () => ({ performance: g.performance }));

/* ---- process: the rest of what programs read from it (the node layer has argv, env, exit, cwd, stdout) ---- */
const process = g.process;
const started = g.performance.now();
Object.assign(process, {
  nextTick: (fn, ...args) => { if (typeof fn !== 'function') throw typeError('The "callback" argument must be of type function', 'ERR_INVALID_ARG_TYPE'); queueMicrotask(() => fn(...args)); },
  hrtime: Object.assign((prev) => {
    const ns = Math.round((g.performance.now() - started) * 1e6) + 1e9;
    let sec = Math.floor(ns / 1e9), nsec = ns % 1e9;
    if (Array.isArray(prev)) { sec -= prev[0]; nsec -= prev[1]; if (nsec < 0) { sec--; nsec += 1e9; } }
    return [sec, nsec];
  }, { bigint: () => BigInt(Math.round((g.performance.now() - started) * 1e6)) + 1000000000n }),
  uptime: () => (g.performance.now() - started) / 1000,
  memoryUsage: Object.assign(() => { const [total, used, rss] = native.memoryUsage(); return { rss, heapTotal: total, heapUsed: used, external: 0, arrayBuffers: 0 }; },
    { rss: () => native.memoryUsage()[2] }),
  cpuUsage: () => ({ user: Math.round(g.performance.now() * 1000), system: 0 }),
  pid: 1, ppid: 0, arch: 'wasm32', title: 'qjs', execPath: '/usr/bin/qjs', execArgv: [], release: { name: 'quickjs' },
  /* The Node version whose library this layer follows (its output is held to Node 20's), as other
     runtimes that run Node programs give theirs: a program that reads process.versions.node works. */
  version: 'v20.0.0', versions: { node: '20.0.0', quickjs: 'QuickJS-NG' }, config: {}, features: {},
  umask: () => 0o22, getuid: () => -1, getgid: () => -1, geteuid: () => -1, getegid: () => -1, emitWarning: (w) => { process.stderr.write('(node) Warning: ' + (w && w.message ? w.message : w) + '\n'); },
});
/* process is an EventEmitter, as in Node (events.js's, made when a program first listens): 'exit' is emitted by
   the driver as the program ends (bootstrap's exitCode); signals never come. */
const emitter = () => part('events').events.prototype;
for (const name of ['on', 'addListener', 'once', 'prependListener', 'prependOnceListener', 'off', 'removeListener',
  'removeAllListeners', 'listeners', 'rawListeners', 'listenerCount', 'eventNames', 'setMaxListeners', 'getMaxListeners'])
  define(process, name, (...args) => emitter()[name].apply(process, args));
define(process, 'emit', (...args) => Object.prototype.hasOwnProperty.call(process, '_events') ? emitter().emit.apply(process, args) : false);

/* A readable stream of what ``read()`` gives (bytes), made on ``stream`` (an EventEmitter): the program that
   listens for 'data' (or 'readable', or iterates it, or resumes or pipes it) gets it in chunks of ``size``
   bytes (strings once setEncoding was called, else Buffers), then 'end' and 'close'. The read happens in a
   macrotask after the listener is added, as Node's first chunk comes on a later turn of its loop: the whole
   program's synchronous part has run by then. process.stdin is one over all of stdin in one chunk, as Node's
   is when stdin is a pipe or a file (what a sandbox run's stdin is); fs.createReadStream's, over a file. */
function readable(stream, read, size) {
  let decoder = null, flowing = false, started = false, chunks, ended = false;
  const take = () => {
    if (chunks === undefined) {
      const bytes = g.Buffer.from(read());
      chunks = [];
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
    }
    return chunks;
  };
  const text = (bytes) => decoder ? decoder.write(bytes) : bytes;
  const finish = () => {
    if (ended) return;
    ended = true;
    stream.readableEnded = true;
    stream.emit('end');
    stream.emit('close');
  };
  const flow = () => {
    while (flowing && chunks.length) { const data = text(chunks.shift()); if (data.length) stream.emit('data', data); }
    if (!chunks.length) finish();
  };
  const start = () => {
    if (started) return;
    started = true;
    g.setImmediate(() => {
      try { take(); } catch (e) {
        if (!stream.errored) emitError(stream, e);  /* errored: told already (a file stream that could not be opened) */
        return;
      }
      if (flowing) flow();
      else { stream.emit('readable'); if (!chunks.length) finish(); }
    });
  };
  const rest = () => { const data = g.Buffer.concat(take().splice(0)); return decoder ? decoder.write(data) : data; };
  define(stream, 'setEncoding', (enc) => { decoder = new (part('buffer').string_decoder.StringDecoder)(enc === undefined ? 'utf8' : String(enc)); return stream; });
  define(stream, 'resume', () => { flowing = true; if (started && chunks !== undefined) g.setImmediate(flow); else start(); return stream; });
  define(stream, 'pause', () => { flowing = false; return stream; });
  define(stream, 'isPaused', () => !flowing);
  define(stream, 'read', () => { if (ended || (chunks !== undefined && !chunks.length)) return null; const data = rest(); if (started) g.setImmediate(finish); return data.length ? data : null; });
  define(stream, 'pipe', (dest, opts) => {
    stream.on('data', (data) => dest.write(data));
    if (!opts || opts.end !== false) stream.on('end', () => { if (typeof dest.end === 'function' && dest !== process.stdout && dest !== process.stderr) dest.end(); });
    return dest;
  });
  define(stream, 'unref', () => stream);
  define(stream, 'ref', () => stream);
  define(stream, 'destroy', () => { chunks = []; finish(); return stream; });
  define(stream, Symbol.asyncIterator, async function* () { for (const chunk of take().splice(0)) { const data = text(chunk); if (data.length) yield data; } finish(); });
  stream.on('newListener', (event) => {
    if (event === 'data') { flowing = true; start(); }
    else if (event === 'readable') start();
  });
  return stream;
}
x.readable = readable;
function makeStdin() {
  const stdin = new (part('events').events)();
  Object.assign(stdin, { fd: 0, isTTY: undefined, readable: true, readableEnded: false });
  return readable(stdin, () => native.readStdin(), Infinity);
}
lazy(process, 'stdin', makeStdin);

/* ---- fs: the callback API, streams and the rest (node_compat/fs.js, made on first use); readline over a file
   stream. Shown among fs's names (enumerable), so that import { readFile } from 'fs' finds them. fs.js makes
   the callback and promise forms of the names listed here (``x.fsNames``). ---- */
x.fsNames = {
  callbacks: ['readFile', 'writeFile', 'appendFile', 'readdir', 'mkdir', 'rmdir', 'rm', 'unlink', 'rename', 'copyFile', 'stat', 'lstat',
    'symlink', 'readlink', 'access', 'realpath', 'mkdtemp', 'truncate', 'chmod', 'chown', 'utimes', 'open', 'close', 'fstat'],
  promises: ['realpath', 'mkdtemp', 'truncate', 'chmod', 'chown', 'utimes'],
  own: ['accessSync', 'realpathSync', 'mkdtempSync', 'truncateSync', 'chmodSync', 'chownSync', 'utimesSync', 'openSync', 'readSync',
    'writeSync', 'closeSync', 'fstatSync', 'exists', 'createReadStream', 'createWriteStream', 'constants'],
};
for (const name of [...x.fsNames.own, ...x.fsNames.callbacks]) lazy(g.fs, name, () => part('fs').fs[name], true);
for (const name of x.fsNames.promises) lazy(g.fs.promises, name, () => part('fs').promises[name], true);
/* fs.readFileSync without an encoding gives a Buffer, as Node's does (the node layer's gives a Uint8Array of the
   bytes): readFileSync(0).toString() must be the text, not the bytes' numbers joined by commas. */
const readBytes = g.fs.readFileSync;
g.fs.readFileSync = (path, options) => {
  const data = readBytes(path, options);
  return typeof data === 'string' ? data : g.Buffer.from(data.buffer, data.byteOffset, data.length);
};
const FILE_STREAM = Symbol.for('playground.fileStream');
for (const name of ['readline', 'readline/promises']) {
  const plain = modules[name].createInterface;
  modules[name].createInterface = (options, ...rest) =>
    options !== null && typeof options === 'object' && options.input !== null && typeof options.input === 'object' && FILE_STREAM in options.input
      ? part('fs').lineReader(options.input) : plain(options, ...rest);
}

/* ---- console: dir with its options; timers, counters, groups and tables (node_compat/console.js, made on first use) ---- */
define(g.console, 'dir', (v, options) => g.console.log(inspectWith(v, options)));
for (const name of ['time', 'timeEnd', 'timeLog', 'count', 'countReset', 'group', 'groupCollapsed', 'groupEnd', 'table'])
  lazy(g.console, name, () => part('console')[name]);

/* ---- CommonJS: module, exports, __filename, __dirname, require.main, require() of the program's files ---- */
const cache = new Map();
const mainFile = () => { const a = g.process.argv[1]; return typeof a === 'string' && a ? P().resolve(a) : P().resolve('main.js'); };
let mainModule;
function getMain() {
  if (!mainModule) {
    mainModule = { id: '.', path: P().dirname(mainFile()), exports: {}, filename: mainFile(), loaded: false, children: [], paths: [] };
    cache.set(mainModule.filename, mainModule);
  }
  return mainModule;
}
lazy(g, 'module', getMain);
Object.defineProperty(g, 'exports', { configurable: true, enumerable: false, get: () => getMain().exports, set(v) { getMain().exports = v; } });
Object.defineProperty(g, '__filename', { configurable: true, enumerable: false, get: () => mainFile(), set(v) { define(g, '__filename', v); } });
Object.defineProperty(g, '__dirname', { configurable: true, enumerable: false, get: () => P().dirname(mainFile()), set(v) { define(g, '__dirname', v); } });
const builtinRequire = g.require;
const isFile = (p) => { try { return native.stat(p)[0] === 0; } catch (_) { return false; } };
function resolveFile(request, dir) {
  const base = P().resolve(dir, request);
  for (const c of [base, base + '.js', base + '.cjs', base + '.json', base + '/index.js', base + '/index.json']) if (isFile(c)) return c;
  const pkg = base + '/package.json';
  if (isFile(pkg)) {
    let main;
    try { main = JSON.parse(native.decode(native.readFile(pkg))).main; } catch (_) {}
    if (typeof main === 'string') for (const c of [P().resolve(base, main), P().resolve(base, main) + '.js', P().resolve(base, main, 'index.js')]) if (isFile(c)) return c;
  }
  const e = new Error("Cannot find module '" + request + "'"); e.code = 'MODULE_NOT_FOUND'; throw e;
}
function load(filename, parent) {
  const seen = cache.get(filename);
  if (seen) return seen.exports;
  const m = { id: filename, path: P().dirname(filename), exports: {}, filename, loaded: false, children: [], paths: [], parent };
  cache.set(filename, m);
  if (parent) parent.children.push(m);
  const text = native.decode(native.readFile(filename));
  try {
    if (filename.endsWith('.json')) m.exports = JSON.parse(text);
    else native.compile('(function (exports, require, module, __filename, __dirname) {' + text.replace(/^#!.*/, '') + '\n})', filename)
      .call(m.exports, m.exports, makeRequire(m), m, filename, m.path);
  } catch (e) { cache.delete(filename); throw e; }
  m.loaded = true;
  return m.exports;
}
function makeRequire(from) {
  const req = (name) => {
    str(name, 'id');
    if (name.startsWith('./') || name.startsWith('../') || name.startsWith('/') || name === '.' || name === '..')
      return load(resolveFile(name, from ? from.path : P().dirname(mainFile())), from || getMain());
    return builtinRequire(name);
  };
  req.resolve = (name) => name.startsWith('.') || name.startsWith('/') ? resolveFile(name, from ? from.path : P().dirname(mainFile())) : name;
  req.cache = {};
  Object.defineProperty(req, 'main', { get: getMain, enumerable: true });
  return req;
}
define(g, 'require', makeRequire(null));

/* ---- structuredClone ---- */
function structuredCloneOf(v, memo) {
  if (typeof v === 'function' || typeof v === 'symbol') { const e = new Error((typeof v === 'function' ? inspect(v, 0, [], false) : String(v)) + ' could not be cloned.'); e.name = 'DataCloneError'; throw e; }
  if (typeof v !== 'object' || v === null) return v;
  if (memo.has(v)) return memo.get(v);
  let out;
  if (v instanceof Date) out = new Date(v.getTime());
  else if (v instanceof RegExp) out = new RegExp(v.source, v.flags);
  else if (v instanceof ArrayBuffer) out = v.slice(0);
  else if (ArrayBuffer.isView(v)) { const C = g[Object.prototype.toString.call(v).slice(8, -1)];  /* a Buffer clones as its Uint8Array */ out = v instanceof DataView ? new DataView(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) : new C(v); }
  else if (v instanceof Map) { out = new Map(); memo.set(v, out); for (const [k, x] of v) out.set(structuredCloneOf(k, memo), structuredCloneOf(x, memo)); return out; }
  else if (v instanceof Set) { out = new Set(); memo.set(v, out); for (const x of v) out.add(structuredCloneOf(x, memo)); return out; }
  else if (v instanceof Error) { out = new (g[v.name] && g[v.name].prototype instanceof Error ? g[v.name] : Error)(v.message); if (v.stack) out.stack = v.stack; }
  else if (v instanceof Boolean || v instanceof Number || v instanceof String) out = Object(v.valueOf());
  else if (Array.isArray(v)) { out = new Array(v.length); memo.set(v, out); for (const k of Object.keys(v)) out[k] = structuredCloneOf(v[k], memo); return out; }
  else if (v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet) { const e = new Error(inspect(v, 0, [], false) + ' could not be cloned.'); e.name = 'DataCloneError'; throw e; }
  else { out = {}; memo.set(v, out); for (const k of Object.keys(v)) out[k] = structuredCloneOf(v[k], memo); return out; }
  memo.set(v, out);
  return out;
}
define(g, 'structuredClone', (v) => structuredCloneOf(v, new Map()));

/* ---- os, timers ---- */
provide('os', () => ({
  EOL: '\n', devNull: '/dev/null', constants: { signals: {}, errno: {}, priority: {} },
  platform: () => 'wasi', type: () => 'WASI', arch: () => 'wasm32', machine: () => 'wasm32', release: () => '', version: () => 'WebAssembly',
  hostname: () => 'sandbox', homedir: () => native.env.HOME || '/', tmpdir: () => '/tmp', endianness: () => 'LE',
  cpus: () => [{ model: 'WebAssembly', speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } }], availableParallelism: () => 1,
  totalmem: () => 2 ** 32, freemem: () => 2 ** 32, loadavg: () => [0, 0, 0], uptime: () => Math.floor(Date.now() / 1000) % 86400,
  networkInterfaces: () => ({}), userInfo: () => ({ uid: -1, gid: -1, username: 'user', homedir: native.env.HOME || '/', shell: null }),
}));
/* util.promisify(setTimeout) and util.promisify(setImmediate) resolve with their value, as Node's do. */
const PROMISIFY = Symbol.for('nodejs.util.promisify.custom');
const sleep = (ms, value) => new Promise((resolve) => g.setTimeout(() => resolve(value), ms));
const nextTurn = (value) => new Promise((resolve) => g.setImmediate(() => resolve(value)));
define(g.setTimeout, PROMISIFY, sleep);
define(g.setImmediate, PROMISIFY, nextTurn);
provide('timers', () => ({ setTimeout: g.setTimeout, clearTimeout: g.clearTimeout, setInterval: g.setInterval, clearInterval: g.clearInterval, setImmediate: g.setImmediate, clearImmediate: g.clearImmediate }));
provide('timers/promises', () => ({
  setTimeout: sleep,
  setImmediate: nextTurn,
  async *setInterval(ms, value) { for (;;) { await sleep(ms); yield value; } },
  scheduler: { wait: (ms) => sleep(ms), yield: () => Promise.resolve() },
}));

/* ---- ES modules: import x from 'path' (driver.c's module loader asks) ---- */
const IDENT = /^[A-Za-z_$][\w$]*$/, RESERVED = new Set(['default', 'delete', 'new', 'class', 'function', 'var', 'let', 'const', 'import', 'export', 'in', 'if', 'do', 'for', 'with', 'this']);
/* Any module require() has (the node layer's fs, process, readline ... and ours), as an ES module whose
   named exports are its own enumerable names. */
function moduleSource(name) {
  if (!Object.prototype.hasOwnProperty.call(modules, name)) return undefined;
  const m = modules[name];
  const names = Object.keys(m).filter((k) => IDENT.test(k) && !RESERVED.has(k));
  return 'const m = require(' + JSON.stringify(name) + '); export default m;\n' + (names.length ? 'export const { ' + names.join(', ') + ' } = m;\n' : '');
}
/* The snapshot's capture makes every module before the snapshot point: a run from the snapshot finds
   them made (a cold start makes only those its program uses). */
define(moduleSource, 'preload', () => { for (const file of Object.keys(sources)) part(file); });
return moduleSource;
})
