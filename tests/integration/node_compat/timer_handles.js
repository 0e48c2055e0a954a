// Timers are Timeout objects as in Node: unref'd ones keep no program going (AbortSignal.timeout's either).
const t0 = Date.now();
const s = AbortSignal.timeout(3000);
const iv = setInterval(() => console.log('never: unref interval'), 1000); iv.unref();
const t = setTimeout(() => console.log('fires', typeof t, t.hasRef(), this === undefined), 50);
console.log(typeof t, t.hasRef(), typeof +t, Number.isInteger(+t));
const u = setTimeout(() => console.log('unref then ref fires'), 80).unref(); u.ref();
const r = setTimeout(() => console.log('refreshed fires after', Date.now() - t0 >= 150), 100);
setTimeout(() => r.refresh(), 50);
const c = setTimeout(() => console.log('never: closed'), 10); c.close();
const n = setTimeout(() => console.log('never: cleared by number'), 10); clearTimeout(+n);
process.on('exit', () => console.log('exit after', Date.now() - t0 < 1000 ? 'under 1 s' : 'too long', s.aborted));
