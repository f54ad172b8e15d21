// A cluster's records: filter by type and value, sort, page; credentials
// masked with a reveal and a copy button on each; a new record in a
// dialog with the typed editor.

import * as api from '../api.js';
import { href, go } from '../router.js';
import { h, replace, dialog, confirm, attempt, toast, when, field } from '../dom.js';
import { listView } from '../list.js';
import { renameContainer, deleteContainer, levelActions } from './containers.js';
import { TYPES, show, text, isCredential, copyButton } from '../values.js';
import { recordForm } from './recordform.js';

const sorts = [['name', 'Name'], ['type', 'Type'], ['value', 'Value'], ['updated_at', 'Last updated'], ['created_at', 'Created']];

/** valueCell shows a value; for a credential, with Reveal and Copy when reveal is allowed. */
function valueCell(rec, recPath, reveal) {
  const out = h('span.value-cell', show(rec.type, rec.value));
  if (!reveal || !isCredential(rec.type) || rec.value === null) return out;
  let plain = null;
  const fetchPlain = async () => {
    if (plain === null) plain = (await api.get(recPath, { reveal: 'true' })).data.value;
    return plain;
  };
  const val = h('span', show(rec.type, rec.value));
  const btn = h('button.small', {
    type: 'button', 'aria-pressed': 'false', 'aria-label': `Reveal ${rec.name}`,
    onclick: () => attempt(async () => {
      const on = btn.getAttribute('aria-pressed') !== 'true';
      replace(val, show(rec.type, on ? await fetchPlain() : rec.value));
      btn.setAttribute('aria-pressed', String(on));
      btn.textContent = on ? 'Hide' : 'Reveal';
    }),
  }, 'Reveal');
  const cp = copyButton(async () => text(rec.type, await fetchPlain()));
  cp.setAttribute('aria-label', `Copy ${rec.name}`);
  return replace(out, val, btn, cp);
}

export function recordsView({ route, feed, can, onCleanup }) {
  const write = can('write');
  const kPath = api.resourcePath(route);
  const recPath = name => kPath + '/records/' + encodeURIComponent(name);
  const at = name => ({ ...route, record: name });
  const typeSel = h('select', { 'aria-label': 'Type', onchange: () => list.restart() },
    h('option', { value: '' }, 'All types'), TYPES.map(t => h('option', { value: t }, t)));
  let vt;
  const contains = h('input', { type: 'search', placeholder: 'Value contains', 'aria-label': 'Value contains',
    oninput: () => { clearTimeout(vt); vt = setTimeout(() => list.restart(), 250); } });

  async function create() {
    const form = recordForm();
    const made = await dialog({
      title: 'New record', ok: 'Create', body: [form.el],
      submit: () => api.post(kPath + '/records', form.createBody()),
    });
    if (made) { toast(`Record “${made.data.name}” created`); list.reload(); }
  }
  async function remove(rec) {
    if (!await confirm(`Delete record “${rec.name}”?`, 'The record and its history are deleted. This cannot be undone.')) return;
    // A record changed since the list was read is refused (412) with
    // the API's message, not deleted unseen.
    await attempt(() => api.del(recPath(rec.id), { headers: { 'If-Match': api.entityTag(rec) } }), `Record “${rec.name}” deleted`);
    list.reload();
  }
  async function rename(rec) {
    const done = await renameRecord(rec, recPath(rec.id), api.entityTag(rec));
    if (done) list.reload();
  }
  async function renameCluster() {
    const done = await renameContainer('cluster', route.cluster, kPath);
    if (done) go({ ...route, cluster: done.name });
  }
  async function deleteCluster() {
    if (await deleteContainer('cluster', route.cluster, kPath)) go({ project: route.project, collection: route.collection });
  }

  const columns = [
    { label: 'Name', cls: 'name', cell: r => h('a.strong', { href: href(at(r.name)) }, r.name) },
    { label: 'Type', cls: 'rtype', cell: r => h('span.type', r.type) },
    { label: 'Value', cls: 'value', cell: r => valueCell(r, recPath(r.id), can('reveal')) },
    { label: 'Version', cls: 'num opt', cell: r => r.version },
    { label: 'Updated', cls: 'opt', cell: r => when(r.updated_at) },
    ...(write ? [{ label: '', cls: 'row-actions', cell: r => [
      h('button.small', { type: 'button', onclick: () => rename(r), 'aria-label': `Rename ${r.name}` }, 'Rename'),
      h('button.small.danger-text', { type: 'button', onclick: () => remove(r), 'aria-label': `Delete ${r.name}` }, 'Delete')] }] : []),
  ];
  const list = listView({
    path: kPath + '/records', columns, sorts, label: 'records', filters: [typeSel, contains], cls: 'records',
    query: () => ({ type: typeSel.value, valueContains: contains.value }),
    empty: write ? 'No records yet. Create the first one.' : 'No records yet.',
    actions: write ? [h('button.primary', { type: 'button', onclick: create }, 'New record')] : [],
  });
  let t;
  onCleanup(feed.on(msg => {
    const e = msg.entry;
    if (e && e.collection === route.collection && e.cluster === route.cluster) { clearTimeout(t); t = setTimeout(list.reload, 200); }
  }));
  return h('div.view',
    h('div.view-head',
      h('h2', h('span.kind', 'Cluster'), ' ', route.cluster),
      levelActions('cluster', { rename: write && renameCluster, remove: write && deleteCluster })),
    list.el);
}

/**
 * renameRecord asks for a new name of the record rec (at path, read with
 * the entity tag etag: a record changed meanwhile is refused, 412, not
 * renamed unseen) and renames it; resolves to {record, etag} as renamed,
 * or undefined when cancelled.
 */
export async function renameRecord(rec, path, etag) {
  const input = h('input', { name: 'name', value: rec.name, required: true, maxLength: 128, autocomplete: 'off', spellcheck: false });
  const done = await dialog({
    title: `Rename record “${rec.name}”`, ok: 'Rename', body: [field('New name', input)],
    submit: () => api.put(path, { name: input.value }, { headers: etag ? { 'If-Match': etag } : {} }),
  });
  if (!done) return undefined;
  toast(`Renamed to “${done.data.name}”`);
  return { record: done.data, etag: done.etag };
}
