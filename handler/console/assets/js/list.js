// A paged, searchable, sortable table over one API list (API.md section
// 5). It pages with next_cursor when the list gives one and by offset
// otherwise, and shows the API's error in place of the rows.

import * as api from './api.js';
import { h, replace, errorBox } from './dom.js';

/**
 * listView returns {el, reload, restart}. Options: path (the list's API
 * path), columns [{label, cell(item), cls}], sorts [[value, label]] (none:
 * the list's own order, no sort controls), filters (extra elements for
 * the toolbar whose values come from query()), query() (extra query
 * parameters), empty (text), actions (toolbar buttons), label (for the
 * search box; none: no search box), page (rows per page), pageLabels
 * (the previous and next buttons), cls (a class of the table, for a
 * list's own layout on a phone).
 *
 * On a narrow screen the filters and sort controls fold behind a
 * "Filters" button, which counts the filters in use ("Filters (2)"); the
 * search box stays in view.
 */
export function listView({ path, columns, sorts, filters = [], query = () => ({}), empty, actions = [], label,
  page: PAGE = 25, pageLabels = ['← Previous', 'Next →'], cls }) {
  const state = { search: '', sortBy: sorts?.[0][0], sortOrder: sorts ? 'asc' : undefined, pages: [{ offset: 0 }], page: 0 };
  const body = h('tbody');
  const status = h('p.list-status', { 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', onclick: () => { state.page--; load(); } }, pageLabels[0]);
  const next = h('button', { type: 'button', onclick: () => { state.page++; load(); } }, pageLabels[1]);
  let searchTimer;
  const search = label && h('input', {
    type: 'search', placeholder: 'Search by name', 'aria-label': `Search ${label}`,
    oninput: () => { clearTimeout(searchTimer); searchTimer = setTimeout(() => { state.search = search.value; restart(); }, 250); },
    onkeydown: e => { if (e.key === 'Enter') { clearTimeout(searchTimer); state.search = search.value; restart(); } },
  });
  const sortSel = sorts && h('select', { 'aria-label': 'Sort by', onchange: () => { state.sortBy = sortSel.value; restart(); } },
    sorts.map(([v, l]) => h('option', { value: v }, l)));
  const orderBtn = sorts && h('button.icon', {
    type: 'button', title: 'Reverse the order', 'aria-label': 'Sort order: ascending',
    onclick: () => { state.sortOrder = state.sortOrder === 'asc' ? 'desc' : 'asc'; restart(); },
  }, '↑');
  const table = h('table.list', { class: cls },
    h('thead', h('tr', columns.map(c => h('th', { class: c.cls, scope: 'col' }, c.label)))), body);
  const folded = filters.length || sorts;
  const toggle = folded && h('button.filter-toggle', { type: 'button', 'aria-expanded': 'false', onclick: () => {
    const open = toolbar.classList.toggle('open');
    toggle.setAttribute('aria-expanded', String(open));
  } }, 'Filters');
  const toolbar = search || folded || actions.length
    ? h('div.toolbar', h('div.filters', search, toggle, folded ? h('div.more', filters, sorts ? h('span.sort', sortSel, orderBtn) : null) : null),
      h('div.buttons', actions)) : null;
  const el = h('section.listview', toolbar,
    h('div.table-wrap', table),
    h('div.pager', status, h('span.pages', prev, next)));

  // inUse counts the filters with a value (a date filter's input inside its label).
  const inUse = () => filters.flatMap(f => f.matches('input, select') ? [f] : [...f.querySelectorAll('input, select')])
    .filter(f => f.value !== '').length;

  function restart() { state.pages = [{ offset: 0 }]; state.page = 0; load(); }

  let seq = 0;
  async function load() {
    const mine = ++seq;
    if (orderBtn) {
      orderBtn.textContent = state.sortOrder === 'asc' ? '↑' : '↓';
      orderBtn.setAttribute('aria-label', `Sort order: ${state.sortOrder === 'asc' ? 'ascending' : 'descending'}`);
    }
    el.classList.add('loading');
    if (toggle) {
      const n = inUse();
      toggle.textContent = n ? `Filters (${n})` : 'Filters';
    }
    const at = state.pages[state.page];
    try {
      const data = await api.list(path, {
        limit: PAGE, cursor: at.cursor, offset: at.offset,
        search: state.search, sortBy: state.sortBy, sortOrder: state.sortOrder, ...query(),
      });
      if (mine !== seq) return;
      const items = data.items || [];
      replace(body, items.length ? items.map(it => h('tr', columns.map(c => h('td', { class: c.cls, 'data-label': c.label }, c.cell(it)))))
        : h('tr', h('td.empty', { colSpan: columns.length }, state.search ? 'Nothing matches the search.' : empty)));
      const from = (at.offset ?? state.page * PAGE) + 1;
      const more = data.next_cursor !== undefined ? data.next_cursor !== null : (data.offset + items.length < data.total);
      if (more) state.pages[state.page + 1] = data.next_cursor ? { cursor: data.next_cursor, offset: from - 1 + items.length } : { offset: data.offset + items.length };
      const total = data.total ?? '?';
      status.textContent = items.length ? `${from}–${from + items.length - 1} of ${total}` : `${total === '?' ? 0 : total} in all`;
      prev.disabled = state.page === 0;
      next.disabled = !more;
    } catch (e) {
      if (mine !== seq) return;
      replace(body, h('tr', h('td', { colSpan: columns.length }, errorBox(e, load))));
      status.textContent = '';
    } finally {
      if (mine === seq) el.classList.remove('loading');
    }
  }

  load();
  return { el, reload: load, restart };
}

/**
 * pages walks a whole list, page by page, for views that show it as
 * they like (a record's history): each call of next() resolves to the
 * next page's list object, and more() tells whether there is one. It
 * pages with next_cursor when the list gives one and by offset
 * otherwise, as listView does.
 */
export function pages(path, query = {}, limit = 50) {
  let at = { offset: 0 };
  return {
    more: () => at !== null,
    async next() {
      if (at === null) return { items: [] };
      const data = await api.list(path, { ...query, limit, cursor: at.cursor, offset: at.offset });
      const items = data.items || [];
      if (data.next_cursor !== undefined) at = data.next_cursor ? { cursor: data.next_cursor } : null;
      else at = items.length && data.offset + items.length < data.total ? { offset: data.offset + items.length } : null;
      return data;
    },
  };
}
