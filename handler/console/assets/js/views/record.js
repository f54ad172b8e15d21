// One record: the typed editor (saved with If-Match, so a change made
// meanwhile elsewhere is refused rather than overwritten), reveal and
// copy for credentials, and the whole history, paged, with restore and a
// view of any kept version (GET R?version=N). What the caller's role does
// not allow is not offered: a viewer sees the record read-only, reveal
// needs a reader, writes an editor.

import * as api from '../api.js';
import { go, href } from '../router.js';
import { h, replace, confirm, attempt, toast, when, errorBox } from '../dom.js';
import { show, isCredential, text, copyButton } from '../values.js';
import { pages } from '../list.js';
import { recordForm } from './recordform.js';
import { levelActions } from './containers.js';
import { renameRecord } from './records.js';

// who names the writer of a version: "you", or the id it was written by.
function who(id) {
  const s = api.session();
  if (!id) return '—';
  return s && id === s.user_id ? `you (${s.username})` : id;
}

/**
 * versionCount says how many versions the history shows: "1 version",
 * "61 versions" when it shows them all, "50 of 61 versions" when older
 * ones are still to come (total unknown: "50 versions so far").
 */
function versionCount(shown, total, more) {
  const word = n => n === 1 ? 'version' : 'versions';
  if (total == null) return `${shown} ${word(shown)}${more ? ' so far' : ''}`;
  return shown >= total ? `${total} ${word(total)}` : `${shown} of ${total} ${word(total)}`;
}

