// The login form: the only screen without a session.

import * as api from '../api.js';
import { h, replace, errorBox, field } from '../dom.js';

export function loginView() {
  const user = h('input', { name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const pass = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const err = h('div');
  const btn = h('button.primary.wide', { type: 'submit' }, 'Log in');
  const form = h('form.login', {
    onsubmit: async ev => {
      ev.preventDefault();
      replace(err);
      btn.disabled = true;
      try {
        await api.login(user.value, pass.value);
      } catch (e) {
        replace(err, errorBox(e));
        btn.disabled = false;
        pass.select();
      }
    },
  },
  h('div.logo', h('img', { src: 'favicon.svg', alt: '', width: 40, height: 40 })),
  h('h1', 'Log in to hds'),
  h('p.muted', 'Browse and edit your projects, collections, clusters and records.'),
  field('Username', user), field('Password', pass), err, btn);
  setTimeout(() => user.focus(), 0);
  return h('div.login-wrap', form);
}
