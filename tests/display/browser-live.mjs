// The page of a live Run in real headless Chromium (Debian's chromium,
// driven by playwright-core): node browser-live.mjs ARGS.json, where ARGS
// holds the link jig run printed, its port and capability, and where the
// screenshots go. Prints one "ok: ..." line per proven behaviour; exits 1
// on the first failure. tests/display/live-browser.sh runs it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const args = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const require = createRequire(args.modules + '/');
const { chromium } = require('playwright-core');

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}
function ok(msg) {
  console.log('ok: ' + msg);
}

const origin = 'http://127.0.0.1:' + args.port;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, chromiumSandbox: true,
  args: ['--no-first-run', '--disable-background-networking', '--disable-component-update'] });
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
    });
  });
  const requests = [];
  context.on('request', (r) => requests.push({ url: r.url(), headers: r.headers() }));
  const page = await context.newPage();
  const responses = [];
  page.on('response', (r) => responses.push({ url: r.url(), status: r.status() }));

  // The guest is emulated: its answers are slow, so the waits are long.
  page.setDefaultTimeout(60000);
  await page.goto(args.link);
  await page.waitForFunction(() => location.hash === '');
  if (page.url() !== origin + '/') fail('the URL still is ' + page.url());
  ok('the page loaded from the link and the fragment is gone: ' + page.url());

  // Live: the Run is running, its scope's figures against its limits, and
  // the log lines as they come (a later view has more of them).
  await page.waitForFunction(() => document.getElementById('state').textContent === 'live');
  await page.waitForFunction(() => /running/.test(document.getElementById('scopes').textContent) &&
    document.querySelectorAll('#logs li').length >= 2);
  const first = await page.$$eval('#logs li', (ls) => ls.length);
  await page.waitForFunction((n) => document.querySelectorAll('#logs li').length > n, first);
  const scopes = await page.$eval('#scopes', (e) => e.textContent);
  const summary = await page.$eval('#summary', (e) => e.textContent);
  if (!/running/.test(summary)) fail('the summary does not say running: ' + summary);
  ok('live: ' + (await page.$$eval('#logs li', (ls) => ls.length)) + ' log lines and counting; scope: ' +
     scopes.replace(/\s+/g, ' ').slice(0, 200));
  const hostile = await page.$eval('#logs li', (l) => l.textContent);
  if (!hostile.startsWith('live <img')) fail('the first log line is not its exact text: ' + hostile);
  if ((await page.$$('main img, main svg, main iframe, main script, main a')).length)
    fail('hostile text became elements');
  await page.screenshot({ path: args.out + '/display-live.png', fullPage: true });
  ok('screenshot ' + args.out + '/display-live.png');

  // API requests carry the capability in the header, and only they do.
  const api = requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
  if (api.length < 3) fail('too few API requests: ' + api.length);
  for (const r of api)
    if (r.headers['x-jig-capability'] !== args.cap) fail('an API request without the header: ' + r.url);
  for (const r of requests) {
    const u = new URL(r.url);
    if (u.origin !== origin) fail('a request left the page: ' + r.url);
    if (r.url.includes(args.cap) || (r.headers.cookie || '').includes(args.cap) || r.headers.referer)
      fail('the capability or a referrer rides on ' + r.url);
    if (!u.pathname.startsWith('/api/') && r.headers['x-jig-capability']) fail('a page asset got the header: ' + r.url);
  }
  ok(`${api.length} API requests carry the capability header; ${requests.length} requests, all to ${origin}`);

  // No storage, no cookies; nothing ran, nothing was blocked.
  const state = await context.storageState();
  if (state.cookies.length || state.origins.length) fail('storage: ' + JSON.stringify(state));
  const stores = await page.evaluate(async () => ({
    local: localStorage.length, session: sessionStorage.length, cookie: document.cookie,
    idb: (await indexedDB.databases()).length, caches: (await caches.keys()).length }));
  if (stores.local || stores.session || stores.cookie || stores.idb || stores.caches)
    fail('storage: ' + JSON.stringify(stores));
  ok('no cookies, local or session storage, IndexedDB or caches: ' + JSON.stringify(stores));
  if ((await page.evaluate(() => window.__pwned)) !== undefined) fail('window.__pwned is set');
  const violations = await page.evaluate(() => window.__violations);
  if (violations.length) fail('CSP violations: ' + violations.join('; '));
  ok('window.__pwned unset, no CSP violation reported');

  // A reload has no capability: the live view is refused and shows nothing.
  responses.length = 0;
  await page.reload();
  await page.waitForFunction(() => document.getElementById('state').textContent.includes('refused'));
  const view = responses.filter((r) => new URL(r.url).pathname === '/api/view');
  if (!view.length || view.some((r) => r.status !== 401)) fail('reload: ' + JSON.stringify(view));
  if ((await page.$$('#logs li')).length) fail('a reloaded page shows data');
  ok('a reload of the live page without the link is refused (401) and shows nothing');
  await page.screenshot({ path: args.out + '/display-live-reload-refused.png' });
} finally {
  await browser.close();
}
