const util = require('util');
const assert = require('assert');
console.log(util.format('%s has %d items costing %i, %j', 'cart', 3, 42.9, { a: 1 }), util.format('a', 'b', 1));
console.log(util.inspect({ a: [1, 2], s: 'x' }), util.isDeepStrictEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), util.isDeepStrictEqual([1], ['1']));
const sleep = util.promisify((ms, cb) => setTimeout(() => cb(null, ms * 2), ms));
sleep(5).then((v) => console.log('promisified', v));
assert.strictEqual(1 + 1, 2); assert.deepStrictEqual({ a: [1, new Map([[1, { x: 1 }]])] }, { a: [1, new Map([[1, { x: 1 }]])] });
assert.ok(true); assert(1); assert.equal('1', 1); assert.deepEqual({ a: 1 }, { a: '1' }); assert.notStrictEqual(1, 2);
assert.throws(() => { throw new TypeError('bad'); }, TypeError); assert.throws(() => { throw new Error('nope'); }, /nope/);
assert.throws(() => { throw Object.assign(new Error('x'), { code: 'E1' }); }, { code: 'E1' });
for (const f of [() => assert.strictEqual(1, 2), () => assert.deepStrictEqual({ a: 1 }, { a: 2 }), () => assert.ok(0), () => assert.throws(() => {}), () => assert.strictEqual(1, 2, 'my message'), () => assert.deepStrictEqual([1], ['1']), () => assert.notDeepStrictEqual({ a: 1 }, { a: 1 })]) {
  try { f(); console.log('no throw'); } catch (e) { console.log(e.name, e.code, e.generatedMessage, JSON.stringify(e.operator)); }
}
assert.rejects(Promise.reject(new Error('r')), /r/).then(() => console.log('rejects ok'));
const strict = require('assert').strict;
try { strict.equal('1', 1); } catch (e) { console.log('strict equal', e.code); }
console.log(typeof require('assert/strict').deepEqual, util.types.isDate(new Date()), util.types.isRegExp(/x/));
