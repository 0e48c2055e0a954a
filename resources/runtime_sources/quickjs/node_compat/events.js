/* events (node_compat/core.js loads this file on first use). */
(function (x) {
'use strict';
const { g, define, lazy, typeError, str, describe, inspect, format, show, CUSTOM, HEX, native, load } = x;
/* ---- events ---- */
function listenersOf(e) {
  if (!Object.prototype.hasOwnProperty.call(e, '_events') || !e._events) define(e, '_events', Object.create(null));
  return e._events;
}
function EventEmitter(options) {
  if (!(this instanceof EventEmitter)) return new EventEmitter(options);
  listenersOf(this);
}
function addListener(e, name, fn, prepend, once) {
  if (typeof fn !== 'function') throw typeError('The "listener" argument must be of type function. Received ' + describe(fn), 'ERR_INVALID_ARG_TYPE');
  const all = listenersOf(e);
  if (all.newListener) e.emit('newListener', name, fn.listener || fn);
  let entry = fn;
  if (once) {
    let fired = false;
    entry = function (...args) { if (fired) return undefined; fired = true; e.removeListener(name, entry); return fn.apply(this, args); };
    entry.listener = fn;
  }
  const list = all[name] || (all[name] = []);
  if (prepend) list.unshift(entry); else list.push(entry);
  return e;
}
Object.assign(EventEmitter.prototype, {
  on(name, fn) { return addListener(this, name, fn, false, false); },
  addListener(name, fn) { return addListener(this, name, fn, false, false); },
  prependListener(name, fn) { return addListener(this, name, fn, true, false); },
  once(name, fn) { return addListener(this, name, fn, false, true); },
  prependOnceListener(name, fn) { return addListener(this, name, fn, true, true); },
  removeListener(name, fn) {
    const all = listenersOf(this), list = all[name];
    if (!list) return this;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i] === fn || list[i].listener === fn) {
        list.splice(i, 1);
        if (!list.length) delete all[name];
        if (all.removeListener) this.emit('removeListener', name, fn);
        break;
      }
    }
    return this;
  },
  off(name, fn) { return this.removeListener(name, fn); },
  removeAllListeners(name) { const all = listenersOf(this); if (name === undefined) define(this, '_events', Object.create(null)); else delete all[name]; return this; },
  emit(name, ...args) {
    const list = listenersOf(this)[name];
    if (!list || !list.length) {
      if (name === 'error') {
        const err = args[0];
        if (err instanceof Error) throw err;
        const e = new Error('Unhandled error. (' + inspect(err, 0, [], false) + ')'); e.code = 'ERR_UNHANDLED_ERROR'; e.context = err; throw e;
      }
      return false;
    }
    for (const fn of list.slice()) fn.apply(this, args);
    return true;
  },
  listeners(name) { return (listenersOf(this)[name] || []).map((f) => f.listener || f); },
  rawListeners(name) { return (listenersOf(this)[name] || []).slice(); },
  listenerCount(name) { return (listenersOf(this)[name] || []).length; },
  eventNames() { return Reflect.ownKeys(listenersOf(this)); },
  setMaxListeners(n) { define(this, '_maxListeners', n); return this; },
  getMaxListeners() { return this._maxListeners === undefined ? EventEmitter.defaultMaxListeners : this._maxListeners; },
});
EventEmitter.EventEmitter = EventEmitter;
EventEmitter.defaultMaxListeners = 10;
EventEmitter.errorMonitor = Symbol('events.errorMonitor');
EventEmitter.once = (emitter, name) => new Promise((resolve, reject) => {
  const onError = (err) => { emitter.removeListener(name, onEvent); reject(err); };
  const onEvent = (...args) => { if (name !== 'error') emitter.removeListener('error', onError); resolve(args); };
  emitter.once(name, onEvent);
  if (name !== 'error') emitter.once('error', onError);
});
EventEmitter.listenerCount = (emitter, name) => emitter.listenerCount(name);
return { events: EventEmitter };
})
