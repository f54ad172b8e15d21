// One record: the typed editor (saved with If-Match, so a change made
// meanwhile elsewhere is refused rather than overwritten), reveal and
// copy for credentials, and the history with restore.

import * as api from '../api.js';
import { go } from '../router.js';
import { h, replace, confirm, attempt, toast, when, errorBox } from '../dom.js';
import { show, isCredential, text, copyButton } from '../values.js';
import { recordForm } from './recordform.js';

// who names the writer of a version: "you", or the id it was written by.
function who(id) {
  const s = api.session();
  if (!id) return '—';
  return s && id === s.user_id ? `you (${s.username})` : id;
}

export function recordView({ route, feed, onCleanup }) {
  const kPath = api.resourcePath({ ...route, record: null });
  let rec = null; // the record as last read
  let etag = null;
  let revealed = false;
  let form = null;
  const editorBox = h('section.card.editor', { 'aria-label': 'Record' }, h('p.muted', 'Loading…'));
  const historyBox = h('section.card.history', { 'aria-label': 'History' });
  const notice = h('div');
  const recPath = () => kPath + '/records/' + encodeURIComponent(rec ? rec.id : route.record);

  async function load(reveal = revealed) {
    try {
      const r = await api.get(recPath(), reveal ? { reveal: 'true' } : undefined);
      rec = r.data; etag = r.etag; revealed = reveal;
      replace(notice);
      drawEditor();
      loadHistory();
    } catch (e) {
      replace(editorBox, errorBox(e, () => load()));
    }
  }

  function drawEditor() {
    form = recordForm(rec);
    const err = h('div');
    const save = h('button.primary', { type: 'submit' }, 'Save');
    const cred = isCredential(rec.type) && rec.value !== null;
    replace(editorBox,
      h('div.card-head',
        h('h2', rec.name),
        h('span.type', rec.type),
        h('span.muted.small', `version ${rec.version} · updated `, when(rec.updated_at))),
      h('form', {
        onsubmit: async ev => {
          ev.preventDefault();
          replace(err);
          const body = form.updateBody();
          if (!body) { toast('Nothing changed', 'info'); return; }
          save.disabled = true;
          try {
            const r = await api.put(recPath(), body, { headers: etag ? { 'If-Match': etag } : {}, query: revealed ? { reveal: 'true' } : undefined });
            const renamed = r.data.name !== rec.name;
            rec = r.data; etag = r.etag;
            toast(`Saved: version ${rec.version}`);
            if (renamed) { go({ ...route, record: rec.name }); return; }
            drawEditor();
            loadHistory();
          } catch (e) {
            replace(err, errorBox(e, e.status === 412 ? () => load() : null));
            save.disabled = false;
          }
        },
      },
      form.el,
      cred ? h('div.reveal-row',
        h('button.small', { type: 'button', 'aria-pressed': String(revealed), onclick: () => load(!revealed) }, revealed ? 'Hide value' : 'Reveal value'),
        copyButton(async () => text(rec.type, revealed ? rec.value : (await api.get(recPath(), { reveal: 'true' })).data.value), 'Copy value')) : null,
      err,
      h('div.actions',
        h('button.danger-text', { type: 'button', onclick: remove }, 'Delete record'),
        h('span.spacer'),
        h('button', { type: 'button', onclick: () => load() }, 'Discard changes'),
        save)));
  }

  async function remove() {
    if (!await confirm(`Delete record “${rec.name}”?`, 'The record and its history are deleted. This cannot be undone.')) return;
    if (await attempt(() => api.del(recPath(), { headers: { 'If-Match': etag } }), `Record “${rec.name}” deleted`)) go({ ...route, record: undefined });
  }

  let historyRevealed = false;
  async function loadHistory() {
    const cred = rec && isCredential(rec.type);
    try {
      const { data } = await api.get(recPath() + '/versions', { limit: 50, reveal: historyRevealed ? 'true' : undefined });
      const items = data.items || [];
      const anyCred = cred || items.some(v => isCredential(v.type));
      replace(historyBox,
        h('div.card-head', h('h2', 'History'),
          anyCred ? h('button.small', { type: 'button', onclick: () => { historyRevealed = !historyRevealed; loadHistory(); } }, historyRevealed ? 'Hide values' : 'Reveal values') : null),
        h('p.muted.small', 'Every change keeps the state it replaces. Restoring makes an old type and value current again, as a new version.'),
        h('ol.versions', items.map((v, i) => h('li', { class: i === 0 ? 'current' : '' },
          h('div.vhead',
            h('strong', `v${v.version}`),
            i === 0 ? h('span.badge.ok', 'current') : null,
            h('span.type', v.type),
            v.name !== rec.name ? h('span.muted.small', `as “${v.name}”`) : null,
            h('span.spacer'),
            i === 0 ? null : h('button.small', { type: 'button', onclick: () => restore(v), 'aria-label': `Restore version ${v.version}` }, 'Restore')),
          h('div.vvalue', show(v.type, v.value)),
          h('div.muted.small', when(v.changed_at), ' · ', who(v.changed_by))))));
    } catch (e) {
      replace(historyBox, h('h2', 'History'), errorBox(e, loadHistory));
    }
  }

  async function restore(v) {
    if (!await confirm(`Restore version ${v.version}?`,
      `The type and value of version ${v.version} become current again, as version ${rec.version + 1}. The name stays “${rec.name}”.`, 'Restore')) return;
    await attempt(async () => {
      const r = await api.post(recPath() + '/restore', { version: v.version }, { headers: { 'If-Match': etag } });
      rec = r.data; etag = r.etag; revealed = false;
      toast(`Version ${v.version} restored as version ${rec.version}`);
      drawEditor();
      loadHistory();
    });
  }

  const me = api.session()?.user_id;
  onCleanup(feed.on(msg => {
    const e = msg.entry;
    if (!e || !rec || e.record_id !== rec.id || e.actor === me) return;
    if (e.action === 'record.delete') {
      replace(notice, h('div.alert', { role: 'alert' }, `${e.actor_name || 'Someone'} deleted this record.`));
      return;
    }
    replace(notice, h('div.alert.info', { role: 'status' },
      `${e.actor_name || 'Someone'} changed this record (version ${e.version}). `,
      h('button.link', { type: 'button', onclick: () => load() }, 'Load it')));
    loadHistory();
  }));

  load();
  return h('div.view', notice, h('div.record-grid', editorBox, historyBox));
}

