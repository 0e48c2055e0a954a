/* assert (node_compat/core.js loads this file on first use). */
(function (x) {
'use strict';
const { g, define, lazy, typeError, str, describe, inspect, format, show, CUSTOM, HEX, native, load } = x;
const { deepEqual } = load('util');
/* ---- assert ---- */
class AssertionError extends Error {
  constructor(options) {
    super(options.message);
    this.name = 'AssertionError';
    this.code = 'ERR_ASSERTION';
    this.actual = options.actual; this.expected = options.expected; this.operator = options.operator;
    this.generatedMessage = !options.given;
  }
}
function fail(message, actual, expected, operator, generated) {
  if (message instanceof Error) throw message;
  /* Node counts "Missing expected exception/rejection" as the caller's message (generatedMessage false). */
  const given = message !== undefined || operator === 'throws' || operator === 'rejects';
  throw new AssertionError({ message: message === undefined ? generated : message, given, actual, expected, operator });
}
const pair = (a, op, b) => show(a) + ' ' + op + ' ' + show(b);
function check(mode) {
  const loose = mode === 'loose';
  const a = (value, message) => a.ok(value, message);
  Object.assign(a, {
    AssertionError,
    ok(value, message) { if (!value) fail(message, value, true, '==', 'The expression evaluated to a falsy value:\n\n  assert.ok(' + show(value) + ')\n'); },
    fail(message = 'Failed') { fail(message, undefined, undefined, 'fail', 'Failed'); },
    equal(x, y, m) { if (loose ? !(x == y || (x !== x && y !== y)) : !Object.is(x, y)) fail(m, x, y, loose ? '==' : 'strictEqual', loose ? pair(x, '==', y) : 'Expected values to be strictly equal:\n\n' + pair(x, '!==', y) + '\n'); },
    notEqual(x, y, m) { if (loose ? x == y : Object.is(x, y)) fail(m, x, y, loose ? '!=' : 'notStrictEqual', 'Expected "actual" to be strictly unequal to: ' + show(y)); },
    strictEqual(x, y, m) { if (!Object.is(x, y)) fail(m, x, y, 'strictEqual', 'Expected values to be strictly equal:\n\n' + pair(x, '!==', y) + '\n'); },
    notStrictEqual(x, y, m) { if (Object.is(x, y)) fail(m, x, y, 'notStrictEqual', 'Expected "actual" to be strictly unequal to: ' + show(y)); },
    deepEqual(x, y, m) { if (!deepEqual(x, y, !loose, [])) fail(m, x, y, loose ? 'deepEqual' : 'deepStrictEqual', 'Expected values to be ' + (loose ? 'loosely' : 'strictly') + ' deep-equal:\n\n' + show(x) + '\n\nshould equal\n\n' + show(y)); },
    deepStrictEqual(x, y, m) { if (!deepEqual(x, y, true, [])) fail(m, x, y, 'deepStrictEqual', 'Expected values to be strictly deep-equal:\n\n' + show(x) + '\n\nshould equal\n\n' + show(y)); },
    notDeepEqual(x, y, m) { if (deepEqual(x, y, !loose, [])) fail(m, x, y, 'notDeepEqual', '"actual" deepEqual "expected": ' + show(x)); },
    notDeepStrictEqual(x, y, m) { if (deepEqual(x, y, true, [])) fail(m, x, y, 'notDeepStrictEqual', 'Expected "actual" not to be strictly deep-equal to: ' + show(y)); },
    match(s, re, m) { if (!re.test(s)) fail(m, s, re, 'match', 'The input did not match the regular expression ' + String(re) + '. Input:\n\n' + show(s) + '\n'); },
    doesNotMatch(s, re, m) { if (re.test(s)) fail(m, s, re, 'doesNotMatch', 'The input was expected to not match the regular expression ' + String(re) + '. Input:\n\n' + show(s) + '\n'); },
    ifError(v) { if (v !== null && v !== undefined) { if (v instanceof Error) throw v; fail(undefined, v, null, 'ifError', 'ifError got unwanted exception: ' + show(v)); } },
    throws(fn, expected, m) {
      if (typeof expected === 'string') { m = expected; expected = undefined; }
      try { fn(); } catch (e) { matches(e, expected, m, 'throws'); return; }
      fail(m, undefined, expected, 'throws', 'Missing expected exception' + (expected && expected.name ? ' (' + expected.name + ').' : '.'));
    },
    doesNotThrow(fn, m) { try { fn(); } catch (e) { fail(typeof m === 'string' ? m : undefined, e, undefined, 'doesNotThrow', 'Got unwanted exception.\nActual message: "' + (e && e.message) + '"'); } },
    async rejects(p, expected, m) {
      if (typeof expected === 'string') { m = expected; expected = undefined; }
      try { await (typeof p === 'function' ? p() : p); } catch (e) { matches(e, expected, m, 'rejects'); return; }
      fail(m, undefined, expected, 'rejects', 'Missing expected rejection' + (expected && expected.name ? ' (' + expected.name + ').' : '.'));
    },
    async doesNotReject(p, m) { try { await (typeof p === 'function' ? p() : p); } catch (e) { fail(typeof m === 'string' ? m : undefined, e, undefined, 'doesNotReject', 'Got unwanted rejection.\nActual message: "' + (e && e.message) + '"'); } },
  });
  if (!loose) Object.assign(a, { equal: a.strictEqual, notEqual: a.notStrictEqual, deepEqual: a.deepStrictEqual, notDeepEqual: a.notDeepStrictEqual });
  return a;
}
function matches(e, expected, m, op) {
  if (expected === undefined) return;
  if (typeof expected === 'function' && expected.prototype !== undefined && e instanceof expected) return;
  if (expected instanceof RegExp) { if (expected.test(String(e))) return; fail(m, e, expected, op, 'The input did not match the regular expression ' + String(expected) + '. Input:\n\n' + show(String(e)) + '\n'); }
  if (typeof expected === 'function') { if (expected.prototype !== undefined && Error.isPrototypeOf(expected)) throw e; if (expected(e) === true) return; fail(m, e, expected, op, 'The validation function is expected to return "true". Received ' + show(expected(e))); }
  if (typeof expected === 'object' && expected !== null) {
    for (const k of Object.keys(expected)) {
      const want = expected[k], got = e[k];
      if (want instanceof RegExp && typeof got === 'string' ? !want.test(got) : !deepEqual(got, want, true, [])) fail(m, e, expected, op, 'Expected values to be strictly deep-equal:\n\n' + show(got) + '\n\nshould equal\n\n' + show(want) + ' (property ' + k + ')');
    }
  }
}
const assertLoose = check('loose'), assertStrict = check('strict');
assertLoose.strict = assertStrict; assertStrict.strict = assertStrict;
return { assert: assertLoose, 'assert/strict': assertStrict };
})
