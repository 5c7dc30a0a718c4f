// dom.js: small DOM helpers shared by the console's views: element building without
// innerHTML, number and time formatting, error display and the confirmation dialog.

const numberFormat = new Intl.NumberFormat(undefined);
const secondsFormat = new Intl.NumberFormat(undefined, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** Creates an element: el('td', {className: 'x', dataset: {a: '1'}}, 'text', child). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'className') node.className = value;
    else if (name === 'htmlFor') node.htmlFor = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name === 'text') node.textContent = value;
    else if (name in node && typeof value !== 'string') node[name] = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, ...children);
  return node;
}

/** Appends strings (as text) and nodes, skipping null and false. */
export function append(node, ...children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Removes every child of a node. */
export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export const byId = (id) => document.getElementById(id);

/** 12345 -> "12,345" in the browser's locale; anything not a number -> "—". */
export function formatNumber(value) {
  return Number.isFinite(value) ? numberFormat.format(value) : '—';
}

/** 2310 (ms) -> "2.3 s". */
export function formatSeconds(ms) {
  return Number.isFinite(ms) ? `${secondsFormat.format(ms / 1000)} s` : '—';
}

/** An ISO 8601 timestamp in the reader's local time, or the text as it came. */
export function formatTime(text) {
  if (!text) return '—';
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? String(text) : dateFormat.format(date);
}

/** "12,345 devices" / "1 device". */
export function devices(count) {
  return `${formatNumber(count)} ${count === 1 ? 'device' : 'devices'}`;
}

/** The text of an API error: its message, with the field it names. */
export function errorText(error) {
  if (!error) return '';
  if (error.status === 0) return error.message;
  const field = error.field ? ` (field: ${error.field})` : '';
  return `${error.message || 'Something went wrong'}${field}`;
}

const pad = (value) => String(value).padStart(2, '0');

/** A datetime-local value read in the browser's zone -> "2026-11-25T07:30:00+01:00". */
export function withOffset(localValue) {
  const date = new Date(localValue);
  if (Number.isNaN(date.getTime())) return null;
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const hours = pad(Math.floor(Math.abs(offset) / 60));
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:`
    + `${pad(date.getMinutes())}:${pad(date.getSeconds())}${sign}${hours}:${pad(Math.abs(offset) % 60)}`;
}

/** The characters of a text as a reader counts them (grapheme clusters), for columns. */
export function characters(text) {
  if (typeof Intl.Segmenter === 'function') {
    return Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text), (part) => part.segment);
  }
  return Array.from(text);
}

/** Shows a message in an element; kind is 'error', 'ok' or 'info'. */
export function showMessage(node, text, kind = 'info', ...extra) {
  // Message elements stay in the page (live regions announce changes only when present);
  // an empty one takes no room (style.css, .message:empty).
  clear(node);
  node.classList.remove('message-error', 'message-ok', 'message-info');
  if (!text && extra.length === 0) return;
  node.classList.add(`message-${kind}`);
  append(node, text, ...extra);
}

/** Shows an API error in an element, with the other issues of a refused document. */
export function showError(node, error) {
  showMessage(node, errorText(error), 'error');
  const issues = error && Array.isArray(error.issues) ? error.issues : [];
  if (issues.length > 1) {
    const list = el('ul', { className: 'issues' });
    for (const issue of issues) list.append(el('li', { text: `${issue.field}: ${issue.message}` }));
    node.append(list);
  }
}

/** A link to an alert's page. */
export function alertLink(id) {
  return el('a', { href: `#/alerts/${encodeURIComponent(id)}`, className: 'alert-link', text: id });
}

/**
 * Asks for confirmation in the <dialog id="confirm-dialog">; resolves true when the editor
 * pressed the OK button, false on Cancel or Escape.
 */
export function confirmAction(text, okLabel = 'Confirm', danger = false) {
  const dialog = byId('confirm-dialog');
  if (dialog.open) return Promise.resolve(false);
  const ok = byId('confirm-ok');
  byId('confirm-text').textContent = text;
  ok.textContent = okLabel;
  ok.classList.toggle('danger', danger);
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
    byId('confirm-cancel').focus();
  });
}

/** Wires the dialog's buttons once (plain buttons: the CSP's form-action 'none' is kept clear of). */
export function initConfirmDialog() {
  const dialog = byId('confirm-dialog');
  byId('confirm-ok').addEventListener('click', () => dialog.close('ok'));
  byId('confirm-cancel').addEventListener('click', () => dialog.close('cancel'));
}