export function recordView({ route, feed, can, onCleanup }) {
  const kPath = api.resourcePath({ ...route, record: null, version: null });
  const write = can('write');
  const reveal = can('reveal');
  const old = route.version != null ? Number(route.version) : null; // viewing a kept version
  let rec = null; // the record as last read
  let etag = null;
  let revealed = false;
  let form = null;
  const editorBox = h('section.card.editor', { 'aria-label': 'Record' }, h('p.muted', 'Loading…'));
  const historyBox = h('section.card.history', { 'aria-label': 'History' });
  const notice = h('div');
  const head = h('div'); // the heading, once the record is read
  const view = h('div.view', head, notice, h('div.record-grid', editorBox, historyBox));
  const recPath = () => kPath + '/records/' + encodeURIComponent(rec ? rec.id : route.record);
  const at = version => ({ ...route, version: version ?? undefined });

  async function load(rev = revealed) {
    try {
      const q = {};
      if (rev) q.reveal = 'true';
      if (old !== null) q.version = old;
      const r = await api.get(recPath(), q);
      rec = r.data; etag = r.etag; revealed = rev;
      replace(notice);
      drawHead();
      drawEditor();
      loadHistory();
    } catch (e) {
      if (rec === null) replace(view, errorBox(e, () => { replace(view, head, notice, h('div.record-grid', editorBox, historyBox)); load(); }));
      else replace(editorBox, errorBox(e, () => load()));
    }
  }

  // The heading: the record's name, with its rename and delete where
  // every level has them.
  function drawHead() {
    replace(head, h('div.view-head',
      h('h2', h('span.kind', 'Record'), ' ', rec.name),
      levelActions('record', { rename: write && renameIt, remove: write && remove })));
  }

  async function renameIt() {
    const done = await renameRecord(rec, recPath(), old === null ? etag : null);
    if (done) go({ ...route, record: done.record.name });
  }

  // One action shows a credential's value: the first "Show value"
  // reveals the stored value (a reader's right, audited) unless the
  // field holds unsaved changes, which it then shows as typed; "Hide
  // value" masks the fields again (what they hold stays).
  let showing = false;
  const unmask = () => {
    for (const i of form.el.querySelectorAll('input.secret')) i.type = showing ? 'text' : 'password';
  };
  async function showValue() {
    showing = !showing;
    if (showing && !revealed && !form.updateBody()) {
      await load(true); // drawn anew, shown
      return;
    }
    unmask();
    showBtn.textContent = showing ? 'Hide value' : 'Show value';
    showBtn.setAttribute('aria-pressed', String(showing));
  }
  let showBtn = null;

  function drawEditor() {
    const cred = isCredential(rec.type) && rec.value !== null;
    form = recordForm(rec, { eye: !cred });
    const err = h('div');
    const save = h('button.primary', { type: 'submit' }, 'Save');
    const editable = write && old === null;
    showBtn = h('button.small', { type: 'button', 'aria-pressed': String(showing), onclick: showValue }, showing ? 'Hide value' : 'Show value');
    unmask();
    replace(editorBox,
      h('div.card-head',
        h('h2', rec.name),
        h('span.type', rec.type),
        h('span.muted.small', `version ${rec.version} · updated `, when(rec.updated_at))),
      old !== null ? h('div.alert.info.old-version', { role: 'status' },
        `This is version ${rec.version}, as it was then. `,
        h('a', { href: href(at(null)) }, 'Back to the current version'),
        write ? [' · ', h('button.link', { type: 'button', onclick: () => restore(rec) }, 'Restore this version')] : null) : null,
      !write && old === null ? h('p.muted.small.read-only', 'Read only: your role on this project does not allow changes.') : null,
      h('form', {
        onsubmit: async ev => {
          ev.preventDefault();
          if (!editable) return;
          replace(err);
          const body = form.updateBody();
          if (!body) { toast('Nothing changed', 'info'); return; }
          save.disabled = true;
          try {
            const r = await api.put(recPath(), body, { headers: etag ? { 'If-Match': etag } : {}, query: revealed ? { reveal: 'true' } : undefined });
            const renamed = r.data.name !== rec.name;
            rec = r.data; etag = r.etag;
            if (renamed) { go({ ...route, record: rec.name }); toast(`Saved: version ${rec.version}`); return; }
            toast(`Saved: version ${rec.version}`);
            drawHead();
            drawEditor();
            loadHistory();
          } catch (e) {
            replace(err, errorBox(e, e.status === 412 ? () => load() : null));
            save.disabled = false;
          }
        },
      },
      // Disabled as a whole when it may not be saved (a viewer, an old version).
      h('fieldset.plain', { disabled: !editable }, form.el),
      cred && reveal ? h('div.reveal-row',
        showBtn,
        copyButton(async () => text(rec.type, revealed ? rec.value
          : (await api.get(recPath(), { reveal: 'true', version: old ?? undefined })).data.value), 'Copy value')) : null,
      err,
      editable ? h('div.actions',
        h('span.spacer'),
        h('button', { type: 'button', onclick: () => load() }, 'Discard changes'),
        save) : null));
  }

  async function remove() {
    if (!await confirm(`Delete record “${rec.name}”?`, 'The record and its history are deleted. This cannot be undone.')) return;
    if (await attempt(() => api.del(recPath(), { headers: { 'If-Match': etag } }), `Record “${rec.name}” deleted`)) go({ ...route, record: undefined });
  }

  // The history, newest first: one page at first, older ones on demand,
  // each page as the list gives it (next_cursor or offset). A version
  // written meanwhile shifts offsets; the versions already shown are not
  // shown twice.
  let historyRevealed = false;
  let walk = null;
  let shown = []; // the versions listed, newest first
  let total = null;
  let historySeq = 0;
  async function loadHistory() {
    walk = pages(recPath() + '/versions', { reveal: historyRevealed ? 'true' : undefined });
    shown = [];
    await more(++historySeq);
  }
  async function more(seq = historySeq) {
    try {
      const data = await walk.next();
      if (seq !== historySeq) return;
      const oldest = shown.length ? shown[shown.length - 1].version : Infinity;
      shown.push(...(data.items || []).filter(v => v.version < oldest));
      total = data.total;
      drawHistory();
    } catch (e) {
      if (seq !== historySeq) return;
      replace(historyBox, h('h2', 'History'), errorBox(e, loadHistory));
    }
  }

  function drawHistory() {
    const anyCred = (rec && isCredential(rec.type)) || shown.some(v => isCredential(v.type));
    const current = shown.length ? shown[0].version : null;
    replace(historyBox,
      h('div.card-head', h('h2', 'History'),
        anyCred && reveal ? h('button.small', { type: 'button', onclick: () => { historyRevealed = !historyRevealed; loadHistory(); } }, historyRevealed ? 'Hide values' : 'Reveal values') : null),
      h('p.muted.small', 'Every change keeps the state it replaces. Restoring makes an old type and value current again, as a new version.'),
      h('ol.versions', shown.map(v => h('li', { class: [v.version === current ? 'current' : '', v.version === old ? 'viewing' : ''].join(' ').trim() || null },
        h('div.vhead',
          h('strong', `v${v.version}`),
          v.version === current ? h('span.badge.ok', 'current') : null,
          h('span.type', v.type),
          rec && v.name !== rec.name ? h('span.muted.small', `as “${v.name}”`) : null,
          h('span.spacer'),
          v.version === old ? h('span.badge', 'viewing')
            : v.version === current && old === null ? null
              : h('a.small', { href: href(at(v.version === current ? null : v.version)), 'aria-label': `View version ${v.version}` }, 'View'),
          write && v.version !== current ? h('button.small', { type: 'button', onclick: () => restore(v), 'aria-label': `Restore version ${v.version}` }, 'Restore') : null),
        h('div.vvalue', show(v.type, v.value)),
        h('div.muted.small', when(v.changed_at), ' · ', who(v.changed_by))))),
      h('div.pager',
        h('p.list-status', { 'aria-live': 'polite' }, versionCount(shown.length, total, walk.more())),
        walk.more() ? h('button', { type: 'button', onclick: () => more() }, 'Older versions') : null));
  }

  async function restore(v) {
    const next = current => `as version ${current + 1}`;
    if (!await confirm(`Restore version ${v.version}?`,
      `The type and value of version ${v.version} become current again, ${next(shown.length ? shown[0].version : rec.version)}. The name stays.`, 'Restore')) return;
    await attempt(async () => {
      // Restoring from a kept version's page: the condition is the
      // current version's tag, the newest one the history listed.
      const cond = old === null ? etag : shown.length ? api.entityTag({ id: rec.id, version: shown[0].version }) : null;
      const r = await api.post(recPath() + '/restore', { version: v.version }, { headers: cond ? { 'If-Match': cond } : {} });
      toast(`Version ${v.version} restored as version ${r.data.version}`);
      if (old !== null) { go(at(null)); return; }
      rec = r.data; etag = r.etag; revealed = false;
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
    if (old === null) {
      replace(notice, h('div.alert.info', { role: 'status' },
        `${e.actor_name || 'Someone'} changed this record (version ${e.version}). `,
        h('button.link', { type: 'button', onclick: () => load() }, 'Load it')));
    }
    loadHistory();
  }));

  load();
  return view;
}
