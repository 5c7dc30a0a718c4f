// alerts.js: the alerts view's lists: the hub's recent alerts (GET notifications?state=recent)
// and the schedules still pending (GET notifications?state=scheduled, Manage only: the
// section hides on 403). Each row opens the alert's page.

import * as api from './api.js';
import { el, byId, clear, formatNumber, formatTime, showMessage, showError, alertLink } from './dom.js';

let loading = null;

/** Loads both lists (again). */
export async function showAlertsList() {
  if (loading) loading.abort();
  const controller = new AbortController();
  loading = controller;
  showMessage(byId('alerts-message'), 'Loading\u2026');
  byId('alerts-list').setAttribute('aria-busy', 'true');
  await Promise.all([loadRecent(controller.signal), loadScheduled(controller.signal)]);
  if (loading === controller) {
    byId('alerts-list').removeAttribute('aria-busy');
    loading = null;
  }
}

/** Empties both lists (sign out). */
export function resetAlertsList() {
  if (loading) loading.abort();
  loading = null;
  clear(byId('alerts-list').tBodies[0]);
  clear(byId('scheduled-table').tBodies[0]);
  showMessage(byId('alerts-message'), '');
  showMessage(byId('scheduled-message'), '');
}

export function initAlertsList() {
  byId('alerts-refresh').addEventListener('click', showAlertsList);
  // A click anywhere on a row opens the alert, as its link does.
  byId('alerts-list').addEventListener('click', (event) => {
    const row = event.target.closest('tr.alert-row');
    if (row && !event.target.closest('a')) location.hash = `#/alerts/${encodeURIComponent(row.dataset.eventId)}`;
  });
}

function kindOf(item) {
  const kinds = [];
  if (item.test) kinds.push('test send');
  if (item.rehearsal) kinds.push('rehearsal');
  if (item.correctionOf) kinds.push(`correction of ${item.correctionOf}`);
  return kinds.join(', ') || 'alert';
}

/** The expression; an array of tags joined by ||; null: a broadcast; absent: not reported. */
function tagsText(item) {
  if (!('tags' in item)) return '\u2014';
  if (item.tags === null) return 'everyone (broadcast)';
  if (Array.isArray(item.tags)) return item.tags.map(String).join(' || ');
  return String(item.tags);
}

function stateBadge(state) {
  return el('span', { className: `state state-${String(state || 'unknown')}`, text: state || 'unknown' });
}

async function loadRecent(signal) {
  const body = byId('alerts-list').tBodies[0];
  const message = byId('alerts-message');
  try {
    const answer = (await api.get('notifications', { query: { state: 'recent', limit: 50 }, signal })).body;
    const items = answer && Array.isArray(answer.notifications) ? answer.notifications : [];
    clear(body);
    for (const item of items) {
      if (!item || typeof item.id !== 'string') continue;
      const priority = item.priority || item.urgency || '';
      const breaking = priority === 'high' || priority === 'breaking';
      const row = el('tr', { className: breaking ? 'alert-row is-breaking' : 'alert-row', dataset: { eventId: item.id } },
        el('th', { scope: 'row' }, alertLink(item.id)),
        el('td', {}, stateBadge(item.state)),
        el('td', { text: formatTime(item.publishedAt) }),
        el('td', { className: 'number', text: formatNumber(item.targets) }),
        el('td', { className: 'number', text: formatNumber(item.sent) }),
        el('td', {}, breaking ? el('span', { className: 'breaking-badge', text: priority }) : priority || '—'),
        el('td', { className: 'tags', text: tagsText(item) }),
        el('td', { text: kindOf(item) }));
      body.append(row);
    }
    if (body.rows.length === 0) {
      body.append(el('tr', {}, el('td', { colSpan: 8, className: 'empty', text: 'No alerts yet in this hub.' })));
    }
    showMessage(message, `${formatNumber(items.length)} recent alert${items.length === 1 ? '' : 's'}, newest first.`);
  } catch (error) {
    if (error.name === 'AbortError') return;
    clear(body);
    showError(message, error);
  }
}

async function loadScheduled(signal) {
  const section = byId('scheduled-list');
  const body = byId('scheduled-table').tBodies[0];
  const message = byId('scheduled-message');
  if (!api.can('manage')) {
    section.hidden = true; // listing schedules needs a Manage key
    return;
  }
  try {
    const answer = (await api.get('notifications', { query: { state: 'scheduled' }, signal })).body;
    const items = answer && Array.isArray(answer.notifications) ? answer.notifications : [];
    section.hidden = false;
    clear(body);
    for (const item of items) {
      if (!item || typeof item.id !== 'string') continue;
      const when = item.sendAtLocal
        ? `${String(item.sendAtLocal).replace('T', ' ')} on each device\u2019s clock`
        : formatTime(item.sendAt);
      body.append(el('tr', { className: 'scheduled-row', dataset: { eventId: item.id } },
        el('th', { scope: 'row' }, alertLink(item.id)),
        el('td', { text: when }),
        el('td', { text: formatTime(item.nextReleaseAt) }),
        el('td', { className: 'number', text: `${formatNumber(item.pendingReleases)} of ${formatNumber(item.releases)}` })));
    }
    if (body.rows.length === 0) {
      body.append(el('tr', {}, el('td', { colSpan: 4, className: 'empty', text: 'No schedule pending.' })));
    }
    showMessage(message, '');
  } catch (error) {
    if (error.name === 'AbortError') return;
    clear(body);
    if (error.status === 403) {
      section.hidden = true; // listing schedules needs a Manage key
      return;
    }
    section.hidden = false;
    showError(message, error);
  }
}
