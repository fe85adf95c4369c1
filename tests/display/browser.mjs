// The display page in real headless Chromium (Debian's chromium, driven by
// playwright-core): node browser.mjs ARGS.json, where ARGS holds the link,
// the capability, the packet's files and logs and where screenshots go.
// Prints one "ok: ..." line per proven behaviour; exits 1 on the first
// failure.
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
  const context = await browser.newContext();
  // Every CSP violation the page reports, and a marker hostile text would set.
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

  await page.goto(args.link);
  await page.waitForFunction(() => location.hash === '');
  await page.waitForFunction(() => document.getElementById('state').textContent.includes('saved packet'));
  if (page.url() !== origin + '/') fail('the URL still is ' + page.url());
  if (page.url().includes(args.cap)) fail('the capability is in the URL');
  ok('the page loaded from the link and the fragment is gone: ' + page.url());
  const inHistory = await page.evaluate(() => location.href + ' ' + history.length);
  if (inHistory.includes(args.cap)) fail('the capability is in the location');

  // Every artifact, opened, shows its exact bytes as text.
  const names = await page.$$eval('#artifacts button', (bs) => bs.map((b) => b.textContent));
  if (names.length !== Object.keys(args.files).length) fail('artifacts listed: ' + names.join(', '));
  for (const name of names) {
    await page.click(`#artifacts button:text-is("${name}")`);
    await page.waitForFunction((n) => document.getElementById('artifact-name').textContent.startsWith(n + ' '), name);
    const text = await page.$eval('#artifact', (e) => e.textContent);
    if (text !== args.files[name]) fail(`${name} is not shown as its exact text: ${JSON.stringify(text)}`);
    const children = await page.$eval('#artifact', (e) => e.children.length);
    if (children !== 0) fail(`${name} made elements`);
    ok(`${name} is shown as its exact text (${text.length} characters, no elements)`);
  }
  const logs = await page.$$eval('#logs li', (ls) => ls.map((l) => l.textContent));
  if (JSON.stringify(logs) !== JSON.stringify(args.logs)) fail('logs: ' + JSON.stringify(logs));
  ok('the Run/0 log lines are shown as text');
  if ((await page.$$('main img, main svg, main iframe, main script, main a')).length)
    fail('hostile text became elements');
  await page.screenshot({ path: args.out + '/display-packet.png', fullPage: true });
  ok('screenshot ' + args.out + '/display-packet.png');

  // API requests carry the capability in the header, and only they do.
  const api = requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
  if (api.length < 1 + names.length) fail('too few API requests: ' + api.length);
  for (const r of api)
    if (r.headers['x-jig-capability'] !== args.cap) fail('an API request without the header: ' + r.url);
  for (const r of requests) {
    const u = new URL(r.url);
    if (u.origin !== origin) fail('a request left the page: ' + r.url);
    if (u.pathname === '/x' || u.pathname.startsWith('/x')) fail('hostile text made a request: ' + r.url);
    if (r.url.includes(args.cap) || (r.headers.cookie || '').includes(args.cap) || r.headers.referer)
      fail('the capability or a referrer rides on ' + r.url);
    if (!u.pathname.startsWith('/api/') && r.headers['x-jig-capability']) fail('a page asset got the header: ' + r.url);
  }
  ok(`${api.length} API requests carry the capability header; ${requests.length} requests, all to ${origin}, none to /x`);

  // No storage, no cookies.
  const state = await context.storageState();
  if (state.cookies.length || state.origins.length) fail('storage: ' + JSON.stringify(state));
  const stores = await page.evaluate(async () => ({
    local: localStorage.length, session: sessionStorage.length, cookie: document.cookie,
    idb: (await indexedDB.databases()).length, caches: (await caches.keys()).length }));
  if (stores.local || stores.session || stores.cookie || stores.idb || stores.caches)
    fail('storage: ' + JSON.stringify(stores));
  ok('no cookies, local or session storage, IndexedDB or caches: ' + JSON.stringify(stores));

  // Nothing ran, nothing was blocked.
  const pwned = await page.evaluate(() => window.__pwned);
  if (pwned !== undefined) fail('window.__pwned = ' + pwned);
  const violations = await page.evaluate(() => window.__violations);
  if (violations.length) fail('CSP violations: ' + violations.join('; '));
  ok('window.__pwned unset, no CSP violation reported');

  // A reload has no capability: the view is refused and the page says so.
  responses.length = 0;
  await page.reload();
  await page.waitForFunction(() => document.getElementById('state').textContent.includes('refused'));
  const view = responses.filter((r) => new URL(r.url).pathname === '/api/view');
  if (!view.length || view.some((r) => r.status !== 401)) fail('reload: ' + JSON.stringify(view));
  if ((await page.$$('#artifacts li')).length) fail('a reloaded page shows data');
  ok('a reload without the link is refused (401) and shows nothing: ' +
     (await page.$eval('#state', (e) => e.textContent)));
  await page.screenshot({ path: args.out + '/display-reload-refused.png' });

  // The one control: close the presentation.
  const again = await context.newPage();
  await again.goto(args.link);
  await again.waitForFunction(() => document.getElementById('state').textContent.includes('saved packet'));
  const buttons = await again.$$eval('button', (bs) => bs.map((b) => b.textContent).filter((t) => !t.includes('.')));
  if (buttons.length !== 1 || buttons[0] !== 'Close this display') fail('controls: ' + buttons.join(', '));
  await again.click('#close');
  await again.waitForFunction(() => document.getElementById('state').textContent === 'closed');
  ok('the only control closes the presentation');
} finally {
  await browser.close();
}
