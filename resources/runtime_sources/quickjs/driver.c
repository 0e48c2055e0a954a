/*
 * qjs: a small command-line driver for QuickJS-NG, built to wasm32-wasi.
 * Sandbox Playground's own source (QuickJS itself comes from the PyPI
 * quickjs-ng sdist at build time; see packaging/runtimes/install.py).
 *
 * Usage: qjs [--] FILE [args...]
 *        qjs --repl
 *        qjs --serve FILE [args...]
 *        qjs --snapshot   (the sandbox's capture; see "Snapshot runs" below)
 *
 * - FILE is read with stdio (WASI). It is compiled as a classic script; if
 *   that is a SyntaxError and it compiles as a module (import/export/top-level
 *   await), it runs as a module (like node's module-syntax detection). *.mjs
 *   always runs as a module, *.cjs always as a script. Relative imports are
 *   loaded from files.
 * - Globals: console.{log,info,debug,error,warn,trace,dir,assert}, print,
 *   scriptArgs ([FILE, ...args]), process.{argv,exit,exitCode},
 *   setTimeout/clearTimeout/setInterval/clearInterval and
 *   setImmediate/clearImmediate on the real clock, as in Node: a timer fires
 *   once its delay passed (the run sleeps until then, what it printed
 *   flushed first); a delay below 1 ms or above 2^31-1 is 1 ms, an
 *   immediate's is none; timers fire in due order, ties in the order set;
 *   each returns a Timeout (ref, unref, hasRef, refresh, close; its id as
 *   its number), and a run whose pending timers are all unref'd ends.
 *   queueMicrotask (QuickJS).
 * - Node-like files, stdin and environment (everything goes through WASI,
 *   so the guest sees only the sandbox's virtual filesystem): global `fs`
 *   (also `require('fs')`, `import fs from 'fs'` / 'node:fs' /
 *   'fs/promises'): readFileSync(path | 0, enc?) (a string for 'utf8',
 *   else a Uint8Array), writeFileSync, appendFileSync, existsSync,
 *   readdirSync, mkdirSync(path, {recursive}), rmdirSync, rmSync,
 *   unlinkSync, renameSync, copyFileSync, statSync, lstatSync, symlinkSync,
 *   readlinkSync, fs.promises.*;
 *   failures throw Errors with a node-style .code ('ENOENT', 'EACCES',
 *   'EROFS', 'EDQUOT', ...), .errno (the negated WASI errno), .syscall,
 *   .path. readStdin() (also fs.readFileSync(0) and '/dev/stdin') returns
 *   all of stdin as a string, up to its end of file (what was printed is
 *   flushed first, so a prompt shows while the read waits); readLine() and
 *   prompt(message) one line (null at end of input), and require('readline')
 *   / 'readline/promises' createInterface() with question(), on('line'),
 *   on('close') and for await, reading the same way (a beginner's
 *   interactive program runs as under node). process.env (the
 *   WASI environment), process.cwd(), process.platform ('wasi'),
 *   process.stdout/stderr.write; TextEncoder/TextDecoder (UTF-8);
 *   Headers, Request, Response (Web-style).
 * - Node compatibility (node_compat/*.js, embedded at build time as
 *   node_compat.h; a module's file is compiled when a program first uses
 *   it, or by the snapshot's capture): CommonJS (module, exports,
 *   __filename, __dirname, require.main, require() of the program's own
 *   .js/.cjs/.json files),
 *   path, events, util, assert, crypto (native.random: WASI random_get),
 *   os, url, buffer, string_decoder, timers, timers/promises (require() and
 *   ES imports, also as 'node:...'), perf_hooks, the globals Buffer, URL,
 *   URLSearchParams, crypto, structuredClone, setImmediate, Event,
 *   EventTarget, AbortController, AbortSignal; process.nextTick, hrtime,
 *   memoryUsage, uptime, on('exit'); console.time, count, group, table. The layers run
 *   under the default stack limit; QJS_STACK_SIZE applies from the program on.
 * - Every mode starts in /work when it exists (wasi-libc starts a program in
 *   "/"), so relative paths, process.cwd() and fs.readdirSync('.') mean what
 *   they mean on the Docker tier.
 * - Pending jobs (promises) and timers run to completion.
 * - An uncaught exception or unhandled rejection prints its stack to stderr
 *   and exits with status 1.
 * - stdout/stderr are fully buffered and flushed at exit (per-line flushing
 *   is very slow through a host WASI implementation).
 * - JS stack limit 512 KiB (deep recursion -> catchable RangeError).
 *   No JS heap limit unless env QJS_MEMORY_LIMIT=<bytes> is set.
 *
 * REPL mode (--repl), for Sandbox Playground sessions:
 * - reads frames from stdin: the code's length in bytes as ASCII decimal,
 *   '\n', then exactly that many bytes of UTF-8 source; EOF ends the REPL;
 * - evaluates each frame as a global script in one context (top-level
 *   let/const/class/function persist across frames; top-level await is
 *   allowed), runs pending jobs and timers, and echoes the completion value
 *   (unless undefined) formatted like console.log;
 * - flushes stdout/stderr, then writes one status line to the sandbox's
 *   control channel (/.session/control, opened at start): "ok", "error", or
 *   "oom" (the eval failed with InternalError: out of memory). Only the
 *   status travels there; program output never does;
 * - Ctrl-C: an interrupt handler polls /.session/interrupt (one byte, "1"
 *   while the host asks the running eval to stop; opened at start, read
 *   with pread every few thousand JS operations). When it is set, the
 *   running code gets the uncatchable "InternalError: interrupted", the
 *   eval's timers are dropped and its leftover promise jobs ended (each
 *   fails at its first interrupt poll), and the status is "error"; the
 *   context and its globals stay as they were.
 * - Streaming: the same poll flushes stdout and stderr, so what a long eval
 *   prints arrives while it runs, not only at its end.
 * - Keyboard: readStdin() (and fs.readFileSync(0)) reads /.session/stdin,
 *   what the user types while the eval runs, up to Ctrl-D (end of file; at
 *   once when the eval has no keyboard). Each call opens it anew, so every
 *   eval reads its own input. Ctrl-C while it waits makes the read fail
 *   (EINTR) and the eval stop as above.
 *
 * Serve mode (--serve FILE), for Sandbox Playground's handler bridge:
 * - evaluates FILE once. The program registers its handler with
 *   `export default { fetch(request) { ... } }` (the primary form, as in
 *   Deno, Bun and Workers) or, in a classic script, `serve(handler)`;
 * - the handler gets a Request (method, url, path, search, query,
 *   headers: Headers, body: the text, and async text()/json()/bytes()/
 *   arrayBuffer()) and returns, possibly through a Promise, a string
 *   (200 text/plain), a Response (`new Response(body, {status,
 *   headers})`, `Response.json(data)`), a `{status, headers, body}`
 *   object, bytes, or other data (sent as JSON);
 * - then loops: reads one request frame from stdin (the REPL framing;
 *   payload: a one-line JSON head {method, path, headers}, '\n', the
 *   body), calls the handler, runs promise jobs (and timers only while the
 *   response is pending), flushes stdout/stderr, and writes
 *   the response to /.session/control in one write:
 *   "response <n>\n" + JSON head {status, headers} + '\n' + body. A handler
 *   that throws gets a 500 (stack on stderr); "oom\n" follows a response
 *   when the handler ran out of memory. stdin is the request channel, so
 *   readStdin() throws in serve mode.
 *
 * Snapshot runs (--snapshot), for Sandbox Playground's one-shot runs
 * (backends/wasm/snapshot.py, playground/packs/javascript_snapshot.py):
 * - the driver sets up as for a plain run (runtime, context, console,
 *   timers, process, the node-like layer) without knowing the program, its
 *   arguments or environment, then calls clock_getres(CLOCK_REALTIME): the
 *   snapshot point, where the sandbox copies the linear memory and stops
 *   the guest (anywhere else that call returns and the driver exits 2);
 * - every run is a fresh instance over a copy of that memory, entered at
 *   the exported qjs_snapshot_run(source, flags) with source = NUL-terminated
 *   JSON {"argv": [...], "env": {...}}: argv as a cold start gets it
 *   (argv[0], "--", FILE, args...). It draws a fresh Math.random state
 *   (getentropy), sets scriptArgs, process.argv and process.env to the
 *   run's own, then runs FILE as a plain run does and exits.
 * - What differs from a cold start: the Map/Set hash seed is the capture's
 *   (as Python's hash() in its snapshot); QJS_STACK_SIZE and
 *   QJS_MEMORY_LIMIT are read at set-up, so a run that sets them starts cold.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include "quickjs.h"
/* node_compat_core[] and node_compat_files[]: resources/runtime_sources/quickjs/node_compat/*.js,
   written by the build (recipes.py). */
#include "node_compat.h"

#define JS_STACK_SIZE (512 * 1024)

static JSRuntime *rt;
static JSContext *ctx;
static JSValue fn_format_error; /* (err) -> string */
static JSValue fn_run_timer;    /* () -> bool (ran one) */
static JSValue fn_exit_code;    /* () -> int (process.exitCode) */
static JSValue fn_echo;         /* (v) -> undefined: console.log(v) unless v is undefined */
static JSValue fn_use_default;  /* (module default export) -> undefined (serve mode) */
static JSValue fn_ready;        /* () -> bool: a handler is registered (serve mode) */
static JSValue fn_dispatch;     /* (meta, body) -> Promise<[meta, body, oom]> (serve mode) */
static JSValue fn_apply_run = JS_UNDEFINED; /* ({argv, env}) -> FILE: a snapshot run's own (snapshot mode) */
static JSValue fn_module_source = JS_UNDEFINED; /* (name) -> ES module source of a compat module, or undefined */

/* qjs_snapshot.c (QuickJS with one addition): Math.random's state of ctx. */
void qjs_reseed_random(JSContext *c, uint64_t seed);

/* REPL mode: the eval's own promise is not an "unhandled rejection"; errors
   in jobs are reported and the loop goes on. */
static bool repl_mode;
static JSValue repl_promise = JS_UNDEFINED;
/* REPL mode: the running eval was interrupted (Ctrl-C). The interrupt
   handler fires once per eval, so the error report (JS code itself) still
   runs; the eval's remaining jobs and timers do not. */
static bool interrupted;
/* After an interrupt: the eval's leftover promise jobs run with every
   interrupt poll failing, so a job chain cannot outlive the eval. */
static bool draining;

static char outbuf[8192];
static char errbuf[1024];

typedef struct {
    JSValue promise;
    JSValue reason;
} Rejection;
static Rejection *rejections;
static size_t n_rejections, cap_rejections;

static void finish(int code) {
    fflush(stdout);
    fflush(stderr);
    exit(code & 0xff);
}

static char *read_file(const char *path, size_t *plen) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        return NULL;
    }
    for (;;) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (len < cap) {
            if (ferror(f)) {
                free(buf);
                fclose(f);
                return NULL;
            }
            break;
        }
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            fclose(f);
            return NULL;
        }
        buf = nb;
    }
    fclose(f);
    buf[len] = '\0';
    *plen = len;
    return buf;
}

/* Print an exception value (with stack) to stderr. */
static void report(JSContext *c, JSValueConst exc, const char *prefix) {
    JSValue s = JS_Call(c, fn_format_error, JS_UNDEFINED, 1, &exc);
    const char *str = NULL;
    if (!JS_IsException(s))
        str = JS_ToCString(c, s);
    else
        JS_FreeValue(c, JS_GetException(c));
    if (!str)
        str = JS_ToCString(c, exc);
    fputs(prefix, stderr);
    fputs(str ? str : "(unprintable exception)", stderr);
    fputc('\n', stderr);
    if (str)
        JS_FreeCString(c, str);
    JS_FreeValue(c, s);
}

static void report_pending_exception(JSContext *c, const char *prefix) {
    JSValue exc = JS_GetException(c);
    report(c, exc, prefix);
    JS_FreeValue(c, exc);
}

static void rejection_tracker(JSContext *c, JSValueConst promise,
                              JSValueConst reason, bool is_handled,
                              void *opaque) {
    (void)opaque;
    if (!is_handled) {
        if (n_rejections == cap_rejections) {
            size_t nc = cap_rejections ? cap_rejections * 2 : 8;
            Rejection *nr = realloc(rejections, nc * sizeof(*nr));
            if (!nr)
                return;
            rejections = nr;
            cap_rejections = nc;
        }
        rejections[n_rejections].promise = JS_DupValue(c, promise);
        rejections[n_rejections].reason = JS_DupValue(c, reason);
        n_rejections++;
    } else {
        for (size_t i = 0; i < n_rejections; i++) {
            if (JS_VALUE_GET_PTR(rejections[i].promise) ==
                JS_VALUE_GET_PTR(promise)) {
                JS_FreeValue(c, rejections[i].promise);
                JS_FreeValue(c, rejections[i].reason);
                rejections[i] = rejections[--n_rejections];
                break;
            }
        }
    }
}

static void forget_rejection(JSValueConst promise) {
    for (size_t i = 0; i < n_rejections; i++) {
        if (JS_VALUE_GET_PTR(rejections[i].promise) ==
            JS_VALUE_GET_PTR(promise)) {
            JS_FreeValue(ctx, rejections[i].promise);
            JS_FreeValue(ctx, rejections[i].reason);
            rejections[i] = rejections[--n_rejections];
            return;
        }
    }
}

/* Returns true if an unhandled rejection was reported. In REPL mode every
   one (but the eval's own promise) is reported once and forgotten. */
static bool check_rejections(void) {
    if (n_rejections == 0)
        return false;
    if (!repl_mode) {
        report(ctx, rejections[0].reason, "Uncaught (in promise) ");
        return true;
    }
    bool reported = false;
    size_t i = 0;
    while (i < n_rejections) {
        if (JS_VALUE_GET_PTR(rejections[i].promise) ==
            JS_VALUE_GET_PTR(repl_promise)) {
            i++;
            continue;
        }
        report(ctx, rejections[i].reason, "Uncaught (in promise) ");
        reported = true;
        JS_FreeValue(ctx, rejections[i].promise);
        JS_FreeValue(ctx, rejections[i].reason);
        rejections[i] = rejections[--n_rejections];
    }
    return reported;
}

/* Run pending promise jobs. 0 = ok, 1 = a job threw (reported). Outside
   REPL/serve mode the first error stops. */
static int run_jobs(void) {
    int status = 0;
    for (;;) {
        if (interrupted)
            return 1;
        JSContext *c1;
        int r = JS_ExecutePendingJob(rt, &c1);
        if (r == 0)
            return status;
        if (r < 0) {
            report_pending_exception(c1, "Uncaught ");
            if (!repl_mode)
                return 1;
            status = 1;
        }
    }
}

/* The timers' loop time is read anew: an eval or a request starts (a timer
   it sets is due its delay from now, not from when the last timer fired). */
