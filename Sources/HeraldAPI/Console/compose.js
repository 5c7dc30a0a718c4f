// compose.js: the compose view. The tag expression with its error at the column and the exact
// audience (a rehearsal, debounced) as the editor types; properties per language; urgency;
// now / at a time / at each device's local time; full rehearsal with previews; test send;
// the real send after a confirmation.

import * as api from './api.js';
import {
  el, byId, clear, append, devices, formatNumber, formatTime, showMessage, showError, alertLink, confirmAction, withOffset, characters,
} from './dom.js';
import { PropertyRows } from './props.js';
import { showRehearsal, showCounts, clearRehearsal, reasonLabel } from './previews.js';
import { platformName } from './payload.js';

const AUDIENCE_DELAY_MS = 300;
let rows = null;
let audienceTimer = 0;
let audienceRequest = null;
let rehearsalRequest = null;
let lastAudience = null; // {expression, count}

export function initCompose() {
  rows = new PropertyRows(byId('compose-properties'), 'prop', scheduleAudience);
  rows.addRow();
  byId('compose-add-language').addEventListener('click', () => rows.addRow().focus());
  byId('compose-expression').addEventListener('input', scheduleAudience);
  byId('compose-urgency').addEventListener('change', () => { updateUrgency(); scheduleAudience(); });
  byId('compose-when').addEventListener('change', updateWhen);
  byId('compose-form').addEventListener('submit', (event) => { event.preventDefault(); rehearse(); });
  byId('compose-test-send').addEventListener('click', testSend);
  byId('compose-test-recipients').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { event.preventDefault(); testSend(); }
  });
  byId('compose-send').addEventListener('click', send);
  byId('compose-timezone').textContent = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
  updateUrgency();
  updateWhen();
}

/** Clears everything the editor typed or the server answered (sign out). */
export function resetCompose() {
  for (const id of ['compose-expression', 'compose-id', 'compose-test-recipients', 'compose-send-at']) byId(id).value = '';
  byId('compose-urgency').value = 'normal';
  byId('compose-when').value = 'now';
  rows.reset();
  rows.addRow();
  abortAll();
  lastAudience = null;
  showExpressionError(null);
  byId('compose-audience').textContent = '—';
  clear(byId('compose-audience-platforms'));
  showMessage(byId('compose-audience-note'), '');
  showMessage(byId('compose-result'), '');
  showMessage(byId('rehearsal-message'), '');
  clearRehearsal();
  updateUrgency();
  updateWhen();
}

function abortAll() {
  clearTimeout(audienceTimer);
  if (audienceRequest) audienceRequest.abort();
  if (rehearsalRequest) rehearsalRequest.abort();
  audienceRequest = null;
  rehearsalRequest = null;
}

function updateUrgency() {
  const breaking = byId('compose-urgency').value === 'breaking';
  byId('view-compose').classList.toggle('is-breaking', breaking);
  byId('compose-send').classList.toggle('danger', breaking);
}

function updateWhen() {
  const when = byId('compose-when').value;
  byId('compose-send-at-field').hidden = when === 'now';
  byId('compose-send-at').required = when !== 'now';
  byId('compose-send-at-hint').textContent = when === 'local'
    ? 'Each device gets it at this wall-clock time in its own time zone.'
    : 'In your time zone, ';
  byId('compose-timezone').hidden = when === 'local';
  byId('compose-send').textContent = when === 'now' ? 'Send\u2026' : 'Schedule\u2026';
}

/**
 * The event from the form. purpose: 'audience' (tags, properties, urgency), 'test' (no time),
 * 'rehearse' or 'send' (everything).
 */
function buildEvent(purpose) {
  const event = {};
  const problems = [];
  const id = byId('compose-id').value.trim();
  if (id && purpose !== 'audience') event.id = id;
  const expression = byId('compose-expression').value;
  if (expression.trim() !== '') event.tags = expression;
  const { properties, problems: rowProblems, count } = rows.read();
  if (count > 0) event.properties = properties;
  if (purpose !== 'audience') problems.push(...rowProblems);
  const urgency = byId('compose-urgency').value;
  event.urgency = urgency;
  event.priority = urgency === 'breaking' ? 'high' : 'normal';
  const when = byId('compose-when').value;
  const at = byId('compose-send-at').value;
  if ((purpose === 'rehearse' || purpose === 'send') && when !== 'now') {
    if (!at) problems.push('Choose the date and time to send at.');
    else if (when === 'at') event.sendAt = withOffset(at);
    else event.sendAtLocal = at.length === 16 ? `${at}:00` : at;
  }
  return { event, problems };
}

