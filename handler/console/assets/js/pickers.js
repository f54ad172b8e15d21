// Pickers of a project's containers: a select of its collections, then a
// select of the chosen collection's clusters, filled from the API's lists
// (every page of them, by name). An API token's or a webhook's scope and
// the two sides of a comparison are picked with them, so that a name is
// chosen, never typed.

import * as api from './api.js';
import { h, replace } from './dom.js';
import { pages } from './list.js';

/** names walks a whole list at path and resolves to its items' names, sorted. */
export async function names(path) {
  const out = [];
  const walk = pages(path, { sortBy: 'name', sortOrder: 'asc' }, 1000);
  while (walk.more()) out.push(...((await walk.next()).items || []).map(it => it.name));
  return out;
}

/**
 * containerPicker returns {col, clu, el, ready, choose}: a select of project's
 * collections (name: prefix + 'collection') and one of the chosen
 * collection's clusters (prefix + 'cluster'), disabled until a collection
 * is chosen. The first option of each has the value '' and the text
 * noCollection and noCluster ("All collections", "Whole collection"). el
 * is the two labelled selects and the place of a list's error; ready
 * resolves once the collections are listed (to false when they could not
 * be); choose(collection, cluster) picks both once they are listed.
 */
export function containerPicker(project, { prefix = '', labels = ['Collection', 'Cluster'], noCollection = 'All collections',
  noCluster = 'All clusters' } = {}) {
  const col = h('select', { name: prefix + 'collection', 'aria-label': labels[0] }, h('option', { value: '' }, noCollection));
  const clu = h('select', { name: prefix + 'cluster', 'aria-label': labels[1], disabled: true }, h('option', { value: '' }, noCluster));
  const err = h('div');
  const fill = async (path, first, what) => {
    try {
      return [h('option', { value: '' }, first), (await names(path)).map(n => h('option', { value: n }, n))];
    } catch (e) {
      replace(err, h('p.alert', { role: 'alert' }, `The ${what} cannot be listed: ${e.message}`));
      return null;
    }
  };
  const ready = fill(api.resourcePath({ project }) + '/collections', noCollection, 'collections').then(opts => {
    if (!opts) return false;
    replace(col, opts);
    return true;
  });
  let asked = 0;
  // clusters lists the chosen collection's clusters; resolves to whether
  // this is still the latest choice and its clusters are listed.
  const clusters = async () => {
    const mine = ++asked;
    replace(clu, h('option', { value: '' }, noCluster));
    clu.disabled = true;
    if (!col.value) return false;
    const opts = await fill(api.resourcePath({ project, collection: col.value }) + '/clusters', noCluster, 'clusters');
    if (!opts || mine !== asked) return false;
    replace(clu, opts);
    clu.disabled = false;
    return true;
  };
  col.addEventListener('change', clusters);
  // choose picks collection and cluster ('' none) once they are listed; a
  // name the lists lack is left unpicked.
  const choose = async (collection, cluster = '') => {
    if (!await ready || ![...col.options].some(o => o.value === collection)) return;
    col.value = collection;
    if (await clusters() && [...clu.options].some(o => o.value === cluster)) clu.value = cluster;
  };
  return { col, clu, ready, choose, el: [h('div.row2', h('label.field', h('span.label', labels[0]), col), h('label.field', h('span.label', labels[1]), clu)), err] };
}
