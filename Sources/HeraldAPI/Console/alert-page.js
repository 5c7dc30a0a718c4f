// alert-page.js: one alert's page. Follows GET notifications/{id}/live (Server-Sent Events,
// read with fetch) and shows its state, counts per platform and outcome, skipped devices by
// reason and the reach chart; stop and correct go through the confirmation dialog.

import * as api from './api.js';
import { readEventStream } from './sse.js';
import { drawReachChart, reachSummary } from './chart.js';
import { el, byId, clear, append, formatNumber, formatTime, formatSeconds, showMessage, showError, errorText, alertLink, confirmAction } from './dom.js';
import { deadLetterBrief } from './deadletters.js';
import { fillSkipped } from './previews.js';
import { platformName } from './payload.js';
import { PropertyRows } from './props.js';

const OUTCOMES = ['sent', 'rejected', 'unregistered', 'expired', 'failed', 'cancelled'];
let current = null; // {id, controller, live, ended}
let correctRows = null;
let summaryTimer = 0;
let summaryText = '';

const path = (id, tail = '') => `notifications/${api.segment(id)}${tail}`;

export function initAlertPage() {
  correctRows = new PropertyRows(byId('correct-properties'), 'correct-prop');
  byId('correct-add-language').addEventListener('click', () => correctRows.addRow().focus());
  byId('alert-stop').addEventListener('click', stop);
  byId('alert-correct').addEventListener('click', openCorrection);
  byId('correct-cancel').addEventListener('click', closeCorrection);
  byId('correct-form').addEventListener('submit', (event) => { event.preventDefault(); correct(); });
}

/** Shows the page of alert `id` and follows it live. */
export function openAlert(id) {
  closeAlert();
  current = { id, controller: new AbortController(), live: false, ended: false };
  byId('alert-id').textContent = id;
  byId('alert-state').textContent = 'loading';
  byId('alert-state').className = 'state';
  for (const node of ['alert-summary', 'alert-counts', 'alert-skipped', 'alert-deadletters']) clear(byId(node));
  clear(byId('reach-chart'));
  byId('reach-summary').textContent = '';
  showMessage(byId('alert-message'), '');
  showMessage(byId('alert-live'), '');
  closeCorrection();
  byId('alert-stop').disabled = false;
  byId('alert-correct').disabled = false;
  follow(current);
  loadDeadLetters(current);
}

/** Stops following (leaving the page, signing out). */
export function closeAlert() {
  if (current) current.controller.abort();
  current = null;
  clearTimeout(summaryTimer);
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
});

async function follow(watch) {
  if (watch.following) return;
  watch.following = true;
  try {
    await followStream(watch);
  } finally {
    watch.following = false;
  }
}

async function followStream(watch) {
  const { signal } = watch.controller;
  const live = byId('alert-live');
  let failures = 0;
  let missing = 0;
  while (!signal.aborted) {
    try {
      const response = await api.openStream(path(watch.id, '/live'), { signal });
      watch.live = true;
      watch.ended = false;
      showMessage(live, 'Live: updates as they happen.', 'ok');
      await readEventStream(response, (name, data) => {
        if (name === 'end') watch.ended = true;
        if (name !== 'update' || watch !== current) return;
        failures = 0;
        let update;
        try { update = JSON.parse(data); } catch { return; } // a malformed message: wait for the next
        try {
          render(update.status || {}, update.reach || null);
        } catch (error) {
          console.error('Could not show the update', error);
        }
      }, signal);
      watch.live = false;
      if (watch.ended) {
        showMessage(live, 'Final: this alert will not change any more.', 'info');
        return;
      }
    } catch (error) {
      watch.live = false;
      if (error.name === 'AbortError' || signal.aborted) return;
      if (error.status === 401 || error.status === 403) { showError(byId('alert-message'), error); return; }
      if (error.code === 'route_not_found') { await loadOnce(watch); return; }
      if (error.status === 404) {
        missing += 1;
        if (missing > 30) { showError(live, error); byId('alert-state').textContent = 'unknown'; return; }
        showMessage(live, 'No status yet (the alert may not be planned yet); waiting\u2026');
        await sleep(1000, signal);
        continue;
      }
      failures += 1;
      showMessage(live, `Live updates interrupted: ${error.message} Reconnecting\u2026`, 'error');
    }
    await sleep(Math.min(30000, 1000 * 2 ** Math.min(failures, 5)), signal);
  }
}

