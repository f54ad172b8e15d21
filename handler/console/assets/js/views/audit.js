// The audit log of a project (API.md section 15): newest first, filtered
// by action and actor, paged by offset; new entries appear live.

import * as api from '../api.js';
import { h, replace, when, errorBox } from '../dom.js';
import { where } from './project.js';

const actions = ['project.create', 'project.rename', 'collection.create', 'collection.rename', 'collection.delete',
  'cluster.create', 'cluster.rename', 'cluster.delete', 'record.create', 'record.update', 'record.rename',
  'record.delete', 'record.restore', 'credential.reveal', 'member.put', 'member.delete', 'token.create', 'token.delete'];
const PAGE = 50;

export function auditView({ route, feed, onCleanup }) {
  const base = api.resourcePath(route) + '/audit';
  let offset = 0;
  const action = h('select', { 'aria-label': 'Action', onchange: () => { offset = 0; load(); } },
    h('option', { value: '' }, 'All actions'), actions.map(a => h('option', { value: a }, a)));
  const actor = h('input', { type: 'search', placeholder: 'Actor (user id or token:id)', 'aria-label': 'Actor',
    onkeydown: e => { if (e.key === 'Enter') { offset = 0; load(); } } });
  const body = h('div', h('p.muted', 'Loading…'));
  const status = h('p.list-status');
  const prev = h('button', { type: 'button', onclick: () => { offset = Math.max(0, offset - PAGE); load(); } }, '← Newer');
  const next = h('button', { type: 'button', onclick: () => { offset += PAGE; load(); } }, 'Older →');

  async function load() {
    try {
      const { data } = await api.get(base, { limit: PAGE, offset, action: action.value, actor: actor.value });
      const items = data.items || [];
      replace(body, h('div.table-wrap', h('table.list',
        h('thead', h('tr', h('th.num', '#'), h('th', 'When'), h('th', 'Action'), h('th', 'Who'), h('th', 'What'), h('th.num.opt', 'Version'))),
        h('tbody', items.length ? items.map(e => h('tr',
          h('td.num', { 'data-label': '#' }, e.revision),
          h('td', { 'data-label': 'When' }, when(e.time)),
          h('td', { 'data-label': 'Action' }, h('span', { class: 'action ' + e.action.split('.')[1] }, e.action)),
          h('td', { 'data-label': 'Who', title: e.actor }, e.actor_name || e.actor),
          h('td', { 'data-label': 'What' }, where(e) || h('span.muted', 'project')),
          h('td.num.opt', { 'data-label': 'Version' }, e.version ?? ''))) : h('tr', h('td.empty', { colSpan: 6 }, 'No entries.'))))));
      const total = data.total ?? '?';
      status.textContent = items.length ? `${offset + 1}–${offset + items.length} of ${total}` : '';
      prev.disabled = offset === 0;
      next.disabled = offset + items.length >= (data.total ?? Infinity) || items.length < PAGE;
    } catch (e) {
      replace(body, errorBox(e, load));
      status.textContent = '';
    }
  }
  let t;
  onCleanup(feed.on(msg => { if (msg.entry && offset === 0) { clearTimeout(t); t = setTimeout(load, 200); } }));
  load();
  return h('div.view',
    h('div.view-head', h('h2', 'Audit log'), h('p.muted', 'Every change to this project: who, what and when. Values are never recorded.')),
    h('div.toolbar', h('div.filters', action, actor)),
    body, h('div.pager', status, h('span.pages', prev, next)));
}
