// app.js: the console's entry point. Sign-in (connection string -> SAS tokens, kept in
// memory only), the session header and hub picker, sign-out (also on any 401), and routing
// between the views from location.hash: #/compose, #/alerts, #/alerts/<id>, #/lookup,
// #/deadletters.

import * as api from './api.js';
import { TokenSource, parseConnectionString, endpointHost } from './sas.js';
import { el, byId, clear, append, showMessage, errorText, initConfirmDialog } from './dom.js';
import { initCompose, resetCompose } from './compose.js';
import { initAlertsList, showAlertsList, resetAlertsList } from './alerts.js';
import { initAlertPage, openAlert, closeAlert } from './alert-page.js';
import { initLookup, resetLookup } from './lookup.js';
import { initDeadLetters, showDeadLetters, resetDeadLetters } from './deadletters.js';

let session = null; // {hub, policy, rights, namespace, endpoint}
let settings = null; // {hubUri, defaultHub}
let shownRoute = '';

const VIEWS = ['view-compose', 'view-alerts', 'alert-page', 'view-lookup', 'view-deadletters'];
const NAVS = ['nav-compose', 'nav-alerts', 'nav-lookup', 'nav-deadletters'];
const LISTEN_ONLY = 'A Listen key cannot open the console: sign in with a Send or Manage key.';

async function loadSettings() {
  if (settings) return settings;
  let answer = null;
  try {
    // Beside this module (/console/settings.json), whether the page is /console or /console/.
    const response = await fetch(new URL('./settings.json', import.meta.url), { cache: 'no-store', credentials: 'omit' });
    if (response.ok) answer = await response.json();
  } catch { /* below */ }
  if (!answer || typeof answer.hubUri !== 'string') {
    throw new Error('The console could not read its settings (settings.json): is the Herald server running?');
  }
  settings = { hubUri: answer.hubUri, defaultHub: typeof answer.defaultHub === 'string' ? answer.defaultHub : 'default' };
  return settings;
}

function signInError(text) {
  showMessage(byId('signin-error'), text, 'error');
}

/** The message of a refused session request, for the sign-in form. */
function sessionErrorText(error, hub) {
  if (error.status === 403 && error.code === 'insufficient_rights') return LISTEN_ONLY;
  if (error.status === 401) return `The key was refused: ${error.message}`;
  if (error.status === 404) return hub ? `There is no hub “${hub}” (or the console is not served here): ${error.message}` : error.message;
  return errorText(error);
}

async function signIn(event) {
  event.preventDefault();
  const button = byId('signin-submit');
  const connection = byId('signin-connection');
  signInError('');
  let parsed;
  try {
    parsed = parseConnectionString(connection.value);
  } catch (error) {
    signInError(error.message);
    connection.focus();
    return;
  }
  button.disabled = true;
  const hub = byId('signin-hub').value.trim();
  try {
    const { hubUri, defaultHub } = await loadSettings();
    const tokenSource = await TokenSource.create({ key: parsed.key, policy: parsed.policy, resource: hubUri });
    api.configure({ tokenSource, hub, defaultHub });
    const answer = (await api.get('console/session', { allow401: true })).body || {};
    session = {
      hub: typeof answer.hub === 'string' ? answer.hub : (hub || defaultHub),
      policy: typeof answer.policy === 'string' ? answer.policy : parsed.policy,
      rights: Array.isArray(answer.rights) ? answer.rights.map(String) : [],
      namespace: answer.namespace === true,
      endpoint: endpointHost(parsed.endpoint),
    };
    api.setRights(session.rights);
  } catch (error) {
    api.reset();
    signInError(error instanceof api.ApiError ? sessionErrorText(error, hub) : error.message);
    connection.focus();
    return;
  } finally {
    button.disabled = false;
  }
  connection.value = ''; // the key lives on only inside the token source
  connection.type = 'password';
  byId('signin-show').checked = false;
  enterApp();
}

function enterApp() {
  byId('signin-view').hidden = true;
  byId('app').hidden = false;
  showSession();
  loadHubs();
  shownRoute = '';
  if (!location.hash || location.hash === '#' || location.hash === '#/') location.hash = '#/compose';
  else route();
}

function showSession() {
  const info = clear(byId('session-info'));
  append(info,
    el('span', {}, 'Hub ', el('strong', { text: session.hub })),
    el('span', {}, ' · policy ', el('strong', { text: session.policy })),
    el('span', {}, ' · rights ', el('strong', { text: session.rights.join(', ') || 'none' })),
    session.namespace ? el('span', { text: ' · namespace key' }) : null);
  if (session.endpoint) info.title = `Connection string endpoint: ${session.endpoint}`;
}

