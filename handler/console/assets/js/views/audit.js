// The audit log of a project (API.md section 15): newest first, filtered
// by action and actor, paged as every list is; new entries appear live.

import * as api from '../api.js';
import { h, when } from '../dom.js';
import { listView } from '../list.js';
import { where } from './project.js';

const actions = ['project.create', 'project.rename', 'collection.create', 'collection.rename', 'collection.delete',
  'cluster.create', 'cluster.rename', 'cluster.delete', 'record.create', 'record.update', 'record.rename',
  'record.delete', 'record.restore', 'credential.reveal', 'member.put', 'member.delete', 'token.create', 'token.delete'];

const columns = [
  { label: '#', cls: 'num', cell: e => e.revision },
  { label: 'When', cell: e => when(e.time) },
  { label: 'Action', cell: e => h('span', { class: 'action ' + e.action.split('.')[1] }, e.action) },
  { label: 'Who', cell: e => h('span', { title: e.actor }, e.actor_name || e.actor) },
  { label: 'What', cell: e => where(e) || h('span.muted', 'project') },
  { label: 'Version', cls: 'num opt', cell: e => e.version ?? '' },
];

export function auditView({ route, feed, onCleanup }) {
  const action = h('select', { 'aria-label': 'Action', onchange: () => list.restart() },
    h('option', { value: '' }, 'All actions'), actions.map(a => h('option', { value: a }, a)));
  const actor = h('input', { type: 'search', placeholder: 'Actor (user id or token:id)', 'aria-label': 'Actor',
    onkeydown: e => { if (e.key === 'Enter') list.restart(); } });
  const list = listView({
    path: api.resourcePath(route) + '/audit', columns, filters: [action, actor],
    query: () => ({ action: action.value, actor: actor.value }),
    empty: 'No entries.', page: 50, pageLabels: ['← Newer', 'Older →'],
  });
  let t;
  onCleanup(feed.on(msg => { if (msg.entry) { clearTimeout(t); t = setTimeout(list.reload, 200); } }));
  return h('div.view',
    h('div.view-head', h('h2', 'Audit log'), h('p.muted', 'Every change to this project: who, what and when. Values are never recorded.')),
    list.el);
}
