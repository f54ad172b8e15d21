// Record types (API.md section 3): how a value is shown, and an editor
// for each type that gives back the value as JSON text. Numbers are kept
// as the text typed (a JSON number is sent as written, so an INTEGER
// beyond 2^53 stays exact); text that is not a number is sent as a
// string, and the API's own message says what is wrong with it.

import { h, copy, attempt } from './dom.js';

const BASE = ['STRING', 'INTEGER', 'FLOAT', 'BOOLEAN', 'DATE', 'TIME', 'DATETIME', 'UUID', 'NULL', 'CREDENTIAL'];
/** Every type, scalars then arrays. */
export const TYPES = [...BASE, ...BASE.map(t => '[]' + t)];
const MASK = '********';

const isArray = t => t.startsWith('[]');
const baseOf = t => t.replace(/^\[\]/, '');
/** isCredential says whether type holds credentials (CREDENTIAL or []CREDENTIAL). */
export const isCredential = t => baseOf(t) === 'CREDENTIAL';

/** show renders a value for a table cell. */
export function show(type, value) {
  if (value === null || value === undefined) return h('span.null', 'null');
  if (isArray(type)) {
    if (!Array.isArray(value) || value.length === 0) return h('span.muted', '[ ]');
    return h('span.array', value.map((v, i) => [i ? h('span.comma', ', ') : null, show(baseOf(type), v)]));
  }
  if (isCredential(type) && value === MASK) return h('span.masked', { title: 'Hidden' }, '••••••••');
  if (type === 'STRING' && value === '') return h('span.muted', '(empty)');
  return h('span.val', String(value));
}

/** text is a value as plain text, for the clipboard. */
export function text(type, value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return '[' + value.map(v => typeof v === 'string' ? JSON.stringify(v) : text(type, v)).join(',') + ']';
  return value !== null && typeof value === 'object' ? String(value) : JSON.stringify(value); // BigInteger: its text
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map(v => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

// scalar returns {el, json()} for one value of a base type; json() is
// the JSON text, or undefined for a hidden credential left as it was. A
// credential's field (class secret) has its own Show button unless eye
// is false (a record's page shows them all with one action).
function scalar(base, v, { label, inArray, eye = true }) {
  const aria = { 'aria-label': label };
  switch (base) {
    case 'NULL':
      return { el: h('span.muted.null-note', 'null: this type holds no value'), json: () => 'null' };
    case 'BOOLEAN': {
      const s = h('select', aria, h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
      s.value = v === true || v === 'true' ? 'true' : 'false';
      return { el: s, json: () => s.value };
    }
    case 'INTEGER': case 'FLOAT': {
      const i = h('input.mono', { ...aria, inputmode: base === 'INTEGER' ? 'numeric' : 'decimal', value: v ?? '', autocomplete: 'off', placeholder: base === 'INTEGER' ? '42' : '3.14' });
      return { el: i, json: () => NUMBER.test(i.value.trim()) ? i.value.trim() : JSON.stringify(i.value) };
    }
    case 'DATE': {
      const i = h('input', { ...aria, type: 'date', value: v ?? '' });
      return { el: i, json: () => JSON.stringify(i.value) };
    }
    case 'TIME': {
      const s = v == null ? '' : String(v);
      if (s && !/^\d\d:\d\d:\d\d(\.\d{3})?$/.test(s)) return textInput(s, aria, 'HH:MM:SS');
      const i = h('input', { ...aria, type: 'time', step: s.includes('.') ? '0.001' : '1', value: s });
      return { el: i, json: () => JSON.stringify(/^\d\d:\d\d$/.test(i.value) ? i.value + ':00' : i.value) };
    }
    case 'DATETIME': return datetime(v, aria);
    case 'UUID': {
      const i = h('input.mono', { ...aria, value: v ?? '', autocomplete: 'off', spellcheck: false, placeholder: '00000000-0000-0000-0000-000000000000', size: 36 });
      const gen = h('button.small', { type: 'button', onclick: () => { i.value = uuid(); i.dispatchEvent(new Event('input', { bubbles: true })); } }, 'New');
      return { el: h('span.inline', i, gen), json: () => JSON.stringify(i.value.trim()) };
    }
    case 'CREDENTIAL': {
      const hidden = v === MASK;
      const i = h('input.mono.secret', { ...aria, type: 'password', value: hidden ? '' : (v ?? ''), autocomplete: 'new-password', placeholder: hidden ? 'hidden: leave empty to keep' : 'secret value' });
      const btn = eye && h('button.small', { type: 'button', 'aria-pressed': 'false', onclick: () => {
        const showIt = i.type === 'password';
        i.type = showIt ? 'text' : 'password';
        btn.textContent = showIt ? 'Hide' : 'Show';
        btn.setAttribute('aria-pressed', String(showIt));
      } }, 'Show');
      return { el: btn ? h('span.inline', i, btn) : i, json: () => hidden && i.value === '' ? undefined : JSON.stringify(i.value) };
    }
    default: { // STRING
      if (inArray) return textInput(v ?? '', aria, '');
      const t = h('textarea', { ...aria, rows: 3, value: v ?? '', spellcheck: false });
      return { el: t, json: () => JSON.stringify(t.value) };
    }
  }
}

function textInput(v, aria, placeholder) {
  const i = h('input', { ...aria, value: v, autocomplete: 'off', placeholder });
  return { el: i, json: () => JSON.stringify(i.value) };
}

// datetime is a native date-and-time picker plus the UTC offset it is
// in, since RFC 3339 needs one and datetime-local has none. A value the
// picker cannot hold exactly (other fraction lengths) gets a text field.
function datetime(v, aria) {
  const s = v == null ? '' : String(v);
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{3})?)?)(Z|[+-]\d\d:\d\d)$/i.exec(s);
  if (s && !m) return textInput(s, aria, '2026-11-22T08:18:19Z');
  const local = h('input', { ...aria, type: 'datetime-local', step: m && m[1].includes('.') ? '0.001' : '1', value: m ? m[1] : '' });
  const off = h('input.offset.mono', { 'aria-label': 'UTC offset', value: m ? m[2].toUpperCase() : 'Z', size: 6, title: 'UTC offset: Z or ±HH:MM' });
  return {
    el: h('span.inline', local, off),
    json: () => {
      let l = local.value;
      if (/T\d\d:\d\d$/.test(l)) l += ':00';
      return JSON.stringify(l ? l + off.value.trim() : '');
    },
  };
}

