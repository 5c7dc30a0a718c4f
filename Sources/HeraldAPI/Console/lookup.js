// lookup.js: the look-up view: a registration or an installation by id, the devices of a
// user, of a tag, of a push handle or of the start of one, each shown as a card with its raw JSON.

import * as api from './api.js';
import { el, byId, clear, formatNumber, formatTime, showMessage, showError } from './dom.js';
import { platformName } from './payload.js';

const PAGE = 50;
let searching = null;

export function initLookup() {
  byId('lookup-form').addEventListener('submit', (event) => { event.preventDefault(); lookup(); });
  byId('lookup-kind').addEventListener('change', updateHint);
  updateHint();
}

/** Empties the results (sign out). */
export function resetLookup() {
  if (searching) searching.abort();
  searching = null;
  byId('lookup-value').value = '';
  clear(byId('lookup-results'));
  showMessage(byId('lookup-message'), '');
}

const HINTS = {
  registration: 'A registration id, such as 7f3c2a or phone-1:newsTemplate.',
  installation: 'An installation id, such as phone-1.',
  user: 'A user id, such as alice: the user\u2019s installations and registrations.',
  tag: 'One tag, such as World: registrations and installations carrying it (Manage).',
  handle: 'A device\u2019s push handle (token, channel URI or Web Push endpoint).',
  handlePrefix: 'The first characters of a push handle, such as the start of a device token (Manage).',
};

function updateHint() {
  byId('lookup-hint').textContent = HINTS[byId('lookup-kind').value] || '';
}

/** The requests a look-up makes: {type, path, query?}; a path without query reads one record. */
function requestsFor(kind, value) {
  const id = api.segment(value);
  const userMatch = /^\$UserId:\{(.*)\}$/.exec(value);
  const user = userMatch ? userMatch[1] : value;
  switch (kind) {
    case 'registration': return [{ type: 'registration', path: `registrations/${id}` }];
    case 'installation': return [{ type: 'installation', path: `installations/${id}` }];
    case 'user': return [
      { type: 'installation', path: 'installations', query: { userId: user, limit: PAGE } },
      { type: 'registration', path: 'registrations', query: { tag: `$UserId:{${user}}`, limit: PAGE } },
    ];
    case 'tag': return [
      { type: 'registration', path: 'registrations', query: { tag: value, limit: PAGE } },
      { type: 'installation', path: 'installations', query: { tag: value, limit: PAGE } },
    ];
    case 'handle': return [{ type: 'registration', path: 'registrations', query: { handle: value, limit: PAGE } }];
    // A listing by prefix reads the registry a stretch of slots per request, so a page may
    // come back short while there is more: its cursor is followed until the page is full.
    case 'handlePrefix': return [{ type: 'registration', path: 'registrations', query: { handlePrefix: value, limit: PAGE }, fill: true }];
    default: return [];
  }
}

async function lookup() {
  const kind = byId('lookup-kind').value;
  const value = byId('lookup-value').value.trim();
  const message = byId('lookup-message');
  const results = byId('lookup-results');
  if (!value) {
    showMessage(message, 'Enter what to look up.', 'error');
    byId('lookup-value').focus();
    return;
  }
  if (searching) searching.abort();
  const controller = new AbortController();
  searching = controller;
  results.setAttribute('aria-busy', 'true');
  showMessage(message, 'Looking up\u2026');
  const requests = requestsFor(kind, value);
  const answers = await Promise.allSettled(requests.map((request) => fetchList(request, controller.signal)));
  if (controller !== searching) return;
  searching = null;
  results.removeAttribute('aria-busy');
  clear(results);
  const errors = [];
  let found = 0;
  let more = false;
  answers.forEach((answer, index) => {
    const { type, query } = requests[index];
    if (answer.status === 'rejected') {
      const error = answer.reason;
      if (error.name === 'AbortError') return;
      if (!query && (error.status === 404 || error.status === 410)) return; // none with that id
      errors.push(error);
      return;
    }
    const body = answer.value.body || {};
    const records = query ? (Array.isArray(body.items) ? body.items : []) : [body];
    if (query && body.nextCursor) more = true;
    for (const record of records) {
      if (record && typeof record === 'object') { results.append(card(type, record)); found += 1; }
    }
  });
  if (errors.length > 0) {
    showError(message, errors[0]);
    return;
  }
  const suffix = more ? ` (the first ${formatNumber(PAGE)} of each list; there are more)` : '';
  showMessage(message, found === 0 ? `Nothing found for ${kind} \u201c${value}\u201d.` : `${formatNumber(found)} found${suffix}.`, found ? 'ok' : 'info');
}

