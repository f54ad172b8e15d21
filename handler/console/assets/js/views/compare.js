// Compare two collections or two clusters of a project and promote the
// differences (docs/api.md#compare-and-promote). Each side is picked
// from the project's collections and then, optionally, the collection's
// clusters. GET P/diff lists what differs; an editor ticks the records to
// take (two clusters only: for two collections the promote takes every
// difference) and reviews the promote before it runs: a dry run, with the
// revision the comparison was read at (if_revision), lists what would
// change, and only its confirmation applies it, with the same revision,
// so that exactly what was reviewed is applied, or nothing (412).
//
// Ticks: the first comparison of a pair ticks every difference. Comparing
// the same pair again (after a promote, or "Compare again") keeps each
// row's tick as the person left it; a row that was not in the previous
// comparison, or whose versions moved since, comes unticked and marked
// new, so that nothing unreviewed is taken by default.
//
// Below, the project's snapshots (snapshots.js): take one, compare one
// with a collection or cluster, roll back to it.

import * as api from '../api.js';
import { h, replace, toast, errorBox, errorText, dialog } from '../dom.js';
import { show } from '../values.js';
import { containerPicker } from '../pickers.js';
import { snapshotsSection } from './snapshots.js';

export const labels = { added: 'Added', removed: 'Removed', changed: 'Changed', unchanged: 'Unchanged' };

// At most this many changes are listed in the review; the counts say the rest.
const reviewRows = 200;

/** side shows one side of a comparison's item: its type and value, or a dash. */
export function side(v) {
  return v ? h('span', h('span.muted', v.type + ' '), show(v.type, v.value)) : h('span.muted', '—');
}

// sidePicker picks one side of a comparison: a collection, and optionally
// one of its clusters. value() is "C" or "C/K" ('' before a choice).
function sidePicker(project, which) {
  const p = containerPicker(project, {
    prefix: which.toLowerCase() + '-', labels: [`${which} collection`, `${which} cluster`],
    noCollection: 'Choose a collection', noCluster: 'Whole collection',
  });
  p.col.required = true;
  return {
    el: h('fieldset.side', h('legend', which), p.el),
    value: () => p.col.value ? p.col.value + (p.clu.value ? '/' + p.clu.value : '') : '',
  };
}

// rowKey names a row of a comparison; rowSig what it showed (a row whose
// versions moved is another one to review).
const rowKey = it => it.cluster + '/' + it.record;
const rowSig = it => [it.change, it.from?.version, it.to?.version].join(' ');

