console.table([{ a: 1, b: 'x' }, { a: 2, c: true }]); console.table(['p', 'q']); console.table({ r1: { c: 1 }, r2: { c: 22 } });
console.count(); console.count(); console.count('x'); console.countReset(); console.count();
console.group('G'); console.log('inside'); console.group(); console.log('deeper', { k: [1] }); console.groupEnd(); console.groupEnd(); console.log('out');
console.table([[1, 2], [3]]); console.table(5); console.table([{ a: 1 }], ['a', 'z']);
process.nextTick((v) => console.log('tick', v), 7); Promise.resolve().then(() => console.log('micro')); console.log('sync');
const t = process.hrtime(); const d = process.hrtime(t); console.log(Array.isArray(t), t.length, d[0] >= 0, typeof process.hrtime.bigint());
const m = process.memoryUsage(); console.log(['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'].every((k) => typeof m[k] === 'number' && m[k] >= 0), m.heapUsed <= m.heapTotal, typeof process.uptime());
const { performance } = require('perf_hooks'); console.log(performance.now() >= 0);
process.on('exit', (code) => console.log('exit listener', code, process.exitCode));
process.once('exit', () => console.log('once too'));
const ac = new AbortController(); ac.signal.addEventListener('abort', (e) => console.log('aborted', e.type, ac.signal.aborted, ac.signal.reason.name));
ac.abort(); ac.abort(); console.log(AbortSignal.abort('why').reason);
const target = new EventTarget(); let n = 0; target.addEventListener('ping', () => n++, { once: true }); target.dispatchEvent(new Event('ping')); target.dispatchEvent(new Event('ping'));
const ev = new Event('c', { cancelable: true }); target.addEventListener('c', (e) => e.preventDefault()); console.log(n, target.dispatchEvent(ev), ev.defaultPrevented);
try { AbortSignal.abort().throwIfAborted(); } catch (e) { console.log(e.name, e.message); }
setTimeout(() => { process.exitCode = 0; console.log("exit code set"); }, 5);
