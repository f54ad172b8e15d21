// User administration (API.md section 24): for server administrators, a
// page to list, search, add, disable, enable, delete, promote and demote
// users and set their passwords; for everyone, changing one's own
// password (section 17). Every refusal (the last administrator, an owner
// who cannot be deleted) is shown as the API's message.

import * as api from '../api.js';
import { h, dialog, confirm, attempt, field, toast, when } from '../dom.js';
import { listView } from '../list.js';

const base = api.path('users');
const at = name => `${base}/${encodeURIComponent(name)}`;
const password = (name, label = 'Password') => field(label,
  h('input', { type: 'password', name, required: true, maxLength: 72, autocomplete: 'new-password' }), 'At most 72 bytes.');

export function usersView({ me }) {
  if (!me?.admin) {
    return h('div.view', h('div.view-head', h('h2', 'Users')),
      h('p.panel.error-box', 'Only server administrators manage users.'));
  }
  const list = listView({
    path: base, label: 'users', empty: 'No users match.',
    actions: [h('button.primary', { type: 'button', onclick: add }, 'Add user')],
    columns: [
      { label: 'User', cls: 'name', cell: u => h('strong', u.username, u.username === me.username ? h('span.muted', ' (you)') : null) },
      { label: 'Status', cell: u => h(u.disabled ? 'span.badge.off' : 'span.badge.ok', u.disabled ? 'disabled' : 'active') },
      { label: 'Administrator', cell: u => u.admin ? h('span.badge', 'admin') : h('span.muted', 'no') },
      { label: 'Since', cls: 'opt', cell: u => when(u.created_at) },
      { label: '', cls: 'row-actions', cell: u => h('span',
        h('button.small', { type: 'button', onclick: () => change(u, { disabled: !u.disabled }, `${u.username} ${u.disabled ? 'enabled' : 'disabled'}`) },
          u.disabled ? 'Enable' : 'Disable'),
        h('button.small', { type: 'button', onclick: () => change(u, { admin: !u.admin }, u.admin ? `${u.username} is no longer an administrator` : `${u.username} is an administrator`) },
          u.admin ? 'Unmake admin' : 'Make admin'),
        h('button.small', { type: 'button', onclick: () => setPassword(u) }, 'Set password'),
        h('button.small.danger-text', { type: 'button', onclick: () => remove(u) }, 'Delete')) },
    ],
  });
  async function change(u, body, done) {
    if (body.disabled && !await confirm(`Disable ${u.username}?`, `Every session of ${u.username} ends now; enabling the user later does not bring them back.`, 'Disable')) return;
    if (await attempt(() => api.put(at(u.username), body), done)) list.reload();
  }
  async function setPassword(u) {
    const pw = password('password', 'New password');
    const done = await dialog({
      title: `Set the password of ${u.username}`, ok: 'Set password', body: [pw, h('p.hint', 'Every session of the user ends.')],
      submit: () => api.put(at(u.username), { password: pw.querySelector('input').value }),
    });
    if (done) toast(`Password of ${u.username} set`);
  }
  async function remove(u) {
    if (!await confirm(`Delete ${u.username}?`, 'The account, its sessions and its memberships go; a user who owns projects cannot be deleted.', 'Delete')) return;
    if (await attempt(() => api.del(at(u.username)), `${u.username} deleted`)) list.reload();
  }
  async function add() {
    const name = h('input', { name: 'username', required: true, maxLength: 128, autocomplete: 'off' });
    const pw = password('password');
    const admin = h('input', { type: 'checkbox', name: 'admin' });
    const done = await dialog({
      title: 'Add a user', ok: 'Add',
      body: [field('Username', name), pw, h('label.field.check', admin, ' Server administrator')],
      submit: () => api.post(base, { username: name.value, password: pw.querySelector('input').value, admin: admin.checked }),
    });
    if (done) { toast(`${done.data.username} added`); list.reload(); }
  }
  return h('div.view',
    h('div.view-head', h('h2', 'Users'), h('p.muted', 'Accounts of this server. Administrators manage them.')),
    list.el);
}

export function accountView({ me }) {
  const current = h('input', { type: 'password', name: 'current_password', required: true, autocomplete: 'current-password' });
  const fresh = h('input', { type: 'password', name: 'new_password', required: true, maxLength: 72, autocomplete: 'new-password' });
  const form = h('form.panel', {
    onsubmit: async e => {
      e.preventDefault();
      const r = await attempt(() => api.changePassword(current.value, fresh.value), 'Password changed; your other sessions have ended');
      if (r) form.reset();
    },
  }, field('Current password', current), field('New password', fresh, 'At most 72 bytes. Every other session of yours ends.'),
  h('button.primary', { type: 'submit' }, 'Change password'));
  return h('div.view',
    h('div.view-head', h('h2', 'My account'),
      h('p.muted', me ? [`Logged in as ${me.username}`, me.admin ? ', a server administrator.' : '.'] : '')),
    h('h3', 'Change my password'), form);
}
