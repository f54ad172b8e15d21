// Sharing a project (API.md section 17): its members and their roles,
// the transfer of its ownership (section 24: the owner's, or a server
// administrator's, confirmed), and API tokens for programs (a new token
// is shown once, with a copy button). Routes the server does not offer
// show their error in place.

import * as api from '../api.js';
import { h, replace, dialog, confirm, attempt, field, toast, when, copy } from '../dom.js';
import { listView, pages } from '../list.js';
import { containerPicker } from '../pickers.js';
import { go } from '../router.js';

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

export function membersView({ route, can, me: who, roleChanged }) {
  const base = api.resourcePath(route) + '/members';
  const admin = can('admin'); // manages members; anyone else sees them, and may leave
  const me = api.session()?.username;
  // The owner hands the project over; a server administrator may for any project.
  const transfers = can('own') || Boolean(who?.admin);
  const list = listView({
    path: base, empty: 'No members.', columns: [
      { label: 'User', cls: 'name', cell: m => h('strong', m.username) },
      { label: 'Role', cell: m => m.role === 'owner' || !admin ? h('span.badge', m.role)
        : select(memberRoles, m.role, { 'aria-label': `Role of ${m.username}`, onchange: e => setRole(m.username, e.target.value) }) },
      { label: 'Since', cls: 'opt', cell: m => when(m.created_at) },
      { label: '', cls: 'row-actions', cell: m => m.role === 'owner' ? null
        : admin ? h('button.small.danger-text', { type: 'button', onclick: () => remove(m.username) }, 'Remove')
          : m.username === me ? h('button.small.danger-text', { type: 'button', onclick: leave }, 'Leave project') : null },
    ],
  });
  const load = list.reload;
  async function setRole(username, role) {
    await attempt(() => api.put(`${base}/${encodeURIComponent(username)}`, { role }), `${username} is now ${role}`);
    load();
  }
  async function remove(username) {
    if (!await confirm(`Remove ${username}?`, `${username} loses access to project “${route.project}”.`, 'Remove')) return;
    await attempt(() => api.del(`${base}/${encodeURIComponent(username)}`), `${username} removed`);
    load();
  }
  async function leave() {
    if (!await confirm(`Leave project “${route.project}”?`, 'You lose access to it; an admin can add you again.', 'Leave')) return;
    if (await attempt(() => api.del(`${base}/${encodeURIComponent(me)}`), `You left project “${route.project}”`)) go({});
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

  // transfer asks for the new owner (a member, suggested, or any
  // active user), then for a confirmation, and hands the project over
  // (PUT P/owner); the caller's role is read again, as it changed.
  async function transfer() {
    const user = h('input', { name: 'username', required: true, autocomplete: 'off', list: 'transfer-to', spellcheck: false });
    const suggestions = h('datalist', { id: 'transfer-to' });
    memberNames().then(ns => replace(suggestions, ns.map(n => h('option', { value: n }))), () => {});
    const username = await dialog({
      title: `Transfer project “${route.project}”`, ok: 'Continue',
      body: [h('p', 'The new owner may delete the project and transfer it again; the present owner stays on as an admin.'),
        field('New owner', user, 'A member of the project, or any user of this server'), suggestions],
      submit: async () => {
        const u = user.value.trim();
        if (!u) throw new Error('Name the new owner');
        return u;
      },
    });
    if (!username) return;
    // The confirmation sends it: a refusal (an unknown user) is said in it.
    const done = await dialog({
      title: `Make ${username} the owner of “${route.project}”?`, ok: 'Transfer ownership', danger: true,
      body: [h('p', `The present owner stays on as an admin; from now on only ${username} (or a server administrator) can delete the project or transfer it again.`)],
      submit: () => api.put(api.resourcePath(route) + '/owner', { username }),
    });
    if (!done) return;
    toast(`${username} is now the owner of “${route.project}”`);
    roleChanged();
  }
  async function memberNames() {
    const out = [];
    const walk = pages(base, {}, 100);
    while (walk.more()) out.push(...((await walk.next()).items || []).filter(m => m.role !== 'owner').map(m => m.username));
    return out;
  }

  return h('div.view',
    h('div.view-head', h('h2', 'Members'), h('p.muted', 'People who may use this project, and what they may do.'),
      admin || transfers ? h('div.head-actions',
        transfers ? h('button.danger-text', { type: 'button', onclick: transfer }, 'Transfer ownership') : null,
        admin ? h('button.primary', { type: 'button', onclick: add }, 'Add member') : null) : null),
    list.el);
}

export function tokensView({ route, can }) {
  const base = api.resourcePath(route) + '/tokens';
  const fresh = h('div');
  const scope = t => [t.collection, t.cluster].filter(Boolean).join(' / ') || h('span.muted', 'whole project');
  const list = listView({
    path: base, empty: 'No API tokens yet.', columns: [
      { label: 'Name', cls: 'name', cell: t => h('strong', t.name) },
      { label: 'Role', cell: t => h('span.badge', t.role) },
      { label: 'Scope', cell: scope },
      { label: 'Created', cls: 'opt', cell: t => when(t.created_at) },
      { label: 'Expires', cls: 'opt', cell: t => t.expires_at ? when(t.expires_at) : h('span.muted', 'never') },
      { label: 'Last used', cls: 'opt', cell: t => t.last_used_at ? when(t.last_used_at) : h('span.muted', 'never') },
      ...(can('admin') ? [{ label: '', cls: 'row-actions', cell: t => h('button.small.danger-text', { type: 'button', onclick: () => revoke(t) }, 'Revoke') }] : []),
    ],
  });
  const load = list.reload;
  async function revoke(t) {
    if (!await confirm(`Revoke token “${t.name}”?`, 'Programs using it are refused from now on.', 'Revoke')) return;
    await attempt(() => api.del(`${base}/${encodeURIComponent(t.id)}`), `Token “${t.name}” revoked`);
    load();
  }
  async function create() {
    const name = h('input', { name: 'name', required: true, autocomplete: 'off' });
    const role = select(tokenRoles, 'reader', { name: 'role' });
    const { col, clu, el: scopeEl } = scopePicker(route);
    const exp = select(['never', '1 day', '30 days', '90 days', '1 year'], '90 days', { name: 'expires' });
    const secs = { '1 day': 86400, '30 days': 2592000, '90 days': 7776000, '1 year': 31536000 };
    const done = await dialog({
      title: 'New API token', ok: 'Create token',
      body: [field('Name', name, 'What will use it, e.g. “deploy bot”'), field('Role', role),
        scopeEl, field('Expires', exp)],
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

  return h('div.view',
    h('div.view-head', h('h2', 'API tokens'), h('p.muted', 'Tokens let programs use this project (or part of it) without a password.'),
      can('admin') ? h('div.head-actions', h('button.primary', { type: 'button', onclick: create }, 'New token')) : null),
    fresh, list.el);
}

/**
 * scopePicker returns {col, clu, el}: selects of the project's
 * collections, then the chosen collection's clusters, as the API lists
 * them (an empty value: all), for a token's or a webhook's scope.
 */
export function scopePicker(route) {
  return containerPicker(route.project);
}
