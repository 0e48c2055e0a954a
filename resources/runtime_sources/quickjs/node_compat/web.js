/* The Web's Event, EventTarget, AbortController and AbortSignal, as Node has them globally (node_compat/core.js
   loads this file on first use). */
(function (x) {
'use strict';
const { g, define, typeError } = x;
class Event {
  #stop = false; #canceled = false;
  constructor(type, options = {}) {
    if (arguments.length === 0) throw typeError('The "type" argument must be specified', 'ERR_MISSING_ARGS');
    define(this, 'type', String(type));
    define(this, 'cancelable', !!options.cancelable);
    define(this, 'bubbles', !!options.bubbles);
    define(this, 'timeStamp', typeof g.performance === 'object' ? g.performance.now() : Date.now());
    define(this, 'target', null);
    define(this, 'currentTarget', null);
  }
  get defaultPrevented() { return this.#canceled; }
  preventDefault() { if (this.cancelable) this.#canceled = true; }
  stopImmediatePropagation() { this.#stop = true; }
  stopPropagation() {}
  get [Symbol.for('playground.stopped')]() { return this.#stop; }
  get [Symbol.toStringTag]() { return 'Event'; }
}
class CustomEvent extends Event {
  constructor(type, options = {}) { super(type, options); define(this, 'detail', options.detail === undefined ? null : options.detail); }
}
const STOPPED = Symbol.for('playground.stopped');
class EventTarget {
  #listeners = new Map();
  addEventListener(type, listener, options) {
    if (listener === null || listener === undefined) return;
    const once = typeof options === 'object' && options !== null && !!options.once;
    const list = this.#listeners.get(type) || [];
    if (list.some((l) => l.listener === listener)) return;
    list.push({ listener, once });
    this.#listeners.set(type, list);
    const signal = typeof options === 'object' && options !== null ? options.signal : undefined;
    if (signal) signal.addEventListener('abort', () => this.removeEventListener(type, listener), { once: true });
  }
  removeEventListener(type, listener) {
    const list = this.#listeners.get(type);
    if (list) this.#listeners.set(type, list.filter((l) => l.listener !== listener));
  }
  dispatchEvent(event) {
    if (!(event instanceof Event)) throw typeError('The "event" argument must be an instance of Event. Received ' + x.describe(event), 'ERR_INVALID_ARG_TYPE');
    define(event, 'target', this);
    define(event, 'currentTarget', this);
    const handler = this['on' + event.type];
    const list = (this.#listeners.get(event.type) || []).slice();
    if (typeof handler === 'function') list.unshift({ listener: handler, once: false, own: true });
    for (const l of list) {
      if (l.once) this.removeEventListener(event.type, l.listener);
      try {
        if (typeof l.listener === 'function') l.listener.call(this, event);
        else if (l.listener && typeof l.listener.handleEvent === 'function') l.listener.handleEvent(event);
      } catch (e) { Promise.reject(e); }
      if (event[STOPPED]) break;
    }
    define(event, 'currentTarget', null);
    return !event.defaultPrevented;
  }
}
const abortError = () => { const e = new Error('This operation was aborted'); e.name = 'AbortError'; e.code = 20; return e; };
class AbortSignal extends EventTarget {
  #aborted = false; #reason = undefined;
  constructor(key) { super(); if (key !== AbortSignal) throw new TypeError('Illegal constructor'); this.onabort = null; }
  get aborted() { return this.#aborted; }
  get reason() { return this.#reason; }
  throwIfAborted() { if (this.#aborted) throw this.#reason; }
  static [Symbol.for('playground.abort')](signal, reason) {
    if (signal.#aborted) return;
    signal.#aborted = true;
    signal.#reason = reason === undefined ? abortError() : reason;
    signal.dispatchEvent(new Event('abort'));
  }
  static abort(reason) { const s = new AbortSignal(AbortSignal); AbortSignal[Symbol.for('playground.abort')](s, reason); return s; }
  static timeout(ms) {
    const s = new AbortSignal(AbortSignal);
    g.setTimeout(() => { const e = new Error('The operation was aborted due to timeout'); e.name = 'TimeoutError'; e.code = 23; AbortSignal[Symbol.for('playground.abort')](s, e); }, ms).unref(); /* as Node's: it keeps no program going */
    return s;
  }
  static any(signals) {
    const s = new AbortSignal(AbortSignal);
    for (const one of signals) {
      if (one.aborted) { AbortSignal[Symbol.for('playground.abort')](s, one.reason); break; }
      one.addEventListener('abort', () => AbortSignal[Symbol.for('playground.abort')](s, one.reason), { once: true });
    }
    return s;
  }
}
class AbortController {
  #signal = new AbortSignal(AbortSignal);
  get signal() { return this.#signal; }
  abort(reason) { AbortSignal[Symbol.for('playground.abort')](this.#signal, reason); }
}
return { Event, CustomEvent, EventTarget, AbortController, AbortSignal };
})