static void timers_read_clock(void) {
    JSValue zero = JS_NewInt32(ctx, 0);
    JSValue r = JS_Call(ctx, fn_run_timer, JS_UNDEFINED, 1, &zero);
    if (JS_IsException(r))
        JS_FreeValue(ctx, JS_GetException(ctx));
    JS_FreeValue(ctx, r);
}

/* Run promise jobs and timers until nothing is left. 0 = ok, 1 = error.
   In REPL mode an error is reported and the loop goes on. */
static int run_loop(void) {
    int status = 0;
    for (;;) {
        if (interrupted)
            return 1;
        if (run_jobs()) {
            if (!repl_mode)
                return 1;
            status = 1;
        }
        if (check_rejections()) {
            if (!repl_mode)
                return 1;
            status = 1;
        }
        JSValue r = JS_Call(ctx, fn_run_timer, JS_UNDEFINED, 0, NULL);
        if (JS_IsException(r)) {
            report_pending_exception(ctx, "Uncaught ");
            if (!repl_mode)
                return 1;
            status = 1;
            continue;
        }
        bool ran = JS_ToBool(ctx, r);
        JS_FreeValue(ctx, r);
        if (!ran)
            return status;
    }
}

/* Serve mode: run promise jobs, and timers only while `p` is a pending
   promise (so an app's setInterval cannot keep a request busy forever);
   errors are reported and the loop goes on. */
static void run_until(JSValueConst p) {
    for (;;) {
        run_jobs();
        check_rejections();
        if (!JS_IsPromise(p) || JS_PromiseState(ctx, p) != JS_PROMISE_PENDING)
            return;
        JSValue served = JS_NewInt32(ctx, 1); /* unref'd timers fire too: the service goes on */
        JSValue r = JS_Call(ctx, fn_run_timer, JS_UNDEFINED, 1, &served);
        if (JS_IsException(r)) {
            report_pending_exception(ctx, "Uncaught ");
            continue;
        }
        bool ran = JS_ToBool(ctx, r);
        JS_FreeValue(ctx, r);
        if (!ran)
            return;
    }
}

/* __write(fd, string): fd 2 -> stderr, anything else -> stdout. */
static JSValue js_write(JSContext *c, JSValueConst this_val, int argc,
                        JSValueConst *argv) {
    (void)this_val;
    int fd = 1;
    if (argc < 2)
        return JS_UNDEFINED;
    if (JS_ToInt32(c, &fd, argv[0]))
        return JS_EXCEPTION;
    size_t len;
    const char *s = JS_ToCStringLen(c, &len, argv[1]);
    if (!s)
        return JS_EXCEPTION;
    fwrite(s, 1, len, fd == 2 ? stderr : stdout);
    JS_FreeCString(c, s);
    return JS_UNDEFINED;
}

static JSValue js_exit(JSContext *c, JSValueConst this_val, int argc,
                       JSValueConst *argv) {
    (void)this_val;
    int code = 0;
    if (argc > 0 && !JS_IsUndefined(argv[0])) {
        if (JS_ToInt32(c, &code, argv[0]))
            return JS_EXCEPTION;
    } else {
        JSValue v = JS_Call(c, fn_exit_code, JS_UNDEFINED, 0, NULL);
        if (!JS_IsException(v))
            JS_ToInt32(c, &code, v);
        JS_FreeValue(c, v);
    }
    finish(code);
    return JS_UNDEFINED;
}

/* Our JS-side runtime: formatting, console, timers. Evaluated once at
   startup; it returns [formatError, runTimer, exitCode]. */
static const char bootstrap_js[] =
"(function (write, exit, argv, wait, promiseState) {\n"
"'use strict';\n"
"const g = globalThis;\n"
"const fnToString = Function.prototype.toString;\n"
"const CUSTOM = Symbol.for('nodejs.util.inspect.custom');\n"
"/* A string as Node's util.inspect quotes it: in single quotes, or double ones when it holds a single quote and\n"
"   no double one, or backticks when it holds both (and no backtick or '${'); control characters escaped. */\n"
"const ESCAPES = { '\\\\': '\\\\\\\\', '\\b': '\\\\b', '\\t': '\\\\t', '\\n': '\\\\n', '\\f': '\\\\f', '\\r': '\\\\r' };\n"
"function quote(s) {\n"
"  let q = \"'\";\n"
"  if (s.includes(\"'\")) {\n"
"    if (!s.includes('\"')) q = '\"';\n"
"    else if (!s.includes('`') && !s.includes('${')) q = '`';\n"
"  }\n"
"  const special = q === \"'\" ? /[\\\\'\\x00-\\x1f\\x7f]/g : q === '\"' ? /[\\\\\"\\x00-\\x1f\\x7f]/g : /[\\\\`\\x00-\\x1f\\x7f]/g;\n"
"  return q + s.replace(special, (c) => c === q ? '\\\\' + q : ESCAPES[c] || '\\\\x' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')) + q;\n"
"}\n"
"function key(k) {\n"
"  if (typeof k === 'symbol') return '[' + k.toString() + ']';\n"
"  return /^[A-Za-z_$][\\w$]*$/.test(k) ? k : quote(k);\n"
"}\n"
"function formatError(e) {\n"
"  let head, stack = '';\n"
"  try { head = String(e); } catch (_) { head = 'Error'; }\n"
"  if (e === null || (typeof e !== 'object' && typeof e !== 'function'))\n"
"    return typeof e === 'string' ? e : inspect(e, 0, [], false);\n"
"  try { stack = e.stack === undefined ? '' : String(e.stack); } catch (_) {}\n"
"  if (!(e instanceof Error) && !stack) return inspect(e, 0, [], false);\n"
"  stack = stack.replace(/\\s+$/, '');\n"
"  if (!stack) return head;\n"
"  if (stack.startsWith(head)) return stack;\n"
"  return head + '\\n' + stack;\n"
"}\n"
"/* How Node's util.inspect lays out an object's entries (its defaults: breakLength 80, compact 3): on one line\n"
"   when they fit and fewer than three levels of objects were opened below this one (along the last entry's\n"
"   path), else one per line indented two spaces per level; an array of more than six entries is first grouped\n"
"   into aligned columns when its entries are short. ``level``: the object's nesting level as printed;\n"
"   ``opened``: the level of the object whose entries were last begun (Node's ctx.currentDepth). */\n"
"let level = 0, opened = 0;\n"
"const BREAK = 80;\n"
"function indent(text) { return level ? text.replace(/\\n/g, '\\n' + ' '.repeat(2 * level)) : text; }\n"
"function wrap(prefix, open, parts, close, array) {\n"
"  if (parts.length === 0) return prefix + open + close;\n"
"  const entries = parts.length;\n"
"  const out = array !== undefined && entries > 6 ? columns(parts, array) : parts;\n"
"  if (opened - level < 3 && entries === out.length) {\n"
"    let total = 2 * out.length + 2 * level + (prefix + open).length + 10;\n"
"    if (total <= BREAK && out.every((p) => (total += p.length) <= BREAK)) {\n"
"      const joined = out.join(', ');\n"
"      if (!joined.includes('\\n')) return prefix + open + ' ' + joined + ' ' + close;\n"
"    }\n"
"  }\n"
"  const nl = '\\n' + ' '.repeat(2 * level);\n"
"  return prefix + open + nl + '  ' + out.join(',' + nl + '  ') + nl + close;\n"
"}\n"
"/* Node's grouping of an array's entries into columns: about square (a character is taken as 2.5 times as\n"
"   high as wide), at most 12 columns (compact 3 x 4) and within the line; numbers right-aligned, anything else left-aligned.\n"
"   Not when one entry is much longer than the others. A last '... more items' entry stays on its own. */\n"
"function columns(parts, array) {\n"
"  const count = parts.length > 100 ? parts.length - 1 : parts.length;\n"
"  const lengths = parts.slice(0, count).map((p) => p.length);\n"
"  const widest = Math.max(...lengths), total = lengths.reduce((a, n) => a + n + 2, 0);\n"
"  const cell = widest + 2;\n"
"  if (!(cell * 3 + 2 * level < BREAK && (total / cell > 5 || widest <= 6))) return parts;\n"
"  const bias = Math.sqrt(cell - total / parts.length), biased = Math.max(cell - 3 - bias, 1);\n"
"  const cols = Math.min(Math.round(Math.sqrt(2.5 * biased * count) / biased), Math.floor((BREAK - 2 * level) / cell), 12);\n"
"  if (cols <= 1) return parts;\n"
"  const widths = [];\n"
"  for (let c = 0; c < cols; c++) {\n"
"    let w = 0;\n"
"    for (let j = c; j < parts.length; j += cols) if (lengths[j] > w) w = lengths[j];\n"
"    widths.push(w + 2);\n"
"  }\n"
"  let numeric = true;\n"
"  for (let i = 0; i < parts.length; i++) if (typeof array[i] !== 'number' && typeof array[i] !== 'bigint') { numeric = false; break; }\n"
"  const rows = [];\n"
"  for (let i = 0; i < count; i += cols) {\n"
"    const end = Math.min(i + cols, count);\n"
"    let row = '';\n"
"    for (let j = i; j < end - 1; j++) row += numeric ? (parts[j] + ', ').padStart(widths[j - i]) : (parts[j] + ', ').padEnd(widths[j - i]);\n"
"    row += numeric ? parts[end - 1].padStart(widths[end - 1 - i] - 2) : parts[end - 1];\n"
"    rows.push(row);\n"
"  }\n"
"  if (count < parts.length) rows.push(parts[count]);\n"
"  return rows;\n"
"}\n"
"/* Whether ``v`` shows no entries: Node prints it whole ([], {}, Map(0) {}) even past the depth limit. */\n"
"function bare(v, isArr) {\n"
"  if ((isArr || ArrayBuffer.isView(v)) && v.length) return false;\n"
"  if ((v instanceof Map || v instanceof Set) && v.size) return false;\n"
"  if (v instanceof Promise) return false;\n"
"  for (const k of Reflect.ownKeys(v)) {\n"
"    if ((isArr || ArrayBuffer.isView(v)) && typeof k === 'string' && (k === 'length' || /^(0|[1-9][0-9]*)$/.test(k))) continue;\n"
"    const d = Object.getOwnPropertyDescriptor(v, k);\n"
"    if (d && d.enumerable) return false;\n"
"  }\n"
"  return true;\n"
"}\n"
"function inspect(v, depth, seen, top) {\n"
"  switch (typeof v) {\n"
"  case 'string': return top ? v : quote(v);\n"
"  case 'number': return Object.is(v, -0) ? '-0' : String(v);\n"
"  case 'bigint': return String(v) + 'n';\n"
"  case 'boolean': case 'undefined': return String(v);\n"
"  case 'symbol': return v.toString();\n"
"  case 'function': {\n"
"    let src = ''; try { src = fnToString.call(v); } catch (_) {}\n"
"    const cls = /^class\\b/.test(src);\n"
"    if (cls) return '[class ' + (v.name || '(anonymous)') + ']';\n"
"    let kind = 'Function';\n"
"    try { const tag = v[Symbol.toStringTag]; if (typeof tag === 'string' && /^Async|Generator/.test(tag)) kind = tag; } catch (_) {}\n"
"    return '[' + kind + (v.name ? ': ' + v.name : ' (anonymous)') + ']';\n"
"  }\n"
"  }\n"
"  if (v === null) return 'null';\n"
"  if (seen.includes(v)) return '[Circular]';\n"
"  let custom; try { custom = v[CUSTOM]; } catch (_) {}\n"
"  if (typeof custom === 'function') {\n"
"    const r = custom.call(v, 2 - depth, {}, (x) => inspect(x, depth + 1, seen, false));\n"
"    if (typeof r === 'string') return indent(r);\n"
"    if (r !== v) return inspect(r, depth, seen, top);\n"
"  }\n"
"  if (v instanceof Error) return indent(formatError(v));\n"
"  if (v instanceof Date) return isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();\n"
"  if (v instanceof RegExp) return String(v);\n"
"  if (v instanceof WeakMap) return 'WeakMap { <items unknown> }';\n"
"  if (v instanceof WeakSet) return 'WeakSet { <items unknown> }';\n"
"  if (v instanceof Number || v instanceof String || v instanceof Boolean)\n"
"    return '[' + v.constructor.name + ': ' + inspect(v.valueOf(), depth, seen, false) + ']';\n"
"  const isArr = Array.isArray(v);\n"
"  if (depth > 2 && !bare(v, isArr)) {\n"
"    let name = '';\n"
"    try { const proto = Object.getPrototypeOf(v); name = proto === null ? null : proto.constructor && proto.constructor.name; } catch (_) {}\n"
"    return name === null ? '[Object: null prototype]' : '[' + (isArr ? 'Array' : name || 'Object') + ']';\n"
"  }\n"
"  const parts = [];\n"
"  let prefix = '', open = '{', close = '}', skipIndex = false;\n"
"  const before = opened;\n"
"  seen.push(v);\n"
"  opened = level;\n"
"  level++;\n"
"  try {\n"
"    if (isArr || (ArrayBuffer.isView(v) && !(v instanceof DataView))) {\n"
"      open = '['; close = ']'; skipIndex = true;\n"
"      if (!isArr) prefix = v.constructor.name + '(' + v.length + ') ';\n"
"      const n = v.length;\n"
"      let holes = 0;\n"
"      for (let i = 0; i < n; i++) {\n"
"        if (parts.length >= 100) { parts.push('... ' + (n - i) + ' more item' + (n - i > 1 ? 's' : '')); break; }\n"
"        if (!(i in v)) { holes++; continue; }\n"
"        if (holes) { parts.push('<' + holes + ' empty item' + (holes > 1 ? 's' : '') + '>'); holes = 0; }\n"
"        parts.push(inspect(v[i], depth + 1, seen, false));\n"
"      }\n"
"      if (holes) parts.push('<' + holes + ' empty item' + (holes > 1 ? 's' : '') + '>');\n"
"    } else if (v instanceof Map) {\n"
"      prefix = 'Map(' + v.size + ') ';\n"
"      for (const [k, x] of v) parts.push(inspect(k, depth + 1, seen, false) + ' => ' + inspect(x, depth + 1, seen, false));\n"
"    } else if (v instanceof Set) {\n"
"      prefix = 'Set(' + v.size + ') ';\n"
"      for (const x of v) parts.push(inspect(x, depth + 1, seen, false));\n"
"    } else if (v instanceof Promise) {\n"
"      prefix = 'Promise ';\n"
"      const state = promiseState(v);\n"
"      parts.push(state[0] === 0 ? '<pending>' : (state[0] === 2 ? '<rejected> ' : '') + inspect(state[1], depth + 1, seen, false));\n"
"    } else {\n"
"      const proto = Object.getPrototypeOf(v);\n"
"      if (proto === null) prefix = '[Object: null prototype] ';\n"
"      else {\n"
"        let name = '';\n"
"        try { name = proto.constructor && proto.constructor.name; } catch (_) {}\n"
"        if (name && name !== 'Object') prefix = name + ' ';\n"
"      }\n"
"    }\n"
"    for (const k of Reflect.ownKeys(v)) {\n"
"      if (skipIndex && typeof k === 'string' && (k === 'length' || /^(0|[1-9][0-9]*)$/.test(k))) continue;\n"
"      const d = Object.getOwnPropertyDescriptor(v, k);\n"
"      if (!d || !d.enumerable) continue;\n"
"      let s;\n"
"      if (d.get || d.set) s = d.get && d.set ? '[Getter/Setter]' : d.get ? '[Getter]' : '[Setter]';\n"
"      else s = inspect(d.value, depth + 1, seen, false);\n"
"      parts.push(key(k) + ': ' + s);\n"
"    }\n"
"  } finally { seen.pop(); level--; }\n"
"  if (!parts.length) opened = before;  /* as Node: an object with no entries opens no level */\n"
"  return wrap(prefix, open, parts, close, skipIndex ? v : undefined);\n"
"}\n"
"function format(args) {\n"
"  let out = [], i = 0;\n"
"  if (typeof args[0] === 'string' && args.length > 1 && args[0].includes('%')) {\n"
"    i = 1;\n"
"    out.push(args[0].replace(/%[sdifjoOc%]/g, (m) => {\n"
"      if (m === '%%') return '%';\n"
"      if (i >= args.length) return m;\n"
"      const a = args[i++];\n"
"      switch (m) {\n"
"      case '%s': return typeof a === 'string' ? a : typeof a === 'bigint' ? a + 'n' : (typeof a === 'object' && a !== null) ? inspect(a, 1, [], false) : String(a);\n"
"      case '%d': case '%i': return typeof a === 'bigint' ? a + 'n' : typeof a === 'symbol' ? 'NaN' : String(m === '%i' ? parseInt(a) : Number(a));\n"
"      case '%f': return typeof a === 'symbol' ? 'NaN' : String(parseFloat(a));\n"
"      case '%j': try { return JSON.stringify(a); } catch (e) { return '[Circular]'; }\n"
"      case '%c': return '';\n"
"      default: return inspect(a, 0, [], false);\n"
"      }\n"
"    }));\n"
"  }\n"
"  for (; i < args.length; i++) out.push(inspect(args[i], 0, [], true));\n"
"  return out.join(' ') + '\\n';\n"
"}\n"
"const out = (...a) => { write(1, format(a)); };\n"
"const err = (...a) => { write(2, format(a)); };\n"
"const console = {\n"
"  log: out, info: out, debug: out, error: err, warn: err,\n"
"  dir: (o) => { write(1, inspect(o, 0, [], false) + '\\n'); },\n"
"  trace: (...a) => { let s = ''; try { s = String(new Error().stack).split('\\n').slice(1).join('\\n'); } catch (_) {}\n"
"                     write(2, 'Trace' + (a.length ? ': ' + format(a).slice(0, -1) : '') + '\\n' + s + (s.endsWith('\\n') ? '' : '\\n')); },\n"
"  assert: (c, ...a) => { if (!c) write(2, 'Assertion failed' + (a.length ? ': ' + format(a) : '\\n')); },\n"
"};\n"
"const define = (o, name, value) => Object.defineProperty(o, name, { value, writable: true, configurable: true, enumerable: false });\n"
"define(g, 'console', console);\n"
"define(g, 'print', out);\n"
"define(g, 'scriptArgs', argv.slice(1));\n"
"const process = { argv: argv.slice(), env: {}, exitCode: undefined, exit: (c) => { if (c !== undefined) process.exitCode = c; exit(); } };\n"
"define(g, 'process', process);\n"
"/* timers: a binary heap on (due, seq), due in ms on the monotonic clock. `now` is the loop's time,\n"
"   as in Node: read when the loop waits for a timer (wait(due) sleeps until then and answers the\n"
"   clock), when a timer is set while none is pending, and as an eval or a request starts.\n"
"   A timer is a Timeout (ref/unref/hasRef/refresh/close, its id as its number, as in Node): one that\n"
"   is unref'd does not keep a run going; a run whose pending timers are all unref'd ends, as Node's\n"
"   process exits. A heap node is {t, seq, x, v}: a refreshed timer gets a new node (v) and the old\n"
"   one is skipped. */\n"
"let now = 0, seq = 0, nextId = 1, refs = 0;\n"
"const heap = [], live = new Map(), entries = new WeakMap();\n"
"const less = (a, b) => a.t < b.t || (a.t === b.t && a.seq < b.seq);\n"
"function push(x) { heap.push(x); let i = heap.length - 1; while (i > 0) { const p = (i - 1) >> 1; if (!less(heap[i], heap[p])) break; [heap[i], heap[p]] = [heap[p], heap[i]]; i = p; } }\n"
"function pop() { const top = heap[0], last = heap.pop(); if (heap.length) { heap[0] = last; let i = 0; for (;;) { const l = 2 * i + 1, r = l + 1; let m = i; if (l < heap.length && less(heap[l], heap[m])) m = l; if (r < heap.length && less(heap[r], heap[m])) m = r; if (m === i) break; [heap[i], heap[m]] = [heap[m], heap[i]]; i = m; } } return top; }\n"
"const schedule = (x, due) => { x.v++; push({ t: due, seq: seq++, x, v: x.v }); };\n"
"const forget = (x) => { if (live.get(x.id) === x) { live.delete(x.id); if (x.ref) refs--; } };\n"
"class Timeout {\n"
"  ref() { const x = entries.get(this); if (x && !x.ref) { x.ref = true; if (live.get(x.id) === x) refs++; } return this; }\n"
"  unref() { const x = entries.get(this); if (x && x.ref) { x.ref = false; if (live.get(x.id) === x) refs--; } return this; }\n"
"  hasRef() { const x = entries.get(this); return !!x && x.ref; }\n"
"  refresh() { const x = entries.get(this); if (x && live.get(x.id) === x) { if (!heap.length) now = wait(0); schedule(x, now + x.ms); } return this; }\n"
"  close() { clear(this); return this; }\n"
"  [Symbol.toPrimitive]() { const x = entries.get(this); return x ? x.id : NaN; }\n"
"}\n"
"function add(fn, ms, args, repeat, immediate) {\n"
"  if (typeof fn !== 'function') throw new TypeError('The \"callback\" argument must be of type function');\n"
"  ms = Number(ms); if (!(ms >= 1 && ms <= 2147483647)) ms = 1;\n"
"  if (immediate) ms = 0;\n"
"  if (!heap.length) now = wait(0);\n"
"  const handle = new Timeout();\n"
"  const x = { id: nextId++, ms, fn, args, repeat, ref: true, v: 0, handle };\n"
"  entries.set(handle, x); live.set(x.id, x); refs++; schedule(x, now + ms); return handle;\n"
"}\n"
"const clear = (id) => { const x = id !== null && typeof id === 'object' ? entries.get(id) : live.get(Number(id)); if (x) forget(x); };\n"
"define(g, 'setTimeout', (fn, ms, ...args) => add(fn, ms, args, false, false));\n"
"define(g, 'setInterval', (fn, ms, ...args) => add(fn, ms, args, true, false));\n"
"define(g, 'setImmediate', (fn, ...args) => add(fn, 0, args, false, true));\n"
"define(g, 'clearTimeout', clear);\n"
"define(g, 'clearInterval', clear);\n"
"define(g, 'clearImmediate', clear);\n"
"/* runTimer(): fire the next timer, waiting until it is due (false: none is pending that keeps the\n"
"   run going); runTimer(1): the same for a served request, where unref'd timers fire too (the\n"
"   service keeps the program going); runTimer(true): drop them all; runTimer(0): read the clock. */\n"
"function runTimer(how) {\n"
"  if (how === true) { heap.length = 0; live.clear(); refs = 0; return false; }\n"
"  if (how === 0) { now = wait(0); return false; }\n"
"  while (heap.length) {\n"
"    const node = heap[0], x = node.x;\n"
"    if (live.get(x.id) !== x || node.v !== x.v) { pop(); continue; }\n"
"    if (refs === 0 && how !== 1) return false;\n"
"    if (node.t > now) now = wait(node.t);\n"
"    pop();\n"
"    if (x.repeat) schedule(x, now + x.ms); else forget(x);\n"
"    x.fn.apply(x.handle, x.args);\n"
"    return true;\n"
"  }\n"
"  return false;\n"
"}\n"
"/* The program's exit status, asked as it ends or calls process.exit(): process's 'exit' listeners first (once). */\n"
"let exiting = false;\n"
"const exitCode = () => {\n"
"  const code = () => { const c = process.exitCode; return c === undefined ? 0 : Number(c) | 0; };\n"
"  if (!exiting && typeof process.emit === 'function') {\n"
"    exiting = true;\n"
"    try { process.emit('exit', code()); } catch (e) { write(2, 'Uncaught ' + formatError(e) + '\\n'); process.exitCode = 1; }\n"
"  }\n"
"  return code();\n"
"};\n"
"const echo = (v) => { if (v !== undefined) write(1, format([v])); };\n"
"return [formatError, runTimer, exitCode, echo, inspect, format];\n"
"})\n";


