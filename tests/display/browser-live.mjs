// The page of a live Run in real headless Chromium (Debian's chromium,
// driven by playwright-core): node browser-live.mjs ARGS.json, where ARGS
// holds the link jig run printed, its port and capability, and where the
// screenshots go. Prints one "ok: ..." line per proven behaviour; exits 1
// on the first failure. tests/display/live-browser.sh runs it.
import { readFileSync } from 'node:fs';
import { checkInert, checkReloadRefused, checkRequests, fail, ok, open } from './browser-lib.mjs';

const args = JSON.parse(readFileSync(process.argv[2], 'utf8'));
// The guest is emulated: its answers are slow, so the waits are long.
const t = await open(args, { viewport: { width: 1100, height: 900 } }, 60000);
const { page } = t;
try {
  // Live: the Run is running, its scope's figures against its limits, and
  // the log lines as they come (a later view has more of them).
  await page.waitForFunction(() => document.getElementById('state').textContent === 'live');
  await page.waitForFunction(() => /running/.test(document.getElementById('scopes').textContent) &&
    document.querySelectorAll('#logs li').length >= 2);
  // Two more views with new lines: at least three API requests were made.
  for (let i = 0; i < 2; i++) {
    const seen = await page.$$eval('#logs li', (ls) => ls.length);
    await page.waitForFunction((n) => document.querySelectorAll('#logs li').length > n, seen);
  }
  const scopes = await page.$eval('#scopes', (e) => e.textContent);
  const summary = await page.$eval('#summary', (e) => e.textContent);
  if (!/running/.test(summary)) fail('the summary does not say running: ' + summary);
  ok('live: ' + (await page.$$eval('#logs li', (ls) => ls.length)) + ' log lines and counting; scope: ' +
     scopes.replace(/\s+/g, ' ').slice(0, 200));
  // Issue 35: the live timeline: the Run's scope so far, its memory now
  // against the cgroup's limit (the Flow holds 24 MiB), its CPU so far.
  const row = await page.$eval('#timeline tr.tl-row', (r) => ({ scope: r.dataset.scope, text: r.textContent,
    bar: !!r.querySelector('.tl-bar'), meters: [...r.querySelectorAll('meter')].map((m) => [m.value, m.max]) }));
  if (!row.scope.startsWith('Run ') || !row.bar || !/ now [0-9]+ bytes \([0-9.]+ MiB\) of [0-9]+ bytes/.test(row.text) ||
      !row.meters.length || !(row.meters[0][0] > 16777216) || !/CPU on average/.test(row.text))
    fail('the live timeline: ' + JSON.stringify(row));
  const note = await page.$eval('#timeline-note', (e) => e.textContent);
  if (!/ UTC, .* so far \(live\)/.test(note)) fail('the live timeline note: ' + note);
  ok('live timeline: ' + row.text.replace(/\s+/g, ' ').slice(0, 200));
  const hostile = await page.$eval('#logs li', (l) => l.textContent);
  if (!hostile.startsWith('live <img')) fail('the first log line is not its exact text: ' + hostile);
  if ((await page.$$('main img, main svg, main iframe, main script, main a')).length)
    fail('hostile text became elements');
  await page.screenshot({ path: args.out + '/display-live.png', fullPage: true });
  ok('screenshot ' + args.out + '/display-live.png');

  checkRequests(t, args.cap, 3);
  await checkInert(t);
  await checkReloadRefused(t, '#logs li', args.out + '/display-live-reload-refused.png');
} finally {
  await t.browser.close();
}
