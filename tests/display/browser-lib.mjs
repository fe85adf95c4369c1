// What both Chromium tests of the display page check (browser.mjs for a
// saved packet, browser-live.mjs for a live Run): the page opened from the
// link with the fragment gone, the capability header on API requests only,
// no storage, nothing run or blocked, a reload refused. Each check prints
// one "ok: ..." line or exits 1.
import { createRequire } from 'node:module';

export function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}
export function ok(msg) {
  console.log('ok: ' + msg);
}

// open(args, contextOptions, timeoutMs): headless Chromium as Debian ships
// it, every CSP violation and request recorded, the link opened and its
// fragment gone from the URL and the location.
export async function open(args, contextOptions = {}, timeoutMs) {
  const require = createRequire(args.modules + '/');
  const { chromium } = require('playwright-core');
  const origin = 'http://127.0.0.1:' + args.port;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, chromiumSandbox: true,
    args: ['--no-first-run', '--disable-background-networking', '--disable-component-update'] });
  try {
    return await opened(browser, args, origin, contextOptions, timeoutMs);
  } catch (err) {
    await browser.close();
    throw err;
  }
}
async function opened(browser, args, origin, contextOptions, timeoutMs) {
  const context = await browser.newContext(contextOptions);
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
  // Each request of the page numbered in the order it was made.
  const order = new WeakMap();
  let made = 0;
  page.on('request', (r) => order.set(r, ++made));
  page.on('response', (r) => responses.push({ url: r.url(), status: r.status(), n: order.get(r.request()),
                                              cap: 'x-jig-capability' in r.request().headers() }));
  if (timeoutMs) page.setDefaultTimeout(timeoutMs);
  await page.goto(args.link);
  await page.waitForFunction(() => location.hash === '');
  if (page.url() !== origin + '/') fail('the URL still is ' + page.url());
  if (page.url().includes(args.cap)) fail('the capability is in the URL');
  ok('the page loaded from the link and the fragment is gone: ' + page.url());
  const inHistory = await page.evaluate(() => location.href + ' ' + history.length);
  if (inHistory.includes(args.cap)) fail('the capability is in the location');
  return { browser, context, page, requests, responses, origin, order };
}

// API requests (at least minApi) carry the capability in the header, and
// only they do; nothing leaves the origin, nothing asks for /x.
export function checkRequests(t, cap, minApi) {
  const api = t.requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
  if (api.length < minApi) fail('too few API requests: ' + api.length);
  for (const r of api)
    if (r.headers['x-jig-capability'] !== cap) fail('an API request without the header: ' + r.url);
  for (const r of t.requests) {
    const u = new URL(r.url);
    if (u.origin !== t.origin) fail('a request left the page: ' + r.url);
    if (u.pathname === '/x' || u.pathname.startsWith('/x')) fail('hostile text made a request: ' + r.url);
    if (r.url.includes(cap) || (r.headers.cookie || '').includes(cap) || r.headers.referer)
      fail('the capability or a referrer rides on ' + r.url);
    if (!u.pathname.startsWith('/api/') && r.headers['x-jig-capability']) fail('a page asset got the header: ' + r.url);
  }
  ok(`${api.length} API requests carry the capability header; ${t.requests.length} requests, all to ${t.origin}, none to /x`);
}

// No cookies or storage of any kind; nothing ran, nothing was blocked.
export async function checkInert(t) {
  const state = await t.context.storageState();
  if (state.cookies.length || state.origins.length) fail('storage: ' + JSON.stringify(state));
  const stores = await t.page.evaluate(async () => ({
    local: localStorage.length, session: sessionStorage.length, cookie: document.cookie,
    idb: (await indexedDB.databases()).length, caches: (await caches.keys()).length }));
  if (stores.local || stores.session || stores.cookie || stores.idb || stores.caches)
    fail('storage: ' + JSON.stringify(stores));
  ok('no cookies, local or session storage, IndexedDB or caches: ' + JSON.stringify(stores));
  const pwned = await t.page.evaluate(() => window.__pwned);
  if (pwned !== undefined) fail('window.__pwned = ' + pwned);
  const violations = await t.page.evaluate(() => window.__violations);
  if (violations.length) fail('CSP violations: ' + violations.join('; '));
  ok('window.__pwned unset, no CSP violation reported');
}

// A reload has no capability: the view is refused (401), the page says so
// and shows nothing under dataSelector; a screenshot goes to shot.
export async function checkReloadRefused(t, dataSelector, shot) {
  // A live page's poll may still be sent, with the capability, after the
  // reload's request and before the old document goes (CI of 2026-12-07
  // saw one answered 200): only the requests made after the reloaded
  // document's and without the header, the reloaded page's, count.
  const doc = await t.page.reload();
  const after = t.order.get(doc.request());
  await t.page.waitForFunction(() => document.getElementById('state').textContent.includes('refused'));
  const view = t.responses.filter((r) => r.n > after && !r.cap && new URL(r.url).pathname === '/api/view');
  if (!view.length || view.some((r) => r.status !== 401)) fail('reload: ' + JSON.stringify(view));
  if ((await t.page.$$(dataSelector)).length) fail('a reloaded page shows data');
  ok('a reload without the link is refused (401) and shows nothing: ' +
     (await t.page.$eval('#state', (e) => e.textContent)));
  await t.page.screenshot({ path: shot });
}
