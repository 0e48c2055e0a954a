/* url (node_compat/core.js loads this file on first use). */
(function (x) {
'use strict';
const { g, define, lazy, typeError, str, describe, inspect, format, show, CUSTOM, HEX, native, load } = x;
const { path } = load('path');
/* ---- URL, URLSearchParams, url ---- */
const SET_SEARCH = Symbol('setSearch'), ATTACH = Symbol('attach'), REPARSE = Symbol('reparse');
const SPECIAL = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443', 'ftp:': '21', 'file:': '' };
const encodeSet = (re) => (s) => s.replace(re, (c) => Array.from(native.encode(c), (b) => '%' + HEX[b >> 4].toUpperCase() + HEX[b & 15].toUpperCase()).join(''));
const encodePath = encodeSet(/[\u0000-\u0020"#<>?`{}\u007f-\uffff]/g), encodeQuery = encodeSet(/[\u0000-\u0020"#<>'\u007f-\uffff]/g);
const encodeFragment = encodeSet(/[\u0000-\u0020"<>`\u007f-\uffff]/g), encodeUser = encodeSet(/[\u0000-\u0020"#<>?`{}/:;=@[\\\]^|\u007f-\uffff]/g);
function invalidURL(input) { const e = new TypeError('Invalid URL'); e.code = 'ERR_INVALID_URL'; e.input = input; return e; }
function dotSegments(p) {
  const out = [], segs = p.split('/');
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i], last = i === segs.length - 1;
    if (s === '..' || s.toLowerCase() === '%2e%2e') { if (out.length) out.pop(); if (last) out.push(''); }
    else if (s === '.' || s.toLowerCase() === '%2e') { if (last) out.push(''); }
    else out.push(s);
  }
  return '/' + out.join('/');
}
function parseURL(input, base) {
  let s = String(input).replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
  const u = { protocol: '', username: '', password: '', hostname: '', port: '', pathname: '', search: '', hash: '', opaque: false, authority: false };
  const hashAt = s.indexOf('#');
  if (hashAt >= 0) { u.hash = '#' + encodeFragment(s.slice(hashAt + 1)); s = s.slice(0, hashAt); if (u.hash === '#') u.hash = ''; }
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(s);
  if (m) {
    u.protocol = m[1].toLowerCase() + ':';
    s = s.slice(m[0].length);
    if (u.protocol in SPECIAL) {
      if (base && base.protocol === u.protocol && !/^[/\\]/.test(s)) return relative(u, s, base);
      if (u.protocol === 'file:') s = /^[/\\]{2}/.test(s) ? s : '//' + (/^[/\\]/.test(s) ? s : '/' + s);
      else s = s.replace(/^[/\\]*/, '//');
    }
  } else {
    if (!base) throw invalidURL(input);
    return relative(u, s, base);
  }
  return rest(u, s, input);
}
function rest(u, s, input) {
  const special = u.protocol in SPECIAL;
  if (s.startsWith('//') || (special && s.startsWith('\\\\'))) {
    s = s.slice(2);
    u.authority = true;
    const end = s.search(special ? /[/\\?]/ : /[/?]/), authority = end < 0 ? s : s.slice(0, end);
    s = end < 0 ? '' : s.slice(end);
    const at = authority.lastIndexOf('@');
    let host = authority;
    if (at >= 0) { const cred = authority.slice(0, at), colon = cred.indexOf(':'); u.username = encodeUser(colon < 0 ? cred : cred.slice(0, colon)); u.password = colon < 0 ? '' : encodeUser(cred.slice(colon + 1)); host = authority.slice(at + 1); }
    const hm = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(host);
    if (!hm) throw invalidURL(input);
    u.hostname = special ? hm[1].toLowerCase() : hm[1];
    if (special && u.protocol !== 'file:' && !u.hostname) throw invalidURL(input);
    if (/[\u0000\t\n\r #/:<>?@[\\\]^|%]/.test(u.hostname.replace(/^\[.*\]$/, ''))) throw invalidURL(input);
    const port = hm[2] || '';
    if (port && Number(port) > 65535) throw invalidURL(input);
    u.port = port === '' || port === SPECIAL[u.protocol] ? '' : String(Number(port));
  } else if (!special) {
    const q = s.indexOf('?');
    u.pathname = q < 0 ? s : s.slice(0, q);
    if (q >= 0) u.search = '?' + encodeQuery(s.slice(q + 1));
    if (u.search === '?') u.search = '';
    u.opaque = !u.pathname.startsWith('/');
    if (!u.opaque) u.pathname = dotSegments(encodePath(u.pathname));
    return u;
  }
  const q = s.indexOf('?');
  let p = q < 0 ? s : s.slice(0, q);
  if (q >= 0) u.search = '?' + encodeQuery(s.slice(q + 1));
  if (u.search === '?') u.search = '';
  if (special) p = p.replace(/\\/g, '/');
  u.pathname = p || special ? dotSegments(encodePath(p || '/')) : '';
  return u;
}
function relative(u, s, base) {
  Object.assign(u, { protocol: base.protocol, username: base.username, password: base.password, hostname: base.hostname, port: base.port, authority: base.authority });
  const special = u.protocol in SPECIAL;
  if (s.startsWith('//') || (special && /^[/\\]{2}/.test(s))) return rest(u, s, s);
  if (base.opaque && !s) { u.pathname = base.pathname; u.search = base.search; u.opaque = true; return u; }
  if (base.opaque) throw invalidURL(s);
  const q = s.indexOf('?');
  let p = q < 0 ? s : s.slice(0, q);
  if (special) p = p.replace(/\\/g, '/');
  if (q >= 0) u.search = '?' + encodeQuery(s.slice(q + 1));
  if (u.search === '?') u.search = '';
  if (!p) { u.pathname = base.pathname; if (q < 0) u.search = base.search; return u; }
  if (p.startsWith('/')) { u.pathname = dotSegments(encodePath(p)); return u; }
  const dir = base.pathname.slice(0, base.pathname.lastIndexOf('/') + 1) || '/';
  u.pathname = dotSegments(encodePath(dir + p));
  return u;
}
const formEncode = (s) => Array.from(native.encode(String(s)), (b) => /[A-Za-z0-9*\-._]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : b === 32 ? '+' : '%' + HEX[b >> 4].toUpperCase() + HEX[b & 15].toUpperCase()).join('');
function formDecode(s) {
  const bytes = [];
  s = s.replace(/\+/g, ' ');
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%' && /^[0-9a-fA-F]{2}$/.test(s.substr(i + 1, 2))) { bytes.push(parseInt(s.substr(i + 1, 2), 16)); i += 2; }
    else for (const b of native.encode(s[i] + (/[\ud800-\udbff]/.test(s[i]) && i + 1 < s.length ? s[++i] : ''))) bytes.push(b);
  }
  return native.decode(new Uint8Array(bytes));
}
class URLSearchParams {
  #list = []; #url = null;
  constructor(init) {
    if (init === undefined || init === null) return;
    if (typeof init === 'string') this.#parse(init);
    else if (typeof init === 'object' && typeof init[Symbol.iterator] === 'function') for (const pairOf of init) { const p = Array.from(pairOf); if (p.length !== 2) throw typeError('Each query pair must be an iterable [name, value] tuple', 'ERR_INVALID_TUPLE'); this.#list.push([String(p[0]), String(p[1])]); }
    else if (typeof init === 'object') for (const k of Object.keys(init)) this.#list.push([k, String(init[k])]);
    else this.#parse(String(init));
  }
  #parse(s) { this.#list = []; for (const part of s.replace(/^\?/, '').split('&')) { if (!part) continue; const eq = part.indexOf('='); this.#list.push(eq < 0 ? [formDecode(part), ''] : [formDecode(part.slice(0, eq)), formDecode(part.slice(eq + 1))]); } }
  static [ATTACH](params, url, search) { params.#url = url; params.#parse(search); }
  static [REPARSE](params, search) { params.#parse(search); }
  #changed() { if (this.#url) this.#url[SET_SEARCH](this.toString()); }
  get size() { return this.#list.length; }
  append(k, v) { this.#list.push([String(k), String(v)]); this.#changed(); }
  delete(k, v) { k = String(k); this.#list = this.#list.filter(([a, b]) => a !== k || (v !== undefined && b !== String(v))); this.#changed(); }
  get(k) { k = String(k); const e = this.#list.find(([a]) => a === k); return e ? e[1] : null; }
  getAll(k) { k = String(k); return this.#list.filter(([a]) => a === k).map(([, b]) => b); }
  has(k, v) { k = String(k); return this.#list.some(([a, b]) => a === k && (v === undefined || b === String(v))); }
  set(k, v) {
    k = String(k); v = String(v);
    const i = this.#list.findIndex(([a]) => a === k);
    if (i < 0) this.#list.push([k, v]); else { this.#list[i] = [k, v]; this.#list = this.#list.filter(([a], j) => a !== k || j === i); }
    this.#changed();
  }
  sort() { this.#list.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0); this.#changed(); }
  forEach(fn, self) { for (const [k, v] of this.#list) fn.call(self, v, k, this); }
  *entries() { for (const [k, v] of this.#list) yield [k, v]; }
  *keys() { for (const [k] of this.#list) yield k; }
  *values() { for (const [, v] of this.#list) yield v; }
  [Symbol.iterator]() { return this.entries(); }
  toString() { return this.#list.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&'); }
  [CUSTOM]() { return 'URLSearchParams {' + (this.#list.length ? ' ' + this.#list.map(([k, v]) => show(k) + ' => ' + show(v)).join(', ') + ' ' : '') + '}'; }
}
class URL {
  #u; #params;
  constructor(input, base) {
    const b = base === undefined ? undefined : base instanceof URL ? base.#u : parseURL(String(base));
    this.#u = parseURL(typeof input === 'object' && input !== null && input.href ? input.href : String(input), b);
    this.#params = new URLSearchParams();
    URLSearchParams[ATTACH](this.#params, this, this.#u.search);
  }
  static canParse(input, base) { try { new URL(input, base); return true; } catch (_) { return false; } }
  static parse(input, base) { try { return new URL(input, base); } catch (_) { return null; } }
  [SET_SEARCH](q) { this.#u.search = q ? '?' + q : ''; }
  get protocol() { return this.#u.protocol; }
  set protocol(v) { const p = String(v).replace(/:.*$/, '').toLowerCase() + ':'; if ((p in SPECIAL) === (this.#u.protocol in SPECIAL) && /^[a-z][a-z0-9+.-]*:$/.test(p)) { this.#u.protocol = p; if (this.#u.port === SPECIAL[p]) this.#u.port = ''; } }
  get username() { return this.#u.username; }
  set username(v) { if (this.#u.hostname) this.#u.username = encodeUser(String(v)); }
  get password() { return this.#u.password; }
  set password(v) { if (this.#u.hostname) this.#u.password = encodeUser(String(v)); }
  get host() { return this.#u.hostname + (this.#u.port ? ':' + this.#u.port : ''); }
  set host(v) { const m = /^(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?/.exec(String(v)); if (m && m[1]) { this.hostname = m[1]; if (m[2] !== undefined) this.port = m[2]; } }
  get hostname() { return this.#u.hostname; }
  set hostname(v) { const h = String(v); if (!this.#u.opaque && h && !/[\u0000\t\n\r #/:<>?@\\^|%]/.test(h.replace(/^\[.*\]$/, ''))) this.#u.hostname = this.#u.protocol in SPECIAL ? h.toLowerCase() : h; }
  get port() { return this.#u.port; }
  set port(v) { const s = String(v); if (s === '') { this.#u.port = ''; return; } const m = /^\d+/.exec(s); if (m && Number(m[0]) <= 65535) this.#u.port = String(Number(m[0])) === SPECIAL[this.#u.protocol] ? '' : String(Number(m[0])); }
  get pathname() { return this.#u.pathname; }
  set pathname(v) { if (this.#u.opaque) return; const p = String(v); this.#u.pathname = dotSegments(encodePath((this.#u.protocol in SPECIAL ? p.replace(/\\/g, '/') : p).replace(/^(?!\/)/, '/'))); }
  get search() { return this.#u.search; }
  set search(v) { const s = String(v).replace(/^\?/, ''); this.#u.search = s ? '?' + encodeQuery(s) : ''; URLSearchParams[REPARSE](this.#params, this.#u.search); }
  get searchParams() { return this.#params; }
  get hash() { return this.#u.hash; }
  set hash(v) { const s = String(v).replace(/^#/, ''); this.#u.hash = s ? '#' + encodeFragment(s) : ''; }
  get origin() { const p = this.#u.protocol; return p in SPECIAL && p !== 'file:' ? p + '//' + this.host : 'null'; }
  get href() {
    const u = this.#u, cred = u.username || u.password ? u.username + (u.password ? ':' + u.password : '') + '@' : '';
    return u.protocol + (u.authority ? '//' + cred + this.host : '') + u.pathname + u.search + u.hash;
  }
  set href(v) { const u = new URL(String(v)); this.#u = u.#u; URLSearchParams[REPARSE](this.#params, this.#u.search); }
  toString() { return this.href; }
  toJSON() { return this.href; }
  [CUSTOM]() { return 'URL ' + inspect({ href: this.href, origin: this.origin, protocol: this.protocol, username: this.username, password: this.password, host: this.host, hostname: this.hostname, port: this.port, pathname: this.pathname, search: this.search, searchParams: this.searchParams, hash: this.hash }, 1, [], false); }
}
function legacyParse(input, parseQuery) {
  const href = String(input);
  let u;
  try { u = new URL(href); } catch (_) { u = null; }
  if (!u) {
    const hash = href.includes('#') ? href.slice(href.indexOf('#')) : null, noHash = hash ? href.slice(0, href.indexOf('#')) : href;
    const search = noHash.includes('?') ? noHash.slice(noHash.indexOf('?')) : null, pathname = search ? noHash.slice(0, noHash.indexOf('?')) : noHash;
    const query = search ? search.slice(1) : null;
    return { protocol: null, slashes: null, auth: null, host: null, port: null, hostname: null, hash, search, query: parseQuery ? Object.fromEntries(new URLSearchParams(query || '')) : query, pathname: pathname || null, path: (pathname || '') + (search || '') || null, href };
  }
  const query = u.search ? u.search.slice(1) : (parseQuery ? '' : null);
  return {
    protocol: u.protocol, slashes: true, auth: u.username ? decodeURIComponent(u.username) + (u.password ? ':' + decodeURIComponent(u.password) : '') : null,
    host: u.host || null, port: u.port || null, hostname: u.hostname || null, hash: u.hash || null, search: u.search || (parseQuery ? '' : null),
    query: parseQuery ? Object.fromEntries(new URLSearchParams(query || '')) : query, pathname: u.pathname, path: u.pathname + u.search, href: u.href,
  };
}
const url = {
  URL, URLSearchParams, parse: legacyParse,
  format(o) { if (o instanceof URL) return o.href; if (typeof o === 'string') return o; const auth = o.auth ? o.auth + '@' : ''; const host = o.host || ((o.hostname || '') + (o.port ? ':' + o.port : '')); return (o.protocol ? o.protocol + (o.slashes || /^(https?|ftp|file|wss?):$/.test(o.protocol) ? '//' : '') : '') + auth + host + (o.pathname || '') + (o.search || (o.query && typeof o.query === 'object' ? '?' + new URLSearchParams(o.query) : '')) + (o.hash || ''); },
  resolve(from, to) {
    if (URL.canParse(from)) return new URL(to, from).href;
    const base = 'http://h' + (String(from).startsWith('/') ? '' : '/');
    const u = new URL(to, base + from);
    return u.origin === 'http://h' ? u.href.slice('http://h'.length) : u.href;
  },
  fileURLToPath(u) { const url = typeof u === 'string' ? new URL(u) : u; if (url.protocol !== 'file:') throw typeError('The URL must be of scheme file', 'ERR_INVALID_URL_SCHEME'); return decodeURIComponent(url.pathname); },
  pathToFileURL: (p) => new URL('file://' + encodePath(path.resolve(p).replace(/%/g, '%25'))),
};
return { url, URL, URLSearchParams };
})