/* ---- files, stdin, environment: the node-like layer ---------------------
   Every call goes through wasi-libc to the sandbox's WASI, so the guest sees
   only its own virtual filesystem; errors become JS Errors with a node-style
   .code ('ENOENT', 'EROFS', 'EDQUOT', ...), .errno (negated WASI errno),
   .syscall and .path. */

extern char **environ;

/* --repl and --serve: stdin is the sandbox's frame channel, not data. */
static bool stdin_is_channel;
/* --repl: what the user's stdin is instead, the running eval's keyboard
   (end of file at Ctrl-D, without a keyboard, or between evals). */
#define REPL_KEYBOARD "/.session/stdin"
static const char *stdin_path;

static const char *errno_code(int e) {
    switch (e) {
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case ENOTCAPABLE: return "EACCES";
    case EPERM: return "EPERM";
    case EROFS: return "EROFS";
    case EDQUOT: return "EDQUOT";
    case ENOSPC: return "ENOSPC";
    case EEXIST: return "EEXIST";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case ENOTEMPTY: return "ENOTEMPTY";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case EMFILE: return "EMFILE";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case EFBIG: return "EFBIG";
    case EXDEV: return "EXDEV";
    case EBUSY: return "EBUSY";
    case EIO: return "EIO";
    case ENOSYS: return "ENOSYS";
    case ENOTSUP: return "ENOTSUP";
    case ENOMEM: return "ENOMEM";
    case ELOOP: return "ELOOP";
    default: return "EIO";
    }
}

static JSValue throw_errno(JSContext *c, int e, const char *syscall,
                           const char *path, const char *dest) {
    const char *code = errno_code(e);
    char text[128];
    snprintf(text, sizeof text, "%s", e == ENOTCAPABLE ? "permission denied" : strerror(e));
    if (text[0] >= 'A' && text[0] <= 'Z' && (text[1] < 'A' || text[1] > 'Z'))
        text[0] = (char)(text[0] - 'A' + 'a'); /* node style: "no such file or directory" */
    char msg[512];
    if (dest)
        snprintf(msg, sizeof msg, "%s: %s, %s '%s' -> '%s'", code, text, syscall, path, dest);
    else if (path)
        snprintf(msg, sizeof msg, "%s: %s, %s '%s'", code, text, syscall, path);
    else
        snprintf(msg, sizeof msg, "%s: %s, %s", code, text, syscall);
    JSValue err = JS_NewError(c);
    if (JS_IsException(err))
        return err;
    JS_SetPropertyStr(c, err, "message", JS_NewString(c, msg));
    JS_SetPropertyStr(c, err, "code", JS_NewString(c, code));
    JS_SetPropertyStr(c, err, "errno", JS_NewInt32(c, -e));
    JS_SetPropertyStr(c, err, "syscall", JS_NewString(c, syscall));
    if (path)
        JS_SetPropertyStr(c, err, "path", JS_NewString(c, path));
    if (dest)
        JS_SetPropertyStr(c, err, "dest", JS_NewString(c, dest));
    return JS_Throw(c, err);
}

/* Borrow the bytes of a string (UTF-8), ArrayBuffer or typed array.
   *str is set when a C string must be freed (JS_FreeCString), *hold when
   an ArrayBuffer value must be freed. Returns false with an exception. */
static bool get_bytes(JSContext *c, JSValueConst v, const uint8_t **p, size_t *n,
                      const char **str, JSValue *hold) {
    *str = NULL;
    *hold = JS_UNDEFINED;
    if (JS_IsString(v)) {
        *str = JS_ToCStringLen(c, n, v);
        *p = (const uint8_t *)*str;
        return *str != NULL;
    }
    if (JS_IsArrayBuffer(v)) {
        *p = JS_GetArrayBuffer(c, n, v);
        return *p != NULL || *n == 0;
    }
    if (JS_GetTypedArrayType(v) >= 0) {
        size_t off, len, bpe;
        JSValue ab = JS_GetTypedArrayBuffer(c, v, &off, &len, &bpe);
        if (JS_IsException(ab))
            return false;
        size_t size;
        uint8_t *base = JS_GetArrayBuffer(c, &size, ab);
        if (!base && len) {
            JS_FreeValue(c, ab);
            return false;
        }
        *p = base ? base + off : (const uint8_t *)"";
        *n = len;
        *hold = ab;
        return true;
    }
    JS_ThrowTypeError(c, "expected a string, an ArrayBuffer or a TypedArray");
    return false;
}

static void release_bytes(JSContext *c, const char *str, JSValue hold) {
    if (str)
        JS_FreeCString(c, str);
    JS_FreeValue(c, hold);
}

static JSValue read_fd_all(JSContext *c, int fd, size_t hint, bool eintr_fails) {
    size_t cap = hint + 1 > 4096 ? hint + 1 : 4096, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return JS_ThrowOutOfMemory(c);
    for (;;) {
        if (len == cap) {
            size_t nc = cap * 2;
            uint8_t *nb = nc > cap ? realloc(buf, nc) : NULL;
            if (!nb) {
                free(buf);
                return JS_ThrowOutOfMemory(c);
            }
            buf = nb;
            cap = nc;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR && !eintr_fails)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return JS_EXCEPTION;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    JSValue v = JS_NewUint8ArrayCopy(c, buf, len);
    free(buf);
    return v;
}

/* readFile(path) -> Uint8Array */
static JSValue js_read_file(JSContext *c, JSValueConst this_val, int argc,
                            JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    const char *path = JS_ToCString(c, argv[0]);
    if (!path)
        return JS_EXCEPTION;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        JSValue r = throw_errno(c, errno, "open", path, NULL);
        JS_FreeCString(c, path);
        return r;
    }
    struct stat st;
    size_t hint = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
    errno = 0;
    JSValue v = read_fd_all(c, fd, hint, false);
    if (JS_IsException(v) && errno)
        v = throw_errno(c, errno, "read", path, NULL);
    close(fd);
    JS_FreeCString(c, path);
    return v;
}