/** The dead letters refused under this alert's id (GET deadletters, Manage only): once per opening. */
async function loadDeadLetters(watch) {
  const list = clear(byId('alert-deadletters'));
  const message = byId('alert-deadletters-message');
  if (!api.can('manage')) {
    showMessage(message, 'Dead letters need a Manage key.');
    return;
  }
  showMessage(message, 'Loading\u2026');
  try {
    const answer = (await api.get('deadletters', { query: { limit: 200 }, signal: watch.controller.signal })).body;
    if (watch !== current) return;
    const items = (answer && Array.isArray(answer.deadLetters) ? answer.deadLetters : [])
      .filter((item) => item && item.eventId === watch.id && Number.isInteger(item.partition) && Number.isInteger(item.offset));
    list.append(...items.map(deadLetterBrief));
    showMessage(message, items.length ? '' : 'No dead letters under this id.');
  } catch (error) {
    if (error.name === 'AbortError' || watch !== current) return;
    if (error.status === 403) showMessage(message, 'Dead letters need a Manage key.');
    else showMessage(message, `Dead letters could not be read: ${errorText(error)}`, 'error');
  }
}

/** Without the live route: the status and the reach, once. */
async function loadOnce(watch) {
  try {
    const status = (await api.get(path(watch.id), { signal: watch.controller.signal })).body;
    let reach = null;
    try { reach = (await api.get(path(watch.id, '/reach'), { signal: watch.controller.signal })).body; } catch { /* no series */ }
    if (watch === current) render(status, reach);
  } catch (error) {
    if (error.name !== 'AbortError') showError(byId('alert-message'), error);
  }
}

function render(status, reach) {
  const state = String(status.state || 'unknown');
  const badge = byId('alert-state');
  badge.textContent = state;
  badge.className = `state state-${state}`;
  renderSummary(status);
  renderCounts(status);
  fillSkipped(byId('alert-skipped'), status);
  const final = api.isFinal(state);
  // As the server decides (409 otherwise): nothing is left to stop once every delivery of a
  // completed fan-out has its receipt (a quiet-hours hold aside, which Stop still cancels).
  const receipts = Object.values(status.push || {})
    .reduce((sum, outcomes) => sum + Object.values(outcomes || {}).reduce((part, count) => part + (Number(count) || 0), 0), 0);
  const targets = status.targets && Number.isFinite(status.targets.total) ? status.targets.total : 0;
  const held = status.skippedReasons && Number(status.skippedReasons.held_quiet) > 0;
  const allAnswered = state === 'completed' && Boolean(status.push) && receipts >= targets && !held;
  byId('alert-stop').disabled = ['cancelled', 'expired', 'rejected', 'released'].includes(state) || allAnswered;
  byId('alert-correct').disabled = Boolean(status.rehearsal || status.test || status.correctionOf);
  if (reach && Number.isFinite(reach.targets)) {
    drawReachChart(byId('reach-chart'), reach);
    announce(reachSummary(reach), final);
  } else if (status.reach && status.reach.committed) {
    const parts = ['committed', 'sent'].filter((key) => status.reach[key] && Number.isFinite(status.reach[key].p90Ms))
      .map((key) => `90 % ${key} in ${formatSeconds(status.reach[key].p90Ms)}`);
    announce(parts.length ? `${parts.join(', ')}.` : 'Reach not measured yet.', final);
  } else {
    announce(state === 'scheduled' ? 'Not published yet: scheduled.' : 'No reach yet.', final);
  }
}

