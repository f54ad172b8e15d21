// The API client: one function per kind of call, all going through
// request(), which adds the token, sends JSON, and turns every error
// envelope (or a failure to reach the server) into an ApiError whose
// message is the one the API gave. The token lives in sessionStorage
// (gone when the tab closes), never in a cookie.

const base = new URL('../', document.baseURI); // the mount point: the console is at <base>console/
const KEY = 'hds.session';

/** An error answer of the API (or of the network), shown as its message. */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message || 'Request failed');
    this.status = status;
    this.code = code || '';
    this.details = details || '';
  }
}

/** The session: {token, user_id, username, expires_at} or null. */
export function session() {
  try { return JSON.parse(sessionStorage.getItem(KEY)); } catch { return null; }
}

// saveSession stores s (null: removes it) and tells the app when someone
// logged in or out ('hds:session'); a new token, renewed or not, is
// 'hds:token' (the change feed reopens with it).
function saveSession(s) {
  const had = sessionStorage.getItem(KEY) !== null;
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
  if (s) window.dispatchEvent(new CustomEvent('hds:token'));
  if (had !== Boolean(s)) window.dispatchEvent(new CustomEvent('hds:session'));
}

/** path builds an API path from segments, each percent-encoded. */
export function path(...segments) {
  return 'api/v1/' + segments.map(s => encodeURIComponent(s)).join('/');
}

/** The path of a project, collection, cluster or record, by names. */
export function resourcePath({ project, collection, cluster, record }) {
  const s = ['projects', project];
  if (collection != null) s.push('collections', collection);
  if (cluster != null) s.push('clusters', cluster);
  if (record != null) s.push('records', record);
  return path(...s);
}

/** url is the absolute URL of an API path with query parameters (undefined and '' left out). */
export function url(p, query = {}) {
  const u = new URL(p, base);
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, String(v));
  }
  return u;
}

/**
 * request sends one API call. body is an object (sent as JSON) or a
 * string (sent as it is, already JSON). It resolves to {data, message,
 * status, etag} and rejects with an ApiError.
 */
export async function request(method, p, { query, body, headers = {}, auth = true, signal, renewed = false } = {}) {
  const h = { Accept: 'application/json', ...headers };
  const s = session();
  if (auth && s) h.Authorization = 'Bearer ' + s.token;
  let payload;
  if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url(p, query), { method, headers: h, body: payload, signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'NETWORK', 'The server cannot be reached', String(e.message || e));
  }
  const etag = res.headers.get('ETag');
  if (res.status === 204 || res.status === 304) return { data: null, message: '', status: res.status, etag };
  let env = null;
  try { env = parseJSON(await res.text()); } catch { /* not JSON: handled below */ }
  if (!res.ok || !env || env.success === false) {
    const err = env && env.error ? env.error : {};
    const fallback = `${res.status} ${res.statusText || 'error'}`;
    const e = new ApiError(res.status, err.code, err.message || fallback, err.details);
    if (res.status === 401 && auth && s && p !== path('auth', 'logout') && p !== path('auth', 'refresh')) {
      // The token expired (a tab asleep past its renewal, say): a 401
      // means nothing was done, so renew it once and ask again.
      if (!renewed && await renew(s.token, e)) return request(method, p, { query, body, headers, auth, signal, renewed: true });
      if (renewed && session()?.token === s.token) expired(e);
    }
    throw e;
  }
  return { data: env.data, message: env.message, status: res.status, etag };
}

// A 401 that renewing cannot heal ends the session on this side too.
function expired(e) {
  saveSession(null);
  window.dispatchEvent(new CustomEvent('hds:expired', { detail: e.message }));
}

let renewing = null; // the refresh under way: refresh is single-use, so never two at once

/**
 * renew is what a 401 with token calls for: it resolves to true when a
 * newer token than that one is in the session (another call renewed it
 * meanwhile, or a refresh now did), so the call may be made again. When
 * the session cannot be renewed it ends, with refusal's message (an
 * ApiError), and renew resolves to false.
 */
