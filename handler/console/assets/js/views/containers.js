// The three container levels, projects > collections > clusters: each a
// list with create, rename and delete (deletes are confirmed). Every
// level's own page (a project, a collection, a cluster, a record) has
// its rename and delete in one place: at the right of its heading
// (levelActions).

import * as api from '../api.js';
import { href, go } from '../router.js';
import { h, dialog, confirm, attempt, field, toast, when } from '../dom.js';
import { listView } from '../list.js';
import { can } from '../rights.js';

const sorts = [['name', 'Name'], ['updated_at', 'Last updated'], ['created_at', 'Created']];

// level describes one container level for a route.
function level(kind, route) {
  switch (kind) {
    case 'project': return {
      kind, plural: 'projects', listPath: api.path('projects'),
      at: name => ({ project: name }),
      counts: [['Collections', p => p.collection_count]],
      note: 'A project holds collections; share it with members or API tokens.',
    };
    case 'collection': return {
      kind, plural: 'collections', listPath: api.resourcePath(route) + '/collections',
      at: name => ({ project: route.project, collection: name }),
      counts: [['Clusters', c => c.cluster_count], ['Records', c => c.record_count]],
      note: 'A collection groups clusters, for example one per environment.',
    };
    default: return {
      kind, plural: 'clusters', listPath: api.resourcePath(route) + '/clusters',
      at: name => ({ project: route.project, collection: route.collection, cluster: name }),
      counts: [['Records', k => k.record_count]],
      note: 'A cluster holds typed records.',
    };
  }
}

const nameInput = value => h('input', { name: 'name', value: value || '', required: true, maxLength: 128, autocomplete: 'off' });

/**
 * renameContainer asks for a new name of the project, collection or
 * cluster at path and renames it; resolves to the renamed one, or
 * undefined when cancelled.
 */
export async function renameContainer(kind, name, path) {
  const input = nameInput(name);
  const done = await dialog({
    title: `Rename ${kind} “${name}”`, ok: 'Rename', body: [field('New name', input)],
    submit: () => api.put(path, { name: input.value }),
  });
  if (!done) return undefined;
  toast(`Renamed to “${done.data.name}”`);
  return done.data;
}

/**
 * deleteContainer asks, then deletes the project, collection or cluster
 * at path; resolves to whether it was deleted.
 */
export async function deleteContainer(kind, name, path) {
  if (!await confirm(`Delete ${kind} “${name}”?`,
    `This deletes the ${kind} and everything in it. It cannot be undone.`)) return false;
  return attempt(() => api.del(path), `${cap(kind)} “${name}” deleted`);
}

/**
 * levelActions is the place of a level's own rename and delete: the
 * buttons "Rename <kind>" and "Delete <kind>", each when its function is
 * given (the caller's role allows it), at the right of the heading of
 * the level's page; null when neither is.
 */
export function levelActions(kind, { rename, remove, extra = [] }) {
  if (!rename && !remove) return extra.length ? h('div.head-actions', extra) : null;
  return h('div.head-actions', extra,
    rename ? h('button.small', { type: 'button', onclick: rename }, `Rename ${kind}`) : null,
    remove ? h('button.small.danger-text', { type: 'button', onclick: remove }, `Delete ${kind}`) : null);
}

// ownActions are the rename and delete of the level whose page shows
// the list of kind: the project's above its collections, the
// collection's above its clusters.
function ownActions(kind, route, may) {
  if (kind === 'collection') {
    const path = api.resourcePath({ project: route.project });
    return levelActions('project', {
      rename: may('admin') && (async () => {
        const done = await renameContainer('project', route.project, path);
        if (done) go({ project: done.name });
      }),
      remove: may('own') && (async () => {
        if (await deleteContainer('project', route.project, path)) go({});
      }),
    });
  }
  if (kind === 'cluster') {
    const path = api.resourcePath({ project: route.project, collection: route.collection });
    const write = may('write');
    return levelActions('collection', {
      rename: write && (async () => {
        const done = await renameContainer('collection', route.collection, path);
        if (done) go({ project: route.project, collection: done.name });
      }),
      remove: write && (async () => {
        if (await deleteContainer('collection', route.collection, path)) go({ project: route.project });
      }),
    });
  }
  return null;
}

function containerView(kind, { route, feed, can: may, onCleanup }) {
  const lv = level(kind, route);
  // Who may rename and delete: a project's own role, shown per row (the
  // project list gives each one's role); below a project, editors.
  const allowed = kind === 'project'
    ? { create: true, rename: it => can(it.role, 'admin'), remove: it => can(it.role, 'own') }
    : { create: may('write'), rename: () => may('write'), remove: () => may('write') };

  async function create() {
    const input = nameInput();
    const made = await dialog({
      title: `New ${lv.kind}`, ok: 'Create', body: [field('Name', input)],
      submit: () => api.post(lv.listPath, { name: input.value }),
    });
    if (made) { toast(`${cap(lv.kind)} “${made.data.name}” created`); go(lv.at(made.data.name)); }
  }
  async function rename(item) {
    if (await renameContainer(lv.kind, item.name, api.resourcePath(lv.at(item.name)))) list.reload();
  }
  async function remove(item) {
    if (await deleteContainer(lv.kind, item.name, api.resourcePath(lv.at(item.name)))) list.reload();
  }

  const columns = [
    { label: 'Name', cls: 'name', cell: it => h('a.strong', { href: href(lv.at(it.name)) }, it.name) },
    ...(kind === 'project' ? [{ label: 'Role', cls: 'opt', cell: it => h('span.badge', it.role) }] : []),
    ...lv.counts.map(([label, f]) => ({ label, cls: 'num', cell: f })),
    { label: 'Updated', cls: 'opt', cell: it => when(it.updated_at) },
    { label: '', cls: 'row-actions', cell: it => [
      allowed.rename(it) ? h('button.small', { type: 'button', onclick: () => rename(it), 'aria-label': `Rename ${it.name}` }, 'Rename') : null,
      allowed.remove(it) ? h('button.small.danger-text', { type: 'button', onclick: () => remove(it), 'aria-label': `Delete ${it.name}` }, 'Delete') : null,
    ] },
  ];
  const list = listView({
    path: lv.listPath, columns, sorts, label: lv.plural,
    empty: allowed.create ? `No ${lv.plural} yet. Create the first one.` : `No ${lv.plural} yet.`,
    actions: allowed.create ? [h('button.primary', { type: 'button', onclick: create }, `New ${lv.kind}`)] : [],
  });
  if (feed) {
    let t;
    onCleanup(feed.on(msg => {
      if (msg.entry) { clearTimeout(t); t = setTimeout(list.reload, 300); }
    }));
  }
  const heading = kind === 'project' ? h('h1', 'Projects')
    : kind === 'cluster' ? h('h2', h('span.kind', 'Collection'), ' ', route.collection) : h('h2', 'Collections');
  return h('div.view', h('div.view-head', heading, ownActions(kind, route, may), h('p.muted', lv.note)), list.el);
}

const cap = s => s[0].toUpperCase() + s.slice(1);

export const projectsView = ctx => containerView('project', ctx);
export const collectionsView = ctx => containerView('collection', ctx);
export const clustersView = ctx => containerView('cluster', ctx);
