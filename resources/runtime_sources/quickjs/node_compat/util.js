/* util (node_compat/core.js loads this file on first use). */
(function (x) {
'use strict';
const { g, define, lazy, typeError, str, describe, inspectWith, format, show, CUSTOM, HEX, native, load } = x;
/* ---- deep equality (assert, util.isDeepStrictEqual) ---- */
function deepEqual(a, b, strict, memo) {
  if (strict ? Object.is(a, b) : (a == b || (a !== a && b !== b))) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const tag = Object.prototype.toString.call(a);
  if (tag !== Object.prototype.toString.call(b)) return false;
  if (memo.some(([x, y]) => x === a && y === b)) return true;
  memo.push([a, b]);
  try {
    if (a instanceof Date) return Object.is(a.getTime(), b.getTime());
    if (a instanceof RegExp) return String(a) === String(b) && a.lastIndex === b.lastIndex;
    if (a instanceof Error && (a.message !== b.message || a.name !== b.name)) return false;
    if (ArrayBuffer.isView(a)) {
      if (a.length !== b.length) return false;
      for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i]) && !(!strict && a[i] == b[i])) return false;
    }
    if (a instanceof Map) {
      if (a.size !== b.size) return false;
      for (const [k, v] of a) { if (!b.has(k) || !deepEqual(v, b.get(k), strict, memo)) return false; }
    } else if (a instanceof Set) {
      if (a.size !== b.size) return false;
      outer: for (const v of a) {
        if (b.has(v)) continue;
        if (typeof v === 'object' && v !== null) for (const w of b) if (deepEqual(v, w, strict, memo)) continue outer;
        return false;
      }
    }
    const own = (o) => Object.keys(o).filter((k) => !(ArrayBuffer.isView(o) && /^\d+$/.test(k)));
    const ka = own(a), kb = own(b);
    if (ka.length !== kb.length) return false;
    for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k], strict, memo)) return false;
    if (strict) {
      const sa = Object.getOwnPropertySymbols(a).filter((s) => Object.prototype.propertyIsEnumerable.call(a, s));
      const sb = Object.getOwnPropertySymbols(b).filter((s) => Object.prototype.propertyIsEnumerable.call(b, s));
      if (sa.length !== sb.length) return false;
      for (const s of sa) if (!deepEqual(a[s], b[s], strict, memo)) return false;
    }
    return true;
  } finally { memo.pop(); }
}

/* ---- util ---- */
function promisify(fn) {
  if (typeof fn !== 'function') throw typeError('The "original" argument must be of type function', 'ERR_INVALID_ARG_TYPE');
  if (typeof fn[promisify.custom] === 'function') return fn[promisify.custom];
  return function (...args) { return new Promise((resolve, reject) => { fn.call(this, ...args, (err, ...values) => err ? reject(err) : resolve(values.length > 1 ? values : values[0])); }); };
}
promisify.custom = Symbol.for('nodejs.util.promisify.custom');
const isObj = (tag) => (v) => Object.prototype.toString.call(v) === '[object ' + tag + ']';
const util = {
  format: (...args) => format(args).slice(0, -1),
  inspect: Object.assign((v, options, ...old) => inspectWith(v, typeof options === 'boolean' ? old[0] : options || {}),
    { custom: CUSTOM, defaultOptions: {} }),
  promisify,
  callbackify: (fn) => function (...args) { const done = args.pop(); fn.apply(this, args).then((v) => done(null, v), (e) => done(e)); },
  inherits(ctor, superCtor) { Object.setPrototypeOf(ctor.prototype, superCtor.prototype); Object.setPrototypeOf(ctor, superCtor); define(ctor, 'super_', superCtor); },
  deprecate: (fn) => fn,
  debuglog: () => Object.assign(() => {}, { enabled: false }),
  isDeepStrictEqual: (a, b) => deepEqual(a, b, true, []),
  isArray: Array.isArray,
  stripVTControlCharacters: (s) => str(s, 'str').replace(/\u001b\[[0-9;]*[A-Za-z]/g, ''),
  styleText: (styles, text) => str(text, 'text'),
  types: {
    isDate: isObj('Date'), isRegExp: isObj('RegExp'), isMap: isObj('Map'), isSet: isObj('Set'), isPromise: isObj('Promise'),
    isNativeError: (v) => v instanceof Error, isTypedArray: (v) => ArrayBuffer.isView(v) && !(v instanceof DataView),
    isUint8Array: (v) => v instanceof Uint8Array, isArrayBuffer: (v) => v instanceof ArrayBuffer,
    isAsyncFunction: isObj('AsyncFunction'), isGeneratorFunction: (v) => /^\[object (Async)?GeneratorFunction\]$/.test(Object.prototype.toString.call(v)),
  },
  TextEncoder: g.TextEncoder, TextDecoder: g.TextDecoder,
};
return { util, deepEqual };
})
