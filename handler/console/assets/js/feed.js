// The change feed of one project (API.md section 16), read with fetch()
// because EventSource cannot send an Authorization header. The stream is
// parsed here (event:, id:, data: lines, blank line ends an event) and
// reopened after a drop with Last-Event-ID, waiting longer after each
// failure. A 401 (the token expired: the server ends a stream then too)
// renews the token and reopens at once; a new token reopens the stream
// with it. An event whose id is not past the last one delivered is
// dropped, so a reopened stream never repeats one. Listeners get every
// event as {id, action, entry} and every change of state ('connecting',
// 'live', 'off' with a reason).

import { url, path, session, renew, ApiError } from './api.js';
import { errorText } from './dom.js';

export class Feed {
  constructor(project) {
    this.project = project;
    this.listeners = new Set();
    this.state = 'connecting';
    this.reason = '';
    this.lastId = null;
    this.abort = new AbortController(); // ends the feed
    this.current = null; // the open stream's controller
    this.retry = 1000;
    this.wake = null; // ends the wait before the next attempt
    this.onToken = () => this.reopen();
    window.addEventListener('hds:token', this.onToken);
    this.run();
  }

  /** on adds a listener of events and states; returns its removal. */
  on(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  close() {
    this.closed = true;
    window.removeEventListener('hds:token', this.onToken);
    this.abort.abort();
    if (this.wake) this.wake();
  }

  // reopen ends the open stream (or the wait for the next attempt) and
  // opens a new one at once, with the session's token: a stream opened
  // with a token ends when that token expires.
  reopen() {
    if (this.closed) return;
    if (this.current && this.current.token !== session()?.token) this.current.abort();
    this.retry = 1000;
    if (this.wake) this.wake();
  }

  emit(msg) { for (const fn of [...this.listeners]) fn(msg); }

  setState(state, reason = '') {
    this.state = state;
    this.reason = reason;
    this.emit({ state, reason });
  }

  async run() {
    let renewed = false; // the last attempt got a 401 and renewed the token
    while (!this.closed) {
      this.setState('connecting');
      let wait = this.retry;
      try {
        await this.stream();
      } catch (e) {
        if (this.closed) return;
        if (e.live) { renewed = false; this.retry = 1000; wait = 1000; } // a good stream ended: reopen soon
        if (e.name === 'AbortError') {
          wait = 0; // reopened for a new token
        } else if (e instanceof ApiError && e.status === 401) {
          // Renewed (here or by any other call): reopen with the new token,
          // at once the first time. Not renewable: the session has ended.
          if (!await renew(e.token, e)) { this.setState('off', errorText(e)); return; }
          if (!renewed) wait = 0;
          renewed = true;
        } else if (e instanceof ApiError && [400, 403, 404, 405].includes(e.status)) {
          // A route that is not there (404, 405) or a refusal will not
          // heal by retrying; show why and stop.
          this.setState('off', errorText(e));
          return;
        } else {
          this.setState('off', errorText(e));
        }
      }
      if (this.closed) return;
      if (wait > 0) {
        await new Promise(r => { this.wake = r; setTimeout(r, wait); });
        this.wake = null;
        this.retry = Math.min(this.retry * 2, 30000);
      }
    }
  }

  async stream() {
    const s = session();
    const headers = { Accept: 'text/event-stream' };
    if (s) headers.Authorization = 'Bearer ' + s.token;
    if (this.lastId !== null) headers['Last-Event-ID'] = String(this.lastId);
    const ctl = new AbortController();
    ctl.token = s?.token;
    const end = () => ctl.abort();
    this.abort.signal.addEventListener('abort', end);
    this.current = ctl;
    let live = false;
    try {
      const res = await fetch(url(path('projects', this.project, 'events')),
        { headers, signal: ctl.signal, cache: 'no-store' });
      if (!res.ok || !(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
        let err = {};
        try { err = (await res.json()).error || {}; } catch { /* not an envelope */ }
        const e = new ApiError(res.status, err.code, err.message || `The change feed answered ${res.status}`, err.details);
        e.token = ctl.token;
        throw e;
      }
      live = true;
      this.setState('live');
      // A token renewed while this stream was being opened: reopen with it.
      if (ctl.token !== session()?.token) ctl.abort();
      await this.read(res.body);
      throw new ApiError(0, '', 'The change feed closed');
    } catch (e) {
      e.live = live;
      throw e;
    } finally {
      this.abort.signal.removeEventListener('abort', end);
      if (this.current === ctl) this.current = null;
    }
  }

  // read parses the stream until it ends.
  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let ev = { data: [] };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let nl;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (ev.data.length) this.dispatch(ev);
          ev = { data: [] };
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: keep-alive
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? '' : line.slice(colon + 1);
        if (val.startsWith(' ')) val = val.slice(1);
        if (name === 'data') ev.data.push(val);
        else if (name === 'event') ev.event = val;
        else if (name === 'id') ev.id = val;
      }
    }
  }

  dispatch(ev) {
    if (ev.id !== undefined && /^\d+$/.test(ev.id)) {
      const id = Number(ev.id);
      if (this.lastId !== null && id <= this.lastId) return; // delivered already
      this.lastId = id;
    }
    let entry = null;
    try { entry = JSON.parse(ev.data.join('\n')); } catch { /* not JSON: skipped */ }
    if (entry) this.emit({ id: ev.id, action: ev.event || entry.action, entry });
  }
}
