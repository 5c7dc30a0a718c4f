// deadletters.js: the dead-letters view: the events the planner refused (GET deadletters,
// Manage only), newest first, each with its reason, the fields it named, where it came from
// and the original; a replay (POST deadletters/{partition}/{offset}/replay, after the
// confirmation dialog) validates the original again and publishes it as a send.

import * as api from './api.js';
import { el, byId, clear, formatNumber, formatTime, showMessage, errorText, alertLink, confirmAction } from './dom.js';

const LIMIT = 50;
const MANAGE_ONLY = 'Dead letters need a Manage key: this key may not list or replay them. '
  + 'Sign in with the connection string of a Manage policy.';

let loading = null;
const replaying = new Set(); // "partition/offset" of the replays under way
const entries = new Map(); // "partition/offset" -> the dead letter as listed

const keyOf = (partition, offset) => `${partition}/${offset}`;

export function initDeadLetters() {
  byId('deadletters-refresh').addEventListener('click', showDeadLetters);
  byId('deadletters-list').addEventListener('click', (event) => {
    const button = event.target.closest('button.deadletter-replay');
    const article = button ? button.closest('article.deadletter') : null;
    if (article) replay(article, button);
  });
}

/** Empties the list (sign out, another hub). */
export function resetDeadLetters() {
  if (loading) loading.abort();
  loading = null;
  entries.clear();
  clear(byId('deadletters-list'));
  byId('deadletters-list').removeAttribute('aria-busy');
  showMessage(byId('deadletters-message'), '');
}

/** The text of an error of these routes: a clear one for a key without Manage. */
function failureText(error) {
  if (error && error.status === 403) return `${MANAGE_ONLY} (${error.message})`;
  return errorText(error);
}

/** Loads the list (again). */
export async function showDeadLetters() {
  if (loading) loading.abort();
  const controller = new AbortController();
  loading = controller;
  const list = byId('deadletters-list');
  const message = byId('deadletters-message');
  if (!api.can('manage')) {
    loading = null;
    clear(list);
    showMessage(message, MANAGE_ONLY, 'error');
    return;
  }
  list.setAttribute('aria-busy', 'true');
  showMessage(message, 'Loading\u2026');
  try {
    const answer = (await api.get('deadletters', { query: { limit: LIMIT }, signal: controller.signal })).body;
    if (loading !== controller) return;
    const items = answer && Array.isArray(answer.deadLetters) ? answer.deadLetters : [];
    clear(list);
    entries.clear();
    for (const item of items) {
      if (!item || !Number.isInteger(item.partition) || !Number.isInteger(item.offset)) continue;
      entries.set(keyOf(item.partition, item.offset), item);
      list.append(card(item));
    }
    const count = entries.size;
    if (count === 0) showMessage(message, 'No dead letters in this hub.', 'ok');
    else {
      const more = items.length >= LIMIT ? ` (the newest ${formatNumber(LIMIT)}; there may be more)` : '';
      showMessage(message, `${formatNumber(count)} dead letter${count === 1 ? '' : 's'}, newest first${more}.`);
    }
  } catch (error) {
    if (error.name === 'AbortError' || loading !== controller) return;
    clear(list);
    entries.clear();
    showMessage(message, failureText(error), 'error');
  } finally {
    if (loading === controller) {
      list.removeAttribute('aria-busy');
      loading = null;
    }
  }
}

/** "bn-1" or "partition 0, offset 12": how the editor is told which dead letter. */
function labelOf(item) {
  const where = `partition ${item.partition}, offset ${item.offset}`;
  return item.eventId ? `event ${item.eventId} (${where})` : `the dead letter at ${where}`;
}

function sourceText(source) {
  if (!source || typeof source !== 'object') return '\u2014';
  const parts = [source.topic ? String(source.topic) : 'unknown topic'];
  if (Number.isInteger(source.partition)) parts.push(`partition ${source.partition}`);
  if (Number.isInteger(source.offset)) parts.push(`offset ${source.offset}`);
  return parts.join(' \u00b7 ');
}

/** A dead letter in two lines (the alert page): reason and message; time, source and a link to the view. */
export function deadLetterBrief(item) {
  return el('li', { className: 'deadletter-brief', dataset: { partition: String(item.partition), offset: String(item.offset) } },
    el('p', {}, el('span', { className: 'deadletter-brief-reason', text: String(item.reason || 'unknown') }), ' ',
      item.message ? String(item.message) : 'No message.'),
    el('p', { className: 'hint' }, `${formatTime(item.deadLetteredAt)} \u00b7 ${sourceText(item.source)} \u00b7 `,
      el('a', { href: '#/deadletters', text: 'open in Dead letters' })));
}