/** A tag-expression error of `source` with its column, from "... at column N ...". */
function tagsError(error, source) {
  const issue = (error.issues || []).find((each) => each.field === 'tags');
  if (!issue && error.field !== 'tags') return null;
  const message = issue ? issue.message : error.message;
  const match = /at column (\d+)/.exec(message);
  return { message, column: match ? Number(match[1]) : null, source: source || '' };
}

/** Shows (or clears, with null) the expression's error with a caret under its column. */
function showExpressionError(problem) {
  const node = byId('compose-expression-error');
  const input = byId('compose-expression');
  clear(node);
  if (!problem) {
    node.hidden = true;
    input.removeAttribute('aria-invalid');
    return;
  }
  node.hidden = false;
  input.setAttribute('aria-invalid', 'true');
  node.append(el('p', { className: 'error-text', text: problem.message }));
  if (problem.column) {
    const chars = characters(problem.source);
    const at = problem.column - 1;
    const marked = el('span', { className: 'caret-char', text: chars[at] !== undefined ? chars[at] : ' ' });
    node.append(el('pre', { className: 'caret-line', 'aria-hidden': 'true' },
      chars.slice(0, at).join(''), marked, chars.slice(at + 1).join(''), '\n',
      el('span', { className: 'caret', text: `${' '.repeat(at)}^ column ${problem.column}` })));
  }
}

function scheduleAudience() {
  clearTimeout(audienceTimer);
  byId('compose-audience-region').setAttribute('aria-busy', 'true');
  audienceTimer = setTimeout(countAudience, AUDIENCE_DELAY_MS);
}

/** Posts a rehearsal; resolves to {status, answer?} once it completed (polling a 202). */
async function rehearsal(event, signal, onSlow) {
  const { status, body } = await api.post('notifications', event, { query: { dryRun: 'true' }, signal });
  if (status === 200 && body && body.status) return { status: body.status, answer: body };
  if (onSlow) onSlow();
  return { status: await api.pollStatus(body.location || `notifications/${api.segment(body.id)}`, { signal }) };
}

async function countAudience() {
  if (audienceRequest) audienceRequest.abort();
  const controller = new AbortController();
  audienceRequest = controller;
  const { event } = buildEvent('audience');
  const region = byId('compose-audience-region');
  const note = byId('compose-audience-note');
  region.classList.add('stale');
  try {
    const { status } = await rehearsal(event, controller.signal, () => showMessage(note, 'Large audience: counting takes a few seconds\u2026'));
    if (controller !== audienceRequest) return;
    showExpressionError(null);
    showAudience(status, event.tags || '');
  } catch (error) {
    if (error.name === 'AbortError' || controller !== audienceRequest) return;
    const problem = tagsError(error, event.tags);
    showExpressionError(problem);
    byId('compose-audience').textContent = '—';
    clear(byId('compose-audience-platforms'));
    lastAudience = null;
    if (problem) showMessage(note, 'Fix the expression to see the audience.', 'info');
    else showError(note, error);
  } finally {
    if (controller === audienceRequest) {
      region.classList.remove('stale');
      region.removeAttribute('aria-busy');
      audienceRequest = null;
    }
  }
}

/** The audience: every device the expression matches, those that would get nothing included. */
function showAudience(status, expression) {
  const targets = status.targets || {};
  const skipped = Number(status.skipped) || 0;
  const count = (Number(targets.total) || 0) + skipped + (Number(status.failed) || 0);
  lastAudience = { expression, count };
  byId('compose-audience').textContent = devices(count);
  const list = clear(byId('compose-audience-platforms'));
  for (const [platform, number] of Object.entries(targets.byPlatform || {})) {
    list.append(el('li', { dataset: { platform } }, `${platformName(platform)}: `, el('strong', { text: formatNumber(number) })));
  }
  const note = byId('compose-audience-note');
  const reasons = Object.entries(status.skippedReasons || {}).map(([reason, number]) => `${formatNumber(number)} ${reasonLabel(reason)}`);
  if (skipped > 0) showMessage(note, `Of these, ${devices(skipped)} would get nothing: ${reasons.join('; ')}.`, 'info');
  else showMessage(note, expression ? '' : 'No expression: a broadcast to every device.', 'info');
}