/** One request's answer; for a `fill` listing, its pages followed until PAGE items or the end. */
async function fetchList(request, signal) {
  const answer = await api.get(request.path, { query: request.query, signal });
  if (!request.fill) return answer;
  const body = answer.body || {};
  const items = Array.isArray(body.items) ? [...body.items] : [];
  let cursor = body.nextCursor;
  while (cursor && items.length < PAGE) {
    const next = (await api.get(request.path, { query: { ...request.query, limit: PAGE - items.length, cursor }, signal })).body || {};
    if (Array.isArray(next.items)) items.push(...next.items);
    cursor = next.nextCursor;
  }
  return { ...answer, body: { items, nextCursor: cursor || null } };
}

/** First 12 characters and "…". */
export function shorten(text) {
  const value = String(text || '');
  return value.length > 12 ? `${value.slice(0, 12)}\u2026` : value;
}

function card(type, record) {
  const id = type === 'installation' ? record.installationId : record.registrationId;
  const channel = type === 'installation' ? record.pushChannel : record.handle;
  const handle = channel && typeof channel === 'object' ? (channel.endpoint || JSON.stringify(channel)) : channel;
  const tags = Array.isArray(record.tags) ? record.tags.map(String) : [];
  let templates = [];
  if (type === 'installation' && record.templates && typeof record.templates === 'object') templates = Object.keys(record.templates);
  if (type === 'registration' && record.template && typeof record.template === 'object' && record.template.name) templates = [String(record.template.name)];
  const userTag = tags.map((tag) => /^\$UserId:\{(.*)\}$/.exec(tag)).find(Boolean);
  const user = record.userId || (userTag ? userTag[1] : '');

  const details = el('dl', { className: 'lookup-fields' });
  const field = (term, value, className) => details.append(el('div', {}, el('dt', { text: term }), el('dd', { className, text: value })));
  field('Platform', record.platform ? platformName(String(record.platform)) : '\u2014', 'lookup-platform');
  const handleNode = el('dd', { className: 'lookup-handle', text: handle ? shorten(handle) : '—' });
  if (handle) handleNode.title = String(handle);
  details.append(el('div', {}, el('dt', { text: 'Handle' }), handleNode));
  const tagList = el('dd', { className: 'lookup-tags' });
  if (tags.length === 0) tagList.textContent = 'none';
  for (const tag of tags) tagList.append(el('span', { className: 'tag', text: tag }), ' ');
  details.append(el('div', {}, el('dt', { text: 'Tags' }), tagList));
  field('Templates', templates.length ? templates.join(', ') : 'none (native)', 'lookup-templates');
  field('User', user || '—', 'lookup-user');
  field('Expiry', record.expiresAt ? formatTime(record.expiresAt) : 'never', 'lookup-expiry');
  field('Version', record.version === undefined ? '—' : String(record.version), 'lookup-version');
  if (record.timeZone) field('Time zone', String(record.timeZone), 'lookup-timezone');
  if (record.quietHours) field('Quiet hours', String(record.quietHours), 'lookup-quiet');

  return el('article', { className: 'lookup-result', dataset: { kind: type, id: String(id || '') } },
    el('h3', {}, el('span', { className: 'kind', text: type === 'installation' ? 'Installation' : 'Registration' }), ' ', String(id || '(no id)')),
    details,
    el('details', {}, el('summary', { text: 'Raw JSON' }), el('pre', { className: 'lookup-json', text: JSON.stringify(record, null, 2) })));
}
