// The console's entry point: it keeps the header (breadcrumbs, who is
// logged in) and renders the view of the current route into <main>. A
// view is a function of the context that returns an element at once and
// fills it as its data arrives; an error of any kind ends up on the
// screen as its message.

import * as api from './api.js';
import { parse, href } from './router.js';
import { h, replace, toast, errorBox, errorText, dropToasts } from './dom.js';
import { Feed } from './feed.js';
import { can } from './rights.js';
import { loginView } from './views/login.js';
import { projectsView, collectionsView, clustersView } from './views/containers.js';
import { recordsView } from './views/records.js';
import { recordView } from './views/record.js';
import { projectBar } from './views/project.js';
import { membersView, tokensView } from './views/access.js';
import { auditView } from './views/audit.js';
import { compareView } from './views/compare.js';
import { webhooksView } from './views/webhooks.js';
import { usersView, accountView } from './views/users.js';
import { backupsView, backupsAvailable } from './views/backups.js';

const main = document.getElementById('main');
let cleanups = []; // of the view on screen

// draw puts a new view on screen: the old one's listeners go (they
// stayed while the new one was being read, so no change of the feed
// went unseen meanwhile), the new one's (fresh) stay.
function draw(fresh, ...children) {
  for (const f of cleanups.splice(0)) f();
  cleanups = fresh;
  replace(main, ...children);
}
let feed = null;

function view(route) {
  if (route.page === 'users') return usersView;
  if (route.page === 'account') return accountView;
  if (route.page === 'backups') return backupsView;
  if (!route.project) return projectsView;
  if (route.record != null) return recordView;
  if (route.cluster != null) return recordsView;
  if (route.collection != null) return clustersView;
  return { members: membersView, tokens: tokensView, audit: auditView, compare: compareView, webhooks: webhooksView }[route.tab] || collectionsView;
}

let renders = 0;

async function render() {
  const mine = ++renders;
  dropToasts(); // a notice belongs to the page it was shown on
  const route = parse();
  header(route);
  if (!api.session()) {
    setFeed(null);
    access = null;
    draw([], loginView());
    return;
  }
  setFeed(route.project);
  const me = await whoAmI();
  if (mine !== renders) return;
  header(route, me);
  let role;
  if (route.project) {
    // Which controls to show depends on the caller's role on the project.
    const known = roleOf(route.project);
    if (known.role === undefined) replace(main, h('p.muted.loading-view', 'Loading…'));
    try {
      role = await known.promise;
    } catch (e) {
      if (mine !== renders) return;
      access = null; // ask again on the next try
      draw([], errorBox(e, render));
      return;
    }
    if (mine !== renders) return;
  }
  const fresh = [];
  const ctx = { route, feed, role, me, can: right => can(role, right), onCleanup: f => fresh.push(f), rerender: render, roleChanged };
  // A collection's or a cluster's page is drawn once it is known to
  // exist: a missing one (misspelled, or deleted) shows its error alone,
  // without the buttons that would edit it. A record's page finds out
  // by reading the record.
  if (route.collection != null && route.record == null) {
    try {
      if (route.cluster != null) await api.get(api.resourcePath(route) + '/records', { limit: 1 });
      else await api.get(api.resourcePath(route));
    } catch (e) {
      if (mine !== renders) return;
      draw(fresh, projectBar(ctx), h('div.view', errorBox(e, render)));
      return;
    }
    if (mine !== renders) return;
  }
  let el;
  try {
    el = view(route)(ctx);
  } catch (e) {
    el = errorBox(e, render);
  }
  draw(fresh, route.project ? projectBar(ctx) : null, el);
  main.focus({ preventScroll: true });
}

// The caller's role on the open project (GET P answers it, as the
// project list does), asked once per project and user, and again when
// the feed says the caller's membership or the project's owner changed.
let access = null;

/** roleChanged reads the caller's role again and draws the page anew. */
function roleChanged() {
  access = null;
  render();
}