async function rehearse() {
  const { event, problems } = buildEvent('rehearse');
  const message = byId('rehearsal-message');
  if (problems.length > 0) { showMessage(message, problems.join(' '), 'error'); return; }
  if (rehearsalRequest) rehearsalRequest.abort();
  const controller = new AbortController();
  rehearsalRequest = controller;
  const previews = byId('previews');
  previews.setAttribute('aria-busy', 'true');
  showMessage(message, 'Rehearsing\u2026');
  try {
    const result = await rehearsal(event, controller.signal,
      () => showMessage(message, 'The rehearsal takes more than 5 s; counting the audience\u2026'));
    if (controller !== rehearsalRequest) return;
    showExpressionError(null);
    showAudience(result.status, event.tags || '');
    if (result.answer) {
      showRehearsal(result.answer);
      showMessage(message, `Rehearsed: nothing was sent. ${(result.answer.previews || []).length} renditions.`, 'ok');
    } else {
      clearRehearsal();
      showCounts(result.status);
      showMessage(message, 'Rehearsed: nothing was sent. A rehearsal over 5 s gives the counts only, no previews.', 'ok');
    }
  } catch (error) {
    if (error.name === 'AbortError' || controller !== rehearsalRequest) return;
    const problem = tagsError(error, event.tags);
    if (problem) showExpressionError(problem);
    showError(message, error);
  } finally {
    if (controller === rehearsalRequest) { previews.removeAttribute('aria-busy'); rehearsalRequest = null; }
  }
}

async function testSend() {
  const result = byId('compose-result');
  const recipients = byId('compose-test-recipients').value.split(',').map((part) => part.trim()).filter(Boolean);
  if (recipients.length === 0 || recipients.length > 100) {
    showMessage(result, 'Enter 1 to 100 test recipients: registration ids, installation ids or $UserId:<id>, separated by commas.', 'error');
    byId('compose-test-recipients').focus();
    return;
  }
  const { event, problems } = buildEvent('test');
  if (problems.length > 0) { showMessage(result, problems.join(' '), 'error'); return; }
  event.testRecipients = recipients;
  const button = byId('compose-test-send');
  button.disabled = true;
  try {
    const { body } = await api.post('notifications', event);
    showMessage(result, `Test sent to ${formatNumber(recipients.length)} recipient${recipients.length === 1 ? '' : 's'} (not the audience): `, 'ok',
      alertLink(body.id), body.eventId ? ` — the real send may use the id ${body.eventId}.` : '');
  } catch (error) {
    if (tagsError(error, event.tags)) showExpressionError(tagsError(error, event.tags));
    showError(result, error);
  } finally {
    button.disabled = false;
  }
}

function confirmationText(event) {
  const urgency = { breaking: 'a BREAKING alert', normal: 'an alert', bulk: 'a bulk alert' }[event.urgency] || 'an alert';
  const audience = lastAudience && lastAudience.expression === (event.tags || '') ? devices(lastAudience.count) : 'every matching device';
  const target = event.tags ? `${audience} matching ${event.tags}` : `EVERY device (broadcast, ${audience})`;
  let when = 'now';
  if (event.sendAt) when = `at ${formatTime(event.sendAt)}`;
  if (event.sendAtLocal) when = `at ${event.sendAtLocal.replace('T', ' ')} in each device\u2019s time zone`;
  const languages = Object.keys(event.properties || {});
  return `Send ${urgency} to ${target}, ${when}? Properties: ${languages.length ? languages.join(', ') : 'none'}. `
    + 'Once sent it can be stopped or corrected, not unsent.';
}

async function send() {
  const result = byId('compose-result');
  const { event, problems } = buildEvent('send');
  if (problems.length > 0) { showMessage(result, problems.join(' '), 'error'); return; }
  const scheduled = Boolean(event.sendAt || event.sendAtLocal);
  const ok = await confirmAction(confirmationText(event), scheduled ? 'Schedule' : 'Send now', event.urgency === 'breaking');
  if (!ok) { byId('compose-send').focus(); return; }
  const button = byId('compose-send');
  button.disabled = true;
  showMessage(result, 'Sending\u2026');
  try {
    const { body } = await api.post('notifications', event);
    if (body.state === 'scheduled') {
      const first = body.firstReleaseAt ? `, first at ${formatTime(body.firstReleaseAt)}` : '';
      showMessage(result, 'Scheduled: ', 'ok', alertLink(body.id),
        ` (${formatNumber(body.releases)} release${body.releases === 1 ? '' : 's'}${first}).`);
    } else {
      showMessage(result, 'Sent: ', 'ok', alertLink(body.id), ' — open it to watch it land.');
    }
  } catch (error) {
    if (tagsError(error, event.tags)) showExpressionError(tagsError(error, event.tags));
    showError(result, error);
    if (error.code === 'duplicate_id_conflict') append(result, ' Choose another id, or leave it empty.');
  } finally {
    button.disabled = false;
    button.focus();
  }
}
