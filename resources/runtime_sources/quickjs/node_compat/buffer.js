/* buffer (node_compat/core.js loads this file on first use). */
(function (x) {
'use strict';
const { g, define, lazy, typeError, str, describe, inspect, format, show, CUSTOM, HEX, native, load } = x;
/* ---- Buffer ---- */
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function base64Encode(bytes, url) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
    s += B64[n >> 18] + B64[(n >> 12) & 63] + (i + 1 < bytes.length ? B64[(n >> 6) & 63] : '=') + (i + 2 < bytes.length ? B64[n & 63] : '=');
  }
  return url ? s.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : s;
}
function base64Decode(s) {
  const clean = String(s).replace(/[-_]/g, (c) => c === '-' ? '+' : '/').replace(/[^A-Za-z0-9+/]/g, '');
  const out = new Uint8Array(Math.floor(clean.length * 3 / 4));
  let bits = 0, acc = 0, n = 0;
  for (const c of clean) { acc = (acc << 6) | B64.indexOf(c); bits += 6; if (bits >= 8) { bits -= 8; out[n++] = (acc >> bits) & 255; } }
  return out.subarray(0, n);
}
const ENCODINGS = ['utf8', 'utf-8', 'hex', 'base64', 'base64url', 'latin1', 'binary', 'ascii', 'ucs2', 'ucs-2', 'utf16le', 'utf-16le'];
function normEnc(enc) {
  const e = enc === undefined || enc === null ? 'utf8' : String(enc).toLowerCase();
  if (!ENCODINGS.includes(e)) throw typeError('Unknown encoding: ' + enc, 'ERR_UNKNOWN_ENCODING');
  return e === 'utf-8' ? 'utf8' : e === 'binary' ? 'latin1' : e === 'ucs2' || e === 'ucs-2' || e === 'utf-16le' ? 'utf16le' : e;
}
function bytesFromString(s, enc) {
  switch (normEnc(enc)) {
  case 'utf8': return native.encode(s);
  case 'hex': { const n = s.length >> 1, out = new Uint8Array(n); let i = 0; for (; i < n; i++) { const v = parseInt(s.substr(i * 2, 2), 16); if (Number.isNaN(v)) break; out[i] = v; } return out.subarray(0, i); }
  case 'base64': case 'base64url': return base64Decode(s);
  case 'latin1': case 'ascii': { const out = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 255; return out; }
  case 'utf16le': { const out = new Uint8Array(s.length * 2); for (let i = 0; i < s.length; i++) { const c = s.charCodeAt(i); out[2 * i] = c & 255; out[2 * i + 1] = c >> 8; } return out; }
  }
  return native.encode(s);
}
function stringFromBytes(b, enc) {
  switch (normEnc(enc)) {
  case 'utf8': return native.decode(b);
  case 'hex': { let s = ''; for (const x of b) s += HEX[x >> 4] + HEX[x & 15]; return s; }
  case 'base64': return base64Encode(b, false);
  case 'base64url': return base64Encode(b, true);
  case 'latin1': { let s = ''; for (let i = 0; i < b.length; i += 4096) s += String.fromCharCode.apply(null, b.subarray(i, i + 4096)); return s; }
  case 'ascii': { let s = ''; for (const x of b) s += String.fromCharCode(x & 127); return s; }
  case 'utf16le': { let s = ''; for (let i = 0; i + 1 < b.length; i += 2) s += String.fromCharCode(b[i] | (b[i + 1] << 8)); return s; }
  }
  return native.decode(b);
}
class Buffer extends Uint8Array {
  static from(value, encOrOffset, length) {
    if (typeof value === 'string') { const b = bytesFromString(value, encOrOffset); return new Buffer(b.buffer, b.byteOffset, b.length); }
    if (value instanceof ArrayBuffer) return new Buffer(value, encOrOffset || 0, length === undefined ? value.byteLength - (encOrOffset || 0) : length);
    if (ArrayBuffer.isView(value)) { const b = new Buffer(value.byteLength); b.set(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)); return b; }
    if (Array.isArray(value)) { const b = new Buffer(value.length); for (let i = 0; i < value.length; i++) b[i] = value[i]; return b; }
    if (value && typeof value === 'object') {
      if (value.type === 'Buffer' && Array.isArray(value.data)) return Buffer.from(value.data);
      if (typeof value.length === 'number') return Buffer.from(Array.from(value));
      if (typeof value[Symbol.toPrimitive] === 'function' || typeof value.valueOf === 'function') { const p = value.valueOf(); if (p !== value) return Buffer.from(p, encOrOffset, length); }
    }
    throw typeError('The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object. Received ' + describe(value), 'ERR_INVALID_ARG_TYPE');
  }
  static alloc(size, fill, enc) { const b = new Buffer(size); if (fill !== undefined && fill !== 0) b.fill(fill, 0, b.length, enc); return b; }
  static allocUnsafe(size) { return new Buffer(size); }
  static allocUnsafeSlow(size) { return new Buffer(size); }
  static isBuffer(v) { return v instanceof Buffer; }
  static isEncoding(e) { return typeof e === 'string' && ENCODINGS.includes(e.toLowerCase()); }
  static byteLength(v, enc) { return typeof v === 'string' ? bytesFromString(v, enc).length : v.byteLength; }
  static concat(list, total) {
    if (total === undefined) total = list.reduce((n, b) => n + b.length, 0);
    const out = Buffer.alloc(total);
    let at = 0;
    for (const b of list) { if (at >= total) break; const part = b.subarray(0, total - at); out.set(part, at); at += part.length; }
    return out;
  }
  static compare(a, b) { return a.compare(b); }
  toString(enc, start = 0, end = this.length) { return stringFromBytes(this.subarray(start, end), enc); }
  toJSON() { return { type: 'Buffer', data: Array.from(this) }; }
  equals(other) { return this.compare(other) === 0; }
  compare(other) { const n = Math.min(this.length, other.length); for (let i = 0; i < n; i++) if (this[i] !== other[i]) return this[i] < other[i] ? -1 : 1; return this.length === other.length ? 0 : this.length < other.length ? -1 : 1; }
  slice(start, end) { return this.subarray(start, end); }
  write(s, offset = 0, length, enc) {
    if (typeof offset === 'string') { enc = offset; offset = 0; } else if (typeof length === 'string') { enc = length; length = undefined; }
    const b = bytesFromString(s, enc).subarray(0, Math.min(length === undefined ? Infinity : length, this.length - offset));
    this.set(b, offset);
    return b.length;
  }
  fill(value, start = 0, end = this.length, enc) {
    if (typeof start === 'string') { enc = start; start = 0; end = this.length; }
    if (typeof value === 'string') {
      const b = bytesFromString(value, enc);
      if (!b.length) return Uint8Array.prototype.fill.call(this, 0, start, end);
      for (let i = start, j = 0; i < end; i++, j = (j + 1) % b.length) this[i] = b[j];
      return this;
    }
    return Uint8Array.prototype.fill.call(this, value, start, end);
  }
  indexOf(v, from, enc) { if (typeof v === 'string' || ArrayBuffer.isView(v)) return find(this, typeof v === 'string' ? bytesFromString(v, enc) : v, from || 0); return Uint8Array.prototype.indexOf.call(this, v, from); }
  includes(v, from, enc) { return this.indexOf(v, from, enc) !== -1; }
  [CUSTOM]() { let s = ''; for (let i = 0; i < Math.min(this.length, 50); i++) s += ' ' + HEX[this[i] >> 4] + HEX[this[i] & 15]; return '<Buffer' + s + (this.length > 50 ? ' ... ' + (this.length - 50) + ' more bytes' : '') + '>'; }
}
function find(hay, needle, from) {
  outer: for (let i = from < 0 ? Math.max(hay.length + from, 0) : from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
const view = (b) => new DataView(b.buffer, b.byteOffset, b.byteLength);
for (const [name, get, set, size] of [
  ['UInt8', 'getUint8', 'setUint8', 1], ['Int8', 'getInt8', 'setInt8', 1], ['UInt16', 'getUint16', 'setUint16', 2], ['Int16', 'getInt16', 'setInt16', 2],
  ['UInt32', 'getUint32', 'setUint32', 4], ['Int32', 'getInt32', 'setInt32', 4], ['Float', 'getFloat32', 'setFloat32', 4], ['Double', 'getFloat64', 'setFloat64', 8],
  ['BigUInt64', 'getBigUint64', 'setBigUint64', 8], ['BigInt64', 'getBigInt64', 'setBigInt64', 8],
]) {
  for (const end of size === 1 ? [''] : ['LE', 'BE']) {
    const le = end === 'LE';
    const read = function (offset = 0) { return view(this)[get](offset, le); };
    const write = function (value, offset = 0) { view(this)[set](offset, value, le); return offset + size; };
    for (const n of name.startsWith('UInt') ? [name, 'Uint' + name.slice(4)] : name.startsWith('BigUInt') ? [name, 'BigUint' + name.slice(7)] : [name]) {
      define(Buffer.prototype, 'read' + n + end, read);
      define(Buffer.prototype, 'write' + n + end, write);
    }
  }
}
const buffer = { Buffer, constants: { MAX_LENGTH: 2 ** 31 - 1 }, kMaxLength: 2 ** 31 - 1, atob: g.atob, btoa: g.btoa };
const string_decoder = {
  StringDecoder: class StringDecoder {
    constructor(enc) { this.encoding = normEnc(enc); this.pending = new Uint8Array(0); }
    write(b) {
      let all = new Uint8Array(this.pending.length + b.length); all.set(this.pending); all.set(b, this.pending.length);
      if (this.encoding !== 'utf8') { this.pending = new Uint8Array(0); return stringFromBytes(all, this.encoding); }
      let cut = all.length;
      for (let i = Math.max(0, all.length - 3); i < all.length; i++) {
        const c = all[i], need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
        if (need && i + need > all.length) { cut = i; break; }
      }
      this.pending = all.slice(cut);
      return native.decode(all.subarray(0, cut));
    }
    end(b) { const s = b ? this.write(b) : ''; const rest = this.pending.length ? native.decode(this.pending) : ''; this.pending = new Uint8Array(0); return s + rest; }
  },
};
return { buffer, string_decoder, Buffer, bytesFromString, stringFromBytes };
})