export function compareView({ route, can }) {
  const pPath = api.resourcePath({ project: route.project });
  const from = sidePicker(route.project, 'From');
  const to = sidePicker(route.project, 'To');
  const unchanged = h('input', { type: 'checkbox', name: 'unchanged' });
  const out = h('div.compare-result');
  // The ticks of the comparison on screen: the pair, and per row its
  // signature and checkbox.
  let ticked = { pair: null, rows: new Map() };

  async function compare(q = { from: from.value(), to: to.value() }) {
    replace(out, h('p.muted', 'Comparing…'));
    try {
      const query = { ...q };
      if (unchanged.checked) query.unchanged = 'true';
      const d = (await api.get(pPath + '/diff', query)).data;
      replace(out, result(d, q));
    } catch (e) {
      replace(out, errorBox(e, () => compare(q)));
    }
  }

  function stale(e) {
    replace(out, h('div.alert', { role: 'alert' },
      h('strong', 'The project changed since this comparison.'), ' ', h('span.msg', errorText(e)), ' ',
      h('button.link', { type: 'button', onclick: () => compare() }, 'Compare again')));
  }

  function result(d, q) {
    const clusters = d.from.includes('/');
    const write = can('write');
    const pair = d.from + '\n' + d.to;
    const before = ticked.pair === pair ? ticked.rows : null;
    const rows = new Map();
    const boxes = [];
    const all = h('input', { type: 'checkbox', 'aria-label': 'Tick every record', onchange: () => { for (const b of boxes) b.checked = all.checked; sync(); } });
    const sync = () => {
      const n = boxes.filter(b => b.checked).length;
      all.checked = boxes.length > 0 && n === boxes.length;
      all.indeterminate = n > 0 && n < boxes.length;
    };
    const trs = d.items.map(it => {
      const take = it.change !== 'unchanged';
      let box = null;
      let fresh = false;
      if (write && clusters && take) {
        const was = before?.get(rowKey(it));
        const checked = before ? (was?.sig === rowSig(it) ? was.box.checked : false) : true;
        fresh = before !== null && was?.sig !== rowSig(it);
        box = h('input', { type: 'checkbox', checked, 'aria-label': `Promote ${it.record}`, 'data-record': it.record, onchange: sync });
        boxes.push(box);
        rows.set(rowKey(it), { sig: rowSig(it), box });
      }
      return h('tr', { class: 'change-' + it.change },
        write && clusters ? h('td', box) : null,
        h('td', it.cluster), h('td.name', it.record),
        h('td', h('span', { class: 'change ' + it.change }, labels[it.change]),
          fresh ? h('span.badge.new', { title: 'Not in the previous comparison: left unticked' }, 'new') : null),
        h('td.value', side(it.from)), h('td.value', side(it.to)));
    });
    ticked = { pair, rows };
    sync();
    const s = d.summary;
    const del = h('input', { type: 'checkbox', name: 'delete' });
    const body = () => {
      const b = { from: d.from, to: d.to, delete: del.checked, if_revision: d.revision };
      if (clusters) b.records = boxes.filter(x => x.checked).map(x => x.dataset.record);
      return b;
    };

    // review runs the promote as a dry run and shows what it would do;
    // only a confirmation applies it (the same body, the same revision).
    async function review() {
      const b = body();
      if (clusters && b.records.length === 0) { toast('Tick the records to promote first', 'info'); return; }
      let plan;
      try {
        plan = (await api.post(pPath + '/promote', { ...b, dry_run: true })).data;
      } catch (e) {
        if (e.status === 412) stale(e); else toast(errorText(e), 'error');
        return;
      }
      const counts = `${plan.created} created, ${plan.updated} updated, ${plan.deleted} deleted`;
      const changes = plan.changes || [];
      if (changes.length === 0) { toast('Nothing to promote: the records ticked are the same on both sides', 'info'); return; }
      const done = await dialog({
        title: `Promote ${d.from} to ${d.to}?`, ok: 'Promote', danger: plan.deleted > 0,
        body: [
          h('p', `A dry run says this promote would make ${counts}, in ${d.to}. Nothing has changed yet.`),
          h('ul.review', changes.slice(0, reviewRows).map(c => h('li',
            h('span', { class: 'action ' + c.action }, c.action), ' ', h('span.mono', [c.collection, c.cluster, c.record].join(' / '))))),
          changes.length > reviewRows ? h('p.muted', `and ${changes.length - reviewRows} more`) : null,
        ],
        // A project changed since the comparison closes the review
        // (nothing was applied) and says so on the page.
        submit: async () => {
          try {
            return { result: (await api.post(pPath + '/promote', b)).data };
          } catch (e) {
            if (e.status === 412) return { stale: e };
            throw e;
          }
        },
      });
      if (!done) return;
      if (done.stale) { toast(errorText(done.stale), 'error'); stale(done.stale); return; }
      const r = done.result;
      toast(`Promoted: ${r.created} created, ${r.updated} updated, ${r.deleted} deleted (revision ${r.revision})`);
      compare(q);
    }

    return h('div',
      h('p.summary', { role: 'status' },
        `${s.added} added, ${s.removed} removed, ${s.changed} changed, ${s.unchanged} unchanged`,
        h('span.muted', ` · at revision ${d.revision}`)),
      d.items.length === 0 ? h('p.muted.empty', 'No differences.') : h('div.table-wrap', h('table.list.compare',
        h('thead', h('tr', write && clusters ? h('th', boxes.length ? all : h('span.sr-only', 'Promote')) : null,
          h('th', 'Cluster'), h('th', 'Record'), h('th', 'Change'), h('th', `From ${d.from}`), h('th', `To ${d.to}`))),
        h('tbody', trs))),
      write ? h('form.promote', { onsubmit: e => { e.preventDefault(); review(); } },
        h('label.check', del, ' Also delete the records only ', d.to, ' holds'),
        h('button.primary', { type: 'submit' }, clusters ? 'Promote the ticked records…' : 'Promote all differences…'),
        h('p.muted', clusters ? 'You review what would change before anything does.'
          : 'Between two collections a promote takes every difference; compare two clusters to choose records. You review what would change before anything does.'))
        : null);
  }

  return h('div.view',
    h('div.view-head', h('h2', 'Compare'), h('p.muted',
      'Two collections (staging and prod) or two clusters (staging/app and prod/app): what differs, record by record. Credentials are compared on their values and shown masked.')),
    h('form.compare-form', { onsubmit: e => { e.preventDefault(); compare(); } },
      from.el, to.el,
      h('div.compare-go', h('label.check', unchanged, ' Show unchanged'),
        h('button.primary', { type: 'submit' }, 'Compare'))),
    out,
    snapshotsSection({ route, can }));
}
