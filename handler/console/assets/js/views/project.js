// The bar on top of every screen inside a project: its name, the tabs
// (collections, compare, members, API tokens, webhooks when the server
// has them on, audit log), the state of the live
// change feed, and a notice for each change made by someone else.

import * as api from '../api.js';
import { href } from '../router.js';
import { h, toast } from '../dom.js';
import { webhooksOn } from './webhooks.js';

// The tabs, each with the right it needs (API tokens, webhooks and the
// audit log are an admin's); the webhooks tab shows once the server is
// known to have them on.
const tabs = [[undefined, 'Collections', 'read'], ['compare', 'Compare', 'read'], ['members', 'Members', 'read'], ['tokens', 'API tokens', 'admin'],
  ['webhooks', 'Webhooks', 'admin', webhooksOn], ['audit', 'Audit log', 'admin']];

/** where names the resource an audit entry is about. */
export function where(e) {
  return [e.collection, e.cluster, e.record].filter(x => x != null).join(' / ') || e.target || '';
}

export function projectBar({ route, feed, role, can, onCleanup }) {
  const project = route.project;
  const live = h('span.live', { role: 'status', title: '' });
  const show = () => {
    live.className = 'live state-' + feed.state;
    live.textContent = { live: 'Live', connecting: 'Connecting…', off: 'Not live' }[feed.state];
    live.title = feed.state === 'off' ? `Live updates are off: ${feed.reason}` : 'Changes made elsewhere appear here as they happen';
  };
  show();
  const me = api.session()?.user_id;
  onCleanup(feed.on(msg => {
    if (msg.state) { show(); return; }
    const e = msg.entry;
    if (e.actor === me) return; // this tab's own change: it said so already
    toast(`${e.actor_name || e.actor || 'someone'}: ${msg.action} ${where(e)}`.trim(), 'info');
  }));
  const current = route.collection == null ? route.tab : 'none';
  return h('div.projectbar',
    h('div.title',
      h('h1', h('span.kind', 'Project'), ' ', h('a', { href: href({ project }) }, project)),
      h('span.badge.role', { title: 'Your role on this project' }, role || 'no role'),
      live),
    h('nav.tabs', { 'aria-label': 'Project' }, tabs.filter(([, , right]) => can(right)).map(([tab, label, , on]) => {
      const a = h('a', { href: href({ project, tab }), 'aria-current': current === tab ? 'page' : null, hidden: !!on }, label);
      if (on) on(project).then(yes => { a.hidden = !yes; });
      return a;
    })));
}
