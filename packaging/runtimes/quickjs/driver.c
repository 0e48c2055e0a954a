/*
 * qjs: a small command-line driver for QuickJS-NG, built to wasm32-wasi.
 * Sandbox Playground's own source (QuickJS itself comes from the PyPI
 * quickjs-ng sdist at build time; see packaging/runtimes/install.py).
 *
 * Usage: qjs [--] FILE [args...]
 *        qjs --repl
 *
 * - FILE is read with stdio (WASI). It is compiled as a classic script; if
 *   that is a SyntaxError and it compiles as a module (import/export/top-level
 *   await), it runs as a module (like node's module-syntax detection). *.mjs
 *   always runs as a module, *.cjs always as a script. Relative imports are
 *   loaded from files.
 * - Globals: console.{log,info,debug,error,warn,trace,dir,assert}, print,
 *   scriptArgs ([FILE, ...args]), process.{argv,exit,exitCode},
 *   setTimeout/clearTimeout/setInterval/clearInterval (virtual clock: timers
 *   run in deadline order without sleeping), queueMicrotask (QuickJS).
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
 *   status travels there; program output never does.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "quickjs.h"

#define JS_STACK_SIZE (512 * 1024)

static JSRuntime *rt;
static JSContext *ctx;
static JSValue fn_format_error; /* (err) -> string */
static JSValue fn_run_timer;    /* () -> bool (ran one) */
static JSValue fn_exit_code;    /* () -> int (process.exitCode) */
static JSValue fn_echo;         /* (v) -> undefined: console.log(v) unless v is undefined */

/* REPL mode: the eval's own promise is not an "unhandled rejection"; errors
   in jobs are reported and the loop goes on. */
static bool repl_mode;
static JSValue repl_promise = JS_UNDEFINED;

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

/* Run promise jobs and timers until nothing is left. 0 = ok, 1 = error.
   In REPL mode an error is reported and the loop goes on. */
