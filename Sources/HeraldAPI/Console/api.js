// api.js: the console's HTTP client. Adds the Authorization header (a SAS token), puts the
// hub's path prefix in front of hub routes (/v1/... for the default hub, /v1/hubs/{hub}/...
// for the others), and turns error answers into thrown ApiErrors (status, code, field, issues).

/** An error answer of the API, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(status, body, fallback) {
    const error = body && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : {};
    super(typeof error.message === 'string' && error.message ? error.message : fallback);
    this.name = 'ApiError';
    this.status = status;
    this.code = typeof error.code === 'string' ? error.code : (status === 0 ? 'network' : `http_${status}`);
    this.field = typeof error.field === 'string' ? error.field : null;
    this.issues = Array.isArray(error.issues) ? error.issues : [];
    this.body = body;
  }
}

const NETWORK_MESSAGE = 'The Herald server could not be reached (network failure). Check that it runs and try again.';

let tokens = null;
let hubPrefix = '/v1';
let unauthorized = () => {};
let rights = new Set();

/** The session's rights ('listen', 'send', 'manage'), as GET console/session answered them. */
export function setRights(names) {
  rights = new Set(names);
}

/**
 * Whether the session holds a right: views skip the routes their key may not call (listing
 * schedules, hubs and dead letters takes Manage) instead of asking and being refused.
 */
export function can(right) {
  return rights.has(right);
}

/** Sets the token source and the hub; hub '' or the default hub's name means the default hub. */
export function configure({ tokenSource, hub, defaultHub }) {
  tokens = tokenSource;
  setHub(hub, defaultHub);
}

/** Chooses the hub the hub routes go to. */
export function setHub(hub, defaultHub = 'default') {
  const name = (hub || '').trim();
  hubPrefix = !name || name.toLowerCase() === String(defaultHub || 'default').toLowerCase()
    ? '/v1' : `/v1/hubs/${encodeURIComponent(name)}`;
}

/** Called on every 401 (unless the request opted out): the app signs out. */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/** Forgets the token source (sign out). */
export function reset() {
  if (tokens) tokens.forget();
  tokens = null;
  hubPrefix = '/v1';
  rights = new Set();
}

/**
 * An id as one path segment: percent-encoded, but ':' and '@' (valid in a path, and in
 * registration and event ids such as phone-1:news) kept as they are, since the server reads
 * path parameters without decoding them.
 */
export function segment(id) {
  return encodeURIComponent(String(id)).replace(/%3A/gi, ':').replace(/%40/g, '@');
}

/** 'notifications' -> '/v1/notifications' (or the hub's); '/v1/x' and '/console/x' stay. */
export function url(path, query) {
  let full = path.startsWith('/') ? path : `${hubPrefix}/${path}`;
  if (query) {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
    }
    const text = search.toString();
    if (text) full += (full.includes('?') ? '&' : '?') + text;
  }
  return full;
}

async function readBody(response) {
  const text = await response.text();
  if (!text) return null;
  const type = response.headers.get('content-type') || '';
  if (type.includes('json') || /^\s*[[{]/.test(text)) {
    try { return JSON.parse(text); } catch { return text; }
  }
  return text;
}

async function send(method, path, { body, query, signal, accept = 'application/json', allow401 = false } = {}) {
  const headers = { Accept: accept };
  if (tokens) headers.Authorization = await tokens.token();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url(path, query), {
      method, headers, signal, cache: 'no-store', credentials: 'omit',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (error && error.name === 'AbortError') throw error;
    throw new ApiError(0, null, NETWORK_MESSAGE);
  }
  if (response.ok) return response;
  let parsed = null;
  try { parsed = await readBody(response); } catch { /* an unreadable error body */ }
  const error = new ApiError(response.status, parsed, `The server answered ${response.status} ${response.statusText}`.trim());
  if (response.status === 401 && !allow401) unauthorized(error);
  throw error;
}

/**
 * One request; resolves to {status, body, headers} for a 2xx answer, throws ApiError else.
 * Options: body (JSON), query (object), signal, allow401 (no sign-out on 401).
 */
export async function request(method, path, options = {}) {
  const response = await send(method, path, options);
  let body = null;
  try { body = await readBody(response); } catch (error) {
    if (error && error.name === 'AbortError') throw error;
    throw new ApiError(0, null, NETWORK_MESSAGE);
  }
  return { status: response.status, body, headers: response.headers };
}

export const get = (path, options) => request('GET', path, options);
export const post = (path, body, options = {}) => request('POST', path, { ...options, body });
export const del = (path, options) => request('DELETE', path, options);

/** Opens a text/event-stream; resolves to the Response whose body the caller reads. */
export function openStream(path, { signal } = {}) {
  return send('GET', path, { signal, accept: 'text/event-stream' });
}

/** The network-failure message, for readers of streams. */
export const networkMessage = NETWORK_MESSAGE;

const FINAL_STATES = new Set(['completed', 'expired', 'rejected', 'cancelled']);

/** True for a status that will not change state again. */
export function isFinal(state) {
  return FINAL_STATES.has(state);
}

/** Reads a status location every second until it is final (a long rehearsal's 202). */
export async function pollStatus(location, { signal, onProgress } = {}) {
  for (;;) {
    if (signal && signal.aborted) throw new DOMException('aborted', 'AbortError');
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, 1000);
      if (signal) signal.addEventListener('abort', () => { clearTimeout(timer); reject(new DOMException('aborted', 'AbortError')); }, { once: true });
    });
    let status = null;
    try {
      status = (await get(location, { signal })).body;
    } catch (error) {
      if (error.status !== 404) throw error; // not planned yet: read again
    }
    if (status && onProgress) onProgress(status);
    if (status && isFinal(status.state)) return status;
  }
}
