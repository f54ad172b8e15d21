// Compare two collections or two clusters of a project and promote the
// differences (docs/api.md#21-compare-and-promote): GET P/diff lists what
// differs; an editor ticks the records to take (two clusters only: for two
// collections the promote takes every difference) and promotes them with
// the revision the comparison was read at (if_revision), so that exactly
// what was reviewed is applied, or nothing (412).

import * as api from '../api.js';
import { h, replace, toast, errorBox, errorText } from '../dom.js';
import { show } from '../values.js';

const labels = { added: 'Added', removed: 'Removed', changed: 'Changed', unchanged: 'Unchanged' };

function side(v) {
  return v ? h('span', h('span.muted', v.type + ' '), show(v.type, v.value)) : h('span.muted', '—');
}

export function compareView({ route, can }) {
  const pPath = api.resourcePath({ project: route.project });
  const from = h('input', { name: 'from', placeholder: 'staging or staging/app', 'aria-label': 'From (collection or collection/cluster)', required: true });
  const to = h('input', { name: 'to', placeholder: 'prod or prod/app', 'aria-label': 'To (collection or collection/cluster)', required: true });
  const unchanged = h('input', { type: 'checkbox', name: 'unchanged' });
  const out = h('div.compare-result');
  let shown = null; // the comparison on screen: {from, to, revision, items}

  async function compare() {
    replace(out, h('p.muted', 'Comparing…'));
    try {
      const q = { from: from.value.trim(), to: to.value.trim() };
      if (unchanged.checked) q.unchanged = 'true';
      const d = (await api.get(pPath + '/diff', q)).data;
      shown = d;
      replace(out, result(d));
    } catch (e) {
      shown = null;
      replace(out, errorBox(e, compare));
    }
  }

  function result(d) {
    const clusters = d.from.includes('/');
    const write = can('write');
    const ticks = [];
    const rows = d.items.map(it => {
      const take = it.change !== 'unchanged';
      const box = write && clusters && take
        ? h('input', { type: 'checkbox', checked: true, 'aria-label': `Promote ${it.record}`, 'data-record': it.record })
        : null;
      if (box) ticks.push(box);
      return h('tr', { class: 'change-' + it.change },
        write && clusters ? h('td', box) : null,
        h('td', it.cluster), h('td.name', it.record),
        h('td', h('span', { class: 'change ' + it.change }, labels[it.change])),
        h('td.value', side(it.from)), h('td.value', side(it.to)));
    });
    const s = d.summary;
    const del = h('input', { type: 'checkbox', name: 'delete' });
    const dry = h('input', { type: 'checkbox', name: 'dry_run' });
    const promote = async () => {
      const body = { from: d.from, to: d.to, delete: del.checked, dry_run: dry.checked, if_revision: d.revision };
      if (clusters) body.records = ticks.filter(b => b.checked).map(b => b.dataset.record);
      try {
        const r = (await api.post(pPath + '/promote', body)).data;
        const counts = `${r.created} created, ${r.updated} updated, ${r.deleted} deleted`;
        if (dry.checked) {
          toast(`Dry run: would have ${counts}`, 'info');
          return;
        }
        toast(`Promoted: ${counts} (revision ${r.revision})`);
        compare();
      } catch (e) {
        toast(errorText(e), 'error');
        if (e.status === 412) replace(out, h('div.alert', { role: 'alert' },
          h('strong', 'The project changed since this comparison.'), ' ', h('span.msg', errorText(e)), ' ',
          h('button.link', { type: 'button', onclick: compare }, 'Compare again')));
      }
    };
    return h('div',
      h('p.summary', { role: 'status' },
        `${s.added} added, ${s.removed} removed, ${s.changed} changed, ${s.unchanged} unchanged`,
        h('span.muted', ` · at revision ${d.revision}`)),
      d.items.length === 0 ? h('p.muted.empty', 'No differences.') : h('div.table-wrap', h('table.list.compare',
        h('thead', h('tr', write && clusters ? h('th', h('span.sr-only', 'Promote')) : null,
          h('th', 'Cluster'), h('th', 'Record'), h('th', 'Change'), h('th', `From ${d.from}`), h('th', `To ${d.to}`))),
        h('tbody', rows))),
      write ? h('form.promote', { onsubmit: e => { e.preventDefault(); promote(); } },
        h('label.check', del, ' Also delete the records only ', d.to, ' holds'),
        h('label.check', dry, ' Dry run'),
        h('button.primary', { type: 'submit' }, clusters ? 'Promote the ticked records' : 'Promote all differences'),
        clusters ? null : h('p.muted', 'Between two collections a promote takes every difference; compare two clusters to choose records.'))
        : null);
  }

  return h('div.view',
    h('div.view-head', h('h2', 'Compare'), h('p.muted',
      'Two collections (staging and prod) or two clusters (staging/app and prod/app): what differs, record by record. Credentials are compared on their values and shown masked.')),
    h('form.compare-form', { onsubmit: e => { e.preventDefault(); compare(); } },
      h('label.field', h('span.label', 'From'), from),
      h('label.field', h('span.label', 'To'), to),
      h('label.check', unchanged, ' Show unchanged'),
      h('button.primary', { type: 'submit' }, 'Compare')),
    out);
}
