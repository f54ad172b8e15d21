// A project's snapshots (docs/api.md#snapshots-and-rollback-v13), in the
// compare tab: the list, newest first; taking one (editors); comparing one
// with a collection or cluster (GET P/diff?from_snapshot=); rolling that
// collection or cluster back to it (editors), reviewed as compare's
// promote is: a dry run with the revision the comparison was read at
// (if_revision) and delete: true lists what would change, and only its
// confirmation applies it, so that exactly what was reviewed is applied,
// or nothing (412); and deleting one (admins).

import * as api from '../api.js';
import { h, replace, dialog, confirm, attempt, field, toast, when, errorBox, errorText } from '../dom.js';
import { listView } from '../list.js';
import { containerPicker } from '../pickers.js';
import { side, labels } from './compare.js';

// At most this many changes are listed in the review; the counts say the rest.
const reviewRows = 200;

/** of is what a snapshot was taken of: "C" or "C/K". */
const of = s => s.cluster == null ? s.collection : s.collection + '/' + s.cluster;

export function snapshotsSection({ route, can }) {
  const pPath = api.resourcePath({ project: route.project });
  const base = pPath + '/snapshots';
  const detail = h('div');
  let open = null; // the name of the snapshot compared below the list
  const list = listView({
    path: base, label: 'snapshots', empty: 'No snapshots yet.', page: 10, cls: 'snapshots', columns: [
      { label: 'Name', cls: 'name', cell: s => [h('strong', s.name), s.automatic ? [' ', h('span.badge', { title: 'Taken by a promote, before it changed anything' }, 'automatic')] : null] },
      { label: 'Of', cell: s => h('span.mono', of(s)) },
      { label: 'Revision', cls: 'num', cell: s => s.revision },
      { label: 'Records', cls: 'num', cell: s => s.records },
      { label: 'Taken', cls: 'opt', cell: s => [when(s.created_at), h('span.muted', ' by ' + s.created_by)] },
      { label: 'Description', cell: s => s.description || h('span.muted', '—') },
      { label: '', cls: 'row-actions', cell: s => [
        h('button.small', { type: 'button', 'data-snapshot': s.name, onclick: () => compareWith(s) }, can('write') ? 'Compare or roll back…' : 'Compare…'),
        can('admin') ? h('button.small.danger-text', { type: 'button', onclick: () => remove(s) }, 'Delete') : null] },
    ],
  });

  async function take() {
    const name = h('input', { name: 'name', required: true, autocomplete: 'off', placeholder: 'before-release-2.0' });
    const p = containerPicker(route.project, { prefix: 'snapshot-', noCollection: 'Choose a collection', noCluster: 'Whole collection' });
    const description = h('input', { name: 'description', autocomplete: 'off' });
    const done = await dialog({
      title: 'Take a snapshot', ok: 'Take snapshot',
      body: [field('Name', name, 'Unique in the project; names starting with auto- are kept for the snapshots a promote takes'),
        p.el, field('Description', description, 'Optional: what it is kept for')],
      submit: () => {
        if (!p.col.value) throw new Error('Choose the collection to take a snapshot of');
        const b = { name: name.value, collection: p.col.value };
        if (p.clu.value) b.cluster = p.clu.value;
        if (description.value) b.description = description.value;
        return api.post(base, b);
      },
    });
    if (!done) return;
    const s = done.data;
    toast(`Snapshot ${s.name} taken: ${s.records} records of ${of(s)} at revision ${s.revision}`);
    list.restart();
  }

  async function remove(s) {
    if (!await confirm(`Delete snapshot ${s.name}?`, `The copy of ${of(s)} it keeps is gone for good; the collection itself does not change.`)) return;
    if (!await attempt(() => api.del(`${base}/${encodeURIComponent(s.name)}`), `Snapshot ${s.name} deleted`)) return;
    if (open === s.name) { open = null; replace(detail); }
    list.reload();
  }

  // compareWith shows snapshot s compared with a collection or cluster of
  // its kind (first the one it was taken of), and the rollback.
  function compareWith(s) {
    open = s.name;
    const cluster = s.cluster != null;
    const p = containerPicker(route.project, {
      prefix: 'rollback-', labels: ['Target collection', 'Target cluster'],
      noCollection: 'Choose a collection', noCluster: cluster ? 'Choose a cluster' : 'Whole collection',
    });
    p.col.required = true;
    // A snapshot of a collection pairs with a collection, of a cluster with a cluster.
    if (!cluster) p.clu.closest('label').hidden = true;
    else p.clu.required = true;
    const target = () => p.col.value ? p.col.value + (cluster && p.clu.value ? '/' + p.clu.value : '') : '';
    const out = h('div.compare-result');
    const go = h('button.primary', { type: 'submit' }, 'Compare');

    async function compare() {
      const to = target();
      if (!to || (cluster && !p.clu.value)) { toast(cluster ? 'Choose the cluster to compare with' : 'Choose the collection to compare with', 'info'); return; }
      replace(out, h('p.muted', 'Comparing…'));
      try {
        const d = (await api.get(pPath + '/diff', { from_snapshot: s.name, to })).data;
        replace(out, result(d, to));
      } catch (e) {
        replace(out, errorBox(e, compare));
      }
    }

    function stale(e) {
      replace(out, h('div.alert', { role: 'alert' },
        h('strong', 'The project changed since this comparison.'), ' ', h('span.msg', errorText(e)), ' ',
        h('button.link', { type: 'button', onclick: compare }, 'Compare again')));
    }

    function result(d, to) {
      const sm = d.summary;
      const body = { from_snapshot: s.name, to, delete: true, if_revision: d.revision };
      async function rollback() {
        let plan;
        try {
          plan = (await api.post(pPath + '/promote', { ...body, dry_run: true })).data;
        } catch (e) {
          if (e.status === 412) stale(e); else toast(errorText(e), 'error');
          return;
        }
        const changes = plan.changes || [];
        if (changes.length === 0) { toast(`Nothing to roll back: ${to} holds what snapshot ${s.name} holds`, 'info'); return; }
        const done = await dialog({
          title: `Roll ${to} back to snapshot ${s.name}?`, ok: 'Roll back', danger: true,
          body: [
            h('p', `A dry run says this rollback would make ${plan.created} created, ${plan.updated} updated, ${plan.deleted} deleted, in ${to}. Nothing has changed yet.`),
            h('ul.review', changes.slice(0, reviewRows).map(c => h('li',
              h('span', { class: 'action ' + c.action }, c.action), ' ', h('span.mono', [c.collection, c.cluster, c.record].join(' / '))))),
            changes.length > reviewRows ? h('p.muted', `and ${changes.length - reviewRows} more`) : null,
            h('p.muted', 'A snapshot of what it changes is taken first, so the rollback can be undone.'),
          ],
          submit: async () => {
            try {
              return { result: (await api.post(pPath + '/promote', body)).data };
            } catch (e) {
              if (e.status === 412) return { stale: e };
              throw e;
            }
          },
        });
        if (!done) return;
        if (done.stale) { toast(errorText(done.stale), 'error'); stale(done.stale); return; }
        const r = done.result;
        toast(`Rolled back ${to} to ${s.name}: ${r.created} created, ${r.updated} updated, ${r.deleted} deleted (revision ${r.revision})`
          + (r.snapshot ? `. Undo with snapshot ${r.snapshot}.` : ''));
        list.restart();
        compare();
      }
      return h('div',
        h('p.summary', { role: 'status' },
          `${sm.added} added, ${sm.removed} removed, ${sm.changed} changed, ${sm.unchanged} unchanged`,
          h('span.muted', ` · at revision ${d.revision}`)),
        d.items.length === 0 ? h('p.muted.empty', 'No differences.') : h('div.table-wrap', h('table.list.compare',
          h('thead', h('tr', h('th', 'Cluster'), h('th', 'Record'), h('th', 'Change'), h('th', `In snapshot ${s.name}`), h('th', `Now in ${to}`))),
          h('tbody', d.items.map(it => h('tr', { class: 'change-' + it.change },
            h('td', it.cluster), h('td.name', it.record),
            h('td', h('span', { class: 'change ' + it.change }, labels[it.change])),
            h('td.value', side(it.from)), h('td.value', side(it.to))))))),
        can('write') ? h('form.promote', { onsubmit: e => { e.preventDefault(); rollback(); } },
          h('button.primary', { type: 'submit' }, 'Roll back…'),
          h('p.muted', `Rolling back makes ${to} hold exactly what the snapshot holds: records it lacks are deleted. You review what would change before anything does.`))
          : null);
    }

    replace(detail, h('section.snapshot-compare', { 'aria-label': 'Compare a snapshot' },
      h('h3', 'Snapshot ', h('span.mono', s.name), ` of ${of(s)}, at revision ${s.revision}`),
      h('form.compare-form', { onsubmit: e => { e.preventDefault(); compare(); } },
        h('fieldset.side', h('legend', 'Compare with'), p.el),
        h('div.compare-go', go)),
      out));
    // First the collection or cluster it was taken of, when it still exists.
    p.choose(s.collection, s.cluster ?? '');
    detail.scrollIntoView?.({ block: 'nearest' });
  }

  return h('section.snapshots', { 'aria-label': 'Snapshots' },
    h('div.view-head', h('h2', 'Snapshots'),
      h('p.muted', 'A snapshot keeps a collection or cluster as it is now, to compare with later or roll back to. A promote takes one of what it changes first.'),
      can('write') ? h('div.head-actions', h('button.primary', { type: 'button', onclick: take }, 'Take a snapshot…')) : null),
    list.el, detail);
}
