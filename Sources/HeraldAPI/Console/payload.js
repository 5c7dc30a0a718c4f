// payload.js: reads a rendered payload (a rehearsal preview) the way the device would show it:
// the alert's title and body per platform (APNs aps.alert, FCM notification, WNS toast text,
// Web Push title/body). All input is untrusted text; nothing here builds HTML.

/** @returns {{title: string, body: string, note: string}} */
export function readAlert(platform, payload) {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  switch (String(platform).toLowerCase()) {
    case 'apns': return apns(parseJSON(text));
    case 'fcm': return fcm(parseJSON(text));
    case 'wns': return wns(text);
    case 'webpush': return webPush(text);
    default: return { title: '', body: '', note: `No preview for platform ${platform}` };
  }
}

function parseJSON(text) {
  try { return JSON.parse(text); } catch { return undefined; }
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const str = (value) => (typeof value === 'string' ? value : (typeof value === 'number' ? String(value) : ''));

function apns(json) {
  if (!isObject(json)) return { title: '', body: '', note: 'Not JSON' };
  const aps = isObject(json.aps) ? json.aps : {};
  const alert = aps.alert;
  if (typeof alert === 'string') return { title: '', body: alert, note: '' };
  if (isObject(alert)) {
    const title = str(alert.title) || (alert['title-loc-key'] ? `[${str(alert['title-loc-key'])}]` : '');
    let body = str(alert.body) || (alert['loc-key'] ? `[${str(alert['loc-key'])}]` : '');
    if (alert.subtitle) body = `${str(alert.subtitle)}${body ? `\n${body}` : ''}`;
    return { title, body, note: '' };
  }
  if (aps['content-available']) return { title: '', body: '', note: 'Silent (background) push: nothing shown' };
  if (json.aps === undefined) return { title: '', body: '', note: 'No aps member: nothing shown' };
  return { title: '', body: '', note: 'No alert: nothing shown' };
}

function fcm(json) {
  if (!isObject(json)) return { title: '', body: '', note: 'Not JSON' };
  const message = isObject(json.message) ? json.message : json;
  const android = isObject(message.android) && isObject(message.android.notification) ? message.android.notification : null;
  const notification = isObject(message.notification) ? message.notification
    : (isObject(json.notification) ? json.notification : android);
  if (notification) {
    return { title: str(notification.title), body: str(notification.body), note: '' };
  }
  if (isObject(message.data) || isObject(json.data)) return { title: '', body: '', note: 'Data message: the app decides what to show' };
  return { title: '', body: '', note: 'No notification: nothing shown' };
}

function wns(text) {
  let doc;
  try {
    doc = new DOMParser().parseFromString(text, 'application/xml');
  } catch {
    return { title: '', body: '', note: 'Not XML' };
  }
  if (doc.getElementsByTagName('parsererror').length > 0 || !doc.documentElement) {
    return { title: '', body: '', note: 'Raw notification: the app decides what to show' };
  }
  const root = doc.documentElement.localName;
  const texts = Array.from(doc.getElementsByTagName('text'))
    .map((node) => node.textContent.trim())
    .filter((value) => value !== '');
  if (root === 'badge') return { title: '', body: `Badge: ${doc.documentElement.getAttribute('value') || ''}`, note: '' };
  if (texts.length === 0) return { title: '', body: '', note: `${root} without text` };
  if (texts.length === 1) return { title: '', body: texts[0], note: root === 'tile' ? 'Tile' : '' };
  return { title: texts[0], body: texts.slice(1).join('\n'), note: root === 'tile' ? 'Tile' : '' };
}

function webPush(text) {
  const json = parseJSON(text);
  if (!isObject(json)) return { title: '', body: text, note: 'Plain text: the service worker decides what to show' };
  // Declarative Web Push ({"web_push": 8030, "notification": {...}}) or the usual {title, body}.
  const source = isObject(json.notification) ? json.notification : json;
  const title = str(source.title);
  const body = str(source.body) || str(source.message);
  if (!title && !body) return { title: '', body: '', note: 'No title or body: the service worker decides what to show' };
  return { title, body, note: '' };
}

/** The payload for the <pre>: JSON pretty-printed, XML and anything else as it came. */
export function prettyPayload(payload) {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const json = parseJSON(text);
  return json === undefined ? text : JSON.stringify(json, null, 2);
}

/** Readable names of the platforms. */
export const platformNames = { apns: 'iOS (APNs)', fcm: 'Android (FCM)', wns: 'Windows (WNS)', webpush: 'Web Push' };

export function platformName(platform) {
  return platformNames[platform] || String(platform);
}
