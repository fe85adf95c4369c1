// A live Run's display in real headless Chromium (Debian's chromium,
// playwright-core), inside the supported-host VM guest:
// node browser_live.mjs ARGS.json, where ARGS holds the link, the port, the
// capability, where playwright-core is and where screenshots go. Prints one
// "ok: ..." line per proven behaviour; exits 1 on the first failure.
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
const stateHas = (t) => document.getElementById('state').textContent.includes(t);

const origin = 'http://127.0.0.1:' + args.port;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, chromiumSandbox: true,
  timeout: 120000,
  args: ['--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-gpu'] });
try {
  const context = await browser.newContext();
  context.setDefaultTimeout(120000);
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
    });
  });
  const requests = [];
  context.on('request', (r) => requests.push({ url: r.url(), headers: r.headers() }));
  const page = await context.newPage();

  await page.goto(args.link);
  await page.waitForFunction(() => location.hash === '');
  if (page.url() !== origin + '/') fail('the URL still is ' + page.url());
  ok('the page loaded from the link and the fragment is gone: ' + page.url());

  // Live: the state says so, the scope's numbers and ticking log lines.
  await page.waitForFunction(() => document.getElementById('state').textContent === 'live' &&
    [...document.querySelectorAll('#logs li')].filter((l) => l.textContent.startsWith('tick')).length >= 2 &&
    document.getElementById('scopes').textContent.includes('memory_bytes'));
  await page.screenshot({ path: args.out + '/display-live-run.png', fullPage: true });
  ok('a live Run shown (state live, scope numbers, log lines): ' + args.out + '/display-live-run.png');

  // The Run ends: the final view, its artifacts fetched and kept.
  await page.waitForFunction(stateHas, 'Run ended');
  const names = await page.$$eval('#artifacts button', (bs) => bs.map((b) => b.textContent));
  if (names.length !== 2) fail('artifacts listed: ' + names.join(', '));
  const shown = {};
  for (const name of names) {
    await page.click(`#artifacts button:text-is("${name}")`);
    await page.waitForFunction((n) => document.getElementById('artifact-name').textContent.startsWith(n + ' '), name);
    shown[name] = await page.$eval('#artifact', (e) => e.textContent);
    if (await page.$eval('#artifact', (e) => e.children.length)) fail(`${name} made elements`);
  }
  if (!shown['report.html'].includes('<script>window.__pwned=22</script>')) fail('report.html: ' + shown['report.html']);
  ok('the artifacts are shown as exact text after retirement: ' + names.join(', '));
  const logs = await page.$$eval('#logs li', (ls) => ls.map((l) => l.textContent));
  if (!logs.includes('live <img src=/x onerror="window.__pwned=20"> <script>window.__pwned=21</script>'))
    fail('the hostile log line: ' + JSON.stringify(logs.slice(0, 3)));
  if ((await page.$$('main img, main svg, main iframe, main script, main a')).length)
    fail('hostile text became elements');
  await page.screenshot({ path: args.out + '/display-live-final.png', fullPage: true });
  ok('the ended Run shown: ' + args.out + '/display-live-final.png');

  const api = requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
  for (const r of api)
    if (r.headers['x-jig-capability'] !== args.cap) fail('an API request without the header: ' + r.url);
  for (const r of requests) {
    const u = new URL(r.url);
    if (u.origin !== origin) fail('a request left the page: ' + r.url);
    if (u.pathname.startsWith('/x')) fail('hostile text made a request: ' + r.url);
    if (r.url.includes(args.cap) || r.headers.referer) fail('the capability or a referrer rides on ' + r.url);
  }
  ok(`${api.length} API requests, each with the capability header; ${requests.length} requests, all to ${origin}`);
  const state = await context.storageState();
  if (state.cookies.length || state.origins.length) fail('storage: ' + JSON.stringify(state));
  const pwned = await page.evaluate(() => window.__pwned);
  if (pwned !== undefined) fail('window.__pwned = ' + pwned);
  const violations = await page.evaluate(() => window.__violations);
  if (violations.length) fail('CSP violations: ' + violations.join('; '));
  ok('no cookies or storage, window.__pwned unset, no CSP violation reported');
} finally {
  await browser.close();
}
