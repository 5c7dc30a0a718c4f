// sas.js: Shared Access Signature tokens computed in the browser with WebCrypto, from a
// connection string (Endpoint=sb://host/;SharedAccessKeyName=NAME;SharedAccessKey=KEY).
// The key lives only inside a non-extractable CryptoKey held by a TokenSource in memory.

const TOKEN_LIFETIME_SECONDS = 3600;
const RENEW_BEFORE_SECONDS = 300;

/**
 * Reads a connection string tolerantly: keys in any letter case, spaces around parts, a
 * trailing ';'. Throws an Error naming what is missing.
 * @returns {{endpoint: string, policy: string, key: string}}
 */
export function parseConnectionString(text) {
  const parts = {};
  for (const raw of String(text || '').split(';')) {
    const part = raw.trim();
    if (!part) continue;
    const equals = part.indexOf('=');
    if (equals <= 0) throw new Error(`The connection string has a part without "name=value": "${part.slice(0, 24)}"`);
    // The value keeps any '=' of its own (base64 keys end with '=').
    parts[part.slice(0, equals).trim().toLowerCase()] = part.slice(equals + 1).trim();
  }
  const missing = [];
  if (!parts.sharedaccesskeyname) missing.push('SharedAccessKeyName (the policy name)');
  if (!parts.sharedaccesskey) missing.push('SharedAccessKey (the key)');
  if (missing.length > 0) {
    const hint = 'Paste it as Endpoint=sb://host/;SharedAccessKeyName=NAME;SharedAccessKey=KEY';
    throw new Error(`The connection string has no ${missing.join(' and no ')}. ${hint}`);
  }
  return { endpoint: parts.endpoint || '', policy: parts.sharedaccesskeyname, key: parts.sharedaccesskey };
}

/** The host of an Endpoint (sb://host/), for display only. */
export function endpointHost(endpoint) {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/]+)/i.exec(endpoint || '');
  return match ? match[1] : '';
}

function base64(buffer) {
  let binary = '';
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Makes tokens for one policy and resource, renewing them before they expire. */
export class TokenSource {
  /** Use TokenSource.create: importing the key is asynchronous. */
  constructor(cryptoKey, policy, resource) {
    this.cryptoKey = cryptoKey;
    this.policy = policy;
    this.resource = resource;
    this.cached = null;
    this.expiry = 0;
  }

  static async create({ key, policy, resource }) {
    if (!globalThis.crypto || !crypto.subtle) {
      throw new Error('This browser cannot compute signatures here (WebCrypto needs https or localhost).');
    }
    const cryptoKey = await crypto.subtle.importKey(
      'raw', new TextEncoder().encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    return new TokenSource(cryptoKey, policy, resource);
  }

  /** A token valid for at least five more minutes. */
  async token() {
    const now = Math.floor(Date.now() / 1000);
    if (this.cached && this.expiry - now > RENEW_BEFORE_SECONDS) return this.cached;
    const expiry = now + TOKEN_LIFETIME_SECONDS;
    const resource = encodeURIComponent(this.resource);
    const signed = await crypto.subtle.sign(
      'HMAC', this.cryptoKey, new TextEncoder().encode(`${resource}\n${expiry}`));
    this.cached = `SharedAccessSignature sr=${resource}&sig=${encodeURIComponent(base64(signed))}`
      + `&se=${expiry}&skn=${encodeURIComponent(this.policy)}`;
    this.expiry = expiry;
    return this.cached;
  }

  /** Forgets the key and the token. */
  forget() {
    this.cryptoKey = null;
    this.cached = null;
    this.expiry = 0;
  }
}
