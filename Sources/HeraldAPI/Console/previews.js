// previews.js: shows a rehearsal's answer: one card per (platform, template) rendition as a
// phone would show it, with the raw payload and its size against the limit; the devices
// skipped by reason; the expected 50 % / 90 % times.

import { el, clear, byId, formatNumber, devices } from './dom.js';
import { readAlert, prettyPayload, platformName } from './payload.js';

const REASONS = {
  empty_alert: 'the alert would show no text: no property for its language',
  no_native_payload: 'no native payload for the platform',
  payload_too_large: 'payload over the limit',
  header_too_large: 'headers over the limit',
  template_not_selected: 'template not selected',
  registration_expired: 'registration expired',
  registration_gone: 'registration removed',
  capped: 'frequency cap reached',
  held_quiet: 'held for quiet hours',
  skipped_quiet: 'in quiet hours (dropped)',
  not_sent: 'the original was not sent',
  not_a_live_activity: 'not a Live Activity event',
};

/** "empty_alert" -> "empty_alert: the alert would show no text ...". */
export function reasonLabel(reason) {
  return REASONS[reason] ? `${reason} (${REASONS[reason]})` : reason;
}

/** Fills a list element with skipped counts by reason; returns the total. */
export function fillSkipped(node, status) {
  clear(node);
  const reasons = status && status.skippedReasons && typeof status.skippedReasons === 'object' ? status.skippedReasons : {};
  const entries = Object.entries(reasons).filter(([, count]) => Number.isFinite(count)).sort((a, b) => b[1] - a[1]);
  const total = Number.isFinite(status && status.skipped) ? status.skipped : entries.reduce((sum, [, count]) => sum + count, 0);
  node.append(el('p', { className: 'skipped-total', text: total > 0 ? `${devices(total)} skipped` : 'No device skipped' }));
  if (entries.length > 0) {
    const list = el('ul', { className: 'skipped-list' });
    for (const [reason, count] of entries) {
      list.append(el('li', { dataset: { reason } }, el('span', { className: 'count', text: formatNumber(count) }), ' ', reasonLabel(reason)));
    }
    node.append(list);
  }
  return total;
}

/** Removes the previews and the rehearsal's counts. */
export function clearRehearsal() {
  clear(byId('previews'));
  clear(byId('rehearsal-skipped'));
  byId('rehearsal-skipped').hidden = true;
  clear(byId('rehearsal-expected'));
  byId('rehearsal-expected').hidden = true;
}

/** Shows a rehearsal's 200 answer: {status, previews, expected}. */
export function showRehearsal(answer) {
  clearRehearsal();
  const status = answer && answer.status ? answer.status : {};
  const container = byId('previews');
  const previews = Array.isArray(answer && answer.previews) ? answer.previews.slice() : [];
  previews.sort((a, b) => String(a.platform).localeCompare(String(b.platform)) || String(a.template).localeCompare(String(b.template)));
  if (previews.length === 0) {
    container.append(el('p', { className: 'empty', text: 'No rendition to preview: no device would receive this alert.' }));
  }
  const byTemplate = status.targets && status.targets.byTemplate ? status.targets.byTemplate : {};
  for (const preview of previews) container.append(card(preview, byTemplate));
  showCounts(status);
  showExpected(answer && answer.expected);
}

/** Shows only the counts (a rehearsal that took over 5 s has no previews in its answer). */
export function showCounts(status) {
  const skipped = byId('rehearsal-skipped');
  skipped.hidden = false;
  fillSkipped(skipped, status);
}

function showExpected(expected) {
  const node = byId('rehearsal-expected');
  clear(node);
  if (!expected || !Number.isFinite(expected.halfSeconds)) {
    node.hidden = true;
    return;
  }
  node.hidden = false;
  const seconds = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
  node.append(
    el('p', {}, 'Expected at this deployment\u2019s measured speed: half the audience in ',
      el('strong', { text: `${seconds.format(expected.halfSeconds)} s` }), ', 90 % in ',
      el('strong', { text: `${seconds.format(expected.ninetyPercentSeconds)} s` }),
      Number.isFinite(expected.throughputPerSecond) ? ` (${formatNumber(expected.throughputPerSecond)} deliveries a second).` : '.'),
  );
}

function card(preview, byTemplate) {
  const platform = String(preview.platform || '');
  const template = String(preview.template || '');
  const alert = readAlert(platform, preview.payload);
  const over = Number.isFinite(preview.bytes) && Number.isFinite(preview.limit) && preview.bytes > preview.limit;
  const templateLabel = template === '$native' ? 'native payload' : template;
  const count = byTemplate[template];

  const banner = el('div', { className: 'banner' },
    el('p', { className: 'banner-app', text: 'Herald' }),
    alert.title ? el('p', { className: 'banner-title', text: alert.title }) : null,
    alert.body ? el('p', { className: 'banner-body', text: alert.body }) : null,
    !alert.title && !alert.body ? el('p', { className: 'banner-empty', text: alert.note || 'Nothing to show' }) : null);
  const phone = el('div', { className: `phone phone-${platform}` }, banner,
    alert.note && (alert.title || alert.body) ? el('p', { className: 'banner-note', text: alert.note }) : null);

  const size = el('p', { className: over ? 'preview-size over-limit' : 'preview-size',
    text: `${formatNumber(preview.bytes)} of ${formatNumber(preview.limit)} bytes${over ? ' — over the limit: not sent' : ''}` });

  const missing = Array.isArray(preview.missingProperties) && preview.missingProperties.length > 0
    ? el('p', { className: 'preview-missing' }, el('strong', { text: 'Missing properties: ' }),
      preview.missingProperties.join(', '), ' (rendered empty)')
    : null;
  const fallbacks = Array.isArray(preview.fallbacks) && preview.fallbacks.length > 0
    ? el('p', { className: 'preview-fallbacks' }, el('strong', { text: 'Fallbacks read: ' }), preview.fallbacks.join(', '))
    : null;

  return el('article', { className: 'preview', dataset: { platform, template } },
    el('h4', { className: 'preview-heading' }, el('span', { className: 'platform-badge', text: platformName(platform) }), ' ', templateLabel),
    Number.isFinite(count) ? el('p', { className: 'preview-devices', text: devices(count) }) : null,
    phone, size, missing, fallbacks,
    el('pre', { className: 'preview-payload', tabIndex: 0, 'aria-label': `Raw payload, ${platformName(platform)}, ${templateLabel}`, text: prettyPayload(preview.payload) }));
}