/* readStdin() -> Uint8Array (all of stdin, up to end of file). What was
   printed so far is flushed first, so a prompt shows before the wait. In a
   REPL session stdin is the eval's keyboard (REPL_KEYBOARD): a read waits
   for what the user types, and fails with EINTR at Ctrl-C (the eval then
   stops at the next interrupt poll) instead of waiting again. */
/* A served program has no stdin: its stdin is the host's request channel. */
static JSValue throw_no_stdin(JSContext *c) {
    JSValue err = JS_NewError(c);
    JS_SetPropertyStr(c, err, "message",
                      JS_NewString(c, "stdin is not available in a served program"));
    JS_SetPropertyStr(c, err, "code", JS_NewString(c, "ENOTSUP"));
    return JS_Throw(c, err);
}

static JSValue js_read_stdin(JSContext *c, JSValueConst this_val, int argc,
                             JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    (void)argv;
    fflush(stdout);
    fflush(stderr);
    if (stdin_path) {
        int fd = open(stdin_path, O_RDONLY);
        if (fd < 0)
            return throw_errno(c, errno, "open", "<stdin>", NULL);
        errno = 0;
        JSValue v = read_fd_all(c, fd, 0, true);
        int e = errno;
        close(fd);
        if (JS_IsException(v) && e)
            v = throw_errno(c, e, "read", "<stdin>", NULL);
        return v;
    }
    if (stdin_is_channel) {
        return throw_no_stdin(c);
    }
    errno = 0;
    JSValue v = read_fd_all(c, 0, 0, false);
    if (JS_IsException(v) && errno)
        v = throw_errno(c, errno, "read", "<stdin>", NULL);
    return v;
}

/* readLine(): one line of stdin without its newline (a trailing "\r" is
   dropped too), or null at end of input. Read one byte at a time, so nothing
   past the line is taken from a keyboard that later reads share (a REPL
   input's keyboard is opened anew for each read, as in readStdin). What was
   printed is flushed first, so a prompt shows while the read waits. */
static JSValue js_read_line(JSContext *c, JSValueConst this_val, int argc,
                            JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    (void)argv;
    fflush(stdout);
    fflush(stderr);
    int fd = 0;
    if (stdin_path) {
        fd = open(stdin_path, O_RDONLY);
        if (fd < 0)
            return throw_errno(c, errno, "open", "<stdin>", NULL);
    } else if (stdin_is_channel) {
        return throw_no_stdin(c);
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    bool any = false;
    int failed = 0;
    for (;;) {
        char ch;
        ssize_t r = read(fd, &ch, 1);
        if (r < 0) {
            failed = errno;
            break;
        }
        if (r == 0)
            break;
        any = true;
        if (ch == '\n')
            break;
        if (len == cap) {
            size_t grown = cap ? cap * 2 : 128;
            char *more = realloc(buf, grown);
            if (!more) {
                free(buf);
                if (fd != 0)
                    close(fd);
                return JS_ThrowOutOfMemory(c);
            }
            buf = more;
            cap = grown;
        }
        buf[len++] = ch;
    }
    if (fd != 0)
        close(fd);
    if (failed && !len) {
        free(buf);
        return throw_errno(c, failed, "read", "<stdin>", NULL);
    }
    if (!any) {
        free(buf);
        return JS_NULL;
    }
    if (len && buf[len - 1] == '\r')
        len--;
    JSValue line = JS_NewStringLen(c, buf ? buf : "", len);
    free(buf);
    return line;
}

/* writeFile(path, data, append) */
static JSValue js_write_file(JSContext *c, JSValueConst this_val, int argc,
                             JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    const char *path = JS_ToCString(c, argv[0]);
    if (!path)
        return JS_EXCEPTION;
    const uint8_t *p;
    size_t n;
    const char *str;
    JSValue hold;
    if (!get_bytes(c, argv[1], &p, &n, &str, &hold)) {
        JS_FreeCString(c, path);
        return JS_EXCEPTION;
    }
    bool append = JS_ToBool(c, argv[2]);
    JSValue result = JS_UNDEFINED;
    int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0666);
    if (fd < 0) {
        result = throw_errno(c, errno, "open", path, NULL);
    } else {
        while (n > 0) {
            ssize_t w = write(fd, p, n);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                result = throw_errno(c, w < 0 ? errno : EIO, "write", path, NULL);
                break;
            }
            p += w;
            n -= (size_t)w;
        }
        close(fd);
    }
    release_bytes(c, str, hold);
    JS_FreeCString(c, path);
    return result;
}

/* stat(path, nofollow) -> [type (0 file, 1 dir, 2 other, 3 symbolic link), size, atimeMs, mtimeMs,
   ctimeMs, ino]; nofollow: lstat */
static JSValue js_stat(JSContext *c, JSValueConst this_val, int argc,
                       JSValueConst *argv) {
    (void)this_val;
    const char *path = JS_ToCString(c, argv[0]);
    if (!path)
        return JS_EXCEPTION;
    int nofollow = argc > 1 && JS_ToBool(c, argv[1]);
    struct stat st;
    if ((nofollow ? lstat(path, &st) : stat(path, &st)) != 0) {
        JSValue r = throw_errno(c, errno, nofollow ? "lstat" : "stat", path, NULL);
        JS_FreeCString(c, path);
        return r;
    }
    JS_FreeCString(c, path);
    JSValue a = JS_NewArray(c);
    int type = S_ISREG(st.st_mode) ? 0 : S_ISDIR(st.st_mode) ? 1 : S_ISLNK(st.st_mode) ? 3 : 2;
    JS_SetPropertyUint32(c, a, 0, JS_NewInt32(c, type));
    JS_SetPropertyUint32(c, a, 1, JS_NewFloat64(c, (double)st.st_size));
    JS_SetPropertyUint32(c, a, 2, JS_NewFloat64(c, st.st_atim.tv_sec * 1e3 + st.st_atim.tv_nsec / 1e6));
    JS_SetPropertyUint32(c, a, 3, JS_NewFloat64(c, st.st_mtim.tv_sec * 1e3 + st.st_mtim.tv_nsec / 1e6));
    JS_SetPropertyUint32(c, a, 4, JS_NewFloat64(c, st.st_ctim.tv_sec * 1e3 + st.st_ctim.tv_nsec / 1e6));
    JS_SetPropertyUint32(c, a, 5, JS_NewFloat64(c, (double)st.st_ino));
    return a;
}

/* readdir(path) -> [names] (without . and ..) */
static JSValue js_readdir(JSContext *c, JSValueConst this_val, int argc,
                          JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    const char *path = JS_ToCString(c, argv[0]);
    if (!path)
        return JS_EXCEPTION;
    DIR *d = opendir(path);
    if (!d) {
        JSValue r = throw_errno(c, errno, "scandir", path, NULL);
        JS_FreeCString(c, path);
        return r;
    }
    JSValue a = JS_NewArray(c);
    uint32_t i = 0;
    for (;;) {
        errno = 0;
        struct dirent *ent = readdir(d);
        if (!ent) {
            if (errno) {
                JS_FreeValue(c, a);
                a = throw_errno(c, errno, "scandir", path, NULL);
            }
            break;
        }
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        JS_SetPropertyUint32(c, a, i++, JS_NewString(c, ent->d_name));
    }
    closedir(d);
    JS_FreeCString(c, path);
    return a;
}

/* mkdir / rmdir / unlink (path), rename (from, to) */
static JSValue js_path_op(JSContext *c, JSValueConst this_val, int argc,
                          JSValueConst *argv, int magic) {
    (void)this_val;
    static const char *const names[] = {"mkdir", "rmdir", "unlink", "rename"};
    const char *path = JS_ToCString(c, argv[0]);
    if (!path)
        return JS_EXCEPTION;
    const char *dest = NULL;
    if (magic == 3) {
        dest = argc > 1 ? JS_ToCString(c, argv[1]) : NULL;
        if (!dest) {
            JS_FreeCString(c, path);
            return JS_EXCEPTION;
        }
    }
    int r = magic == 0 ? mkdir(path, 0777)
          : magic == 1 ? rmdir(path)
          : magic == 2 ? unlink(path)
                       : rename(path, dest);
    JSValue result = r == 0 ? JS_UNDEFINED : throw_errno(c, errno, names[magic], path, dest);
    JS_FreeCString(c, path);
    if (dest)
        JS_FreeCString(c, dest);
    return result;
}

/* symlink(target, path) */
static JSValue js_symlink(JSContext *c, JSValueConst this_val, int argc,
                          JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    const char *target = JS_ToCString(c, argv[0]);
    if (!target)
        return JS_EXCEPTION;
    const char *path = JS_ToCString(c, argv[1]);
    if (!path) {
        JS_FreeCString(c, target);
        return JS_EXCEPTION;
    }
    JSValue result = symlink(target, path) == 0 ? JS_UNDEFINED : throw_errno(c, errno, "symlink", target, path);
    JS_FreeCString(c, target);
    JS_FreeCString(c, path);
    return result;
}

/* readlink(path) -> the link's target */
static JSValue js_readlink(JSContext *c, JSValueConst this_val, int argc,
                           JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    const char *path = JS_ToCString(c, argv[0]);
    if (!path)
        return JS_EXCEPTION;
    char buf[4097];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    JSValue result = n < 0 ? throw_errno(c, errno, "readlink", path, NULL) : JS_NewStringLen(c, buf, (size_t)n);
    JS_FreeCString(c, path);
    return result;
}

/* encode(string) -> Uint8Array (UTF-8) */
static JSValue js_encode(JSContext *c, JSValueConst this_val, int argc,
                         JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    size_t n;
    const char *s = JS_ToCStringLen(c, &n, argv[0]);
    if (!s)
        return JS_EXCEPTION;
    JSValue v = JS_NewUint8ArrayCopy(c, (const uint8_t *)s, n);
    JS_FreeCString(c, s);
    return v;
}

/* decode(bytes) -> string (UTF-8) */
static JSValue js_decode(JSContext *c, JSValueConst this_val, int argc,
                         JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    const uint8_t *p;
    size_t n;
    const char *str;
    JSValue hold;
    if (!get_bytes(c, argv[0], &p, &n, &str, &hold))
        return JS_EXCEPTION;
    JSValue v = JS_NewStringLen(c, (const char *)p, n);
    release_bytes(c, str, hold);
    return v;
}

/* native.report(line): one line to the sandbox's in-guest report channel
   (/.attempts, see backends/wasm/attempt_watch.py), opened once and kept
   open: the host records a closed channel as tampering. Returns false when
   there is no channel (another host). */
static int report_fd = -2;

static JSValue js_report(JSContext *c, JSValueConst this_val, int argc,
                         JSValueConst *argv) {
    (void)this_val;
    if (argc < 1)
        return JS_FALSE;
    if (report_fd == -2)
        report_fd = open("/.attempts", O_WRONLY);
    if (report_fd < 0)
        return JS_FALSE;
    size_t len;
    const char *s = JS_ToCStringLen(c, &len, argv[0]);
    if (!s)
        return JS_EXCEPTION;
    ssize_t written = write(report_fd, s, len);
    JS_FreeCString(c, s);
    return JS_NewBool(c, written == (ssize_t)len);
}

static JSValue js_getcwd(JSContext *c, JSValueConst this_val, int argc,
                         JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    (void)argv;
    char buf[1024];
    if (!getcwd(buf, sizeof buf))
        return throw_errno(c, errno, "getcwd", NULL, NULL);
    return JS_NewString(c, buf);
}

static JSValue make_env(JSContext *c) {
    JSValue env = JS_NewObject(c);
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e)
            continue;
        char *key = strndup(*e, (size_t)(eq - *e));
        if (!key)
            continue;
        JS_SetPropertyStr(c, env, key, JS_NewString(c, eq + 1));
        free(key);
    }
    return env;
}

/* random(n) -> Uint8Array of n bytes from the host's random source (WASI random_get), n <= 65536 */
static JSValue js_random(JSContext *c, JSValueConst this_val, int argc,
                         JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    uint32_t n;
    if (JS_ToUint32(c, &n, argv[0]))
        return JS_EXCEPTION;
    if (n > 65536)
        return JS_ThrowRangeError(c, "random: at most 65536 bytes at a time");
    uint8_t *buf = js_malloc(c, n ? n : 1);
    if (!buf)
        return JS_EXCEPTION;
    for (uint32_t at = 0; at < n; at += 256) {
        if (getentropy(buf + at, n - at < 256 ? n - at : 256) != 0) {
            js_free(c, buf);
            return throw_errno(c, errno, "getentropy", NULL, NULL);
        }
    }
    JSValue v = JS_NewUint8ArrayCopy(c, buf, n);
    js_free(c, buf);
    return v;
}

/* compile(source, filename) -> the value of source run as a global script
   named filename (require() of the program's own files: its stack traces
   name the file). */
static JSValue js_compile(JSContext *c, JSValueConst this_val, int argc,
                          JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    size_t len;
    const char *src = JS_ToCStringLen(c, &len, argv[0]);
    if (!src)
        return JS_EXCEPTION;
    const char *name = JS_ToCString(c, argv[1]);
    if (!name) {
        JS_FreeCString(c, src);
        return JS_EXCEPTION;
    }
    JSValue v = JS_Eval(c, src, len, name, JS_EVAL_TYPE_GLOBAL);
    JS_FreeCString(c, name);
    JS_FreeCString(c, src);
    return v;
}

/* memoryUsage() -> [bytes malloc'd, bytes in use (QuickJS's count), bytes of linear memory] */
static JSValue js_memory_usage(JSContext *c, JSValueConst this_val, int argc,
                               JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    (void)argv;
    JSMemoryUsage s;
    JS_ComputeMemoryUsage(JS_GetRuntime(c), &s);
    JSValue a = JS_NewArray(c);
    JS_SetPropertyUint32(c, a, 0, JS_NewInt64(c, s.malloc_size));
    JS_SetPropertyUint32(c, a, 1, JS_NewInt64(c, s.memory_used_size));
    JS_SetPropertyUint32(c, a, 2, JS_NewInt64(c, (int64_t)__builtin_wasm_memory_size(0) * 65536));
    return a;
}