// list edits an array: one row per element, each removable, and a
// button to add one.
function list(base, values, label, eye) {
  const rows = h('ol.array-editor');
  const items = [];
  const add = (v, focus) => {
    const item = scalar(base, v, { label: `${label} item`, inArray: true, eye });
    const row = h('li', item.el, h('button.small.icon', {
      type: 'button', 'aria-label': 'Remove item', title: 'Remove item',
      onclick: () => { items.splice(items.indexOf(item), 1); row.remove(); },
    }, '×'));
    items.push(item);
    rows.append(row);
    if (focus) row.querySelector('input, select, textarea')?.focus();
  };
  (Array.isArray(values) ? values : []).forEach(v => add(v));
  const addBtn = h('button.small', { type: 'button', onclick: () => add(base === 'BOOLEAN' ? false : '', true) }, '+ Add item');
  return {
    el: h('div.array-field', rows, addBtn), // not .array, a shown value's brackets
    json: () => {
      const parts = items.map(i => i.json());
      if (parts.length && parts.every(p => p === undefined)) return undefined; // hidden credentials kept
      return '[' + parts.map(p => p === undefined ? '""' : p).join(',') + ']';
    },
  };
}

/**
 * editor returns {el, json()} editing a value of type. With eye false,
 * a credential's fields have no Show button of their own.
 */
export function editor(type, value, label = 'Value', { eye = true } = {}) {
  if (isArray(type)) return list(baseOf(type), value, label, eye);
  return scalar(type, value, { label, eye });
}

/** carry turns a value of one type into a starting value for another. */
export function carry(from, to, value) {
  if (value === undefined || value === null) return isArray(to) ? [] : null;
  if (isCredential(from) !== isCredential(to)) return isArray(to) ? [] : null;
  if (isArray(to)) return Array.isArray(value) ? value : [value];
  return Array.isArray(value) ? value[0] ?? null : value;
}

/** typeSelect is a <select> of every type. */
export function typeSelect(current, onchange) {
  const s = h('select', { name: 'type', onchange: () => onchange(s.value) }, TYPES.map(t => h('option', { value: t }, t)));
  s.value = current;
  return s;
}

/** copyButton copies what get() resolves to (its error is shown). */
export function copyButton(get, label = 'Copy') {
  return h('button.small', { type: 'button', onclick: () => attempt(async () => copy(await get())) }, label);
}
