'use strict';
// Sandbox Playground: the REPL driver of a node session in a Docker container.
//
// Two processes, one file:
//
// * "driver" (default role) is the container's main program. It alone holds
//   the container's stdin (commands from the host) and stdout (frames to the
//   host). It never runs guest code.
// * "interp" is the interpreter the guest's code runs in. Its stdout and
//   stderr are FIFOs that only the driver reads; its fd 3 is a pipe for
//   "eval N finished with status S", its fd 4 the commands ("<id> <length>
//   <C|L>\n" and the code). It never holds the container's stdout, nor the
//   container's stdin (the command stream).
//
// Keyboard: an "L" eval's stdin is what the user types. The driver takes
// "I <length>\n" + typed bytes and "D\n" (Ctrl-D) from the host while that
// eval runs and writes them to the FIFO "kbd" (opened non-blocking, retried
// until the interpreter has its read end; closed at "D", or at the host's
// "E\n" that follows the eval's result). For every eval the interpreter
// makes its fd 0 that FIFO ("L") or /dev/null ("C"), so fs.readFileSync(0)
// reads the keyboard up to Ctrl-D, and process.stdin is a fresh stream over
// it (readline, 'data' events, for await) that ends with the eval. Typed
// bytes reach only the eval they were typed for: the FIFO's writer closes
// after each eval, and the interpreter reopens fd 0 for the next.
//
// Frames to the host: one ASCII type letter, 8 lowercase hex digits of
// payload length, the payload. O/E carry guest stdout/stderr bytes (whatever
// they contain: they are always inside such a frame); Y (ready: nonce and the
// interpreter's pid), R (result) and X (interpreter exited) carry the session
// nonce first. Commands from the host: "C <id> <length>\n" followed by
// <length> bytes of code, "L" the same with the keyboard (above). See
// backends/docker/repl_protocol.py for the host side.
//
// Ctrl-C: the interpreter leads its own process group (detached); the host
// sends SIGINT to that group (docker exec kill), which also stops a child
// process the code waits for. Running code is stopped by V8 (breakOnSigint,
// like node's own REPL); an eval awaiting a promise is abandoned with the
// same error. Either way the eval fails and the context keeps its state.
// A synchronous read of the keyboard (fs.readFileSync(0)) is interrupted
// too: the signal ends the blocked read and V8 stops the code (when the read
// ends first, with EINTR, the driver takes the signal itself: takeLateSigint).

const fs = require('fs');
const path = require('path');

const DIR = __dirname;
const CHUNK = 65536;
const KEYBOARD = path.join(DIR, 'kbd');
// How long the driver outlives its interpreter, waiting for the host to kill the container.
const LINGER_MS = 5000;

if (process.argv[2] === 'interp') {
  interp();
} else {
  driver();
}