static int run_loop(void) {
    int status = 0;
    for (;;) {
        for (;;) {
            JSContext *c1;
            int r = JS_ExecutePendingJob(rt, &c1);
            if (r == 0)
                break;
            if (r < 0) {
                report_pending_exception(c1, "Uncaught ");
                if (!repl_mode)
                    return 1;
                status = 1;
            }
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
"(function (write, exit, argv) {\n"
"'use strict';\n"
"const g = globalThis;\n"
"const fnToString = Function.prototype.toString;\n"
"function quote(s) {\n"
"  return \"'\" + s.replace(/[\\\\'\\n\\r\\t]/g, (c) => ({'\\\\': '\\\\\\\\', \"'\": \"\\\\'\", '\\n': '\\\\n', '\\r': '\\\\r', '\\t': '\\\\t'})[c]) + \"'\";\n"
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
"function wrap(prefix, open, parts, close) {\n"
"  if (parts.length === 0) return prefix + open + close;\n"
"  const one = prefix + open + ' ' + parts.join(', ') + ' ' + close;\n"
"  if (one.length <= 72 && !one.includes('\\n')) return one;\n"
"  return prefix + open + '\\n' + parts.map((p) => '  ' + p.split('\\n').join('\\n  ')).join(',\\n') + '\\n' + close;\n"
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
"    return '[' + (cls ? 'class ' : 'Function: ') + (v.name || '(anonymous)') + ']';\n"
"  }\n"
"  }\n"
"  if (v === null) return 'null';\n"
"  if (seen.includes(v)) return '[Circular]';\n"
"  if (v instanceof Error) return formatError(v);\n"
"  if (v instanceof Date) return isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();\n"
"  if (v instanceof RegExp) return String(v);\n"
"  if (v instanceof Promise) return 'Promise { <unknown> }';\n"
"  if (v instanceof WeakMap) return 'WeakMap { <items unknown> }';\n"
"  if (v instanceof WeakSet) return 'WeakSet { <items unknown> }';\n"
"  if (v instanceof Number || v instanceof String || v instanceof Boolean)\n"
"    return '[' + v.constructor.name + ': ' + inspect(v.valueOf(), depth, seen, false) + ']';\n"
"  const isArr = Array.isArray(v);\n"
"  if (depth > 2) return isArr ? '[Array]' : '[Object]';\n"
"  seen.push(v);\n"
"  try {\n"
"    const parts = [];\n"
"    let prefix = '', open = '{', close = '}', skipIndex = false;\n"
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
"    return wrap(prefix, open, parts, close);\n"
"  } finally { seen.pop(); }\n"
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
"const process = { argv: argv.slice(), env: {}, exitCode: undefined, exit: (c) => exit(c === undefined ? process.exitCode : c) };\n"
"define(g, 'process', process);\n"
"/* timers: binary heap on (time, seq); virtual clock, no sleeping */\n"
"let now = 0, seq = 0, nextId = 1;\n"
"const heap = [], live = new Map();\n"
"const less = (a, b) => a.t < b.t || (a.t === b.t && a.seq < b.seq);\n"
"function push(x) { heap.push(x); let i = heap.length - 1; while (i > 0) { const p = (i - 1) >> 1; if (!less(heap[i], heap[p])) break; [heap[i], heap[p]] = [heap[p], heap[i]]; i = p; } }\n"
"function pop() { const top = heap[0], last = heap.pop(); if (heap.length) { heap[0] = last; let i = 0; for (;;) { const l = 2 * i + 1, r = l + 1; let m = i; if (l < heap.length && less(heap[l], heap[m])) m = l; if (r < heap.length && less(heap[r], heap[m])) m = r; if (m === i) break; [heap[i], heap[m]] = [heap[m], heap[i]]; i = m; } } return top; }\n"
"function add(fn, ms, args, repeat) {\n"
"  if (typeof fn !== 'function') throw new TypeError('The \"callback\" argument must be of type function');\n"
"  ms = Number(ms); if (!(ms >= 1)) ms = repeat ? 1 : 0;\n"
"  const x = { id: nextId++, t: now + ms, seq: seq++, fn, args, iv: repeat ? ms : -1 };\n"
"  live.set(x.id, x); push(x); return x.id;\n"
"}\n"
"const clear = (id) => { live.delete(typeof id === 'number' ? id : Number(id)); };\n"
"define(g, 'setTimeout', (fn, ms, ...args) => add(fn, ms, args, false));\n"
"define(g, 'setInterval', (fn, ms, ...args) => add(fn, ms, args, true));\n"
"define(g, 'clearTimeout', clear);\n"
"define(g, 'clearInterval', clear);\n"
"function runTimer() {\n"
"  while (heap.length) {\n"
"    const x = pop();\n"
"    if (live.get(x.id) !== x) continue;\n"
"    if (x.t > now) now = x.t;\n"
"    if (x.iv >= 0) { x.t = now + x.iv; x.seq = seq++; push(x); } else live.delete(x.id);\n"
"    x.fn.apply(undefined, x.args);\n"
"    return true;\n"
"  }\n"
"  return false;\n"
"}\n"
"const exitCode = () => { const c = process.exitCode; return c === undefined ? 0 : Number(c) | 0; };\n"
"const echo = (v) => { if (v !== undefined) write(1, format([v])); };\n"
"return [formatError, runTimer, exitCode, echo];\n"
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
    fputs("usage: qjs [--] FILE [args...]\n       qjs --repl\n", stderr);
    return 2;
}

/* ---- REPL mode ---------------------------------------------------------- */

#define REPL_CONTROL "/.session/control"
#define REPL_MAX_FRAME ((size_t)1 << 30)

static int ctl_fd = -1;

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

static const char *repl_eval(const char *code, size_t len) {
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

static int repl(void) {
    ctl_fd = open(REPL_CONTROL, O_WRONLY);
    if (ctl_fd < 0) {
        fputs("qjs: --repl runs only inside a Sandbox Playground session "
              "(no " REPL_CONTROL ")\n", stderr);
        return 2;
    }
    repl_mode = true;
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

int main(int argc, char **argv) {
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    setvbuf(stderr, errbuf, _IOFBF, sizeof errbuf);

    int first = 1;
    bool want_repl = first < argc && strcmp(argv[first], "--repl") == 0;
    if (want_repl) {
        first++;
        if (first != argc)
            finish(usage());
    } else {
        if (first < argc && strcmp(argv[first], "--") == 0)
            first++;
        if (first >= argc)
            finish(usage());
    }
    const char *filename = want_repl ? "<repl>" : argv[first];

    rt = JS_NewRuntime();
    if (!rt) {
        fputs("qjs: cannot allocate JS runtime\n", stderr);
        finish(1);
    }
    const char *ss = getenv("QJS_STACK_SIZE");
    JS_SetMaxStackSize(rt, ss && *ss ? (size_t)strtoull(ss, NULL, 10)
                                     : (size_t)JS_STACK_SIZE);
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

    /* bootstrap */
    JSValue boot = JS_Eval(ctx, bootstrap_js, sizeof bootstrap_js - 1,
                           "<qjs-bootstrap>", JS_EVAL_TYPE_GLOBAL);
    if (JS_IsException(boot)) {
        JSValue e = JS_GetException(ctx);
        const char *s = JS_ToCString(ctx, e);
        fprintf(stderr, "qjs: bootstrap failed: %s\n", s ? s : "?");
        finish(70);
    }
    JSValue bargs[3];
    bargs[0] = JS_NewCFunction(ctx, js_write, "write", 2);
    bargs[1] = JS_NewCFunction(ctx, js_exit, "exit", 1);
    bargs[2] = JS_NewArray(ctx);
    JS_SetPropertyUint32(ctx, bargs[2], 0, JS_NewString(ctx, "qjs"));
    for (int i = first; i < argc; i++)
        JS_SetPropertyUint32(ctx, bargs[2], (uint32_t)(i - first + 1),
                             JS_NewString(ctx, argv[i]));
    JSValue fns = JS_Call(ctx, boot, JS_UNDEFINED, 3, bargs);
    if (JS_IsException(fns)) {
        fputs("qjs: bootstrap failed\n", stderr);
        finish(70);
    }
    fn_format_error = JS_GetPropertyUint32(ctx, fns, 0);
    fn_run_timer = JS_GetPropertyUint32(ctx, fns, 1);
    fn_exit_code = JS_GetPropertyUint32(ctx, fns, 2);
    fn_echo = JS_GetPropertyUint32(ctx, fns, 3);
    JS_FreeValue(ctx, fns);
    for (int i = 0; i < 3; i++)
        JS_FreeValue(ctx, bargs[i]);
    JS_FreeValue(ctx, boot);

    if (want_repl)
        finish(repl());

    size_t len;
    char *src = read_file(filename, &len);
    if (!src) {
        fprintf(stderr, "qjs: cannot read file '%s'\n", filename);
        finish(2);
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
        finish(1);
    }

    int status = 0;
    if (is_module) {
        set_import_meta(func, filename, true);
        JSValue promise = JS_EvalFunction(ctx, func);
        if (JS_IsException(promise)) {
            report_pending_exception(ctx, "Uncaught ");
            finish(1);
        }
        forget_rejection(promise);
        status = run_loop();
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
    } else {
        JSValue r = JS_EvalFunction(ctx, func);
        if (JS_IsException(r)) {
            report_pending_exception(ctx, "Uncaught ");
            finish(1);
        }
        JS_FreeValue(ctx, r);
        status = run_loop();
    }
    if (status == 0) {
        JSValue v = JS_Call(ctx, fn_exit_code, JS_UNDEFINED, 0, NULL);
        int code = 0;
        if (!JS_IsException(v))
            JS_ToInt32(ctx, &code, v);
        JS_FreeValue(ctx, v);
        status = code;
    }
    /* No JS_FreeRuntime: the process ends here; freeing costs time. */
    finish(status);
    return status;
}
