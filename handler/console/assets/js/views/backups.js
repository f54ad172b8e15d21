// Backups (API.md section 26): for server administrators, on a server
// that serves the backup routes (the standalone server on the SQLite
// store), a page to list the backups, make one now, download one (when
// the server allows it: backups.allow_download) and delete one. Where
// the routes are not served, the page says so.

import * as api from '../api.js';
import { h, replace, attempt, confirm, toast, when, errorText } from '../dom.js';
import { listView } from '../list.js';

const base = api.path('backups');
const at = name => `${base}/${encodeURIComponent(name)}`;

// backupsAvailable resolves to whether this server serves the backup routes
// (asked once per session user: GET with limit=1, 404 when it does not).
let known = null;
export function backupsAvailable(me) {
  const user = api.session()?.user_id;
  if (!me?.admin) return Promise.resolve(false);
  if (!known || known.user !== user) {
    const k = { user };
    k.promise = api.get(base, { limit: 1 }).then(() => true, e => {
      if (known === k) known = null; // ask again next time, unless it is a plain 404
      return e.status === 404 ? false : null;
    });
    known = k;
  }
  return known.promise;
}

// download fetches the backup with the session's token (the console keeps
// it in memory: a plain link would carry none) and saves it as a file.
async function download(name) {
  const s = api.session();
  const res = await fetch(api.url(at(name)), { headers: s ? { Authorization: 'Bearer ' + s.token } : {}, cache: 'no-store' });
  if (!res.ok) {
    let env = null;
    try { env = JSON.parse(await res.text()); } catch { /* not JSON */ }
    throw new api.ApiError(res.status, env?.error?.code, env?.error?.message || `${res.status} ${res.statusText}`, env?.error?.details);
  }
  const blob = await res.blob();
  const link = h('a', { href: URL.createObjectURL(blob), download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

const size = n => n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} bytes`;

export function backupsView({ me }) {
  const head = h('div.view-head', h('h2', 'Backups'),
    h('p.muted', 'Copies of the whole database, made while the server serves. keys.json is never in a backup: keep it apart.'));
  if (!me?.admin) {
    return h('div.view', head, h('p.panel.error-box', 'Only server administrators manage backups.'));
  }
  const note = h('p.hint', { id: 'backups-download-note', hidden: true },
    'Downloads are off on this server (backups.allow_download is false): a backup holds every project.');
  // Whether the server serves downloads is found by asking for the
  // newest backup's headers (HEAD: 200, or 404 when it does not).
  let downloads = false;
  const list = listView({
    path: base, label: null, empty: 'No backups yet.',
    actions: [h('button.primary', { type: 'button', onclick: makeNow }, 'Make a backup now')],
    columns: [
      { label: 'Backup', cls: 'name', cell: b => h('strong', b.name) },
      { label: 'Made', cell: b => when(b.created_at) },
      { label: 'Size', cls: 'opt', cell: b => size(b.size) },
      { label: '', cls: 'row-actions', cell: b => h('span',
        downloads ? h('button.small', { type: 'button', onclick: () => save(b) }, 'Download') : null,
        h('button.small.danger-text', { type: 'button', onclick: () => remove(b) }, 'Delete')) },
    ],
  });
  async function probe() {
    const data = await api.list(base, { limit: 1 }).catch(() => null);
    const first = data?.items?.[0];
    if (!first) return;
    const s = api.session();
    const res = await fetch(api.url(at(first.name)), { method: 'HEAD', cache: 'no-store',
      headers: s ? { Authorization: 'Bearer ' + s.token } : {} }).catch(() => null);
    const allowed = res?.ok === true;
    note.hidden = allowed;
    if (allowed !== downloads) { downloads = allowed; list.reload(); }
  }
  async function makeNow(e) {
    const button = e.currentTarget;
    button.disabled = true;
    try {
      const r = await api.post(base);
      toast(`Backup ${r.data.name} made`);
      list.reload();
      probe();
    } catch (err) {
      toast(errorText(err), 'error');
    } finally {
      button.disabled = false;
    }
  }
  async function save(b) {
    try {
      await download(b.name);
      toast(`Backup ${b.name} downloaded`);
    } catch (e) {
      toast(errorText(e), 'error');
    }
  }
  async function remove(b) {
    if (!await confirm(`Delete ${b.name}?`, 'The backup file is deleted from the server; this cannot be undone.', 'Delete')) return;
    if (await attempt(() => api.del(at(b.name)), `${b.name} deleted`)) list.reload();
  }
  const view = h('div.view', head, note, list.el);
  backupsAvailable(me).then(yes => {
    if (yes === false) {
      replace(view, head, h('p.panel', 'This server keeps no backups: they are the SQLite store\'s. ' +
        'Back PostgreSQL up with pg_dump; the in-memory store keeps nothing.'));
    } else {
      probe();
    }
  });
  return view;
}
