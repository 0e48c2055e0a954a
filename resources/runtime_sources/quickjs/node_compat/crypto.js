/* crypto (node_compat/core.js loads this file on first use). */
(function (x) {
'use strict';
const { g, define, lazy, typeError, str, describe, inspect, format, show, CUSTOM, HEX, native, load } = x;
const { Buffer, bytesFromString, stringFromBytes } = load('buffer');
/* ---- hashes (MD5, SHA-1, SHA-256), HMAC, random values ---- */
function md5(m) {
  const K = [], S = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
  for (let i = 0; i < 64; i++) K[i] = Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) >>> 0;
  const n = ((m.length + 8) >> 6) + 1, w = new Uint32Array(n * 16);
  for (let i = 0; i < m.length; i++) w[i >> 2] |= m[i] << ((i % 4) * 8);
  w[m.length >> 2] |= 0x80 << ((m.length % 4) * 8);
  w[n * 16 - 2] = (m.length * 8) >>> 0; w[n * 16 - 1] = Math.floor(m.length / 2 ** 29);
  let a0 = 0x67452301, b0 = 0xefcdab89, c0 = 0x98badcfe, d0 = 0x10325476;
  for (let o = 0; o < w.length; o += 16) {
    let a = a0, b = b0, c = c0, d = d0;
    for (let i = 0; i < 64; i++) {
      const r = i >> 4;
      let f, k;
      if (r === 0) { f = (b & c) | (~b & d); k = i; } else if (r === 1) { f = (d & b) | (~d & c); k = (5 * i + 1) & 15; }
      else if (r === 2) { f = b ^ c ^ d; k = (3 * i + 5) & 15; } else { f = c ^ (b | ~d); k = (7 * i) & 15; }
      const s = S[r * 4 + (i & 3)], t = (a + f + K[i] + w[o + k]) | 0;
      a = d; d = c; c = b; b = (b + ((t << s) | (t >>> (32 - s)))) | 0;
    }
    a0 = (a0 + a) | 0; b0 = (b0 + b) | 0; c0 = (c0 + c) | 0; d0 = (d0 + d) | 0;
  }
  const out = new Uint8Array(16);
  [a0, b0, c0, d0].forEach((v, i) => { for (let j = 0; j < 4; j++) out[i * 4 + j] = (v >>> (8 * j)) & 255; });
  return out;
}
function bigEndianBlocks(m) {
  const n = ((m.length + 8) >> 6) + 1, w = new Uint32Array(n * 16);
  for (let i = 0; i < m.length; i++) w[i >> 2] |= m[i] << (24 - (i % 4) * 8);
  w[m.length >> 2] |= 0x80 << (24 - (m.length % 4) * 8);
  w[n * 16 - 1] = (m.length * 8) >>> 0; w[n * 16 - 2] = Math.floor(m.length / 2 ** 29);
  return w;
}
function wordsOut(h) { const out = new Uint8Array(h.length * 4); h.forEach((v, i) => { for (let j = 0; j < 4; j++) out[i * 4 + j] = (v >>> (24 - 8 * j)) & 255; }); return out; }
function sha1(m) {
  const w = bigEndianBlocks(m), h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0], x = new Uint32Array(80);
  for (let o = 0; o < w.length; o += 16) {
    for (let i = 0; i < 80; i++) x[i] = i < 16 ? w[o + i] : ((v) => (v << 1) | (v >>> 31))(x[i - 3] ^ x[i - 8] ^ x[i - 14] ^ x[i - 16]);
    let [a, b, c, d, e] = h;
    for (let i = 0; i < 80; i++) {
      const f = i < 20 ? (b & c) | (~b & d) : i < 40 ? b ^ c ^ d : i < 60 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
      const k = i < 20 ? 0x5a827999 : i < 40 ? 0x6ed9eba1 : i < 60 ? 0x8f1bbcdc : 0xca62c1d6;
      const t = (((a << 5) | (a >>> 27)) + f + e + k + x[i]) | 0;
      e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
    }
    h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0; h[4] = (h[4] + e) | 0;
  }
  return wordsOut(h);
}
const K256 = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
function sha256(m) {
  const w = bigEndianBlocks(m), h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19], x = new Uint32Array(64);
  const rot = (v, n) => (v >>> n) | (v << (32 - n));
  for (let o = 0; o < w.length; o += 16) {
    for (let i = 0; i < 64; i++) {
      if (i < 16) x[i] = w[o + i];
      else x[i] = (rot(x[i - 15], 7) ^ rot(x[i - 15], 18) ^ (x[i - 15] >>> 3)) + x[i - 16] + (rot(x[i - 2], 17) ^ rot(x[i - 2], 19) ^ (x[i - 2] >>> 10)) + x[i - 7];
    }
    let [a, b, c, d, e, f, gg, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rot(e, 6) ^ rot(e, 11) ^ rot(e, 25)) + ((e & f) ^ (~e & gg)) + K256[i] + x[i]) | 0;
      const t2 = ((rot(a, 2) ^ rot(a, 13) ^ rot(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = gg; gg = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + gg) | 0; h[7] = (h[7] + hh) | 0;
  }
  return wordsOut(h);
}
const HASHES = { md5: [md5, 64], sha1: [sha1, 64], 'sha-1': [sha1, 64], sha256: [sha256, 64], 'sha-256': [sha256, 64] };
function hashOf(algorithm) {
  const h = HASHES[String(algorithm).toLowerCase()];
  if (!h) throw Object.assign(new Error('Digest method not supported: ' + algorithm + ' (this sandbox has md5, sha1 and sha256)'), { code: 'ERR_CRYPTO_INVALID_DIGEST' });
  return h;
}
const toBytes = (data, enc) => typeof data === 'string' ? bytesFromString(data, enc) : new Uint8Array(data.buffer || data, data.byteOffset || 0, data.byteLength);
function digestOut(bytes, enc) { const b = Buffer.from(bytes); return enc === undefined ? b : b.toString(enc); }
class Hash {
  constructor(algorithm, key) { this._hash = hashOf(algorithm); this._chunks = []; this._key = key; this._done = false; }
  update(data, enc) { if (this._done) throw Object.assign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' }); this._chunks.push(toBytes(data, enc)); return this; }
  digest(enc) {
    if (this._done) throw Object.assign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
    this._done = true;
    const [fn, block] = this._hash, data = Buffer.concat(this._chunks);
    if (this._key === undefined) return digestOut(fn(data), enc);
    let key = this._key.length > block ? fn(this._key) : this._key;
    const pad = (x) => { const b = new Uint8Array(block); for (let i = 0; i < block; i++) b[i] = (key[i] || 0) ^ x; return b; };
    return digestOut(fn(Buffer.concat([pad(0x5c), fn(Buffer.concat([pad(0x36), data]))])), enc);
  }
  copy() { const h = new Hash('md5'); Object.assign(h, this, { _chunks: this._chunks.slice() }); return h; }
}
function getRandomValues(array) {
  if (!ArrayBuffer.isView(array) || array instanceof Float32Array || array instanceof Float64Array || array instanceof DataView)
    throw typeError('The data argument must be an integer-type TypedArray', 'ERR_INVALID_ARG_TYPE');
  if (array.byteLength > 65536) { const e = new Error("The ArrayBufferView's byte length (" + array.byteLength + ') exceeds the number of bytes of entropy available via this API (65536)'); e.name = 'QuotaExceededError'; throw e; }
  new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(native.random(array.byteLength));
  return array;
}
function randomUUID() {
  const b = native.random(16);
  b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
  const h = stringFromBytes(b, 'hex');
  return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
}
function randomInt(min, max, done) {
  if (max === undefined || typeof max === 'function') { done = max; max = min; min = 0; }
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max <= min) throw Object.assign(new RangeError('The value of "max" is out of range. It must be greater than the value of "min" (' + min + ')'), { code: 'ERR_OUT_OF_RANGE' });
  const range = max - min, limit = Math.floor(2 ** 48 / range) * range;
  let v;
  do { const b = native.random(6); v = b.reduce((acc, x) => acc * 256 + x, 0); } while (v >= limit);
  const r = min + (v % range);
  if (typeof done === 'function') { Promise.resolve().then(() => done(null, r)); return undefined; }
  return r;
}
const subtle = {
  async digest(algorithm, data) {
    const name = typeof algorithm === 'string' ? algorithm : algorithm && algorithm.name;
    const fn = HASHES[String(name).toLowerCase()];
    if (!fn || String(name).toLowerCase() === 'md5') { const e = new Error('Unrecognized algorithm name (this sandbox has SHA-1 and SHA-256)'); e.name = 'NotSupportedError'; throw e; }
    return fn[0](toBytes(data)).buffer;
  },
};
const webcrypto = { getRandomValues, randomUUID, subtle };
const crypto = {
  createHash: (algorithm) => new Hash(algorithm),
  createHmac: (algorithm, key) => new Hash(algorithm, toBytes(key)),
  getHashes: () => ['md5', 'sha1', 'sha256'],
  hash: (algorithm, data, enc = 'hex') => new Hash(algorithm).update(data).digest(enc),
  randomBytes(n, done) { const b = Buffer.from(native.random(n)); if (typeof done === 'function') { Promise.resolve().then(() => done(null, b)); return undefined; } return b; },
  randomFillSync: (b) => getRandomValues(b),
  randomUUID, randomInt, getRandomValues, webcrypto, subtle,
  timingSafeEqual(a, b) { if (a.byteLength !== b.byteLength) throw Object.assign(new RangeError('Input buffers must have the same byte length'), { code: 'ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH' }); let d = 0; for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i]; return d === 0; },
};
return { crypto, webcrypto };
})
