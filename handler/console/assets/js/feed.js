// The change feed of one project (API.md section 16), read with fetch()
// because EventSource cannot send an Authorization header. The stream is
// parsed here (event:, id:, data: lines, blank line ends an event) and
// reopened after a drop with Last-Event-ID, waiting longer after each
// failure. Listeners get every event as {id, action, entry} and every
// change of state ('connecting', 'live', 'off' with a reason).

import { url, path, session, ApiError } from './api.js';
import { errorText } from './dom.js';

export class Feed {
  constructor(project) {
    this.project = project;
    this.listeners = new Set();
    this.state = 'connecting';
    this.reason = '';
    this.lastId = null;
    this.abort = new AbortController();
    this.retry = 1000;
    this.run();
  }

  /** on adds a listener of events and states; returns its removal. */
  on(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  close() { this.closed = true; this.abort.abort(); }

  emit(msg) { for (const fn of [...this.listeners]) fn(msg); }

  setState(state, reason = '') {
    this.state = state;
    this.reason = reason;
    this.emit({ state, reason });
  }

  async run() {
    while (!this.closed) {
      this.setState('connecting');
      let permanent = false;
      try {
        await this.stream();
        this.retry = 1000; // the server ended a good stream: reopen soon
      } catch (e) {
        if (this.closed) return;
        // A route that is not there (404, 405) or a refusal will not heal
        // by retrying; show why and stop.
        permanent = e instanceof ApiError && [400, 401, 403, 404, 405].includes(e.status);
        this.setState('off', errorText(e));
        if (permanent) return;
      }
      await new Promise(r => setTimeout(r, this.retry));
      this.retry = Math.min(this.retry * 2, 30000);
    }
  }

  async stream() {
    const s = session();
    const headers = { Accept: 'text/event-stream' };
    if (s) headers.Authorization = 'Bearer ' + s.token;
    if (this.lastId !== null) headers['Last-Event-ID'] = this.lastId;
    const res = await fetch(url(path('projects', this.project, 'events')),
      { headers, signal: this.abort.signal, cache: 'no-store' });
    if (!res.ok || !(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      let err = {};
      try { err = (await res.json()).error || {}; } catch { /* not an envelope */ }
      throw new ApiError(res.status, err.code, err.message || `The change feed answered ${res.status}`, err.details);
    }
    this.setState('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let ev = { data: [] };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new ApiError(0, '', 'The change feed closed');
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
    if (ev.id !== undefined) this.lastId = ev.id;
    let entry = null;
    try { entry = JSON.parse(ev.data.join('\n')); } catch { /* not JSON: skipped */ }
    if (entry) this.emit({ id: ev.id, action: ev.event || entry.action, entry });
  }
}
