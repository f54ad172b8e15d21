// The form fields of a record: name, type and a value editor that is
// rebuilt (carrying the value over where it fits) when the type changes.
// createBody() and updateBody() give the JSON text of a create or update
// body.

import { h, replace, field } from '../dom.js';
import { editor, typeSelect, carry } from '../values.js';

// opts.eye false: a credential's fields have no Show button of their own
// (the record's page has one action for them all).
export function recordForm(rec = { name: '', type: 'STRING', value: '' }, { eye = true } = {}) {
  const name = h('input', { name: 'name', value: rec.name, required: true, maxLength: 128, autocomplete: 'off', spellcheck: false });
  let type = rec.type;
  let ed = editor(type, rec.value, 'Value', { eye });
  const slot = h('div.value-slot', ed.el);
  const typeSel = typeSelect(type, t => {
    let v = null;
    try { const j = ed.json(); v = j === undefined ? undefined : JSON.parse(j); } catch { /* start empty */ }
    ed = editor(t, carry(type, t, v), 'Value', { eye });
    type = t;
    replace(slot, ed.el);
  });
  const start = { name: rec.name, type: rec.type, value: editor(rec.type, rec.value).json() };
  return {
    el: h('div.record-form', field('Name', name), field('Type', typeSel), h('div.field', h('span.label', 'Value'), slot)),
    /** createBody is the body of POST K/records. */
    createBody() {
      return assemble({ name: name.value, type, value: ed.json() });
    },
    /** updateBody is the body of PUT R with only what changed, or null. */
    updateBody() {
      const out = {};
      if (name.value !== start.name) out.name = name.value;
      if (type !== start.type) out.type = type;
      const v = ed.json();
      if (v !== undefined && (v !== start.value || out.type)) out.value = v;
      return Object.keys(out).length ? assemble(out) : null;
    },
  };
}

// assemble writes a body whose value is JSON text as it is.
function assemble({ value, ...rest }) {
  const head = JSON.stringify(rest);
  if (value === undefined) return head;
  return head === '{}' ? `{"value":${value}}` : `${head.slice(0, -1)},"value":${value}}`;
}
