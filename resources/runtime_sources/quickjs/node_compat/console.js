/* Node's console.time, count, group and table, as Node prints them (node_compat/core.js loads this file on
   first use). */
(function (x) {
'use strict';
const { g, define, format, show, inspectWith } = x;
const console = g.console, process = g.process;
let depth = 0, wrapped = false;
const indented = (text) => depth ? text.replace(/^(?=.)/gm, '  '.repeat(depth)) : text;
/* What the console prints goes indented while a group is open: its printers are wrapped at the first group(). */
function wrap() {
  if (wrapped) return;
  wrapped = true;
  for (const [name, stream] of [['log', 1], ['info', 1], ['debug', 1], ['dir', 1], ['error', 2], ['warn', 2], ['trace', 2]]) {
    const plain = console[name];
    define(console, name, (...args) => {
      if (!depth) return plain(...args);
      const text = name === 'dir' ? inspectWith(args[0], args[1]) + '\n' : format(args);
      (stream === 1 ? process.stdout : process.stderr).write(indented(text));
    });
  }
}
const timers = new Map(), counts = new Map();
const ms = (label) => { const t = g.performance.now() - timers.get(label); return t >= 1000 ? (t / 1000).toFixed(3) + 's' : t.toFixed(3) + 'ms'; };
const made = {
  time(label = 'default') { label = String(label); if (timers.has(label)) { console.warn("Warning: Label '" + label + "' already exists for console.time()"); return; } timers.set(label, g.performance.now()); },
  timeEnd(label = 'default') { label = String(label); if (!timers.has(label)) { console.warn("Warning: No such label '" + label + "' for console.timeEnd()"); return; } console.log('%s: %s', label, ms(label)); timers.delete(label); },
  timeLog(label = 'default', ...data) { label = String(label); if (!timers.has(label)) { console.warn("Warning: No such label '" + label + "' for console.timeLog()"); return; } console.log('%s: %s', label, ms(label), ...data); },
  count(label = 'default') { label = String(label); const n = (counts.get(label) || 0) + 1; counts.set(label, n); console.log('%s: %d', label, n); },
  countReset(label = 'default') { counts.delete(String(label)); },
  group(...labels) { wrap(); if (labels.length) console.log(...labels); depth++; },
  groupCollapsed(...labels) { console.group(...labels); },
  groupEnd() { if (depth) depth--; },
  table(data, only) { console.log(renderTable(data, only)); },
};
function renderTable(data, only) {
  if (data === null || typeof data !== 'object') return data;
  const rowKeys = Object.keys(data), columns = [], cells = new Map(), values = new Map();
  for (const r of rowKeys) {
    const row = data[r];
    if (row !== null && typeof row === 'object') {
      for (const k of Object.keys(row)) { if (only && !only.includes(k)) continue; if (!columns.includes(k)) columns.push(k); cells.set(r + '\0' + k, show(row[k])); }
    } else values.set(r, show(row));
  }
  if (only) for (const k of only) if (!columns.includes(k)) columns.push(k);
  const head = ['(index)', ...columns, ...(values.size ? ['Values'] : [])];
  const rows = rowKeys.map((r) => [r, ...columns.map((k) => cells.get(r + '\0' + k) || ''), ...(values.size ? [values.get(r) || ''] : [])]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)) + 2);
  const line = (l, m, r) => l + widths.map((w) => '─'.repeat(w)).join(m) + r;
  const render = (row) => '│' + row.map((c, i) => { const pad = (widths[i] - c.length) / 2; return ' '.repeat(Math.floor(pad)) + c + ' '.repeat(Math.ceil(pad)); }).join('│') + '│';
  return [line('┌', '┬', '┐'), render(head), line('├', '┼', '┤'), ...rows.map(render), line('└', '┴', '┘')].join('\n');
}
return made;
})
