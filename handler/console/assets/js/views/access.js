// Sharing a project (API.md section 17): its members and their roles,
// and API tokens for programs (a new token is shown once, with a copy
// button). Routes the server does not offer show their error in place.

import * as api from '../api.js';
import { h, replace, dialog, confirm, attempt, field, toast, when, errorBox, copy } from '../dom.js';

const memberRoles = ['viewer', 'reader', 'editor', 'admin'];
const tokenRoles = ['viewer', 'reader', 'editor'];
const roleHelp = {
  viewer: 'reads everything; credentials stay masked',
  reader: 'also reveals credentials',
  editor: 'also writes collections, clusters and records',
  admin: 'also renames the project, manages members, tokens, reads the audit log',
};

const select = (options, value, attrs = {}) => {
  const s = h('select', attrs, options.map(o => h('option', { value: o }, o)));
  if (value) s.value = value;
  return s;
};

export function membersView({ route }) {
  const base = api.resourcePath(route) + '/members';
  const body = h('div', h('p.muted', 'Loading…'));

  async function load() {
    try {
      const { data } = await api.get(base, { limit: 1000 });
      const items = data.items || [];
      replace(body, h('div.table-wrap', h('table.list',
        h('thead', h('tr', h('th', 'User'), h('th', 'Role'), h('th.opt', 'Since'), h('th', ''))),
        h('tbody', items.map(m => h('tr',
          h('td.name', { 'data-label': 'User' }, h('strong', m.username)),
          h('td', { 'data-label': 'Role' }, m.role === 'owner' ? h('span.badge', 'owner')
            : select(memberRoles, m.role, { 'aria-label': `Role of ${m.username}`, onchange: e => setRole(m.username, e.target.value) })),
          h('td.opt', { 'data-label': 'Since' }, when(m.created_at)),
          h('td.row-actions', m.role === 'owner' ? null
            : h('button.small.danger-text', { type: 'button', onclick: () => remove(m.username) }, 'Remove'))))))));
    } catch (e) {
      replace(body, errorBox(e, load));
    }
  }
  async function setRole(username, role) {
    await attempt(() => api.put(`${base}/${encodeURIComponent(username)}`, { role }), `${username} is now ${role}`);
    load();
  }
  async function remove(username) {
    if (!await confirm(`Remove ${username}?`, `${username} loses access to project “${route.project}”.`, 'Remove')) return;
    await attempt(() => api.del(`${base}/${encodeURIComponent(username)}`), `${username} removed`);
    load();
  }
  async function add() {
    const user = h('input', { name: 'username', required: true, autocomplete: 'off' });
    const role = select(memberRoles, 'viewer', { name: 'role' });
    const help = h('span.hint', roleHelp.viewer);
    role.addEventListener('change', () => { help.textContent = roleHelp[role.value]; });
    const done = await dialog({
      title: 'Add a member', ok: 'Add', body: [field('Username', user), h('label.field', h('span.label', 'Role'), role, help)],
      submit: () => api.put(`${base}/${encodeURIComponent(user.value)}`, { role: role.value }),
    });
    if (done) { toast(`${done.data.username} added as ${done.data.role}`); load(); }
  }

  load();
  return h('div.view',
    h('div.view-head', h('h2', 'Members'), h('p.muted', 'People who may use this project, and what they may do.'),
      h('div.head-actions', h('button.primary', { type: 'button', onclick: add }, 'Add member'))),
    body);
}

export function tokensView({ route }) {
  const base = api.resourcePath(route) + '/tokens';
  const fresh = h('div');
  const body = h('div', h('p.muted', 'Loading…'));
  const scope = t => [t.collection, t.cluster].filter(Boolean).join(' / ') || h('span.muted', 'whole project');

  async function load() {
    try {
      const { data } = await api.get(base, { limit: 1000 });
      const items = data.items || [];
      replace(body, items.length ? h('div.table-wrap', h('table.list',
        h('thead', h('tr', h('th', 'Name'), h('th', 'Role'), h('th', 'Scope'), h('th.opt', 'Created'), h('th.opt', 'Expires'), h('th.opt', 'Last used'), h('th', ''))),
        h('tbody', items.map(t => h('tr',
          h('td.name', { 'data-label': 'Name' }, h('strong', t.name)),
          h('td', { 'data-label': 'Role' }, h('span.badge', t.role)),
          h('td', { 'data-label': 'Scope' }, scope(t)),
          h('td.opt', { 'data-label': 'Created' }, when(t.created_at)),
          h('td.opt', { 'data-label': 'Expires' }, t.expires_at ? when(t.expires_at) : h('span.muted', 'never')),
          h('td.opt', { 'data-label': 'Last used' }, t.last_used_at ? when(t.last_used_at) : h('span.muted', 'never')),
          h('td.row-actions', h('button.small.danger-text', { type: 'button', onclick: () => revoke(t) }, 'Revoke')))))))
        : h('p.empty-note', 'No API tokens yet.'));
    } catch (e) {
      replace(body, errorBox(e, load));
    }
  }
  async function revoke(t) {
    if (!await confirm(`Revoke token “${t.name}”?`, 'Programs using it are refused from now on.', 'Revoke')) return;
    await attempt(() => api.del(`${base}/${encodeURIComponent(t.id)}`), `Token “${t.name}” revoked`);
    load();
  }
  async function create() {
    const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
    const role = select(tokenRoles, 'reader', { name: 'role' });
    const col = h('input', { name: 'collection', autocomplete: 'off', placeholder: 'all collections' });
    const clu = h('input', { name: 'cluster', autocomplete: 'off', placeholder: 'all clusters' });
    const exp = select(['never', '1 day', '30 days', '90 days', '1 year'], '90 days', { name: 'expires' });
    const secs = { '1 day': 86400, '30 days': 2592000, '90 days': 7776000, '1 year': 31536000 };
    const done = await dialog({
      title: 'New API token', ok: 'Create token',
      body: [field('Name', name, 'What will use it, e.g. “deploy bot”'), field('Role', role),
        h('div.row2', field('Collection', col), field('Cluster', clu)), field('Expires', exp)],
      submit: () => {
        const b = { name: name.value, role: role.value };
        if (col.value) b.collection = col.value;
        if (clu.value) b.cluster = clu.value;
        if (secs[exp.value]) b.expires_in = secs[exp.value];
        return api.post(base, b);
      },
    });
    if (!done) return;
    const tok = done.data.token;
    const out = h('input.mono.token', { readonly: true, value: tok, 'aria-label': 'New token', onfocus: e => e.target.select() });
    replace(fresh, h('div.alert.success', { role: 'status' },
      h('strong', `Token “${done.data.name}” created.`), ' Copy it now: it is shown only once.',
      h('div.inline', out, h('button.primary.small', { type: 'button', onclick: () => copy(tok) }, 'Copy'),
        h('button.small', { type: 'button', onclick: () => replace(fresh) }, 'Done'))));
    out.focus();
    load();
  }

  load();
  return h('div.view',
    h('div.view-head', h('h2', 'API tokens'), h('p.muted', 'Tokens let programs use this project (or part of it) without a password.'),
      h('div.head-actions', h('button.primary', { type: 'button', onclick: create }, 'New token'))),
    fresh, body);
}
