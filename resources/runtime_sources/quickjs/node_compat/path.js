/* path (node_compat/core.js loads this file on first use). */
(function (x) {
'use strict';
const { g, define, lazy, typeError, str, describe, inspect, format, show, CUSTOM, HEX, native, load } = x;
/* ---- path (POSIX, as Node's path.posix) ---- */
function parts(p, absolute) {
  const out = [];
  for (const part of p.split('/')) {
    if (!part || part === '.') continue;
    if (part === '..') { if (out.length && out[out.length - 1] !== '..') out.pop(); else if (!absolute) out.push('..'); }
    else out.push(part);
  }
  return out;
}
const path = {
  sep: '/', delimiter: ':',
  isAbsolute: (p) => str(p, 'path').startsWith('/'),
  normalize(p) {
    if (!str(p, 'path')) return '.';
    const abs = p.startsWith('/');
    let r = parts(p, abs).join('/');
    if (!r && !abs) r = '.';
    if (r && p.endsWith('/')) r += '/';
    return (abs ? '/' : '') + r;
  },
  join(...args) {
    const joined = args.map((a) => str(a, 'path')).filter((a) => a.length).join('/');
    return joined ? path.normalize(joined) : '.';
  },
  resolve(...args) {
    let r = '', abs = false;
    for (let i = args.length - 1; i >= -1 && !abs; i--) {
      const p = i >= 0 ? str(args[i], 'paths[' + i + ']') : native.getcwd();
      if (!p) continue;
      r = p + '/' + r;
      abs = p.startsWith('/');
    }
    const n = parts(r, abs).join('/');
    return abs ? '/' + n : (n || '.');
  },
  dirname(p) {
    if (!str(p, 'path')) return '.';
    let end = p.length;
    while (end > 1 && p[end - 1] === '/') end--;
    const i = p.lastIndexOf('/', end - 1);
    if (i < 0) return '.';
    let j = i;
    while (j > 0 && p[j - 1] === '/') j--;
    return j === 0 ? '/' : p.slice(0, j);
  },
  basename(p, ext) {
    str(p, 'path');
    if (ext !== undefined) str(ext, 'ext');
    let end = p.length;
    while (end > 0 && p[end - 1] === '/') end--;
    if (end === 0) return '';
    let b = p.slice(p.lastIndexOf('/', end - 1) + 1, end);
    if (ext !== undefined && b.endsWith(ext)) b = b.slice(0, b.length - ext.length);
    return b;
  },
  extname(p) {
    const b = path.basename(p);
    const i = b.lastIndexOf('.');
    return i <= 0 || b === '..' ? '' : b.slice(i);
  },
  relative(from, to) {
    const f = path.resolve(str(from, 'from')).split('/').filter(Boolean);
    const t = path.resolve(str(to, 'to')).split('/').filter(Boolean);
    let i = 0;
    while (i < f.length && i < t.length && f[i] === t[i]) i++;
    return [...Array(f.length - i).fill('..'), ...t.slice(i)].join('/');
  },
  parse(p) {
    str(p, 'path');
    const root = p.startsWith('/') ? '/' : '';
    const base = path.basename(p), ext = path.extname(p);
    const dir = p.slice(0, p.length - base.length).replace(/\/+$/, '') || (p.startsWith('/') ? '/' : '');
    return { root, dir, base, ext, name: ext ? base.slice(0, base.length - ext.length) : base };
  },
  format(o) {
    if (o === null || typeof o !== 'object') throw typeError('The "pathObject" argument must be of type object', 'ERR_INVALID_ARG_TYPE');
    const dir = o.dir || o.root || '';
    const base = o.base || (o.name || '') + (o.ext ? (o.ext[0] === '.' ? '' : '.') + o.ext : '');
    if (!dir) return base;
    return dir === o.root ? dir + base : dir + '/' + base;
  },
  toNamespacedPath: (p) => p,
  matchesGlob(p, pattern) {
    const re = str(pattern, 'pattern').replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\/?|\*|\?/g, (m) => m === '?' ? '[^/]' : m === '*' ? '[^/]*' : '(?:.*/)?');
    return new RegExp('^' + re + '$').test(str(p, 'path'));
  },
};
path.posix = path;
return { path, 'path/posix': path };
})
