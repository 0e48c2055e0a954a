// Timers on the real clock: each fires once its delay passed, in due order, as in Node.
const started = Date.now();
const waited = (ms) => Date.now() - started >= ms - 1; // Date.now() counts whole milliseconds
const order = [];
setTimeout(() => order.push(`b after 400 ms: ${waited(400)}`), 400);
setTimeout(() => order.push(`a after 50 ms: ${waited(50)}`), 50);
setImmediate(() => order.push('immediate'));
Promise.resolve().then(() => order.push('microtask'));
let ticks = 0;
const interval = setInterval(() => {
  if (++ticks === 3) {
    clearInterval(interval);
    order.push(`interval x3 after 300 ms: ${waited(300)}`);
  }
}, 100);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
(async () => {
  for (let i = 3; i > 0; i--) {
    order.push(`countdown ${i}`);
    await sleep(250);
  }
  order.push(`liftoff after 750 ms: ${waited(750)}`);
})();
const cancelled = setTimeout(() => order.push('never'), 10);
clearTimeout(cancelled);
process.on('exit', () => console.log(order.join('\n')));
