const os = require('os');
console.log(typeof os.platform(), os.EOL === '\n', typeof os.cpus().length, typeof os.tmpdir(), typeof os.homedir());
const sc = structuredClone({ d: new Date(0), m: new Map([[1, [2]]]), s: new Set([1]), n: null, nested: { a: [1, { b: 2 }] } });
console.log(sc.d instanceof Date, sc.d.getTime(), sc.m.get(1), sc.s.has(1), JSON.stringify(sc.nested));
const cyc = { name: 'c' }; cyc.self = cyc; const cc = structuredClone(cyc); console.log(cc.self === cc, cc !== cyc);
try { structuredClone({ f() {} }); } catch (e) { console.log(e.name); }
const { setTimeout: wait } = require('timers/promises');
wait(5, 'waited').then((v) => console.log(v));
const { StringDecoder } = require('string_decoder');
const dec = new StringDecoder('utf8'); const euro = Buffer.from('€');
console.log(JSON.stringify(dec.write(euro.subarray(0, 1)) + dec.write(euro.subarray(1)) + dec.end()));
console.log(typeof require('timers').setTimeout, typeof setImmediate);