/** The original in a <details>: as text, or base64 when it is not UTF-8, with a note when cut. */
function originalDetails(item) {
  const bytes = Number.isFinite(item.originalBytes) ? ` (${formatNumber(item.originalBytes)} bytes${item.truncated ? ', truncated' : ''})` : '';
  const details = el('details', { className: 'deadletter-original' }, el('summary', { text: `Original event${bytes}` }));
  if (typeof item.original === 'string') {
    details.append(el('pre', { className: 'deadletter-json', text: item.original }));
  } else if (typeof item.originalBase64 === 'string') {
    details.append(el('p', { className: 'hint', text: 'Not UTF-8 text: shown as base64.' }),
      el('pre', { className: 'deadletter-json', text: item.originalBase64 }));
  } else {
    details.append(el('p', { className: 'hint', text: 'The original was not kept.' }));
  }
  if (item.truncated) {
    const total = Number.isFinite(item.originalBytes) ? ` of ${formatNumber(item.originalBytes)} bytes` : '';
    details.append(el('p', { className: 'deadletter-truncated', text: `Truncated: only the beginning${total} is shown.` }));
  }
  return details;
}

function card(item) {
  const id = `deadletter-${item.partition}-${item.offset}`;
  const fields = Array.isArray(item.fields) ? item.fields.map(String) : [];
  const list = el('dl', { className: 'deadletter-fields' });
  const row = (term, className, ...value) => list.append(el('div', {}, el('dt', { text: term }), el('dd', { className }, ...value)));
  const fieldList = fields.length === 0 ? 'none named' : fields.flatMap((field) => [el('span', { className: 'tag', text: field }), ' ']);
  row('Fields', 'deadletter-fieldnames', fieldList);
  row('Event id', 'deadletter-event mono', item.eventId ? String(item.eventId) : 'none');
  row('Source', 'deadletter-source', sourceText(item.source));
  row('Dead-lettered', 'deadletter-time', formatTime(item.deadLetteredAt));

  const button = el('button', { type: 'button', className: 'deadletter-replay secondary' },
    'Replay', el('span', { className: 'visually-hidden', text: ` ${labelOf(item)}` }), '\u2026');
  return el('article', { className: 'deadletter', dataset: { partition: String(item.partition), offset: String(item.offset) }, 'aria-labelledby': `${id}-title` },
    el('h3', { id: `${id}-title`, className: 'deadletter-heading' },
      el('span', { className: 'deadletter-reason', text: String(item.reason || 'unknown') }), ' ',
      el('span', { className: 'deadletter-where', text: `partition ${item.partition} \u00b7 offset ${item.offset}` })),
    el('p', { className: 'deadletter-message', text: item.message ? String(item.message) : 'No message.' }),
    list,
    originalDetails(item),
    el('div', { className: 'actions' }, button),
    el('div', { className: 'deadletter-result message', 'aria-live': 'polite' }));
}

/** The refusal of a replay: the API's message and each issue's field. */
function showFailure(node, error) {
  showMessage(node, `Not replayed: ${failureText(error)}`, 'error');
  const issues = Array.isArray(error.issues) ? error.issues.filter((issue) => issue && typeof issue === 'object') : [];
  if (issues.length === 0) return;
  const items = el('ul', { className: 'issues' });
  for (const issue of issues) {
    const field = issue.field ? String(issue.field) : '(event)';
    items.append(el('li', {}, el('span', { className: 'issue-field mono', text: field }), issue.message ? `: ${issue.message}` : ''));
  }
  node.append(items);
}

async function replay(article, button) {
  const { partition, offset } = article.dataset;
  const key = keyOf(partition, offset);
  if (replaying.has(key)) return;
  const item = entries.get(key) || { partition, offset, eventId: null };
  const result = article.querySelector('.deadletter-result');
  const ok = await confirmAction(`Replay ${labelOf(item)}? Its original is validated again and, if valid, published as a send to every device it targets.`, 'Replay', true);
  if (!ok) { button.focus(); return; }
  if (!article.isConnected) return; // the list was reloaded meanwhile
  replaying.add(key);
  article.setAttribute('aria-busy', 'true');
  showMessage(result, 'Replaying\u2026');
  try {
    const answer = (await api.post(`deadletters/${api.segment(partition)}/${api.segment(offset)}/replay`)).body || {};
    if (typeof answer.id === 'string' && answer.id) {
      const link = alertLink(answer.id);
      showMessage(result, 'Replayed: published as ', 'ok', link, '. Follow it on its page.');
      button.disabled = true;
      button.firstChild.textContent = 'Replayed';
      button.lastChild.textContent = '';
      link.focus();
    } else {
      showMessage(result, 'Replayed: the server accepted it.', 'ok');
    }
  } catch (error) {
    if (error.name === 'AbortError') return;
    showFailure(result, error);
  } finally {
    replaying.delete(key);
    article.removeAttribute('aria-busy');
  }
}