/** Updates the live reach text at most every 1.5 s, so screen readers are not flooded. */
function announce(text, now) {
  summaryText = text;
  if (now) {
    clearTimeout(summaryTimer);
    summaryTimer = 0;
    byId('reach-summary').textContent = text;
    return;
  }
  if (summaryTimer) return;
  byId('reach-summary').textContent = text;
  summaryTimer = setTimeout(() => { summaryTimer = 0; byId('reach-summary').textContent = summaryText; }, 1500);
}

function renderSummary(status) {
  const list = clear(byId('alert-summary'));
  const timings = status.timings || {};
  const tasks = status.tasks || {};
  const row = (term, ...value) => list.append(el('div', {}, el('dt', { text: term }), el('dd', {}, ...value)));
  if (status.test) row('Kind', 'Test send (its recipients only)');
  if (status.rehearsal) row('Kind', 'Rehearsal (nothing was delivered)');
  if (status.correctionOf) row('Correction of', alertLink(status.correctionOf));
  row('Published', formatTime(timings.publishedAt || timings.acceptedAt));
  if (timings.completedAt) row('Fan-out completed', formatTime(timings.completedAt), Number.isFinite(timings.durationMs) ? ` (${formatSeconds(timings.durationMs)})` : '');
  if (Number.isFinite(tasks.planned)) row('Tasks', `${formatNumber(tasks.completed)} of ${formatNumber(tasks.planned)} finished`);
  row('Targets', formatNumber(status.targets ? status.targets.total : NaN));
  row('Skipped', formatNumber(status.skipped), ' · failed ', formatNumber(status.failed));
  if (status.reason) row('Reason', String(status.reason));
  if (status.schedule) {
    const schedule = status.schedule;
    const releases = Array.isArray(schedule.releases) ? schedule.releases : [];
    const pending = releases.filter((release) => release && release.state === 'pending').length;
    row('Schedule', schedule.sendAtLocal ? `${schedule.sendAtLocal} on each device\u2019s clock` : formatTime(schedule.sendAt),
      ` · ${formatNumber(pending)} of ${formatNumber(releases.length)} releases pending`);
  }
  if (Array.isArray(status.corrections) && status.corrections.length > 0) {
    const links = el('span');
    status.corrections.forEach((id, index) => append(links, index ? ', ' : '', alertLink(String(id))));
    row('Corrections', links);
  }
  const engagement = status.engagement;
  if (engagement && typeof engagement === 'object') {
    row('Opened', formatNumber(engagement.opened), ' · dismissed ', formatNumber(engagement.dismissed));
  }
}