/** Offers the hubs to a namespace Manage key (GET /v1/hubs). */
async function loadHubs() {
  const field = byId('hub-picker-field');
  const picker = clear(byId('hub-picker'));
  field.hidden = true;
  if (!session || !session.namespace || !api.can('manage')) return; // listing hubs takes a namespace Manage key
  let hubs;
  try {
    const answer = (await api.get('/v1/hubs', { allow401: true })).body;
    hubs = answer && Array.isArray(answer.hubs) ? answer.hubs : null;
  } catch {
    return;
  }
  if (!hubs || !session) return;
  const defaultHub = settings.defaultHub;
  const names = [defaultHub, ...hubs.map((hub) => (hub && typeof hub.name === 'string' ? hub.name : null))
    .filter((name) => name && name.toLowerCase() !== defaultHub.toLowerCase())];
  for (const name of names) {
    picker.append(el('option', { value: name, text: name === defaultHub ? `${name} (default)` : name }));
  }
  const current = names.find((name) => name.toLowerCase() === session.hub.toLowerCase());
  picker.value = current || defaultHub;
  field.hidden = false;
}

async function changeHub() {
  const picker = byId('hub-picker');
  const previous = session.hub;
  const hub = picker.value;
  api.setHub(hub, settings.defaultHub);
  try {
    const answer = (await api.get('console/session')).body || {};
    session.hub = typeof answer.hub === 'string' ? answer.hub : hub;
    if (Array.isArray(answer.rights)) session.rights = answer.rights.map(String);
    api.setRights(session.rights);
    showMessage(byId('app-message'), `Now working in hub ${session.hub}.`, 'ok');
  } catch (error) {
    if (!session) return; // a 401 signed out
    api.setHub(previous, settings.defaultHub);
    picker.value = previous;
    showMessage(byId('app-message'), `Could not switch to hub ${hub}: ${errorText(error)}`, 'error');
    return;
  }
  showSession();
  closeAlert();
  resetCompose();
  resetAlertsList();
  resetLookup();
  resetDeadLetters();
  if (location.hash.startsWith('#/alerts/')) location.hash = '#/alerts';
  else { shownRoute = ''; route(); }
}

/** Forgets the key and everything shown; back to the sign-in form with a message. */
function signOut(message = '') {
  session = null;
  api.reset();
  closeAlert();
  resetCompose();
  resetAlertsList();
  resetLookup();
  resetDeadLetters();
  const dialog = byId('confirm-dialog');
  if (dialog.open) dialog.close('cancel');
  showMessage(byId('app-message'), '');
  byId('app').hidden = true;
  byId('signin-view').hidden = false;
  signInError(message);
  byId('signin-connection').focus();
}

function route() {
  if (!session) {
    byId('app').hidden = true;
    byId('signin-view').hidden = false;
    return;
  }
  const hash = location.hash || '#/compose';
  const alertMatch = /^#\/alerts\/(.+)$/.exec(hash);
  let view = 'view-compose';
  let nav = 'nav-compose';
  if (alertMatch) { view = 'alert-page'; nav = 'nav-alerts'; } else if (hash.startsWith('#/alerts')) { view = 'view-alerts'; nav = 'nav-alerts'; } else if (hash.startsWith('#/lookup')) { view = 'view-lookup'; nav = 'nav-lookup'; } else if (hash.startsWith('#/deadletters')) { view = 'view-deadletters'; nav = 'nav-deadletters'; }
  for (const id of VIEWS) byId(id).hidden = id !== view;
  for (const id of NAVS) {
    if (id === nav) byId(id).setAttribute('aria-current', 'page');
    else byId(id).removeAttribute('aria-current');
  }
  if (view !== 'alert-page') closeAlert();
  if (shownRoute === hash) return;
  shownRoute = hash;
  if (view === 'alert-page') {
    let id = alertMatch[1];
    try { id = decodeURIComponent(id); } catch { /* as written */ }
    openAlert(id);
  } else if (view === 'view-alerts') {
    showAlertsList();
  } else if (view === 'view-deadletters') {
    showDeadLetters();
  }
  const heading = byId(view).querySelector('h2');
  if (heading) heading.focus({ preventScroll: false });
}

function init() {
  api.onUnauthorized((error) => {
    if (session) signOut(`Signed out: the server refused the key (${error.message}). Sign in again.`);
  });
  initConfirmDialog();
  initCompose();
  initAlertsList();
  initAlertPage();
  initLookup();
  initDeadLetters();
  byId('signin-form').addEventListener('submit', signIn);
  byId('signin-show').addEventListener('change', (event) => {
    byId('signin-connection').type = event.target.checked ? 'text' : 'password';
  });
  byId('signout').addEventListener('click', () => signOut('Signed out.'));
  byId('hub-picker').addEventListener('change', changeHub);
  for (const button of document.querySelectorAll('nav.tabs button[data-route]')) {
    button.addEventListener('click', () => {
      const target = button.dataset.route;
      if (location.hash === target) { shownRoute = ''; route(); } else location.hash = target;
    });
  }
  window.addEventListener('hashchange', route);
  route();
  byId('signin-connection').focus();
}

init();
