const EventEmitter = require('events');
const { once } = require('events');
class Door extends EventEmitter {}
const d = new Door();
d.on('open', (who) => console.log('open by', who));
d.once('open', () => console.log('first time only'));
d.prependListener('open', () => console.log('before all'));
console.log(d.emit('open', 'ann'), d.emit('open', 'bob'), d.emit('shut'), d.listenerCount('open'), d.eventNames());
const f = () => console.log('never');
d.on('x', f); d.off('x', f); console.log(d.emit('x'), d.listeners('open').length);
try { d.emit('error', new Error('hinge broke')); } catch (e) { console.log('thrown:', e.message); }
function Old() { EventEmitter.call(this); }
require('util').inherits(Old, EventEmitter);
const o = new Old(); o.on('ping', (n) => console.log('pong', n)); o.emit('ping', 7);
(async () => { setTimeout(() => d.emit('ready', 1, 2), 10); console.log('once ->', await once(d, 'ready')); })();
