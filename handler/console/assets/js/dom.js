// Small DOM helpers: building elements, notices, modal dialogs, the
// clipboard and dates. Nothing here knows about the API.

/**
 * h builds an element: h('button.primary', {onclick}, 'Save'). The tag
 * may carry classes after dots; attrs starting with "on" are listeners;
 * children are nodes, strings, or arrays of them (null skipped).
 */
export function h(tag, attrs = {}, ...children) {
  if (attrs === null || typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs)) {
    children.unshift(attrs);
    attrs = {};
  }
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name);
  if (classes.length) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className += (el.className ? ' ' : '') + v;
    else if (k === 'value') el.value = v;
    else if (k in el && k !== 'list' && k !== 'form' && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

/** replace puts children in place of el's content. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * toast shows a short notice; kind is 'ok', 'error' or 'info'. It
 * belongs to the page (the location's hash) it is shown on: leaving the
 * page removes it (dropToasts), unless the page is left by what the
 * notice tells of (carryToasts).
 */
export function toast(text, kind = 'ok') {
  const box = document.getElementById('toasts');
  const t = h('div.toast.' + kind, { role: kind === 'error' ? 'alert' : null, 'data-page': location.hash }, text);
  box.append(t);
  setTimeout(() => t.classList.add('gone'), kind === 'error' ? 7000 : 3500);
  setTimeout(() => t.remove(), kind === 'error' ? 7600 : 4100);
}

/** dropToasts removes the notices of pages other than the one shown. */
export function dropToasts() {
  for (const t of document.querySelectorAll('#toasts .toast')) {
    if (t.dataset.page !== location.hash) t.remove();
  }
}

/**
 * carryToasts moves the notices shown so far to the page now in the
 * location: an action that ends by opening another page (a delete going
 * up a level, a create opening what it made) keeps its notice.
 */
export function carryToasts() {
  for (const t of document.querySelectorAll('#toasts .toast')) t.dataset.page = location.hash;
}

/** errorText is how an error is shown: the API's message, and details. */
export function errorText(e) {
  if (!e) return 'Something went wrong';
  const msg = e.message || String(e);
  return e.details ? `${msg}: ${e.details}` : msg;
}

/**
 * attempt runs call() (an API call, say) and tells the person how it
 * went: done as a notice when it succeeds, the error's text when it
 * fails. Resolves to whether it succeeded.
 */
export async function attempt(call, done) {
  try {
    await call();
  } catch (e) {
    toast(errorText(e), 'error');
    return false;
  }
  if (done) toast(done);
  return true;
}

/** errorBox is an inline error block (role=alert) with an optional retry. */
export function errorBox(e, retry) {
  return h('div.alert', { role: 'alert' },
    h('strong', e && e.status ? `${e.status} ${e.code || ''}`.trim() : 'Error'), ' ',
    h('span.msg', errorText(e)),
    retry ? h('button.link', { type: 'button', onclick: retry }, 'Try again') : null);
}

/**
 * dialog opens a modal with a form. fields are elements put in the form;
 * submit(form) runs on Enter or the OK button and may throw: its error
 * is shown inside the dialog, which stays open. Escape or Cancel closes.
 * Resolves to submit's result, or undefined when cancelled.
 */
export function dialog({ title, body = [], ok = 'Save', danger = false, submit }) {
  return new Promise(resolve => {
    const err = h('div.dialog-error');
    const okBtn = h('button', { type: 'submit', class: danger ? 'danger' : 'primary' }, ok);
    const form = h('form', { method: 'dialog', novalidate: true },
      h('h2', title), body, err,
      h('div.actions',
        h('button', { type: 'button', onclick: () => { d.close(); } }, 'Cancel'),
        okBtn));
    const d = h('dialog', form);
    let result;
    form.addEventListener('submit', async ev => {
      ev.preventDefault();
      okBtn.disabled = true;
      replace(err);
      try {
        result = await submit(form);
        d.close();
      } catch (e) {
        replace(err, errorBox(e));
        okBtn.disabled = false;
      }
    });
    d.addEventListener('close', () => { d.remove(); resolve(result); });
    document.body.append(d);
    d.showModal();
    const first = form.querySelector('input, select, textarea');
    (first || okBtn).focus();
    if (first && first.select) first.select();
  });
}

/** confirm asks before a destructive action; resolves to true or false. */
export async function confirm(title, text, ok = 'Delete') {
  const r = await dialog({ title, body: [h('p', text)], ok, danger: true, submit: async () => true });
  return r === true;
}

/** field is a labelled input for dialogs and forms. */
export function field(label, input, hint) {
  return h('label.field', h('span.label', label), input, hint ? h('span.hint', hint) : null);
}

/** copy puts text on the clipboard, with a fallback for plain http. */
export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const t = h('textarea', { readonly: true, class: 'offscreen' });
    t.value = text;
    document.body.append(t);
    t.select();
    document.execCommand('copy');
    t.remove();
  }
  toast('Copied to the clipboard');
}

const fmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** when shows a timestamp briefly, the exact value in its title. */
export function when(ts) {
  if (!ts) return h('span.muted', '—');
  const d = new Date(ts);
  return h('time', { datetime: ts, title: ts }, isNaN(d) ? ts : fmt.format(d));
}
