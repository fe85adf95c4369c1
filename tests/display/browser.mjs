// The display page in real headless Chromium (Debian's chromium, driven by
// playwright-core): node browser.mjs ARGS.json, where ARGS holds the link,
// the capability, the packet's files and logs and where screenshots go.
// Prints one "ok: ..." line per proven behaviour; exits 1 on the first
// failure.
import { readFileSync } from 'node:fs';
import { checkInert, checkReloadRefused, checkRequests, fail, ok, open } from './browser-lib.mjs';

const args = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const t = await open(args);
const { context, page } = t;
try {
  await page.waitForFunction(() => document.getElementById('state').textContent.includes('saved packet'));

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

  checkRequests(t, args.cap, 1 + names.length);
  await checkInert(t);
  await checkReloadRefused(t, '#artifacts li', args.out + '/display-reload-refused.png');

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
  await t.browser.close();
}