function renderCounts(status) {
  const table = clear(byId('alert-counts'));
  const byPlatform = (status.targets && status.targets.byPlatform) || {};
  const push = status.push && typeof status.push === 'object' ? status.push : null;
  const platforms = Array.from(new Set([...Object.keys(byPlatform), ...Object.keys(push || {})])).sort();
  const outcomes = push ? OUTCOMES.filter((outcome, index) => index === 0 || platforms.some((p) => push[p] && push[p][outcome])) : [];
  table.append(el('caption', { text: push ? 'Targets per platform and outcome (receipts of the push services)'
    : 'Targets per platform (no receipts from the push services yet)' }));
  const head = el('tr', {}, el('th', { scope: 'col', text: 'Platform' }), el('th', { scope: 'col', text: 'Targets' }));
  for (const outcome of outcomes) head.append(el('th', { scope: 'col', text: outcome }));
  if (push) head.append(el('th', { scope: 'col', text: 'not yet sent' }));
  table.append(el('thead', {}, head));
  const body = el('tbody');
  const totals = { targets: 0, waiting: 0 };
  const cell = (value, platform, outcome) => el('td', { className: 'number', dataset: { platform, outcome }, text: formatNumber(value) });
  for (const platform of platforms) {
    const targets = Number(byPlatform[platform]) || 0;
    const counts = (push && push[platform]) || {};
    const row = el('tr', { dataset: { platform } }, el('th', { scope: 'row', text: platformName(platform) }), cell(targets, platform, 'targets'));
    totals.targets += targets;
    for (const outcome of outcomes) {
      const value = Number(counts[outcome]) || 0;
      totals[outcome] = (totals[outcome] || 0) + value;
      row.append(cell(value, platform, outcome));
    }
    if (push) {
      const waiting = Math.max(0, targets - Object.values(counts).reduce((sum, value) => sum + (Number(value) || 0), 0));
      totals.waiting += waiting;
      row.append(cell(waiting, platform, 'waiting'));
    }
    body.append(row);
  }
  if (platforms.length === 0) body.append(el('tr', {}, el('td', { colSpan: 2 + outcomes.length + (push ? 1 : 0), className: 'empty', text: 'No targets yet.' })));
  table.append(body);
  const foot = el('tr', { dataset: { platform: 'total' } }, el('th', { scope: 'row', text: 'Total' }), cell(totals.targets, 'total', 'targets'));
  for (const outcome of outcomes) foot.append(cell(totals[outcome] || 0, 'total', outcome));
  if (push) foot.append(cell(totals.waiting, 'total', 'waiting'));
  table.append(el('tfoot', {}, foot));
}

async function stop() {
  if (!current) return;
  const { id } = current;
  const message = byId('alert-message');
  const ok = await confirmAction(`Stop ${id}? Devices it has not reached yet will not get it; what was delivered stays delivered.`, 'Stop alert', true);
  if (!ok) { byId('alert-stop').focus(); return; }
  showMessage(message, 'Stopping\u2026');
  try {
    const { status, body } = await api.del(path(id));
    const state = body && body.state ? body.state : 'unknown';
    if (status === 200) showMessage(message, `Stopped: the alert is ${state}. ${body.reason || ''}`, 'ok');
    else showMessage(message, `Stop requested; the alert is still ${state} while the fan-out and the sender act on it.`, 'ok');
    if (current && current.id === id) follow(current);
  } catch (error) {
    if (error.name !== 'AbortError') showError(message, error);
  }
}

function openCorrection() {
  const form = byId('correct-form');
  form.hidden = false;
  if (correctRows.body.rows.length === 0) correctRows.addRow();
  byId('correct-prop-lang-0').focus();
}

function closeCorrection() {
  byId('correct-form').hidden = true;
  correctRows.reset();
  byId('correct-reason').value = '';
  byId('correct-withdraw').checked = false;
}

async function correct() {
  if (!current) return;
  const { id } = current;
  const message = byId('alert-message');
  const withdraw = byId('correct-withdraw').checked;
  const { properties, problems, count } = correctRows.read();
  if (problems.length > 0 || (!withdraw && count === 0)) {
    showMessage(message, problems.length ? problems.join(' ') : 'Give at least one corrected property, or withdraw the alert.', 'error');
    return;
  }
  const body = {};
  if (count > 0) body.properties = properties;
  if (withdraw) body.withdraw = true;
  const reason = byId('correct-reason').value.trim();
  if (reason) body.reason = reason;
  const what = withdraw ? 'Withdraw' : 'Correct';
  const ok = await confirmAction(`${what} ${id} on exactly the devices it reached? ${withdraw ? 'Their alert is removed.' : `New text: ${Object.keys(properties).join(', ')}.`}`, what, true);
  if (!ok) { byId('correct-submit').focus(); return; }
  try {
    const answer = (await api.post(path(id, '/corrections'), body)).body;
    closeCorrection();
    showMessage(message, withdraw ? 'Withdrawal sent: ' : 'Correction sent: ', 'ok', alertLink(answer.id), '.');
    byId('alert-correct').focus();
  } catch (error) {
    if (error.name !== 'AbortError') showError(message, error);
  }
}