static JSValue make_native(JSContext *c) {
    JSValue n = JS_NewObject(c);
    JS_SetPropertyStr(c, n, "readFile", JS_NewCFunction(c, js_read_file, "readFile", 1));
    JS_SetPropertyStr(c, n, "readStdin", JS_NewCFunction(c, js_read_stdin, "readStdin", 0));
    JS_SetPropertyStr(c, n, "readLine", JS_NewCFunction(c, js_read_line, "readLine", 0));
    JS_SetPropertyStr(c, n, "writeFile", JS_NewCFunction(c, js_write_file, "writeFile", 3));
    JS_SetPropertyStr(c, n, "stat", JS_NewCFunction(c, js_stat, "stat", 2));
    JS_SetPropertyStr(c, n, "symlink", JS_NewCFunction(c, js_symlink, "symlink", 2));
    JS_SetPropertyStr(c, n, "readlink", JS_NewCFunction(c, js_readlink, "readlink", 1));
    JS_SetPropertyStr(c, n, "readdir", JS_NewCFunction(c, js_readdir, "readdir", 1));
    JS_SetPropertyStr(c, n, "mkdir", JS_NewCFunctionMagic(c, js_path_op, "mkdir", 1, JS_CFUNC_generic_magic, 0));
    JS_SetPropertyStr(c, n, "rmdir", JS_NewCFunctionMagic(c, js_path_op, "rmdir", 1, JS_CFUNC_generic_magic, 1));
    JS_SetPropertyStr(c, n, "unlink", JS_NewCFunctionMagic(c, js_path_op, "unlink", 1, JS_CFUNC_generic_magic, 2));
    JS_SetPropertyStr(c, n, "rename", JS_NewCFunctionMagic(c, js_path_op, "rename", 2, JS_CFUNC_generic_magic, 3));
    JS_SetPropertyStr(c, n, "encode", JS_NewCFunction(c, js_encode, "encode", 1));
    JS_SetPropertyStr(c, n, "decode", JS_NewCFunction(c, js_decode, "decode", 1));
    JS_SetPropertyStr(c, n, "getcwd", JS_NewCFunction(c, js_getcwd, "cwd", 0));
    JS_SetPropertyStr(c, n, "env", make_env(c));
    JS_SetPropertyStr(c, n, "report", JS_NewCFunction(c, js_report, "report", 1));
    JS_SetPropertyStr(c, n, "random", JS_NewCFunction(c, js_random, "random", 1));
    JS_SetPropertyStr(c, n, "compile", JS_NewCFunction(c, js_compile, "compile", 2));
    JS_SetPropertyStr(c, n, "memoryUsage", JS_NewCFunction(c, js_memory_usage, "memoryUsage", 0));
    return n;
}

/* The node-like layer (fs, require, process.env, TextEncoder/Decoder,
   Headers/Request/Response) and the serve-mode dispatcher. Evaluated
   after bootstrap_js; it returns [useDefaultExport, ready, dispatch]. */
static const char node_js[] =
"(function (native, write, formatError, mode) {\n"
"'use strict';\n"
"const g = globalThis;\n"
"const define = (o, name, value) => Object.defineProperty(o, name, { value, writable: true, configurable: true, enumerable: false });\n"
"const { encode, decode } = native;\n"
"function typeError(message, code) { const e = new TypeError(message); e.code = code; return e; }\n"
"function encodingOf(options) {\n"
"  const enc = typeof options === 'string' ? options : options !== null && typeof options === 'object' ? options.encoding : undefined;\n"
"  if (enc === undefined || enc === null || enc === 'buffer') return null;\n"
"  const e = String(enc).toLowerCase();\n"
"  if (e === 'utf8' || e === 'utf-8') return 'utf8';\n"
"  throw typeError('Unknown encoding: ' + enc + \" (only 'utf8' is supported)\", 'ERR_UNKNOWN_ENCODING');\n"
"}\n"
"function pathArg(p, name) {\n"
"  if (typeof p !== 'string') throw typeError('The \"' + (name || 'path') + '\" argument must be of type string', 'ERR_INVALID_ARG_TYPE');\n"
"  if (p.includes('\\0')) throw typeError('The \"' + (name || 'path') + '\" argument must not contain null bytes', 'ERR_INVALID_ARG_VALUE');\n"
"  return p;\n"
"}\n"
"function bytesOf(data) {\n"
"  if (typeof data === 'string' || data instanceof ArrayBuffer) return data;\n"
"  if (ArrayBuffer.isView(data)) return data instanceof DataView ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data;\n"
"  throw typeError('The \"data\" argument must be a string, an ArrayBuffer or a TypedArray', 'ERR_INVALID_ARG_TYPE');\n"
"}\n"
"const isStdin = (p) => p === 0 || p === '/dev/stdin';\n"
"class Stats {\n"
"  constructor(a) {\n"
"    this.dev = 1; this.ino = a[5]; this.mode = a[0] === 1 ? 0o40755 : a[0] === 3 ? 0o120777 : 0o100644; this.nlink = 1;\n"
"    this.size = a[1]; this.atimeMs = a[2]; this.mtimeMs = a[3]; this.ctimeMs = a[4]; this.birthtimeMs = a[4];\n"
"    define(this, 'type', a[0]);\n"
"  }\n"
"  get atime() { return new Date(this.atimeMs); }\n"
"  get mtime() { return new Date(this.mtimeMs); }\n"
"  get ctime() { return new Date(this.ctimeMs); }\n"
"  get birthtime() { return new Date(this.birthtimeMs); }\n"
"  isFile() { return this.type === 0; }\n"
"  isDirectory() { return this.type === 1; }\n"
"  isSymbolicLink() { return this.type === 3; }\n"
"  isFIFO() { return false; }\n"
"  isSocket() { return false; }\n"
"  isBlockDevice() { return false; }\n"
"  isCharacterDevice() { return false; }\n"
"}\n"
"class Dirent {\n"
"  constructor(name, dir, type) { this.name = name; this.parentPath = dir; define(this, 'type', type); }\n"
"  isFile() { return this.type === 0; }\n"
"  isDirectory() { return this.type === 1; }\n"
"  isSymbolicLink() { return this.type === 3; }\n"
"}\n"
"const join = (dir, name) => (dir.endsWith('/') ? dir : dir + '/') + name;\n"
"const fs = {\n"
"  readFileSync(path, options) {\n"
"    const enc = encodingOf(options);\n"
"    const data = isStdin(path) ? native.readStdin() : native.readFile(pathArg(path));\n"
"    return enc ? decode(data) : data;\n"
"  },\n"
"  writeFileSync(path, data, options) {\n"
"    const flag = options !== null && typeof options === 'object' ? options.flag : undefined;\n"
"    if (typeof options === 'string' || (options && typeof options === 'object')) encodingOf(options);\n"
"    native.writeFile(pathArg(path), bytesOf(data), typeof flag === 'string' && flag[0] === 'a');\n"
"  },\n"
"  appendFileSync(path, data, options) {\n"
"    if (options !== undefined) encodingOf(options);\n"
"    native.writeFile(pathArg(path), bytesOf(data), true);\n"
"  },\n"
"  existsSync(path) {\n"
"    if (typeof path !== 'string') return false;\n"
"    try { native.stat(path); return true; } catch (_) { return false; }\n"
"  },\n"
"  readdirSync(path, options) {\n"
"    path = pathArg(path);\n"
"    const names = native.readdir(path).sort();\n"
"    if (options !== null && typeof options === 'object' && options.withFileTypes)\n"
"      return names.map((n) => { let t = 2; try { t = native.stat(join(path, n), true)[0]; } catch (_) {} return new Dirent(n, path, t); });\n"
"    return names;\n"
"  },\n"
"  mkdirSync(path, options) {\n"
"    path = pathArg(path);\n"
"    const recursive = options !== null && typeof options === 'object' && options.recursive;\n"
"    if (!recursive) { native.mkdir(path); return undefined; }\n"
"    let cur = path.startsWith('/') ? '' : '.', first;\n"
"    for (const part of path.split('/')) {\n"
"      if (!part) continue;\n"
"      cur = cur + '/' + part;\n"
"      let st = null;\n"
"      try { st = native.stat(cur); } catch (e) { if (e.code !== 'ENOENT') throw e; }\n"
"      if (st !== null && st[0] === 1) continue;\n"
"      native.mkdir(cur);\n"
"      if (first === undefined) first = cur.startsWith('./') ? cur.slice(2) : cur;\n"
"    }\n"
"    return first;\n"
"  },\n"
"  rmdirSync(path) { native.rmdir(pathArg(path)); },\n"
"  unlinkSync(path) { native.unlink(pathArg(path)); },\n"
"  renameSync(from, to) { native.rename(pathArg(from, 'oldPath'), pathArg(to, 'newPath')); },\n"
"  copyFileSync(from, to) { native.writeFile(pathArg(to, 'dest'), native.readFile(pathArg(from, 'src')), false); },\n"
"  rmSync(path, options) {\n"
"    path = pathArg(path);\n"
"    const o = options !== null && typeof options === 'object' ? options : {};\n"
"    let st;\n"
"    try { st = native.stat(path, true); } catch (e) { if (o.force && e.code === 'ENOENT') return; throw e; }\n"
"    if (st[0] !== 1) { native.unlink(path); return; }\n"
"    if (!o.recursive) { const e = new Error('Path is a directory: rm returned EISDIR (is a directory) ' + path); e.code = 'ERR_FS_EISDIR'; throw e; }\n"
"    for (const n of native.readdir(path)) fs.rmSync(join(path, n), o);\n"
"    native.rmdir(path);\n"
"  },\n"
"  statSync(path, options) {\n"
"    try { return new Stats(native.stat(pathArg(path))); } catch (e) {\n"
"      if (options !== null && typeof options === 'object' && options.throwIfNoEntry === false && e.code === 'ENOENT') return undefined;\n"
"      throw e;\n"
"    }\n"
"  },\n"
"};\n"
"fs.lstatSync = (path, options) => {\n"
"  try { return new Stats(native.stat(pathArg(path), true)); } catch (e) {\n"
"    if (options !== null && typeof options === 'object' && options.throwIfNoEntry === false && e.code === 'ENOENT') return undefined;\n"
"    throw e;\n"
"  }\n"
"};\n"
"fs.symlinkSync = (target, path) => { native.symlink(pathArg(target, 'target'), pathArg(path)); };\n"
"fs.readlinkSync = (path, options) => { if (options !== undefined) encodingOf(options); return native.readlink(pathArg(path)); };\n"
"fs.promises = {};\n"
"for (const name of ['readFile', 'writeFile', 'appendFile', 'readdir', 'mkdir', 'rmdir', 'unlink', 'rename', 'copyFile', 'rm', 'stat', 'lstat', 'symlink', 'readlink'])\n"
"  fs.promises[name] = async (...args) => fs[name + 'Sync'](...args);\n"
"fs.promises.access = async (path) => { fs.statSync(path); };\n"
"define(g, 'fs', fs);\n"
"define(g, 'readStdin', () => decode(native.readStdin()));\n"
"/* ---- reading the keyboard a line at a time: prompt(), readline (as in browsers and node) ---- */\n"
"define(g, 'readLine', () => native.readLine());\n"
"define(g, 'prompt', (message) => { if (message !== undefined) write(1, String(message)); return native.readLine(); });\n"
"function createInterface(options, promised) {\n"
"  const handlers = { line: [], close: [] };\n"
"  let closed = false, pumping = false, shown = '> ';\n"
"  const out = (text) => { if (!options || options.output !== undefined) write(1, String(text)); };\n"
"  const next = () => { if (closed) return null; const line = native.readLine(); if (line === null) rl.close(); return line; };\n"
"  const pump = () => { while (!closed) { const line = next(); if (line === null) break; for (const fn of handlers.line) fn(line); } };\n"
"  const rl = {\n"
"    question(query, a, b) {\n"
"      const done = typeof a === 'function' ? a : b;\n"
"      out(query);\n"
"      const line = next();\n"
"      if (promised) return line === null ? Promise.reject(Object.assign(new Error('readline was closed'), { code: 'ERR_USE_AFTER_CLOSE' })) : Promise.resolve(line);\n"
"      if (line !== null && done) Promise.resolve().then(() => done(line));\n"
"    },\n"
"    on(event, fn) { (handlers[event] = handlers[event] || []).push(fn); if (event === 'line' && !pumping) { pumping = true; Promise.resolve().then(pump); } return rl; },\n"
"    once(event, fn) { const once = (...args) => { handlers[event] = handlers[event].filter((f) => f !== once); fn(...args); }; return rl.on(event, once); },\n"
"    close() { if (closed) return; closed = true; for (const fn of handlers.close) fn(); },\n"
"    setPrompt(text) { shown = String(text); }, getPrompt() { return shown; }, prompt() { out(shown); },\n"
"    write(text) { out(text); }, pause() { return rl; }, resume() { return rl; },\n"
"    [Symbol.asyncIterator]() { return { next: async () => { const line = next(); return line === null ? { done: true, value: undefined } : { done: false, value: line }; }, return: async () => { rl.close(); return { done: true, value: undefined }; } }; },\n"
"  };\n"
"  return rl;\n"
"}\n"
"const readline = { createInterface: (options) => createInterface(options, false) };\n"
"const readlinePromises = { createInterface: (options) => createInterface(options, true) };\n"
"readline.promises = readlinePromises;\n"
"/* ---- what the program tries beyond the sandbox: reported to the host as the program's own word ---- */\n"
"const report = (kind, target, verdict) => { native.report(JSON.stringify({ kind, target: String(target).slice(0, 300), verdict }) + '\\n'); };\n"
"const NO_NET = 'refused: no network in this sandbox', NO_PROC = 'refused: no processes in this sandbox';\n"
"function blocked(what) { const e = new Error('blocked by the sandbox: ' + what); e.code = 'EACCES'; return e; }\n"
"function place(url) {\n"
"  try { const m = /^([a-z][a-z0-9+.-]*):\\/\\/(?:[^@\\/]*@)?(\\[[^\\]]*\\]|[^:\\/?#]*)(?::(\\d+))?/i.exec(String(url));\n"
"    if (!m) return String(url);\n"
"    const port = m[3] || ({ http: '80', https: '443', ws: '80', wss: '443', ftp: '21' })[m[1].toLowerCase()] || '';\n"
"    return port ? m[2] + ':' + port : m[2];\n"
"  } catch (e) { return String(url); }\n"
"}\n"
"function target(args) {\n"
"  const [a, b] = args;\n"
"  if (typeof a === 'string' || (a && typeof a === 'object' && 'href' in a)) return place(a.href || a);\n"
"  if (a && typeof a === 'object') return (a.hostname || a.host || 'localhost') + ':' + (a.port || (a.protocol === 'https:' ? 443 : 80));\n"
"  if (typeof a === 'number') return (typeof b === 'string' ? b : 'localhost') + ':' + a;\n"
"  return String(a);\n"
"}\n"
"define(g, 'fetch', (input) => {\n"
"  const url = input && typeof input === 'object' && 'url' in input ? input.url : input;\n"
"  report('network_connect', place(url), NO_NET);\n"
"  return Promise.reject(new TypeError('fetch failed: blocked by the sandbox: no network (' + place(url) + ')'));\n"
"});\n"
"const command = (file, args) => Array.isArray(args) ? [file, ...args].join(' ') : String(file);\n"
"function spawner(name) { return (file, args) => { report('process_spawn', command(file, args), NO_PROC); throw blocked('no processes (' + name + ')'); }; }\n"
"const child_process = {};\n"
"for (const name of ['exec', 'execSync', 'execFile', 'execFileSync', 'spawn', 'spawnSync', 'fork']) child_process[name] = spawner(name);\n"
"function connector(kind) { return (...args) => { report(kind, target(args), NO_NET); throw blocked('no network (' + target(args) + ')'); }; }\n"
"const http = { request: connector('network_connect'), get: connector('network_connect'), createServer() { throw blocked('no servers in a run: use Serve'); } };\n"
"const net = { connect: connector('network_connect'), createConnection: connector('network_connect'), Socket: function () { throw blocked('no network'); }, createServer() { throw blocked('no servers in a run: use Serve'); } };\n"
"const dns = { lookup: connector('dns_lookup'), resolve: connector('dns_lookup'), resolve4: connector('dns_lookup'), promises: { lookup: connector('dns_lookup') } };\n"
"const modules = { fs, 'node:fs': fs, 'fs/promises': fs.promises, 'node:fs/promises': fs.promises, process: g.process, 'node:process': g.process,\n"
"  readline, 'node:readline': readline, 'readline/promises': readlinePromises, 'node:readline/promises': readlinePromises };\n"
"const watched = { child_process, http, https: http, net, tls: net, dns, http2: http };\n"
"for (const name of Object.keys(watched)) { modules[name] = watched[name]; modules['node:' + name] = watched[name]; }\n"
"define(g, 'require', (name) => {\n"
"  if (Object.prototype.hasOwnProperty.call(modules, name)) return modules[name];\n"
"  const e = new Error(\"Cannot find module '\" + name + \"' (this sandbox's JavaScript has: \" + Object.keys(modules).filter((k) => !k.startsWith('node:')).sort().join(', ') + ')'); e.code = 'MODULE_NOT_FOUND'; throw e;\n"
"});\n"
"const process = g.process;\n"
"const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;\n"
"process.env = new Proxy(native.env, { get(env, name) {\n"
"  if (typeof name === 'string' && !Object.prototype.hasOwnProperty.call(env, name) && ENV_NAME.test(name)) report('env_lookup', name, 'refused: not given to the program');\n"
"  return env[name];\n"
"} });\n"
"process.kill = (pid, signal) => { report('signal', 'signal ' + (signal === undefined ? 'SIGTERM' : signal) + ' to process ' + pid, NO_PROC); throw blocked('no processes'); };\n"
"process.platform = 'wasi';\n"
"process.cwd = native.getcwd;\n"
"process.stdout = { write: (s) => { write(1, typeof s === 'string' ? s : decode(bytesOf(s))); return true; } };\n"
"process.stderr = { write: (s) => { write(2, typeof s === 'string' ? s : decode(bytesOf(s))); return true; } };\n"
"/* ---- Web-style text, headers, requests and responses ---- */\n"
"function viewOf(b, what) {\n"
"  if (b instanceof ArrayBuffer) return new Uint8Array(b);\n"
"  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);\n"
"  throw typeError(what + ' must be an ArrayBuffer or a TypedArray', 'ERR_INVALID_ARG_TYPE');\n"
"}\n"
"if (typeof g.TextEncoder !== 'function') define(g, 'TextEncoder', class TextEncoder {\n"
"  get encoding() { return 'utf-8'; }\n"
"  encode(s = '') { return encode(String(s)); }\n"
"});\n"
"if (typeof g.TextDecoder !== 'function') define(g, 'TextDecoder', class TextDecoder {\n"
"  constructor(label = 'utf-8') { if (!/^utf-?8$/i.test(String(label))) throw new RangeError('TextDecoder: only utf-8 is supported'); }\n"
"  get encoding() { return 'utf-8'; }\n"
"  decode(b) { return b === undefined ? '' : decode(viewOf(b, 'input')); }\n"
"});\n"
"class Headers {\n"
"  #list = [];\n"
"  constructor(init) {\n"
"    if (init === undefined || init === null) return;\n"
"    if (init instanceof Headers || Array.isArray(init)) for (const [k, v] of init) this.append(k, v);\n"
"    else if (typeof init === 'object') for (const k of Object.keys(init)) this.append(k, init[k]);\n"
"    else throw new TypeError('Headers: init must be an object, an array of pairs or Headers');\n"
"  }\n"
"  append(k, v) { this.#list.push([String(k).toLowerCase(), String(v)]); }\n"
"  set(k, v) { this.delete(k); this.append(k, v); }\n"
"  get(k) { k = String(k).toLowerCase(); const vs = this.#list.filter((e) => e[0] === k).map((e) => e[1]); return vs.length ? vs.join(', ') : null; }\n"
"  has(k) { k = String(k).toLowerCase(); return this.#list.some((e) => e[0] === k); }\n"
"  delete(k) { k = String(k).toLowerCase(); this.#list = this.#list.filter((e) => e[0] !== k); }\n"
"  forEach(fn, self) { for (const [k, v] of this.#list) fn.call(self, v, k, this); }\n"
"  *entries() { for (const [k, v] of this.#list) yield [k, v]; }\n"
"  *keys() { for (const [k] of this.#list) yield k; }\n"
"  *values() { for (const [, v] of this.#list) yield v; }\n"
"  [Symbol.iterator]() { return this.entries(); }\n"
"  toJSON() { const o = {}; for (const [k, v] of this.#list) o[k] = k in o ? o[k] + ', ' + v : v; return o; }\n"
"}\n"
"function bodyBytes(body) {\n"
"  if (body === null || body === undefined) return new Uint8Array(0);\n"
"  if (typeof body === 'string') return encode(body);\n"
"  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return viewOf(body, 'body');\n"
"  return encode(String(body));\n"
"}\n"
"class Body {\n"
"  #bytes;\n"
"  constructor(body) { this.#bytes = bodyBytes(body); }\n"
"  get bodyUsed() { return false; }\n"
"  async bytes() { return this.#bytes.slice(); }\n"
"  async arrayBuffer() { return this.#bytes.slice().buffer; }\n"
"  async text() { return decode(this.#bytes); }\n"
"  async json() { return JSON.parse(decode(this.#bytes)); }\n"
"  get _bytes() { return this.#bytes; }\n"
"}\n"
"function splitQuery(search) {\n"
"  const q = {};\n"
"  for (const part of search.replace(/^\\?/, '').split('&')) {\n"
"    if (!part) continue;\n"
"    const i = part.indexOf('=');\n"
"    const dec = (s) => { try { return decodeURIComponent(s.replace(/\\+/g, ' ')); } catch (_) { return s; } };\n"
"    q[dec(i < 0 ? part : part.slice(0, i))] = i < 0 ? '' : dec(part.slice(i + 1));\n"
"  }\n"
"  return q;\n"
"}\n"
"class Request extends Body {\n"
"  #text;\n"
"  constructor(url, init = {}) {\n"
"    super(init.body);\n"
"    this.url = String(url);\n"
"    this.method = String(init.method || 'GET').toUpperCase();\n"
"    this.headers = new Headers(init.headers);\n"
"    const m = /^[a-z][a-z0-9+.-]*:\\/\\/[^/?#]*([^?#]*)(\\?[^#]*)?/i.exec(this.url);\n"
"    this.path = m ? m[1] || '/' : this.url;\n"
"    this.search = m && m[2] ? m[2] : '';\n"
"    this.query = splitQuery(this.search);\n"
"  }\n"
"  /* The body as text (UTF-8); '' when there is none. */\n"
"  get body() { if (this.#text === undefined) this.#text = decode(this._bytes); return this.#text; }\n"
"}\n"
"class Response extends Body {\n"
"  #raw;\n"
"  constructor(body = null, init = {}) {\n"
"    super(typeof body === 'object' && body !== null && !(body instanceof ArrayBuffer) && !ArrayBuffer.isView(body) ? JSON.stringify(body) : body);\n"
"    this.#raw = body;\n"
"    this.status = init.status === undefined ? 200 : init.status;\n"
"    this.statusText = init.statusText === undefined ? '' : String(init.statusText);\n"
"    this.headers = new Headers(init.headers);\n"
"  }\n"
"  get ok() { return this.status >= 200 && this.status < 300; }\n"
"  get body() { return this.#raw; }\n"
"  static json(data, init = {}) {\n"
"    const r = new Response(JSON.stringify(data), init);\n"
"    if (!r.headers.has('content-type')) r.headers.set('content-type', 'application/json');\n"
"    return r;\n"
"  }\n"
"  static redirect(url, status = 302) { return new Response(null, { status, headers: { location: String(url) } }); }\n"
"}\n"
"define(g, 'Headers', Headers);\n"
"define(g, 'Request', Request);\n"
"define(g, 'Response', Response);\n"
"/* ---- serve mode: one handler, called once per request ---- */\n"
"let handler = null;\n"
"function toHandler(h, where) {\n"
"  if (typeof h === 'function') return h;\n"
"  if (h !== null && typeof h === 'object' && typeof h.fetch === 'function') return (req) => h.fetch(req);\n"
"  throw new TypeError(where + ' must be a function or an object with a fetch(request) method');\n"
"}\n"
"define(g, 'serve', (h) => {\n"
"  if (mode !== 'serve') throw new Error(\"serve(): this program is a web service; run it with 'playground serve' (the handler bridge)\");\n"
"  handler = toHandler(h, 'serve(handler)');\n"
"});\n"
"function useDefaultExport(d) {\n"
"  if (d !== null && (typeof d === 'object' || typeof d === 'function') && typeof d.fetch === 'function') handler = toHandler(d, 'export default');\n"
"}\n"
"function ready() {\n"
"  if (handler) return true;\n"
"  write(2, 'qjs --serve: the program registered no handler; write `export default { fetch(request) { ... } }` or call `serve((request) => ...)`\\n');\n"
"  return false;\n"
"}\n"
"function toResponse(r) {\n"
"  if (r instanceof Response) return r;\n"
"  if (typeof r === 'string') return new Response(r);\n"
"  if (r === undefined) throw new TypeError('the handler returned undefined: return a string, a Response or { status, headers, body }');\n"
"  if (r !== null && typeof r === 'object' && !Array.isArray(r) && !(r instanceof ArrayBuffer) && !ArrayBuffer.isView(r) &&\n"
"      ('status' in r || 'body' in r || 'headers' in r))\n"
"    return new Response(r.body === undefined ? null : r.body, r);\n"
"  if (r instanceof ArrayBuffer || ArrayBuffer.isView(r)) return new Response(r);\n"
"  return Response.json(r);\n"
"}\n"
"function encodeResponse(resp) {\n"
"  const status = resp.status;\n"
"  if (!Number.isInteger(status) || status < 100 || status > 599) throw new RangeError('invalid response status: ' + String(status));\n"
"  const headers = new Headers(resp.headers);\n"
"  const raw = resp.body;\n"
"  let type = null;\n"
"  if (typeof raw === 'string') type = 'text/plain; charset=utf-8';\n"
"  else if (raw instanceof ArrayBuffer || ArrayBuffer.isView(raw)) type = 'application/octet-stream';\n"
"  else if (raw !== null && raw !== undefined) type = 'application/json';\n"
"  if (type !== null && !headers.has('content-type')) headers.set('content-type', type);\n"
"  for (const [k, v] of headers) if (/[\\r\\n\\0]/.test(k + v) || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(k)) throw new TypeError('invalid response header: ' + JSON.stringify(k));\n"
"  return [JSON.stringify({ status, headers: [...headers] }), resp._bytes];\n"
"}\n"
"async function handle(meta, body) {\n"
"  const m = JSON.parse(meta);\n"
"  const headers = new Headers(m.headers);\n"
"  const req = new Request('http://' + (headers.get('host') || 'localhost') + m.path, { method: m.method, headers, body });\n"
"  return encodeResponse(toResponse(await handler(req)));\n"
"}\n"
"function failure(e) {\n"
"  write(2, 'Uncaught ' + formatError(e) + '\\n');\n"
"  let text = 'Internal Server Error';\n"
"  try { text += ': ' + (e instanceof Error ? e.message : String(e)); } catch (_) {}\n"
"  const oom = e instanceof InternalError && e.message === 'out of memory';\n"
"  return [JSON.stringify({ status: 500, headers: [['content-type', 'text/plain; charset=utf-8']] }), encode(text + '\\n'), oom];\n"
"}\n"
"function dispatch(meta, body) {\n"
"  try { return handle(meta, body).then((ok) => ok, failure); } catch (e) { return Promise.resolve(failure(e)); }\n"
"}\n"
"return [useDefaultExport, ready, dispatch, modules];\n"
"})\n";