export async function renew(token, refusal) {
  const cur = session();
  if (!cur) return false;
  if (cur.token !== token) return true;
  if (!renewing) {
    renewing = refreshNow(cur).finally(() => { renewing = null; });
  }
  if (await renewing === true) return true;
  if (session()?.token === token) expired(refusal);
  return false;
}

// refreshNow exchanges the session's token for a new one; resolves to
// true, or to the error that refused it.
async function refreshNow(cur) {
  try {
    const { data } = await request('POST', path('auth', 'refresh'));
    startSession(data, cur.username);
    return true;
  } catch (e) {
    return e;
  }
}

/**
 * BigInteger is a whole number beyond what a JavaScript number holds
 * exactly (an INTEGER is int64): it keeps the text the API sent, which is
 * what the console shows and sends back.
 */
export class BigInteger {
  constructor(text) { this.text = text; }
  toString() { return this.text; }
  toJSON() { return this.text; }
}

// parseJSON is JSON.parse keeping whole numbers beyond 2^53 exact, using
// the source text the reviver is given (where the browser offers it).
function parseJSON(text) {
  return JSON.parse(text, (key, value, ctx) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && ctx && /^-?\d+$/.test(ctx.source)
      ? new BigInteger(ctx.source) : value);
}

/** login exchanges a username and password for a session. */
export async function login(username, password) {
  const { data } = await request('POST', path('auth', 'login'), { body: { username, password }, auth: false });
  startSession(data, username);
}

function startSession(data, username) {
  saveSession({ token: data.token, user_id: data.user_id, username, expires_at: Date.now() + data.expires_in * 1000 });
  scheduleRefresh();
}

let refreshTimer;

/** scheduleRefresh renews the token a minute before it expires. */
export function scheduleRefresh() {
  clearTimeout(refreshTimer);
  const s = session();
  if (!s) return;
  const wait = Math.max(5000, s.expires_at - Date.now() - 60000);
  refreshTimer = setTimeout(async () => {
    const cur = session();
    if (!cur || renewing) return;
    renewing = refreshNow(cur).finally(() => { renewing = null; });
    const r = await renewing;
    // A refusal ends the session; a network failure leaves it to the next call.
    if (r !== true && r.status === 401 && session()?.token === cur.token) expired(r);
  }, Math.min(wait, 2 ** 31 - 1));
}

/**
 * changePassword changes the caller's password (API.md section 17): every
 * other session ends, and this one goes on with the new token.
 */
export async function changePassword(currentPassword, newPassword) {
  const cur = session();
  const { data } = await request('POST', path('auth', 'password'), { body: { current_password: currentPassword, new_password: newPassword } });
  startSession(data, cur?.username);
}

/** me fetches who the caller is (GET /api/v1/auth/me, API.md section 24). */
export async function me() {
  return (await request('GET', path('auth', 'me'))).data;
}

/** logout ends the session on the server (when it can) and here. */
export async function logout() {
  clearTimeout(refreshTimer);
  try { await request('POST', path('auth', 'logout')); } catch { /* ended here anyway */ }
  saveSession(null);
}

/**
 * list fetches one page of a list. page is {cursor, offset}; the answer
 * is the list object with next_cursor (null on the last page, undefined
 * when the server pages by offset only).
 */
export async function list(p, { limit = 50, cursor, offset = 0, ...query } = {}) {
  const q = { ...query, limit };
  if (cursor) q.cursor = cursor; else if (offset) q.offset = offset;
  const { data } = await request('GET', p, { query: q });
  return data;
}

/**
 * entityTag is the ETag of a record's state from its id and version, as
 * a list item or a history entry gives them: this server's tags are
 * "<id>.<version>" (docs/api.md, concurrency control and record history). The console ships with the
 * server, so it may know what other clients must treat as opaque; a
 * test pins it to the ETag header (console_rights_browser_test.go).
 */
export const entityTag = rec => `"${rec.id}.${rec.version}"`;

export const get = (p, query, headers) => request('GET', p, { query, headers });
export const post = (p, body, opts = {}) => request('POST', p, { body, ...opts });
export const put = (p, body, opts = {}) => request('PUT', p, { body, ...opts });
export const del = (p, opts = {}) => request('DELETE', p, opts);
