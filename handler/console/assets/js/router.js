// Routes live in the location hash, so the console needs one page only
// and works under any mount prefix:
//   #/                                   projects
//   #/p/P[/compare|/members|/tokens|/webhooks|/audit]  a project (collections, or a tab)
//   #/p/P/c/C                            a collection's clusters
//   #/p/P/c/C/k/K                        a cluster's records
//   #/p/P/c/C/k/K/r/R                    a record (R "+" = a new one)
//   #/p/P/c/C/k/K/r/R/v/N                version N of a record, as it was
//   #/users                              the users (server administrators)
//   #/backups                            the backups (server administrators, SQLite store)
//   #/account                            my account (change my password)

import { carryToasts } from './dom.js';

const keys = { p: 'project', c: 'collection', k: 'cluster', r: 'record', v: 'version' };

/** parse reads a hash into {project, collection, cluster, record, version, tab}. */
export function parse(hash = location.hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const route = {};
  if (parts.length === 1 && pages.includes(parts[0])) return { page: parts[0] };
  for (let i = 0; i < parts.length; i++) {
    const key = keys[parts[i]];
    if (key && i + 1 < parts.length) route[key] = parts[++i];
    else if (route.project && !route.collection) route.tab = parts[i];
  }
  return route;
}

// pages are the routes outside any project.
const pages = ['users', 'account', 'backups'];

/** href builds the hash of a route. */
export function href({ project, collection, cluster, record, version, tab, page } = {}) {
  if (page) return '#/' + page;
  const seg = [];
  const add = (k, v) => seg.push(k, encodeURIComponent(v));
  if (project != null) add('p', project);
  if (collection != null) add('c', collection);
  if (cluster != null) add('k', cluster);
  if (record != null) add('r', record);
  if (record != null && version != null) add('v', version);
  if (tab && project != null && collection == null) seg.push(tab);
  return '#/' + seg.join('/');
}

/** go navigates to a route, the notices shown so far going along. */
export function go(route) {
  location.hash = href(route);
  carryToasts();
}
