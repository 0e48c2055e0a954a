// How console.log, util.inspect and console.dir lay values out: one line when they fit, arrays of more
// than six entries in aligned columns, the depth option, empty objects past the depth limit.
const util = require('util');
const cases = [
  Array.from({ length: 30 }, (_, i) => i),
  Array.from({ length: 8 }, (_, i) => 'item' + i),
  Array.from({ length: 120 }, (_, i) => i * 1000),
  [1.5, 22, 333, -4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27],
  { list: Array.from({ length: 30 }, (_, i) => 'w' + i) },
  Array.from({ length: 8 }, (_, i) => ({ a: i })),
  [{ name: 'alice', age: 30, tags: ['a', 'b'] }, { name: 'bob', age: 25, tags: [] }, { name: 'carol', age: 35, tags: ['c'] }],
  { a: { b: { c: {} } } }, [[[[]]]], { a: { b: { c: { d: 1 } } } }, [[[[1]]]],
  { k: 'x'.repeat(62) }, { k: 'x'.repeat(63) },
  { a: 'x'.repeat(20), b: 'y'.repeat(20), c: 'z'.repeat(20) },
  { outer: { inner: Array.from({ length: 20 }, (_, i) => i * 7) } },
  new Map([['a', 1], ['b', { c: [1, 2, 3] }]]), new Set(Array.from({ length: 10 }, (_, i) => i)),
  Array.from({ length: 10 }, (_, i) => [i, i * i]),
  [true, false, null, undefined, 1, 'a', 2n, 3, 4],
  Array.from({ length: 7 }, (_, i) => 'x'.repeat(i * 5)),
  { matrix: [[1, 2, 3], [4, 5, 6], [7, 8, 9]] },
  Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i)),
  new Uint8Array(20),
  Object.assign([1, 2, 3, 4, 5, 6, 7], { extra: 'x' }),
  Array.from({ length: 150 }, (_, i) => i),
  { a: { b: Array.from({ length: 40 }, (_, i) => i * 3) } },
  Array.from({ length: 9 }, (_, i) => 'long string number ' + i + ' with words'),
  Array.from({ length: 8 }, (_, i) => ({ id: i, label: 'entry ' + i, nested: { v: i } })),
  [1, , 3, , , 6, 7, 8, 9],
  new Map(Array.from({ length: 9 }, (_, i) => [i, 'v' + i])),
  [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12], [13, 14]],
  { s: new Set([1, 2]), m: new Map(), e: [], o: {} },
  Array.from({ length: 12 }, (_, i) => -i * 1.25),
];
for (const value of cases) console.log(value);
console.log(["it's", 'say "hi"', 'both \' and "', 'all \' " `', 'tpl ${x} \' "', 'ctl \x00\x07\b\t\n\x0b\f\r\x1b\x7f', 'back\\slash']);
console.log([() => 1, function named() {}, async function af() {}, async () => 2, function* gen() {}, async function* ag() {}, class K {}, class {}]);
console.log({ "key'q": 1, 'k"2': 2 }, util.inspect("it's"));
const pending = new Promise(() => {});
const rejected = Promise.reject('no');
rejected.catch(() => {});
async function early() { return 1; }
async function later() { await null; return 2; }
console.log(Promise.resolve(5), pending, rejected, early(), later(), { p: Promise.resolve({ a: [1, 2] }) });
console.log([Promise.resolve(Promise.resolve('nested'))], { d: { e: { f: Promise.resolve(1) } } });
class Point { constructor(x, y) { this.x = x; this.y = y; } }
console.log({ d: { e: { f: new Point(5, 6) } } }, [new Point(1, 2)]);
const page = { users: [{ id: 1, name: 'Ann', roles: ['admin', 'dev'] }, { id: 2, name: 'Bo', roles: [] }], total: 2, page: { n: 1, of: 3 } };
for (const depth of [0, 1, 3, null, undefined]) console.log(util.inspect(page, { depth }));
console.log(util.inspect(page, false, 0), util.inspect('text'), util.inspect(5, { depth: 0 }));
console.dir(page);
console.dir(page, { depth: null });
console.dir(page, { depth: 0 });
console.group('grouped');
console.dir(page, { depth: 1 });
console.log(Array.from({ length: 20 }, (_, i) => i));
console.groupEnd();
const sleep = util.promisify(setTimeout);
const nextTurn = util.promisify(setImmediate);
(async () => {
  const started = Date.now();
  console.log(await sleep(20, 'slept'), Date.now() - started >= 15);
  console.log(await nextTurn('next turn'));
})();
