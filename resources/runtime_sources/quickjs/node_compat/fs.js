/* fs beyond the node layer's synchronous calls: the callback API (fs.readFile(path, 'utf8', (err, data) => ...)),
   createReadStream and createWriteStream, the file-descriptor calls (openSync, readSync, writeSync, closeSync,
   fstatSync), accessSync, realpathSync, mkdtempSync, truncateSync, fs.constants, and readline over a file
   stream (node_compat/core.js loads this file on first use of one of them). Everything is built on the node
   layer's calls, so the sandbox's tree, quota and refusals hold as for them. */
(function (x) {
'use strict';
const { g, typeError, emitError, describe, readable, load, fsNames } = x;
const fs = g.fs;
const EventEmitter = () => load('events').events;
const later = (fn, ...args) => g.setImmediate(() => fn(...args));
const constants = Object.freeze({ F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1, O_RDONLY: 0, O_WRONLY: 1, O_RDWR: 2,
  O_CREAT: 64, O_EXCL: 128, O_TRUNC: 512, O_APPEND: 1024, COPYFILE_EXCL: 1, COPYFILE_FICLONE: 2 });

function accessSync(path) { fs.statSync(path); }
function realpathSync(path) {
  const resolved = load('path').path.resolve(String(path));
  fs.statSync(resolved);
  return resolved;
}
realpathSync.native = realpathSync;
function mkdtempSync(prefix) {
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  for (;;) {
    let path = String(prefix);
    for (let i = 0; i < 6; i++) path += letters[Math.floor(Math.random() * letters.length)];
    if (!fs.existsSync(path)) { fs.mkdirSync(path); return path; }
  }
}
function truncateSync(path, length = 0) {
  const data = fs.readFileSync(path), kept = new Uint8Array(length);
  kept.set(data.subarray(0, length));
  fs.writeFileSync(path, kept);
}
/* Modes, owners and times are not kept by the sandbox's tree: these check that the file is there. */
const touchSync = (path) => { fs.statSync(path); };

/* ---- file descriptors: 0, 1 and 2 are stdin, stdout and stderr; a file's is ours, from 3 ---- */
const open = new Map();
let nextFd = 3;
function openSync(path, flags = 'r') {
  flags = String(flags);
  const record = { path: String(path), flags, position: 0, data: null };
  if (flags[0] === 'r') record.data = g.Buffer.from(fs.readFileSync(path));
  else if (flags[0] === 'w') fs.writeFileSync(path, '');
  else if (flags[0] === 'a') fs.appendFileSync(path, '');
  else throw typeError("The value \"" + flags + "\" is invalid for option \"flags\"", 'ERR_INVALID_ARG_VALUE');
  open.set(nextFd, record);
  return nextFd++;
}
function fileOf(fd) {
  const record = open.get(fd);
  if (record === undefined) { const e = new Error('EBADF: bad file descriptor'); e.code = 'EBADF'; e.errno = -9; throw e; }
  return record;
}
let stdin = null;
function readSync(fd, buffer, offset, length, position) {
  if (offset !== null && typeof offset === 'object') ({ offset = 0, length = buffer.length - offset, position = null } = offset);
  offset = offset || 0;
  if (length === undefined) length = buffer.length - offset;
  const record = fd === 0 ? (stdin = stdin || { position: 0, data: g.Buffer.from(fs.readFileSync(0)) }) : fileOf(fd);
  if (record.data === null) { const e = new Error('EBADF: bad file descriptor, read'); e.code = 'EBADF'; throw e; }
  const from = typeof position === 'number' && position >= 0 ? position : record.position;
  const part = record.data.subarray(from, from + length);
  buffer.set(part, offset);
  if (!(typeof position === 'number' && position >= 0)) record.position = from + part.length;
  return part.length;
}
function writeSync(fd, data, ...rest) {
  const bytes = typeof data === 'string' ? g.Buffer.from(data, typeof rest[1] === 'string' ? rest[1] : 'utf8')
    : g.Buffer.from(data.buffer, data.byteOffset + (rest[0] || 0), rest[1] === undefined ? data.byteLength - (rest[0] || 0) : rest[1]);
  if (fd === 1 || fd === 2) { (fd === 1 ? g.process.stdout : g.process.stderr).write(bytes); return bytes.length; }
  const record = fileOf(fd);
  if (record.flags[0] === 'r' && !record.flags.includes('+')) { const e = new Error('EBADF: bad file descriptor, write'); e.code = 'EBADF'; throw e; }
  fs.appendFileSync(record.path, bytes);
  return bytes.length;
}
function closeSync(fd) { if (fd > 2) { fileOf(fd); open.delete(fd); } }
function fstatSync(fd) { return fs.statSync(fileOf(fd).path); }

/* ---- streams ---- */
/* Marks a stream of ours over a file: readline reads its lines (``lines``) instead of the keyboard. */
const FILE = Symbol.for('playground.fileStream');
function createReadStream(path, options) {
  const o = typeof options === 'string' ? { encoding: options } : options || {};
  const stream = new (EventEmitter())();
  Object.assign(stream, { path, bytesRead: 0, pending: true, readable: true, readableEnded: false });
  const read = () => {
    const all = g.Buffer.from(fs.readFileSync(path));
    const data = all.subarray(o.start || 0, o.end === undefined ? all.length : o.end + 1);
    stream.bytesRead = data.length;
    return data;
  };
  readable(stream, read, o.highWaterMark || 65536);
  if (o.encoding) stream.setEncoding(o.encoding);
  stream[FILE] = read;
  later(() => {  /* as Node opens the file at once: a missing one is an error even with nobody reading */
    try { fs.statSync(path); } catch (e) {
      stream.errored = e;
      stream.destroyed = true;
      emitError(stream, e);
      stream.emit('close');
      return;
    }
    stream.pending = false;
    stream.emit('open', 3);
    stream.emit('ready');
  });
  return stream;
}
function createWriteStream(path, options) {
  const o = typeof options === 'string' ? { encoding: options } : options || {};
  const stream = new (EventEmitter())();
  Object.assign(stream, { path, bytesWritten: 0, pending: false, writable: true, writableEnded: false, writableFinished: false });
  let failed = null, ended = false;
  try { if (!String(o.flags || 'w').startsWith('a')) fs.writeFileSync(path, ''); else fs.appendFileSync(path, ''); } catch (e) { failed = e; }
  const fail = (e) => emitError(stream, e);
  later(() => { if (failed) fail(failed); else { stream.emit('open', 3); stream.emit('ready'); } });
  stream.write = (chunk, encoding, done) => {
    if (typeof encoding === 'function') { done = encoding; encoding = undefined; }
    if (ended) {
      const e = new Error('write after end'); e.code = 'ERR_STREAM_WRITE_AFTER_END';
      later(() => { if (done) done(e); fail(e); });
      return false;
    }
    if (failed) return false;
    const bytes = typeof chunk === 'string' ? g.Buffer.from(chunk, encoding || o.encoding || 'utf8') : chunk;
    try { fs.appendFileSync(path, bytes); } catch (e) { failed = e; later(() => { if (done) done(e); fail(e); }); return false; }
    stream.bytesWritten += bytes.length;
    if (done) later(done, null);
    return true;
  };
  stream.end = (chunk, encoding, done) => {
    if (typeof chunk === 'function') { done = chunk; chunk = undefined; } else if (typeof encoding === 'function') { done = encoding; encoding = undefined; }
    if (chunk !== undefined && chunk !== null) stream.write(chunk, encoding);
    if (ended) return stream;
    ended = true;
    stream.writable = false; stream.writableEnded = true;
    later(() => { if (failed) return; stream.writableFinished = true; stream.emit('finish'); if (done) done(); stream.emit('close'); });
    return stream;
  };
  stream.close = (done) => stream.end(done);
  stream.destroy = () => { ended = true; stream.writable = false; later(() => stream.emit('close')); return stream; };
  stream.cork = () => {}; stream.uncork = () => {}; stream.setDefaultEncoding = () => stream;
  return stream;
}

/* readline.createInterface({ input: fs.createReadStream(path) }): the file's lines, as 'line' events (then
   'close') or through for await, a turn of the loop after it is made, as Node reads them. */
function lineReader(input) {
  const rl = new (EventEmitter())();
  let lines = null, at = 0, closed = false, started = false;
  const load = () => {
    if (lines === null) {
      const text = g.Buffer.from(input[FILE]()).toString('utf8');
      lines = text.split(/\r?\n/);
      if (lines[lines.length - 1] === '') lines.pop();
    }
    return lines;
  };
  const close = () => { if (!closed) { closed = true; rl.emit('close'); } };
  const pump = () => {
    try { load(); } catch (e) { close(); emitError(input, e); return; }
    while (at < lines.length && !closed) rl.emit('line', lines[at++]);
    close();
  };
  rl.on('newListener', (event) => { if (event === 'line' && !started) { started = true; later(pump); } });
  Object.assign(rl, {
    close, pause: () => rl, resume: () => rl, setPrompt() {}, prompt() {}, write() {}, terminal: false, input,
    [Symbol.asyncIterator]() {
      started = true;
      return { next: async () => { load(); return at < lines.length && !closed ? { done: false, value: lines[at++] } : (close(), { done: true, value: undefined }); },
        return: async () => { close(); return { done: true, value: undefined }; } };
    },
  });
  return rl;
}

/* ---- the callback API: the synchronous call, its result given to the callback on a later turn ---- */
function withCallback(call) {
  return function (...args) {
    const done = args.pop();
    if (typeof done !== 'function') throw typeError('The "cb" argument must be of type function. Received ' + describe(done), 'ERR_INVALID_ARG_TYPE');
    let value, error = null;
    try { value = call(...args); } catch (e) { error = e; }
    if (error) later(done, error); else if (value === undefined) later(done, null); else later(done, null, value);
  };
}
const sync = { accessSync, realpathSync, mkdtempSync, truncateSync, chmodSync: touchSync, chownSync: touchSync, utimesSync: touchSync,
  openSync, readSync, writeSync, closeSync, fstatSync };
const callbacks = {};
for (const name of fsNames.callbacks)
  callbacks[name] = withCallback((...args) => (sync[name + 'Sync'] || fs[name + 'Sync'])(...args));
callbacks.exists = (path, done) => { const there = fs.existsSync(path); later(done, there); };
const promised = {};
for (const name of fsNames.promises)
  promised[name] = async (...args) => sync[name + 'Sync'](...args);
return { fs: { ...sync, ...callbacks, createReadStream, createWriteStream, constants }, promises: promised, lineReader };
})