function driver() {
  const { spawn } = require('child_process');
  const net = require('net');
  const noncePath = path.join(DIR, 'nonce');
  const nonce = fs.readFileSync(noncePath, 'utf8').trim();
  fs.unlinkSync(noncePath);

  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  function writeAll(buf) {
    let off = 0;
    while (off < buf.length) {
      try {
        off += fs.writeSync(1, buf, off, buf.length - off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
        Atomics.wait(sleeper, 0, 0, 1);
      }
    }
  }
  function send(type, payload) {
    const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
    const head = Buffer.from(type + body.length.toString(16).padStart(8, '0'), 'latin1');
    writeAll(Buffer.concat([head, body]));
  }

  // Guest stdout/stderr: FIFOs made by the setup script. Read ends are
  // non-blocking so a result can drain them synchronously (see finish()).
  const C = fs.constants;
  const readers = {};
  const writers = [];
  for (const [name, type] of [['out', 'O'], ['err', 'E']]) {
    const fifo = path.join(DIR, name);
    const fd = fs.openSync(fifo, C.O_RDONLY | C.O_NONBLOCK);
    writers.push(fs.openSync(fifo, C.O_WRONLY));
    readers[type] = fd;
  }
  const child = spawn(process.execPath, [__filename, 'interp'], {
    stdio: ['ignore', writers[0], writers[1], 'pipe', 'pipe'],
    cwd: process.cwd(),
    detached: true, // its own process group, the target of Ctrl-C
  });
  for (const fd of writers) fs.closeSync(fd);
  for (const type of ['O', 'E']) {
    const sock = new net.Socket({ fd: readers[type], readable: true, writable: false });
    sock.on('data', (data) => send(type, data));
    sock.on('error', () => {});
    // At EOF the socket closes the fd (its bytes were all delivered): drain() must not read that number again.
    sock.on('end', () => { readers[type] = -1; });
    sock.on('close', () => { readers[type] = -1; });
  }

  function drain() {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (const type of ['O', 'E']) {
      if (readers[type] < 0) continue;
      for (;;) {
        let n;
        try {
          n = fs.readSync(readers[type], buf, 0, CHUNK, null);
        } catch (e) {
          if (e.code === 'EAGAIN' || e.code === 'EBADF') break; // EBADF: closed at EOF, nothing left
          throw e;
        }
        if (n <= 0) break;
        send(type, Buffer.from(buf.subarray(0, n)));
      }
    }
  }

  let pending = null;
  let results = '';
  child.stdio[3].on('data', (data) => {
    results += data.toString('latin1');
    let nl;
    while ((nl = results.indexOf('\n')) >= 0) {
      const line = results.slice(0, nl);
      results = results.slice(nl + 1);
      const m = /^(\d{1,12}) (-?\d{1,6})$/.exec(line);
      if (!m || m[1] !== pending) continue; // not the eval we are waiting for
      pending = null;
      // Every byte the interpreter wrote before its result is in the FIFOs now.
      drain();
      send('R', `${nonce} ${m[1]} ${m[2]}`);
    }
  });
  child.on('exit', (code, signal) => {
    drain();
    const status = code === null ? 128 + (require('os').constants.signals[signal] || 0) : code;
    send('X', `${nonce} ${pending || 0} ${status}`);
    // Linger so the host can still ask the container's memory cgroup whether this was an OOM kill
    // (Podman does not say); the host kills the container right after, or we leave on our own.
    setTimeout(() => process.exit(0), LINGER_MS);
  });

  // The running "L" eval's keyboard: typed bytes on their way into the FIFO.
  let keyboard = null;
  function openKeyboard() {
    const kb = { fd: -1, queue: [], eof: false, done: false, timer: null };
    const retry = (ms) => {
      if (kb.timer === null) kb.timer = setTimeout(() => { kb.timer = null; pump(); }, ms);
    };
    const shut = () => {
      if (kb.fd >= 0) fs.closeSync(kb.fd);
      kb.fd = -1;
      kb.done = true;
      kb.queue = [];
    };
    function pump() {
      if (kb.done) return;
      if (kb.fd < 0) {
        try {
          kb.fd = fs.openSync(KEYBOARD, C.O_WRONLY | C.O_NONBLOCK);
        } catch (e) {
          if (e.code === 'ENXIO') retry(2); // the interpreter has not opened its end yet
          else shut();
          return;
        }
      }
      while (kb.queue.length > 0) {
        const buf = kb.queue[0];
        let n;
        try {
          n = fs.writeSync(kb.fd, buf);
        } catch (e) {
          if (e.code === 'EAGAIN') return retry(10); // the code has not read what was typed yet
          kb.queue = []; // EPIPE: nobody reads the keyboard any more
          break;
        }
        if (n < buf.length) kb.queue[0] = buf.subarray(n);
        else kb.queue.shift();
      }
      if (kb.eof) shut();
    }
    kb.write = (data) => { if (!kb.eof && !kb.done) { kb.queue.push(data); pump(); } };
    kb.end = () => { kb.eof = true; pump(); };
    kb.close = () => {
      if (kb.timer !== null) clearTimeout(kb.timer);
      kb.timer = null;
      shut();
    };
    pump();
    return kb;
  }

  const malformed = () => {
    process.stderr.write('driver: malformed command\n');
    process.exit(2);
  };
  let input = Buffer.alloc(0);
  process.stdin.on('data', (data) => {
    input = Buffer.concat([input, data]);
    for (;;) {
      const nl = input.indexOf(10);
      if (nl < 0) return;
      const head = input.subarray(0, nl).toString('latin1');
      let m = /^([CL]) (\d{1,12}) (\d{1,10})$/.exec(head);
      if (m) {
        if (keyboard !== null) malformed(); // the host sends "E" before the next eval
        const len = Number(m[3]);
        if (input.length < nl + 1 + len) return;
        const code = input.subarray(nl + 1, nl + 1 + len);
        input = input.subarray(nl + 1 + len);
        pending = m[2];
        if (m[1] === 'L') keyboard = openKeyboard();
        child.stdio[4].write(`${m[2]} ${len} ${m[1]}\n`);
        child.stdio[4].write(code);
        continue;
      }
      if (keyboard === null) malformed();
      if ((m = /^I (\d{1,10})$/.exec(head))) {
        const len = Number(m[1]);
        if (input.length < nl + 1 + len) return;
        keyboard.write(Buffer.from(input.subarray(nl + 1, nl + 1 + len)));
        input = input.subarray(nl + 1 + len);
      } else if (head === 'D') {
        input = input.subarray(nl + 1);
        keyboard.end();
      } else if (head === 'E') {
        input = input.subarray(nl + 1);
        keyboard.close();
        keyboard = null;
      } else {
        malformed();
      }
    }
  });
  process.stdin.on('end', () => child.kill('SIGKILL'));
  send('Y', `${nonce} ${child.pid}`);
}

function interp() {
  const vm = require('vm');
  const util = require('util');
  const Module = require('module');
  globalThis.require = Module.createRequire(path.join(process.cwd(), 'repl.js'));
  globalThis.module = { exports: {} };
  globalThis.exports = globalThis.module.exports;
  const report = (id, status) => fs.writeSync(3, `${id} ${status}\n`);
  const complain = (err) => {
    try {
      let text = err && typeof err.stack === 'string' ? err.stack : util.inspect(err);
      for (const frame of ['\n    at Script.runInThisContext', '\n    at sigintHandlersWrap']) {
        const ours = text.indexOf(frame);
        if (ours >= 0) text = text.slice(0, ours); // the driver's own frames are noise
      }
      process.stderr.write(`${text}\n`);
    } catch (e) {
      // stderr is gone: nothing to tell
    }
  };
  // Like node's REPL: a late error in a callback is reported, not fatal.
  process.on('uncaughtException', complain);
  process.on('unhandledRejection', complain);

  // SIGINT outside synchronous code (breakOnSigint handles that): abandon the awaited value.
  let abandon = null;
  process.on('SIGINT', () => {
    if (abandon !== null) abandon();
  });

  // fd 0 of the running eval: the keyboard FIFO ("L") or /dev/null; process.stdin reads it.
  let stdinFd = 0;
  let stdinStream = null;
  function setStdin(path) {
    if (stdinStream !== null) stdinStream.destroy(); // no read of a later eval's fd 0
    stdinStream = null;
    try {
      fs.closeSync(stdinFd);
    } catch (e) {
      // already closed
    }
    // The lowest free descriptor: 0 again, so fs.readFileSync(0) and child processes read it.
    // Opening the FIFO waits (briefly) for the driver's write end.
    stdinFd = fs.openSync(path, 'r');
  }
  Object.defineProperty(process, 'stdin', {
    configurable: true,
    enumerable: true,
    get() {
      if (stdinStream === null) {
        stdinStream = fs.createReadStream(null, { fd: stdinFd, autoClose: false, highWaterMark: CHUNK });
        stdinStream.fd = stdinFd;
        stdinStream.isTTY = false;
      }
      return stdinStream;
    },
  });

  function interruption() {
    const err = new Error('Script execution was interrupted by `SIGINT`');
    err.code = 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
    err.stack = `Error: ${err.message}`;
    return err;
  }

  // A Ctrl-C can end a synchronous read (EINTR) before node's SIGINT watchdog thread has seen the
  // signal. Node then keeps it for the next breakOnSigint run (its helper's semaphore is left
  // posted), and a later eval stopped at once as if Ctrl-C had been pressed for it (6 of 60 such
  // sessions under load). Take it now, in a loop that only that signal or the time-out ends; true
  // when the signal was there (the EINTR was this Ctrl-C).
  function takeLateSigint() {
    try {
      vm.runInThisContext('for (;;) {}', { filename: 'ctrl-c', breakOnSigint: true, timeout: 500 });
    } catch (err) {
      return err !== null && typeof err === 'object' && err.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
    }
    return false;
  }

  async function run(id, code, keyboard) {
    let status = 0;
    try {
      setStdin(keyboard ? KEYBOARD : '/dev/null');
    } catch (err) {
      complain(err);
      report(id, 1);
      return;
    }
    try {
      let value = vm.runInThisContext(code, { filename: `repl:${id}`, displayErrors: false, breakOnSigint: true });
      if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
        const interrupted = new Promise((resolve, reject) => {
          abandon = () => reject(interruption());
        });
        try {
          value = await Promise.race([value, interrupted]);
        } finally {
          abandon = null;
        }
      }
      if (value !== undefined) process.stdout.write(`${util.inspect(value, { colors: false })}\n`);
    } catch (err) {
      // Ctrl-C reaches the whole process group: a child the code waited for (execSync) may die of it
      // before V8 stops the code, and its "Command failed" error would win the race. It is the same
      // interruption, so it is told as one; node may still hold that signal (as after an EINTR,
      // takeLateSigint), and would stop a later eval with it: it is taken now.
      const failure = err !== null && typeof err === 'object' ? err : {};
      const killed = failure.signal === 'SIGINT';
      if (killed) takeLateSigint();
      const ctrlC = killed || (failure.code === 'EINTR' && takeLateSigint());
      complain(ctrlC ? interruption() : err);
      status = 1;
    }
    try {
      setStdin('/dev/null'); // between evals stdin is empty
    } catch (err) {
      complain(err);
    }
    report(id, status);
  }

  const commands = new (require('net').Socket)({ fd: 4, readable: true, writable: false });
  let input = Buffer.alloc(0);
  let queue = Promise.resolve();
  commands.on('data', (data) => {
    input = Buffer.concat([input, data]);
    for (;;) {
      const nl = input.indexOf(10);
      if (nl < 0) return;
      const [id, lenText, kind] = input.subarray(0, nl).toString('latin1').split(' ');
      const len = Number(lenText);
      if (input.length < nl + 1 + len) return;
      const code = input.subarray(nl + 1, nl + 1 + len).toString('utf8');
      input = input.subarray(nl + 1 + len);
      queue = queue.then(() => run(id, code, kind === 'L'));
    }
  });
  commands.on('end', () => process.exit(0));
}