function roleOf(project) {
  const user = api.session()?.user_id;
  if (!access || access.project !== project || access.user !== user) {
    const a = { project, user, role: undefined };
    a.promise = api.get(api.resourcePath({ project })).then(r => { a.role = r.data.role; return a.role; });
    a.promise.catch(() => { /* shown by render */ });
    access = a;
  }
  return access;
}

// Who is logged in (GET /api/v1/auth/me), asked once per session user
// (every render of the session waits for the same answer); null while it
// cannot be read (the header then shows the name given at login, and it
// is asked again on the next render).
let whoami = null;

function whoAmI() {
  const s = api.session();
  if (!s) return Promise.resolve(null);
  if (!whoami || whoami.user !== s.user_id) {
    const w = { user: s.user_id };
    w.promise = api.me().catch(() => { if (whoami === w) whoami = null; return null; });
    whoami = w;
  }
  return whoami.promise;
}

// One change feed per open project, kept while moving inside it.
function setFeed(project) {
  if (feed && feed.project === project) return;
  if (feed) feed.close();
  feed = project ? new Feed(project) : null;
  if (!feed) return;
  feed.on(msg => {
    const e = msg.entry;
    if (!e) return;
    const me = api.session()?.username;
    // A transfer changes the roles of the new owner and of the old one.
    if ((msg.action.startsWith('member.') && e.target === me) ||
      (msg.action === 'project.transfer' && (e.target === me || access?.role === 'owner'))) roleChanged();
  });
}

function header(route, me) {
  const crumbs = [h('a', { href: href() }, 'Projects')];
  const parts = [['project', 'P'], ['collection', 'C'], ['cluster', 'K'], ['record', 'R']];
  const r = {};
  for (const [key, short] of parts) {
    if (route[key] == null) break;
    r[key] = route[key];
    crumbs.push(h('span.sep', { 'aria-hidden': 'true' }, '/'),
      h('a', { href: href(r), title: key }, h('abbr.lvl', { title: key }, short), ' ', route[key]));
  }
  if (route.record != null && route.version != null) crumbs.push(h('span.sep', { 'aria-hidden': 'true' }, '/'), h('span', `version ${route.version}`));
  if (route.page) crumbs.push(h('span.sep', { 'aria-hidden': 'true' }, '/'), h('span', { users: 'Users', backups: 'Backups' }[route.page] || 'My account'));
  if (route.tab) crumbs.push(h('span.sep', { 'aria-hidden': 'true' }, '/'), h('span', route.tab));
  replace(document.getElementById('crumbs'), api.session() ? crumbs : null);
  const s = api.session();
  replace(document.getElementById('who'), s ? [
    me?.admin ? h('a.nav', { href: href({ page: 'users' }) }, 'Users') : null,
    me?.admin ? backupsLink(me) : null,
    h('a.user', { href: href({ page: 'account' }), title: 'My account (user id ' + s.user_id + ')' },
      me ? me.username : s.username, me?.admin ? h('span.badge', ' admin') : null),
    h('button.ghost', { type: 'button', onclick: async () => { await api.logout(); toast('Logged out', 'info'); } }, 'Log out'),
  ] : null);
  const here = [route.record, route.cluster, route.collection, route.project].find(x => x != null);
  document.title = here != null ? `${here} · hds console` : 'hds console';
}

// backupsLink is the header's link to the backups page, shown once the
// server is known to serve the backup routes (the SQLite store).
function backupsLink(me) {
  const link = h('a.nav', { href: href({ page: 'backups' }), hidden: true }, 'Backups');
  backupsAvailable(me).then(yes => { link.hidden = !yes; });
  return link;
}

// The skip link moves focus without touching the route in the hash.
document.querySelector('.skip').addEventListener('click', e => { e.preventDefault(); main.focus(); });
window.addEventListener('hashchange', render);
window.addEventListener('hds:session', render);
window.addEventListener('hds:expired', e => toast(`Signed out: ${e.detail}`, 'error'));
// Nothing fails silently: any error no view caught is shown.
window.addEventListener('unhandledrejection', e => toast(errorText(e.reason), 'error'));
window.addEventListener('error', e => toast(e.message || 'Unexpected error', 'error'));

api.scheduleRefresh();
render();
