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
  // Issue 35: the child Flows as a tree (two children of the root, a
  // grandchild under the first), each child's effects and logs under it,
  // the root's effects counted apart; a timeline of every scope with its
  // memory and CPU against its limits; human units beside exact values.
  const tree = await page.$$eval('#children > ul.tree > li.node', (ns) => ns.map((n) => ({
    flow: n.dataset.flow, head: n.querySelector(':scope > .head').textContent,
    effects: [...n.querySelectorAll(':scope > .effects li')].map((l) => l.textContent),
    logs: [...n.querySelectorAll(':scope > .logs li')].map((l) => l.textContent),
    kids: [...n.querySelectorAll(':scope > ul.tree > li.node')].map((k) => ({ flow: k.dataset.flow, level: k.dataset.level,
      effects: [...k.querySelectorAll(':scope > .effects li')].map((l) => l.textContent),
      logs: [...k.querySelectorAll(':scope > .logs li')].map((l) => l.textContent) })) })));
  const [x, z] = args.children;
  if (tree.length !== 2 || tree[0].flow !== x.flow || tree[1].flow !== z.flow) fail('tree: ' + JSON.stringify(tree));
  if (tree[0].head !== x.binding + ' \u2192 flow ' + x.flow + ': ' + x.status + ': ' + x.why) fail('head: ' + tree[0].head);
  if (JSON.stringify(tree[0].logs) !== JSON.stringify(x.logs) || JSON.stringify(tree[1].logs) !== JSON.stringify(z.logs))
    fail('children\'s logs: ' + JSON.stringify(tree));
  if (tree[0].effects.length !== 1 || !tree[0].effects[0].includes('route: ask') ||
      !tree[0].effects[0].includes('answer bytes: 4096 bytes (4 KiB)') || tree[1].effects.length !== 0)
    fail('children\'s effects: ' + JSON.stringify(tree));
  const y = x.children[0];
  if (tree[0].kids.length !== 1 || tree[0].kids[0].flow !== y.flow || tree[0].kids[0].level !== '2' ||
      JSON.stringify(tree[0].kids[0].logs) !== JSON.stringify(y.logs) || !tree[0].kids[0].effects[0].includes('route: run'))
    fail('the grandchild: ' + JSON.stringify(tree[0].kids));
  ok('the children are a tree (2 under the root, 1 under ' + x.binding + '), each with its effects and logs under it');
  // Issue 46: the page's labels are words, not the record's snake_case
  // keys; the headline is the summary's first entry.
  const labels = await page.$$eval('#summary dt, #scopes th', (es) => es.map((e) => e.textContent));
  const snake = labels.filter((t) => /[a-z0-9]_[a-z0-9]/i.test(t));
  if (snake.length) fail('raw keys as labels: ' + JSON.stringify(snake));
  for (const want of ['what happened', 'admitted Plan (SHA-256)', 'deadline', 'started', 'peak memory', 'CPU time', 'cleanup confirmed'])
    if (!labels.includes(want)) fail('no label "' + want + '": ' + JSON.stringify(labels));
  if (labels[1] !== 'what happened') fail('the headline is not first: ' + JSON.stringify(labels));
  ok('the labels are words: ' + labels.join(', '));
  const rootEffects = await page.$$eval('#effects li', (ls) => ls.map((l) => l.textContent));
  if (!rootEffects[0].includes('1 of its own; 2 made by child Flows')) fail('root effects: ' + JSON.stringify(rootEffects));
  ok('the root\'s effects: ' + rootEffects[0]);
  const rows = await page.$$eval('#timeline tr.tl-row', (rs) => rs.map((r) => {
    const bar = r.querySelector('.tl-bar');
    const m = [...r.querySelectorAll('meter')].map((e) => [e.value, e.max, e.high, e.classList.contains('at-limit')]);
    return { scope: r.dataset.scope, left: bar && parseFloat(bar.style.left), width: bar && parseFloat(bar.style.width),
      px: bar && bar.getBoundingClientRect().width, meters: m, text: r.textContent };
  }));
  if (rows.length !== 4) fail('timeline rows: ' + JSON.stringify(rows));
  const want = [['Run hostile-report', 0, 87, 12345678, 536870912], ['x \u2192 child', 10, 50, 31457280, 268435456],
    ['y \u2192 grandchild', 20, 20, 134217728, 134217728], ['z \u2192 second', 40, 40, 2097152, 268435456]];
  for (let i = 0; i < 4; i++) {
    const [scope, off, wall, peak, limit] = want[i], r = rows[i];
    if (r.scope !== scope || Math.abs(r.left - 100 * off / 87) > 0.01 || Math.abs(r.width - 100 * wall / 87) > 0.01 || !(r.px > 0))
      fail('timeline row ' + i + ': ' + JSON.stringify(r));
    if (r.meters.length !== 2 || r.meters[0][0] !== peak || r.meters[0][1] !== limit) fail('memory meter ' + i + ': ' + JSON.stringify(r));
    if (!r.text.includes(' of ') || !r.text.includes('CPU on average')) fail('timeline text ' + i + ': ' + r.text);
  }
  // Issue 46: every meter warns from 90 % of its limit, and the one at
  // its limit (y's memory) is marked so, the others not.
  if (!rows.every((r) => r.meters.every((m) => Math.abs(m[2] - 0.9 * m[1]) < 1e-6 * m[1])))
    fail('a meter without its warning range: ' + JSON.stringify(rows.map((r) => r.meters)));
  if (!rows[2].meters[0][3] || rows.some((r, i) => i !== 2 && r.meters[0][3])) fail('at-limit: ' + JSON.stringify(rows.map((r) => r.meters)));
  ok('the memory meter at its limit warns (y: 128 MiB of 128 MiB)');
  if (!rows[1].text.includes('peak 31457280 bytes (30 MiB) of 268435456 bytes (256 MiB), 11.7%') || !rows[1].text.includes('0.40 of 0.50 CPU on average'))
    fail('timeline x: ' + rows[1].text);
  ok('the timeline: ' + rows.map((r) => r.scope + ' at ' + r.left.toFixed(1) + '% for ' + r.width.toFixed(1) + '%').join(', '));
  // No epoch milliseconds or raw byte counts alone: every text that holds
  // a time since the epoch also holds its date, every byte count of 1 KiB
  // or more its KiB/MiB/GiB.
  const bare = await page.$$eval('main *', (es) => es.filter((e) => e.children.length === 0).map((e) => e.textContent).filter((t) =>
    (/\b1[0-9]{12}\b/.test(t) && !/ UTC\b/.test(t)) ||
    [...t.matchAll(/\b([0-9]+) bytes(?! \()/g)].some((m) => Number(m[1]) >= 1024 && !/answer bytes/.test(t))));
  if (bare.length) fail('values without human units: ' + JSON.stringify(bare));
  const dates = await page.$eval('main', (e) => (e.textContent.match(/2023-11-14 22:13:20\.0[0-9]{2} UTC/g) || []).length);
  if (dates < 4) fail('dates shown: ' + dates);
  ok('human units beside every exact value (' + dates + ' dates; no bare epoch milliseconds or byte counts)');
  await page.screenshot({ path: args.out + '/display-packet-tree.png', fullPage: true });
  ok('screenshot ' + args.out + '/display-packet-tree.png');

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
