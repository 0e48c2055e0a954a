const crypto = require('crypto');
for (const alg of ['md5', 'sha1', 'sha256']) console.log(alg, crypto.createHash(alg).update('').digest('hex'), crypto.createHash(alg).update('The quick brown fox jumps over the lazy dog').digest('base64'));
console.log(crypto.createHash('sha256').update('a'.repeat(1000)).update(Buffer.from('bc')).digest('hex'));
console.log(crypto.createHmac('sha256', 'key').update('The quick brown fox jumps over the lazy dog').digest('hex'));
console.log(crypto.createHmac('md5', 'k'.repeat(100)).update('x').digest('hex'), crypto.createHmac('sha1', Buffer.from('key')).update('msg').digest('hex'));
const id = crypto.randomUUID();
console.log(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id), id !== crypto.randomUUID());
const r = crypto.randomBytes(16); console.log(r.length, Buffer.isBuffer(r), r.toString('hex').length);
let ok = true; for (let i = 0; i < 200; i++) { const v = crypto.randomInt(3, 7); if (v < 3 || v >= 7) ok = false; } console.log('randomInt in range', ok);
console.log(crypto.timingSafeEqual(Buffer.from('ab'), Buffer.from('ab')), crypto.timingSafeEqual(Buffer.from('ab'), Buffer.from('ac')));
const arr = crypto.getRandomValues(new Uint32Array(4)); console.log(arr.length, arr.some((x) => x !== 0));
crypto.webcrypto.subtle.digest('SHA-256', new TextEncoder().encode('abc')).then((d) => console.log('subtle', Buffer.from(d).toString('hex')));
try { crypto.createHash('no-such-hash'); } catch (e) { console.log('unsupported digest throws'); }
