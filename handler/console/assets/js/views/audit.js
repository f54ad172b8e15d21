// The audit log of a project (API.md section 15): newest first, filtered
// by action, by who made the change (a username or an API token's name,
// turned into the id the API filters by) and by date (since and until,
// whole days where the browser is), paged as every list is; new entries
// appear live.

import * as api from '../api.js';
import { h, replace, when } from '../dom.js';
import { listView, pages } from '../list.js';
import { where } from './project.js';

/** actions are the audit log's actions (API.md section 15). */
export const actions = ['project.create', 'project.rename', 'project.transfer', 'collection.create', 'collection.rename', 'collection.delete',
  'cluster.create', 'cluster.rename', 'cluster.delete', 'record.create', 'record.update', 'record.rename',
  'record.delete', 'record.restore', 'credential.reveal', 'member.put', 'member.delete', 'token.create', 'token.delete',
  'webhook.create', 'webhook.delete'];

// columns are the audit list's; what(e) fills the What cell.
const columns = what => [
  { label: '#', cls: 'num rev', cell: e => e.revision },
  { label: 'When', cls: 'when', cell: e => when(e.time) },
  { label: 'Action', cls: 'act', cell: e => h('span', { class: 'action ' + e.action.split('.')[1] }, e.action) },
  { label: 'Who', cls: 'actor', cell: e => h('span', { title: e.actor }, e.actor_name || e.actor) },
  { label: 'What', cls: 'what', cell: what },
  { label: 'Version', cls: 'num opt', cell: e => e.version ?? '' },
];

// An id the actor filter takes as it is: a user id (a UUID) or token:<id>.
const rawActor = /^(token:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// dayStart and dayEnd are the first and last instants of a day
// ("2026-11-26", from a date input) where the browser is, in RFC 3339.
function dayStart(d) {
  const [y, m, day] = d.split('-').map(Number);
  return new Date(y, m - 1, day, 0, 0, 0, 0).toISOString();
}
function dayEnd(d) {
  const [y, m, day] = d.split('-').map(Number);
  return new Date(y, m - 1, day, 23, 59, 59, 999).toISOString();
}

export function auditView({ route, feed, me, onCleanup }) {
  const base = api.resourcePath(route);
  // Who can be named: the project's members (by username) and API tokens
  // (by name), read once; for a server administrator, any user. The
  // token list also names the tokens that entries are about (tokenById).
  let known = null;
  let tokenById = new Map();
  function names() {
    if (!known) {
      known = (async () => {
        const byName = new Map();
        const byId = new Map();
        for (const [p, key, id] of [['/tokens', 'name', t => 'token:' + t.id], ['/members', 'username', m => m.user_id]]) {
          const walk = pages(base + p, {}, 100);
          while (walk.more()) {
            for (const it of (await walk.next()).items || []) {
              byName.set(it[key], id(it)); // members win over tokens
              if (p === '/tokens') byId.set(it.id, it.name);
            }
          }
        }
        tokenById = byId;
        replace(suggestions, [...byName.keys()].sort().map(n => h('option', { value: n })));
        return byName;
      })();
      known.catch(() => { known = null; });
    }
    return known;
  }

  // A token.* entry names its token by id (target): the console shows
  // its name, from the token list, or for a deleted token from an entry
  // the token wrote (actor_name), asked once per token.
  const tokenNames = new Map(); // id -> Promise of {name, deleted}
  function tokenName(id) {
    if (!tokenNames.has(id)) {
      const p = (async () => {
        await names();
        if (tokenById.has(id)) return { name: tokenById.get(id), deleted: false };
        const wrote = await api.list(base + '/audit', { actor: 'token:' + id, limit: 1 });
        return { name: wrote.items?.[0]?.actor_name ?? null, deleted: true };
      })();
      p.catch(() => tokenNames.delete(id));
      tokenNames.set(id, p);
    }
    return tokenNames.get(id);
  }
  function what(e) {
    if (!e.action.startsWith('token.') || !e.target) return where(e) || h('span.muted', 'project');
    const cell = h('span', { title: 'API token ' + e.target }, 'token …');
    tokenName(e.target).then(({ name, deleted }) => {
      if (name === null) replace(cell, 'a deleted token'); // it wrote nothing that names it
      else replace(cell, 'token “', name, '”', deleted ? h('span.muted', ' (deleted)') : null);
    }, () => replace(cell, 'a token'));
    return cell;
  }
  // A token created or deleted since the lists were read: read them again.
  const forget = msg => {
    if (msg.action?.startsWith('token.')) { known = null; tokenNames.clear(); }
  };
  async function actorOf(name) {
    if (!name || rawActor.test(name)) return name;
    const id = (await names()).get(name);
    if (id) return id;
    if (me?.admin) { // a former member: the users directory knows the name
      try { return (await api.get(api.path('users', name))).data.id; } catch { /* unknown below */ }
    }
    return null;
  }

  const action = h('select', { 'aria-label': 'Action', onchange: () => list.restart() },
    h('option', { value: '' }, 'All actions'), actions.map(a => h('option', { value: a }, a)));
  const suggestions = h('datalist', { id: 'audit-who' });
  let actor = '';
  let asked = 0;
  async function pickActor() {
    const mine = ++asked;
    const name = who.value.trim();
    let id;
    try {
      id = await actorOf(name);
    } catch (e) {
      id = undefined;
      replace(problem, h('p.alert', { role: 'alert' }, `Who made changes cannot be looked up: ${e.message}`));
    }
    if (mine !== asked) return;
    if (id === null) {
      replace(problem, h('p.alert', { role: 'alert' }, `No member or API token of this project is named “${name}”.`));
      list.el.classList.add('refused'); // no rows of another filter under this one
      return;
    }
    if (id === undefined) return;
    replace(problem);
    list.el.classList.remove('refused');
    actor = id;
    list.restart();
  }
  const who = h('input', { type: 'search', list: 'audit-who', placeholder: 'Username or token name', 'aria-label': 'User or token',
    autocomplete: 'off', onfocus: () => { names().catch(() => {}); }, onchange: pickActor,
    onkeydown: e => { if (e.key === 'Enter') pickActor(); } });
  const since = h('input', { type: 'date', 'aria-label': 'Since', title: 'From the start of this day', onchange: () => list.restart() });
  const until = h('input', { type: 'date', 'aria-label': 'Until', title: 'To the end of this day', onchange: () => list.restart() });
  const problem = h('div');
  const list = listView({
    path: base + '/audit', columns: columns(what), cls: 'audit',
    filters: [action, who, suggestions, h('label.date', 'From ', since), h('label.date', 'to ', until)],
    query: () => ({
      action: action.value, actor,
      since: since.value ? dayStart(since.value) : undefined,
      until: until.value ? dayEnd(until.value) : undefined,
    }),
    empty: 'No entries.', page: 50, pageLabels: ['← Newer', 'Older →'],
  });
  let t;
  onCleanup(feed.on(msg => { if (msg.entry) { forget(msg); clearTimeout(t); t = setTimeout(list.reload, 200); } }));
  return h('div.view',
    h('div.view-head', h('h2', 'Audit log'), h('p.muted', 'Every change to this project: who, what and when. Values are never recorded.')),
    list.el, problem);
}