static bool has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && memcmp(s + a - b, suf, b) == 0;
}

static int set_import_meta(JSValueConst func, const char *name, bool main) {
    JSModuleDef *m = JS_VALUE_GET_PTR(func);
    JSValue meta = JS_GetImportMeta(ctx, m);
    if (JS_IsException(meta))
        return -1;
    size_t n = strlen(name);
    char *url = malloc(n + 8);
    if (!url) {
        JS_FreeValue(ctx, meta);
        return -1;
    }
    memcpy(url, "file://", 7);
    memcpy(url + 7, name, n + 1);
    JS_SetPropertyStr(ctx, meta, "url", JS_NewString(ctx, url));
    JS_SetPropertyStr(ctx, meta, "main", JS_NewBool(ctx, main));
    free(url);
    JS_FreeValue(ctx, meta);
    return 0;
}

static JSModuleDef *module_loader(JSContext *c, const char *name,
                                  void *opaque) {
    (void)opaque;
    /* A built-in module (fs, process, path, events ..., also as 'node:...'): an ES module over what
       require() gives, its exports named by the compat core (node_compat/core.js). */
    if (JS_IsFunction(c, fn_module_source)) {
        JSValue arg = JS_NewString(c, name);
        JSValue src = JS_Call(c, fn_module_source, JS_UNDEFINED, 1, &arg);
        JS_FreeValue(c, arg);
        if (JS_IsException(src))
            return NULL;
        if (JS_IsString(src)) {
            size_t n;
            const char *text = JS_ToCStringLen(c, &n, src);
            JS_FreeValue(c, src);
            if (!text)
                return NULL;
            JSValue f = JS_Eval(c, text, n, name, JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
            JS_FreeCString(c, text);
            if (JS_IsException(f))
                return NULL;
            JSModuleDef *m = JS_VALUE_GET_PTR(f);
            JS_FreeValue(c, f);
            return m;
        }
        JS_FreeValue(c, src);
    }
    size_t len;
    char *buf = read_file(name, &len);
    if (!buf) {
        JS_ThrowReferenceError(c, "could not load module '%s'", name);
        return NULL;
    }
    JSValue f = JS_Eval(c, buf, len, name,
                        JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    free(buf);
    if (JS_IsException(f))
        return NULL;
    set_import_meta(f, name, false);
    JSModuleDef *m = JS_VALUE_GET_PTR(f);
    JS_FreeValue(c, f);
    return m;
}

static int usage(void) {
    fputs("usage: qjs [--] FILE [args...]\n       qjs --repl\n"
          "       qjs --serve FILE [args...]\n", stderr);
    return 2;
}

/* ---- REPL mode ---------------------------------------------------------- */

#define REPL_CONTROL "/.session/control"
#define REPL_INTERRUPT "/.session/interrupt"
#define REPL_MAX_FRAME ((size_t)1 << 30)

static int ctl_fd = -1;
static int intr_fd = -1;

/* QuickJS calls this every JS_INTERRUPT_COUNTER_INIT (10000) operations; the
   flag is read on every INTERRUPT_POLL-th call (a host call costs as much as
   thousands of JS operations: this keeps the overhead near 1%, and an
   interrupt still lands within milliseconds). The same poll flushes what the
   eval printed so far, so a long eval's output streams (a flush with nothing
   buffered writes nothing). */
#define INTERRUPT_POLL 8
static int interrupt_handler(JSRuntime *r, void *opaque) {
    (void)r;
    (void)opaque;
    static unsigned calls;
    char c;
    if (draining)
        return 1;
    if (interrupted || ++calls % INTERRUPT_POLL != 0)
        return 0;
    fflush(stdout);
    fflush(stderr);
    if (pread(intr_fd, &c, 1, 0) != 1 || c != '1')
        return 0;
    interrupted = true;
    return 1;
}

/* wait(due) -> the monotonic clock in ms, for the timers: when `due` (ms on
   the same clock) is later, sleeps until then, what was printed flushed
   first so that it shows as it comes. A timer's wait runs no JS, so the
   interrupt handler cannot see Ctrl-C meanwhile: in a REPL eval the sleep
   goes in slices that read the flag, and an interrupt throws as the
   handler's does (uncatchable "InternalError: interrupted"). */
#define TIMER_SLICE_NS 20000000LL
static double monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* promiseState(p): what util.inspect shows of a promise, as Node does: [0] pending, [1, value]
   fulfilled, [2, reason] rejected (undefined for anything else). */
static JSValue js_promise_state(JSContext *c, JSValueConst this_val, int argc,
                                JSValueConst *argv) {
    (void)this_val;
    if (argc < 1 || !JS_IsPromise(argv[0]))
        return JS_UNDEFINED;
    JSValue out = JS_NewArray(c);
    int state = 0;
    switch (JS_PromiseState(c, argv[0])) {
    case JS_PROMISE_FULFILLED: state = 1; break;
    case JS_PROMISE_REJECTED: state = 2; break;
    default: break;
    }
    JS_SetPropertyUint32(c, out, 0, JS_NewInt32(c, state));
    if (state)
        JS_SetPropertyUint32(c, out, 1, JS_PromiseResult(c, argv[0]));
    return out;
}

static JSValue js_wait_until(JSContext *c, JSValueConst this_val, int argc,
                             JSValueConst *argv) {
    (void)this_val;
    double due = 0;
    if (argc > 0 && JS_ToFloat64(c, &due, argv[0]))
        return JS_EXCEPTION;
    double now = monotonic_ms();
    if (now < due) {
        fflush(stdout);
        fflush(stderr);
    }
    while (now < due) {
        long long left = (long long)((due - now) * 1e6) + 1;
        if (intr_fd >= 0 && left > TIMER_SLICE_NS)
            left = TIMER_SLICE_NS;
        struct timespec ts = { (time_t)(left / 1000000000LL), (long)(left % 1000000000LL) };
        nanosleep(&ts, NULL);
        char flag;
        if (intr_fd >= 0 && !draining && pread(intr_fd, &flag, 1, 0) == 1 && flag == '1') {
            interrupted = true;
            JS_ThrowInternalError(c, "interrupted");
            JSValue exc = JS_GetException(c);
            JS_SetUncatchableError(c, exc);
            return JS_Throw(c, exc);
        }
        now = monotonic_ms();
    }
    return JS_NewFloat64(c, now);
}

static bool read_all(int fd, char *buf, size_t len) {
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

static void write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        buf += w;
        len -= (size_t)w;
    }
}

/* One frame from stdin ("<decimal length>\n<bytes>"), NUL-terminated, or
   NULL at EOF or on a malformed header. */
static char *read_frame(size_t *plen) {
    size_t len = 0;
    int digits = 0;
    for (;;) {
        char c;
        if (!read_all(0, &c, 1))
            return NULL;
        if (c == '\n' && digits > 0)
            break;
        if (c < '0' || c > '9' || digits >= 19)
            return NULL;
        len = len * 10 + (size_t)(c - '0');
        digits++;
    }
    if (len > REPL_MAX_FRAME)
        return NULL;
    char *buf = malloc(len + 1);
    if (!buf)
        return NULL;
    if (!read_all(0, buf, len)) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    *plen = len;
    return buf;
}

/* InternalError: out of memory (what JS_ThrowOutOfMemory throws). */
static bool is_out_of_memory(JSValueConst exc) {
    if (!JS_IsError(exc))
        return false;
    JSValue m = JS_GetPropertyStr(ctx, exc, "message");
    bool oom = false;
    if (JS_IsString(m)) {
        const char *s = JS_ToCString(ctx, m);
        oom = s && strcmp(s, "out of memory") == 0;
        if (s)
            JS_FreeCString(ctx, s);
    } else if (JS_IsException(m)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
    }
    JS_FreeValue(ctx, m);
    return oom;
}

static const char *report_exception_status(JSValueConst exc) {
    bool oom = is_out_of_memory(exc);
    report(ctx, exc, "Uncaught ");
    return oom ? "oom\n" : "error\n";
}

/* After an interrupt: drop every timer and end the leftover promise jobs
   (each runs until its first interrupt poll; their errors are not reported),
   so nothing of the interrupted eval runs in the next one. */
static void cancel_pending_work(void) {
    JSValue drop = JS_TRUE;
    JS_FreeValue(ctx, JS_Call(ctx, fn_run_timer, JS_UNDEFINED, 1, &drop));
    draining = true;
    for (;;) {
        JSContext *c1;
        int r = JS_ExecutePendingJob(rt, &c1);
        if (r == 0)
            break;
        if (r < 0)
            JS_FreeValue(c1, JS_GetException(c1));
    }
    draining = false;
    while (n_rejections > 0) {
        n_rejections--;
        JS_FreeValue(ctx, rejections[n_rejections].promise);
        JS_FreeValue(ctx, rejections[n_rejections].reason);
    }
}

static const char *eval_input(const char *code, size_t len) {
    JSValue p = JS_Eval(ctx, code, len, "<input>",
                        JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_ASYNC);
    if (JS_IsException(p)) {
        JSValue exc = JS_GetException(ctx);
        const char *status = report_exception_status(exc);
        JS_FreeValue(ctx, exc);
        return status;
    }
    repl_promise = p;
    const char *status = run_loop() ? "error\n" : "ok\n";
    forget_rejection(p);
    repl_promise = JS_UNDEFINED;
    if (!JS_IsPromise(p)) {
        JS_FreeValue(ctx, p);
        return status;
    }
    switch (JS_PromiseState(ctx, p)) {
    case JS_PROMISE_FULFILLED: {
        JSValue box = JS_PromiseResult(ctx, p);
        JSValue v = JS_IsObject(box) ? JS_GetPropertyStr(ctx, box, "value")
                                     : JS_UNDEFINED;
        JSValue r = JS_Call(ctx, fn_echo, JS_UNDEFINED, 1, (JSValueConst *)&v);
        if (JS_IsException(r)) {
            JSValue exc = JS_GetException(ctx);
            status = report_exception_status(exc);
            JS_FreeValue(ctx, exc);
        }
        JS_FreeValue(ctx, r);
        JS_FreeValue(ctx, v);
        JS_FreeValue(ctx, box);
        break;
    }
    case JS_PROMISE_REJECTED: {
        JSValue reason = JS_PromiseResult(ctx, p);
        status = report_exception_status(reason);
        JS_FreeValue(ctx, reason);
        break;
    }
    default:
        fputs("Warning: this input's top-level await never settled\n", stderr);
        status = "error\n";
        break;
    }
    JS_FreeValue(ctx, p);
    return status;
}

static const char *repl_eval(const char *code, size_t len) {
    interrupted = false;
    timers_read_clock();
    const char *status = eval_input(code, len);
    if (interrupted) {
        cancel_pending_work();
        status = "error\n";
    }
    return status;
}

static int repl(void) {
    ctl_fd = open(REPL_CONTROL, O_WRONLY);
    if (ctl_fd < 0) {
        fputs("qjs: --repl runs only inside a Sandbox Playground session "
              "(no " REPL_CONTROL ")\n", stderr);
        return 2;
    }
    repl_mode = true;
    intr_fd = open(REPL_INTERRUPT, O_RDONLY);
    if (intr_fd >= 0)
        JS_SetInterruptHandler(rt, interrupt_handler, NULL);
    for (;;) {
        size_t len;
        char *code = read_frame(&len);
        if (!code)
            return 0;
        const char *status = repl_eval(code, len);
        free(code);
        fflush(stdout);
        fflush(stderr);
        write_all(ctl_fd, status, strlen(status));
    }
}

/* ---- serve mode (--serve), for Sandbox Playground's handler bridge ------ */

/* Write one response to the control channel, in one write:
   "response <n>\n" then n bytes: the JSON head ({"status", "headers"}),
   '\n', the body. */
static void send_response(const char *meta, size_t meta_len,
                          const uint8_t *body, size_t body_len) {
    char head[32];
    size_t payload = meta_len + 1 + body_len;
    int h = snprintf(head, sizeof head, "response %zu\n", payload);
    size_t total = (size_t)h + payload;
    char *buf = malloc(total);
    if (!buf) {
        fputs("qjs --serve: out of memory building a response\n", stderr);
        return;
    }
    memcpy(buf, head, (size_t)h);
    memcpy(buf + h, meta, meta_len);
    buf[h + meta_len] = '\n';
    if (body_len)
        memcpy(buf + h + meta_len + 1, body, body_len);
    fflush(stdout);
    fflush(stderr);
    write_all(ctl_fd, buf, total);
    free(buf);
}

static void send_error(const char *text) {
    static const char meta[] =
        "{\"status\":500,\"headers\":[[\"content-type\",\"text/plain; charset=utf-8\"]]}";
    send_response(meta, sizeof meta - 1, (const uint8_t *)text, strlen(text));
}

/* v = [meta, body, oom] from dispatch. */
static void send_result(JSValueConst v) {
    JSValue m = JS_GetPropertyUint32(ctx, v, 0);
    JSValue b = JS_GetPropertyUint32(ctx, v, 1);
    JSValue o = JS_GetPropertyUint32(ctx, v, 2);
    size_t meta_len = 0, body_len = 0;
    const char *meta = JS_IsString(m) ? JS_ToCStringLen(ctx, &meta_len, m) : NULL;
    const uint8_t *body = NULL;
    const char *str = NULL;
    JSValue hold = JS_UNDEFINED;
    if (meta && get_bytes(ctx, b, &body, &body_len, &str, &hold)) {
        send_response(meta, meta_len, body, body_len);
        release_bytes(ctx, str, hold);
    } else {
        report_pending_exception(ctx, "qjs --serve: bad response: ");
        send_error("Internal Server Error: the response could not be encoded\n");
    }
    if (meta)
        JS_FreeCString(ctx, meta);
    if (JS_ToBool(ctx, o))
        write_all(ctl_fd, "oom\n", 4);
    JS_FreeValue(ctx, m);
    JS_FreeValue(ctx, b);
    JS_FreeValue(ctx, o);
}

static int eval_file(const char *filename, bool serving, JSValue *exports);

static int serve(const char *filename) {
    ctl_fd = open(REPL_CONTROL, O_WRONLY);
    if (ctl_fd < 0) {
        fputs("qjs: --serve runs only inside Sandbox Playground's handler bridge "
              "(no " REPL_CONTROL ")\n", stderr);
        return 2;
    }
    repl_mode = true;
    stdin_is_channel = true;
    JSValue exports = JS_UNDEFINED;
    int status = eval_file(filename, true, &exports);
    if (status != 0)
        return status;
    JSValue r = JS_Call(ctx, fn_use_default, JS_UNDEFINED, 1, (JSValueConst *)&exports);
    JS_FreeValue(ctx, exports);
    if (JS_IsException(r)) {
        report_pending_exception(ctx, "Uncaught ");
        return 1;
    }
    JS_FreeValue(ctx, r);
    r = JS_Call(ctx, fn_ready, JS_UNDEFINED, 0, NULL);
    bool ok = JS_ToBool(ctx, r);
    JS_FreeValue(ctx, r);
    if (!ok)
        return 1;
    for (;;) {
        fflush(stdout);
        fflush(stderr);
        size_t len;
        char *frame = read_frame(&len);
        if (!frame)
            return 0;
        char *nl = memchr(frame, '\n', len);
        if (!nl) {
            free(frame);
            send_error("Bad Request: malformed frame\n");
            continue;
        }
        JSValue args[2];
        args[0] = JS_NewStringLen(ctx, frame, (size_t)(nl - frame));
        args[1] = JS_NewUint8ArrayCopy(ctx, (const uint8_t *)nl + 1,
                                       len - (size_t)(nl + 1 - frame));
        free(frame);
        timers_read_clock();
        JSValue p = JS_Call(ctx, fn_dispatch, JS_UNDEFINED, 2, (JSValueConst *)args);
        JS_FreeValue(ctx, args[0]);
        JS_FreeValue(ctx, args[1]);
        if (JS_IsException(p)) {
            report_pending_exception(ctx, "Uncaught ");
            send_error("Internal Server Error\n");
            continue;
        }
        repl_promise = p;
        run_until(p);
        forget_rejection(p);
        repl_promise = JS_UNDEFINED;
        switch (JS_PromiseState(ctx, p)) {
        case JS_PROMISE_FULFILLED: {
            JSValue v = JS_PromiseResult(ctx, p);
            send_result(v);
            JS_FreeValue(ctx, v);
            break;
        }
        case JS_PROMISE_REJECTED: {
            JSValue reason = JS_PromiseResult(ctx, p);
            report(ctx, reason, "Uncaught ");
            JS_FreeValue(ctx, reason);
            send_error("Internal Server Error\n");
            break;
        }
        default:
            fputs("qjs --serve: the handler's promise never settled "
                  "(nothing left to run)\n", stderr);
            send_error("Internal Server Error: the handler never answered\n");
            break;
        }
        JS_FreeValue(ctx, p);
    }
}

/* ---- running a file ----------------------------------------------------- */

/* Compile and evaluate `filename` (script or module), then run jobs and
   timers: all of them (run mode), or until the module's evaluation settled
   (serve mode; *exports then holds the module's default export). Returns
   the exit status (run mode: process.exitCode when all went well). */
/* Run mode: a module whose default export has fetch() is a web app. */
static void hint_if_served(JSModuleDef *mod) {
    JSValue ns = JS_GetModuleNamespace(ctx, mod);
    if (JS_IsException(ns)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return;
    }
    JSValue d = JS_GetPropertyStr(ctx, ns, "default");
    JSValue f = JS_IsObject(d) ? JS_GetPropertyStr(ctx, d, "fetch") : JS_UNDEFINED;
    if (JS_IsException(f) || JS_IsException(d))
        JS_FreeValue(ctx, JS_GetException(ctx));
    else if (JS_IsFunction(ctx, f))
        fputs("note: this program exports a fetch(request) handler: serve it "
              "with `playground serve` to answer HTTP requests\n", stderr);
    JS_FreeValue(ctx, f);
    JS_FreeValue(ctx, d);
    JS_FreeValue(ctx, ns);
}

static int eval_file(const char *filename, bool serving, JSValue *exports) {
    size_t len;
    char *src = read_file(filename, &len);
    if (!src) {
        fprintf(stderr, "qjs: cannot read file '%s'\n", filename);
        return 2;
    }

    /* decide script vs module, compile */
    bool is_module;
    JSValue func;
    if (has_suffix(filename, ".mjs")) {
        is_module = true;
        func = JS_Eval(ctx, src, len, filename,
                       JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY);
    } else {
        is_module = false;
        func = JS_Eval(ctx, src, len, filename,
                       JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY);
        if (JS_IsException(func) && !has_suffix(filename, ".cjs")) {
            JSValue script_exc = JS_GetException(ctx);
            JSValue mfunc = JS_Eval(ctx, src, len, filename,
                                    JS_EVAL_TYPE_MODULE |
                                        JS_EVAL_FLAG_COMPILE_ONLY);
            if (!JS_IsException(mfunc)) {
                is_module = true;
                func = mfunc;
                JS_FreeValue(ctx, script_exc);
            } else if (JS_DetectModule(src, len) ||
                       strstr(src, "import") || strstr(src, "export") ||
                       strstr(src, "await")) {
                /* looks like a module: its error is the relevant one */
                JS_FreeValue(ctx, script_exc);
                func = JS_EXCEPTION;
                is_module = true;
            } else {
                JS_FreeValue(ctx, JS_GetException(ctx));
                JS_Throw(ctx, script_exc);
                func = JS_EXCEPTION;
            }
        }
    }
    free(src);
    if (JS_IsException(func)) {
        report_pending_exception(ctx, "Uncaught ");
        return 1;
    }

    int status = 0;
    if (is_module) {
        set_import_meta(func, filename, true);
        JSModuleDef *mod = JS_VALUE_GET_PTR(func);
        JSValue promise = JS_EvalFunction(ctx, func);
        if (JS_IsException(promise)) {
            report_pending_exception(ctx, "Uncaught ");
            return 1;
        }
        forget_rejection(promise);
        if (serving) {
            repl_promise = promise;
            run_until(promise);
            repl_promise = JS_UNDEFINED;
        } else {
            status = run_loop();
        }
        if (status == 0 && JS_IsPromise(promise)) {
            forget_rejection(promise);
            switch (JS_PromiseState(ctx, promise)) {
            case JS_PROMISE_REJECTED: {
                JSValue reason = JS_PromiseResult(ctx, promise);
                report(ctx, reason, "Uncaught ");
                JS_FreeValue(ctx, reason);
                status = 1;
                break;
            }
            case JS_PROMISE_PENDING:
                fputs("Warning: Detected unsettled top-level await\n", stderr);
                status = 13;
                break;
            default:
                break;
            }
        }
        JS_FreeValue(ctx, promise);
        if (!serving && status == 0)
            hint_if_served(mod);
        if (serving && status == 0) {
            JSValue ns = JS_GetModuleNamespace(ctx, mod);
            if (JS_IsException(ns)) {
                report_pending_exception(ctx, "Uncaught ");
                return 1;
            }
            *exports = JS_GetPropertyStr(ctx, ns, "default");
            JS_FreeValue(ctx, ns);
            if (JS_IsException(*exports)) {
                *exports = JS_UNDEFINED;
                report_pending_exception(ctx, "Uncaught ");
                return 1;
            }
        }
    } else {
        JSValue r = JS_EvalFunction(ctx, func);
        if (JS_IsException(r)) {
            report_pending_exception(ctx, "Uncaught ");
            return 1;
        }
        JS_FreeValue(ctx, r);
        if (serving)
            run_until(JS_UNDEFINED);
        else
            status = run_loop();
    }
    if (status == 0 && !serving) {
        JSValue v = JS_Call(ctx, fn_exit_code, JS_UNDEFINED, 0, NULL);
        int code = 0;
        if (!JS_IsException(v))
            JS_ToInt32(ctx, &code, v);
        JS_FreeValue(ctx, v);
        status = code;
    }
    return status;
}

static JSValue call_layer(const char *src, size_t len, const char *name,
                          int argc, JSValue *argv) {
    JSValue f = JS_Eval(ctx, src, len, name, JS_EVAL_TYPE_GLOBAL);
    if (JS_IsException(f)) {
        JSValue e = JS_GetException(ctx);
        const char *s = JS_ToCString(ctx, e);
        fprintf(stderr, "qjs: %s failed: %s\n", name, s ? s : "?");
        finish(70);
    }
    JSValue fns = JS_Call(ctx, f, JS_UNDEFINED, argc, (JSValueConst *)argv);
    if (JS_IsException(fns)) {
        report_pending_exception(ctx, "qjs: setup failed: ");
        finish(70);
    }
    JS_FreeValue(ctx, f);
    for (int i = 0; i < argc; i++)
        JS_FreeValue(ctx, argv[i]);
    return fns;
}

/* ---- snapshot runs ------------------------------------------------------- */

/* (global, env object) -> ({argv, env}) -> FILE: applies a run's argv and
   environment as a cold start's set-up would have (bootstrap: scriptArgs,
   process.argv; make_env: process.env's target). */
static const char apply_run_js[] =
"(function (g, env) {\n"
"  return (run) => {\n"
"    const a = Array.from(run.argv, String).slice(1);\n"
"    if (a[0] === '--') a.shift();\n"
"    if (a.length === 0) throw new TypeError('no program in argv');\n"
"    const argv = ['qjs', ...a];\n"
"    g.process.argv = argv.slice();\n"
"    Object.defineProperty(g, 'scriptArgs', { value: argv.slice(1), writable: true, configurable: true, enumerable: false });\n"
"    for (const k of Object.keys(env)) delete env[k];\n"
"    for (const [k, v] of Object.entries(run.env)) if (k !== '') env[k] = String(v);\n"
"    return a[0];\n"
"  };\n"
"})\n";

static void snapshot_failed(const char *what) {
    report_pending_exception(ctx, what);
    finish(70);
}

/* The entry of a snapshot run (see "Snapshot runs" at the top). Never returns:
   the run ends in exit(), as a cold start's. */
__attribute__((export_name("qjs_snapshot_run")))
int qjs_snapshot_run(const char *source, int flags) {
    (void)flags;
    if (JS_IsUndefined(fn_apply_run)) {
        fputs("qjs: qjs_snapshot_run outside a snapshot\n", stderr);
        finish(70);
    }
    uint64_t seed = 0;
    if (getentropy(&seed, sizeof seed) != 0) {
        fputs("qjs: no entropy for Math.random\n", stderr);
        finish(70);
    }
    qjs_reseed_random(ctx, seed);
    JSValue run = JS_ParseJSON(ctx, source, strlen(source), "<qjs-snapshot-run>");
    if (JS_IsException(run))
        snapshot_failed("qjs: bad snapshot run: ");
    JSValue file = JS_Call(ctx, fn_apply_run, JS_UNDEFINED, 1, (JSValueConst *)&run);
    JS_FreeValue(ctx, run);
    if (JS_IsException(file))
        snapshot_failed("qjs: bad snapshot run: ");
    const char *filename = JS_ToCString(ctx, file);
    JS_FreeValue(ctx, file);
    if (!filename)
        snapshot_failed("qjs: bad snapshot run: ");
    finish(eval_file(filename, false, NULL));
    return 70;
}

enum Mode { MODE_RUN, MODE_REPL, MODE_SERVE };

int main(int argc, char **argv) {
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    setvbuf(stderr, errbuf, _IOFBF, sizeof errbuf);
    (void)chdir("/work"); /* the sandbox's working directory; stays "/" without one */

    int first = 1;
    enum Mode mode = MODE_RUN;
    bool snapshot = false;
    if (first < argc && strcmp(argv[first], "--snapshot") == 0) {
        snapshot = true;
        first++;
        if (first != argc)
            finish(usage());
    } else if (first < argc && strcmp(argv[first], "--repl") == 0) {
        mode = MODE_REPL;
        first++;
        if (first != argc)
            finish(usage());
    } else {
        if (first < argc && strcmp(argv[first], "--serve") == 0) {
            mode = MODE_SERVE;
            first++;
        }
        if (first < argc && strcmp(argv[first], "--") == 0)
            first++;
        if (first >= argc)
            finish(usage());
    }
    const char *filename = mode == MODE_REPL ? "<repl>" : snapshot ? "" : argv[first];

    rt = JS_NewRuntime();
    if (!rt) {
        fputs("qjs: cannot allocate JS runtime\n", stderr);
        finish(1);
    }
    /* The runtime's own layers set up under the default stack limit; the
       program's QJS_STACK_SIZE applies from the program on (below). */
    JS_SetMaxStackSize(rt, (size_t)JS_STACK_SIZE);
    const char *lim = getenv("QJS_MEMORY_LIMIT");
    if (lim && *lim)
        JS_SetMemoryLimit(rt, (size_t)strtoull(lim, NULL, 10));
    JS_SetModuleLoaderFunc(rt, NULL, module_loader, NULL);
    JS_SetHostPromiseRejectionTracker(rt, rejection_tracker, NULL);
    ctx = JS_NewContext(rt);
    if (!ctx) {
        fputs("qjs: cannot allocate JS context\n", stderr);
        finish(1);
    }

    /* bootstrap: console, timers, process */
    JSValue bargs[5];
    bargs[0] = JS_NewCFunction(ctx, js_write, "write", 2);
    bargs[1] = JS_NewCFunction(ctx, js_exit, "exit", 1);
    bargs[3] = JS_NewCFunction(ctx, js_wait_until, "wait", 1);
    bargs[4] = JS_NewCFunction(ctx, js_promise_state, "promiseState", 1);
    bargs[2] = JS_NewArray(ctx);
    JS_SetPropertyUint32(ctx, bargs[2], 0, JS_NewString(ctx, "qjs"));
    for (int i = first; i < argc; i++)
        JS_SetPropertyUint32(ctx, bargs[2], (uint32_t)(i - first + 1),
                             JS_NewString(ctx, argv[i]));
    JSValue fns = call_layer(bootstrap_js, sizeof bootstrap_js - 1,
                             "<qjs-bootstrap>", 5, bargs);
    fn_format_error = JS_GetPropertyUint32(ctx, fns, 0);
    fn_run_timer = JS_GetPropertyUint32(ctx, fns, 1);
    fn_exit_code = JS_GetPropertyUint32(ctx, fns, 2);
    fn_echo = JS_GetPropertyUint32(ctx, fns, 3);
    JSValue inspect = JS_GetPropertyUint32(ctx, fns, 4);
    JSValue format = JS_GetPropertyUint32(ctx, fns, 5);
    JS_FreeValue(ctx, fns);

    /* the node-like layer: fs, require, process.env, Web-style Request/Response */
    JSValue native = make_native(ctx);
    bargs[0] = JS_DupValue(ctx, native);
    JSValue env_target = snapshot ? JS_GetPropertyStr(ctx, bargs[0], "env") : JS_UNDEFINED;
    bargs[1] = JS_NewCFunction(ctx, js_write, "write", 2);
    bargs[2] = JS_DupValue(ctx, fn_format_error);
    bargs[3] = JS_NewString(ctx, mode == MODE_SERVE ? "serve" : mode == MODE_REPL ? "repl" : "run");
    fns = call_layer(node_js, sizeof node_js - 1, "<qjs-node>", 4, bargs);
    fn_use_default = JS_GetPropertyUint32(ctx, fns, 0);
    fn_ready = JS_GetPropertyUint32(ctx, fns, 1);
    fn_dispatch = JS_GetPropertyUint32(ctx, fns, 2);
    JSValue sources = JS_NewObject(ctx);
    for (size_t i = 0; i < sizeof node_compat_files / sizeof node_compat_files[0]; i++)
        JS_SetPropertyStr(ctx, sources, node_compat_files[i].name,
                          JS_NewStringLen(ctx, node_compat_files[i].source, node_compat_files[i].length));
    JSValue cargs[5] = {native, JS_GetPropertyUint32(ctx, fns, 3), inspect, format, sources};
    JS_FreeValue(ctx, fns);

    /* the Node compatibility layer: CommonJS, path, events, util, assert, crypto, Buffer, URL ...
       (its core now; each module's file when a program first uses it) */
    fn_module_source = call_layer(node_compat_core, sizeof node_compat_core - 1, "<qjs-compat>", 5, cargs);
    const char *ss = getenv("QJS_STACK_SIZE");
    if (ss && *ss)
        JS_SetMaxStackSize(rt, (size_t)strtoull(ss, NULL, 10));

    if (snapshot) {
        JSValue preload = JS_GetPropertyStr(ctx, fn_module_source, "preload");
        JSValue made = JS_Call(ctx, preload, JS_UNDEFINED, 0, NULL);
        if (JS_IsException(made)) {
            report_pending_exception(ctx, "qjs: making the Node modules failed: ");
            finish(70);
        }
        JS_FreeValue(ctx, made);
        JS_FreeValue(ctx, preload);
        /* Collect now: what set-up left over is freed in the image, and the next collection's threshold
           is set from what stays, so a short run does not start one over the whole set-up's heap. */
        JS_RunGC(rt);
        JSValue sargs[2] = {JS_GetGlobalObject(ctx), env_target};
        JSValue apply = call_layer(apply_run_js, sizeof apply_run_js - 1,
                                   "<qjs-snapshot>", 2, sargs);
        struct timespec res;
        fn_apply_run = apply;
        /* The snapshot point: the sandbox's capture stops the guest here. */
        clock_getres(CLOCK_REALTIME, &res);
        fn_apply_run = JS_UNDEFINED;
        JS_FreeValue(ctx, apply);
        fputs("qjs: --snapshot is for the sandbox's capture\n", stderr);
        finish(2);
    }
    if (mode == MODE_REPL) {
        stdin_is_channel = true;
        stdin_path = REPL_KEYBOARD;
        finish(repl());
    }
    if (mode == MODE_SERVE)
        finish(serve(filename));
    /* No JS_FreeRuntime: the process ends here; freeing costs time. */
    finish(eval_file(filename, false, NULL));
    return 0;
}
