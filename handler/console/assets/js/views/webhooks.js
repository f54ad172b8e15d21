// A project's webhooks (API.md section 23), for admins: create one (its
// secret is shown once, with a copy button), list them, read a webhook's
// deliveries, ping and delete it. The tab shows only when the server has
// webhooks on (see webhooksOn).

import * as api from '../api.js';
import { h, replace, dialog, confirm, attempt, field, toast, when, copy } from '../dom.js';
import { listView } from '../list.js';
import { scopePicker } from './access.js';
import { actions as auditActions } from './audit.js';

// The change feed's actions: every audit action but credential.reveal
// (a function: audit.js and this module import each other through
// project.js).
const feedActions = () => auditActions.filter(a => a !== 'credential.reveal');

// Whether the server has webhooks on, asked once per project and user:
// when they are off the route answers 404 like any unknown route (kept:
// a server's setting); any other failure is asked about again.
let known = null;

/** webhooksOn resolves to whether project's webhook routes answer. */
export function webhooksOn(project) {
  const user = api.session()?.user_id;
  if (!known || known.project !== project || known.user !== user) {
    const k = { project, user };
    k.promise = api.get(api.resourcePath({ project }) + '/webhooks', { limit: 1 }).then(() => true, e => {
      if (e.status !== 404 && known === k) known = null;
      return false;
    });
    known = k;
  }
  return known.promise;
}

const scope = w => [w.collection, w.cluster].filter(Boolean).join(' / ') || h('span.muted', 'whole project');
const statusBadge = s => h('span.badge' + ({ succeeded: '.ok', failed: '.off' }[s] || ''), s);

export function webhooksView({ route }) {
  const base = api.resourcePath(route) + '/webhooks';
  const fresh = h('div');
  const detail = h('div');
  const list = listView({
    path: base, empty: 'No webhooks yet.', columns: [
      { label: 'URL', cls: 'name', cell: w => h('strong.mono', w.url) },
      { label: 'Actions', cell: w => w.actions.length === feedActions().length ? h('span.muted', 'every action')
        : h('span', { title: w.actions.join(', ') }, w.actions.join(', ')) },
      { label: 'Scope', cell: scope },
      { label: 'Created', cls: 'opt', cell: w => when(w.created_at) },
      { label: '', cls: 'row-actions', cell: w => [
        h('button.small', { type: 'button', onclick: () => deliveries(w) }, 'Deliveries'),
        h('button.small', { type: 'button', onclick: () => ping(w) }, 'Ping'),
        h('button.small.danger-text', { type: 'button', onclick: () => remove(w) }, 'Delete')] },
    ],
  });
  const load = list.reload;
  let open = null; // the id of the webhook whose deliveries are shown
  function deliveries(w) {
    const dl = listView({
      path: `${base}/${encodeURIComponent(w.id)}/deliveries`, empty: 'Nothing delivered yet.', page: 10,
      actions: [h('button.small', { type: 'button', onclick: () => dl.reload() }, 'Refresh'),
        h('button.small', { type: 'button', onclick: () => { open = null; replace(detail); } }, 'Close')],
      columns: [
        { label: 'Created', cell: d => when(d.created_at) },
        { label: 'Action', cell: d => d.action },
        { label: 'Status', cls: 'status', cell: d => statusBadge(d.status) },
        { label: 'Attempts', cls: 'num', cell: d => d.attempts },
        { label: 'Last code', cls: 'num', cell: d => d.last_status_code ?? h('span.muted', '—') },
        { label: 'Last error', cell: d => d.last_error ?? h('span.muted', '—') },
        { label: 'Next attempt', cls: 'opt', cell: d => when(d.next_attempt_at) },
      ],
    });
    open = w.id;
    replace(detail, h('section.deliveries', { 'aria-label': 'Deliveries' }, h('h3', 'Deliveries to ', h('span.mono', w.url)), dl.el));
  }
  async function ping(w) {
    if (await attempt(() => api.post(`${base}/${encodeURIComponent(w.id)}/ping`), `Ping sent to ${w.url}`)) deliveries(w);
  }
  async function remove(w) {
    if (!await confirm('Delete this webhook?', `Nothing more is sent to ${w.url}, from now on.`, 'Delete')) return;
    if (!await attempt(() => api.del(`${base}/${encodeURIComponent(w.id)}`), 'Webhook deleted')) return;
    if (open === w.id) { open = null; replace(detail); }
    load();
  }
  async function create() {
    const url = h('input', { name: 'url', type: 'url', required: true, autocomplete: 'off', placeholder: 'an http or https URL' });
    const acts = h('select', { name: 'actions', multiple: true, size: 8 }, feedActions().map(a => h('option', { value: a }, a)));
    const { col, clu, el: scopeEl } = scopePicker(route);
    const secret = h('input', { name: 'secret', autocomplete: 'off', spellcheck: false });
    const done = await dialog({
      title: 'New webhook', ok: 'Create webhook',
      body: [field('URL', url, 'Each event is POSTed here, signed with the secret'),
        field('Actions', acts, 'None picked: every action'), scopeEl,
        field('Secret', secret, '16 to 256 bytes; left empty, one is made')],
      submit: () => {
        const b = { url: url.value };
        const picked = [...acts.selectedOptions].map(o => o.value);
        if (picked.length) b.actions = picked;
        if (col.value) b.collection = col.value;
        if (clu.value) b.cluster = clu.value;
        if (secret.value) b.secret = secret.value;
        return api.post(base, b);
      },
    });
    if (!done) return;
    const sec = done.data.secret;
    const out = h('input.mono.token', { readonly: true, value: sec, 'aria-label': 'Webhook secret', onfocus: e => e.target.select() });
    replace(fresh, h('div.alert.success', { role: 'status' },
      h('strong', `Webhook to ${done.data.url} created.`), ' Copy its secret now: it is shown only now, never again.',
      h('div.inline', out, h('button.primary.small', { type: 'button', onclick: () => copy(sec) }, 'Copy'),
        h('button.small', { type: 'button', onclick: () => replace(fresh) }, 'Done'))));
    out.focus();
    toast('Webhook created');
    load();
  }

  return h('div.view',
    h('div.view-head', h('h2', 'Webhooks'), h('p.muted', 'Each change of this project is POSTed to these URLs, signed, and tried again when it fails.'),
      h('div.head-actions', h('button.primary', { type: 'button', onclick: create }, 'New webhook'))),
    fresh, list.el, detail);
}
