// jig's display page (docs/display.md). The capability arrives in the URL
// fragment; it is taken out of the URL before anything else happens and
// kept in this closure only: no cookie, no storage. Everything shown is
// set as text (textContent): nothing from a Run is parsed as HTML.
'use strict';
(() => {
  const m = /^#cap=([0-9a-f]{64})$/.exec(location.hash);
  const cap = m ? m[1] : '';
  history.replaceState(null, '', location.pathname);
  const HEADER = 'X-Jig-Capability';
  let last = null;
  let closed = false;

  function api(path, method) {
    const headers = {};
    if (cap) headers[HEADER] = cap;
    return fetch(path, { method: method || 'GET', headers, cache: 'no-store', credentials: 'omit',
                         redirect: 'error', referrerPolicy: 'no-referrer' });
  }
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function clear(id) {
    const e = document.getElementById(id);
    while (e.firstChild) e.removeChild(e.firstChild);
    return e;
  }
  function state(text, refused) {
    const s = document.getElementById('state');
    s.textContent = text;
    s.className = refused ? 'refused' : '';
  }
  // Human units beside the exact values (issue 35): a byte count with
  // KiB/MiB/GiB, milliseconds with seconds or minutes, a time since the
  // epoch as a UTC date.
  function bytes(n) {
    if (n < 1024) return n + ' B';
    const units = ['KiB', 'MiB', 'GiB', 'TiB'];
    let v = n / 1024, i = 0;
    while (v >= 1024 && i < 3) { v /= 1024; i++; }
    return (Number.isInteger(v) ? v : v.toFixed(1)) + ' ' + units[i];
  }
  function dur(ms) {
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    const s = Math.floor(ms / 1000);
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  }
  function date(ms) {
    const d = new Date(ms);
    return isNaN(d.getTime()) ? '?' : d.toISOString().replace('T', ' ').replace('Z', ' UTC');
  }
  function cpu(usec) { return (usec / 1e6).toFixed(usec < 1e6 ? 3 : 2) + ' s'; }
  // One value of the view as text: the exact value, and its human form.
  function fmt(k, v) {
    if (typeof v !== 'number') return v === null || v === undefined ? '' : String(v);
    if (k === 'started_ms') return date(v) + ' (' + v + ' ms since the epoch)';
    if (k === 'cpu_usec') return v + ' us (' + cpu(v) + ' CPU time)';
    if (k === 'cpu_quota_us') return v + ' us per 100 ms (' + (v / 1e5).toFixed(2) + ' CPU)';
    if (/(^|_)(bytes|size|memory)($|_)/.test(k) && !/^(tasks|pids)/.test(k))
      return v + ' bytes' + (v >= 1024 ? ' (' + bytes(v) + ')' : '');
    if (/_ms$/.test(k) || k === 'wall_ms') return v + ' ms' + (v >= 1000 ? ' (' + dur(v) + ')' : '');
    return String(v);
  }
  // What a key of the view is called on the page (issue 46): words, not
  // the record's snake_case keys; a key not listed has its underscores
  // read as spaces. The values keep their exact form (fmt).
  const LABELS = {
    headline: 'what happened', flow: 'Flow', status: 'status', error: 'error',
    plan_sha256: 'admitted Plan (SHA-256)', package_sha256: 'package (SHA-256)', timeout_ms: 'deadline',
    started_ms: 'started', elapsed_ms: 'running for', deadline_left_ms: 'deadline left',
    name: 'scope', state: 'state', outcome: 'outcome', exit_status: 'exit status', signal: 'signal',
    core_dumped: 'core dumped', fenced: 'fenced', cleanup_confirmed: 'cleanup confirmed',
    oom_kills: 'out-of-memory kills', pids_max_hits: 'task limit reached', memory_peak_bytes: 'peak memory',
    memory_current_bytes: 'memory now', cpu_usec: 'CPU time', wall_ms: 'wall time', limits: 'limits',
    memory_bytes: 'memory', tasks: 'tasks', cpu_quota_us: 'CPU share', max_request_bytes: 'request body at most',
    max_response_bytes: 'response at most', request_bytes: 'request body', response_bytes: 'response',
    http_status: 'HTTP status', duration_ms: 'took', memory_max_bytes: 'memory limit', tasks_max: 'task limit',
  };
  function label(k) { return Object.prototype.hasOwnProperty.call(LABELS, k) ? LABELS[k] : String(k).replace(/_/g, ' '); }
  function showSummary(v) {
    const dl = clear('summary');
    dl.appendChild(el('dt', 'shown'));
    dl.appendChild(el('dd', v.kind === 'packet' ? 'a saved packet' : 'a live Run'));
    for (const [k, val] of Object.entries(v.summary || {})) {
      if (val === null || val === '') continue;
      dl.appendChild(el('dt', label(k)));
      dl.appendChild(el('dd', fmt(k, val), 'text'));
    }
  }
  function showScopes(v) {
    const t = clear('scopes');
    for (const s of v.scopes || []) {
      for (const [k, val] of Object.entries(s)) {
        if (val === null) continue;
        const tr = el('tr');
        tr.appendChild(el('th', label(k)));
        const text = val && typeof val === 'object'
          ? Object.entries(val).map(([lk, lv]) => label(lk) + ' ' + fmt(lk, lv)).join('; ') : fmt(k, val);
        tr.appendChild(el('td', text, 'text'));
        t.appendChild(tr);
      }
    }
  }
  function effectText(e) { return Object.entries(e).map(([k, x]) => label(k) + ': ' + fmt(k, x)).join('  '); }
  function countTree(kids, n) {
    for (const c of kids || []) { n.effects += (c.effects || []).length; n.nodes++; countTree(c.children, n); }
    return n;
  }
  // The root's own effects, and how many its children made (shown under each).
  function showEffects(v) {
    const ol = clear('effects');
    const n = countTree(v.children, { effects: 0, nodes: 0 });
    if (!(v.effects || []).length)
      ol.appendChild(el('li', n.effects ? 'none of its own; ' + n.effects + ' made by child Flows (under each child below)' : 'none'));
    else if (n.effects)
      ol.appendChild(el('li', (v.effects || []).length + ' of its own; ' + n.effects + ' made by child Flows (under each child below)', 'note'));
    for (const e of v.effects || []) ol.appendChild(el('li', effectText(e), 'text'));
  }
  // The child Flows as a tree: each node its binding, Flow and status,
  // its scope's facts, what it made and its logs, then its own children.
  function facts(c) {
    const dl = el('dl', undefined, 'facts');
    const t = c.termination || {};
    const rows = [['started', c.started_ms !== undefined ? fmt('started_ms', c.started_ms) : null],
      ['outcome', c.outcome], ['wall', t.wall_ms !== undefined ? fmt('wall_ms', t.wall_ms) : null],
      ['CPU', t.cpu_usec !== undefined ? fmt('cpu_usec', t.cpu_usec) : null],
      ['peak memory', t.memory_peak_bytes !== undefined ? fmt('memory_peak_bytes', t.memory_peak_bytes) : null],
      ['limits', c.limits ? Object.entries(c.limits).map(([k, x]) => label(k) + ' ' + fmt(k, x)).join('; ') : null],
      ['reserved', c.reservation ? Object.entries(c.reservation).map(([k, x]) => label(k) + ' ' + fmt(k, x)).join('; ') +
        (c.reservation_released ? '; released after confirmed cleanup' : '; HELD: cleanup not confirmed') : null],
      ['deadline', c.deadline_ms !== undefined ? fmt('deadline_ms', c.deadline_ms) : null],
      ['cleanup', c.cleanup_confirmed === undefined ? null : c.cleanup_confirmed ? 'confirmed' : 'NOT confirmed'],
      ['scope policy', c.scope_policy_sha256]];
    for (const [k, val] of rows) {
      if (val === null || val === undefined || val === '') continue;
      dl.appendChild(el('dt', k));
      dl.appendChild(el('dd', val, 'text'));
    }
    return dl;
  }
  function part(title, items, text, cls) {
    const box = el('div', undefined, cls);
    box.appendChild(el('h4', title + ' (' + items.length + ')'));
    const ol = el('ol');
    for (const it of items) ol.appendChild(el('li', text(it), 'text'));
    box.appendChild(ol);
    return box;
  }
  function tree(kids) {
    const ul = el('ul', undefined, 'tree');
    for (const c of kids || []) {
      const li = el('li', undefined, 'node');
      li.dataset.flow = c.flow || '';
      li.dataset.level = c.level || '';
      const head = el('div', undefined, 'head');
      head.appendChild(el('span', c.binding, 'binding text'));
      head.appendChild(el('span', ' \u2192 flow '));
      head.appendChild(el('span', c.flow, 'flow text'));
      head.appendChild(el('span', ': '));
      head.appendChild(el('span', c.status, 'status ' + (c.status === 'succeeded' ? 'ok' : 'bad')));
      if (c.why) head.appendChild(el('span', ': ' + c.why, 'why text'));
      li.appendChild(head);
      li.appendChild(facts(c));
      if ((c.outputs || []).length) li.appendChild(part('Outputs', c.outputs, (o) => o.path + '  ' + fmt('size', o.size), 'outputs'));
      if ((c.effects || []).length || c.effects_trimmed)
        li.appendChild(part('Effects', c.effects || [], effectText, 'effects'));
      if ((c.logs || []).length || c.logs_trimmed) li.appendChild(part('Log', c.logs || [], (l) => l, 'logs'));
      if ((c.children || []).length) li.appendChild(tree(c.children));
      ul.appendChild(li);
    }
    return ul;
  }
  function showChildren(v) {
    const box = clear('children');
    if (!(v.children || []).length) { box.appendChild(el('p', 'none')); return; }
    const n = countTree(v.children, { effects: 0, nodes: 0 });
    box.appendChild(el('p', v.children.length + ' called by the root, ' + n.nodes + ' in all'));
    box.appendChild(tree(v.children));
  }
  // The timeline: the Run's scope and each child's, placed by when it
  // started and how long it ran, with its memory peak and average CPU
  // against its scope's limits (what the record carries).
  // At 90 % of its limit a meter is in its "high" (warning) range, and
  // marked at-limit at the limit itself (issue 46: a memory meter at 100 %
  // was green beside an out-of-memory kill).
  function meter(value, max) {
    const m = el('meter');
    m.min = 0;
    m.max = max > 0 ? max : 1;
    m.value = Math.min(value, m.max);
    m.optimum = 0;
    m.low = m.max * 0.75;
    m.high = m.max * 0.9;
    if (value >= m.max * 0.99) m.classList.add('at-limit');
    return m;
  }
  function timelineRow(t, r, origin, total) {
    const tr = el('tr', undefined, 'tl-row');
    tr.dataset.scope = r.label;
    const th = el('th', r.label, 'text');
    th.style.paddingLeft = (0.6 + 1.2 * r.level) + 'em';
    tr.appendChild(th);
    const time = el('td', undefined, 'tl-time');
    const track = el('div', undefined, 'tl-track');
    if (r.start !== undefined && r.wall !== undefined && total > 0) {
      const bar = el('div', undefined, 'tl-bar' + (r.ok ? '' : ' bad'));
      const off = Math.max(0, r.start - origin);
      bar.style.left = (100 * off / total).toFixed(2) + '%';
      bar.style.width = Math.max(0.5, 100 * r.wall / total).toFixed(2) + '%';
      track.appendChild(bar);
      time.appendChild(track);
      time.appendChild(el('span', '+' + dur(off) + ' for ' + fmt('wall_ms', r.wall), 'tl-span'));
    } else {
      time.appendChild(track);
      time.appendChild(el('span', 'never started', 'tl-span'));
    }
    tr.appendChild(time);
    const mem = el('td', undefined, 'tl-mem');
    const lim = r.limits || {};
    if (r.peak !== undefined) {
      if (lim.memory_bytes) mem.appendChild(meter(r.peak, lim.memory_bytes));
      mem.appendChild(el('span', (r.live ? ' now ' : ' peak ') + fmt('memory_peak_bytes', r.peak) + (lim.memory_bytes ? ' of ' +
        fmt('memory_bytes', lim.memory_bytes) + ', ' + (100 * r.peak / lim.memory_bytes).toFixed(1) + '%' : '')));
    }
    tr.appendChild(mem);
    const c = el('td', undefined, 'tl-cpu');
    if (r.cpu !== undefined && r.wall > 0) {
      const avg = r.cpu / 1000 / r.wall, quota = lim.cpu_quota_us ? lim.cpu_quota_us / 1e5 : 0;
      if (quota) c.appendChild(meter(avg, quota));
      c.appendChild(el('span', ' ' + avg.toFixed(2) + (quota ? ' of ' + quota.toFixed(2) : '') + ' CPU on average; ' +
        cpu(r.cpu) + ' CPU time (' + r.cpu + ' us)'));
    }
    tr.appendChild(c);
    t.appendChild(tr);
  }
  function flatten(kids, out, prefix) {
    for (const c of kids || []) {
      const t = c.termination || {};
      out.push({ label: prefix + (c.binding || '?') + ' \u2192 ' + (c.flow || '?'), level: c.level || 1, start: c.started_ms,
        wall: t.wall_ms, peak: t.memory_peak_bytes, cpu: t.cpu_usec, limits: c.limits, ok: c.status === 'succeeded' });
      flatten(c.children, out, prefix);
    }
    return out;
  }
  function showTimeline(v) {
    const t = clear('timeline');
    const note = document.getElementById('timeline-note');
    const run = (v.scopes || [])[0] || {}, sum = v.summary || {};
    const origin = typeof run.started_ms === 'number' ? run.started_ms : sum.started_ms;
    // A live Run: its scope so far (memory now, CPU so far) against the
    // cgroup's limits; a saved or final one: as the record says.
    const live = run.state === 'running' && typeof sum.elapsed_ms === 'number';
    const wall = live ? sum.elapsed_ms : run.wall_ms;
    if (typeof origin !== 'number' || typeof wall !== 'number') {
      note.textContent = 'drawn once the Run is launched (the record has when each scope started and how long it ran)';
      return;
    }
    let limits = run.limits;
    if (live) {
      const q = /^([0-9]+) ([0-9]+)$/.exec(run.cpu_max || '');
      limits = { memory_bytes: run.memory_max_bytes, cpu_quota_us: q ? Number(q[1]) * 100000 / Number(q[2]) : undefined };
    }
    const rows = [{ label: 'Run ' + (sum.flow || ''), level: 0, start: origin, wall, live,
      peak: live ? run.memory_bytes : run.memory_peak_bytes, cpu: run.cpu_usec, limits, ok: live || sum.status === 'succeeded' }];
    flatten(v.children, rows, '');
    let end = origin + wall;
    for (const r of rows) if (r.start !== undefined && r.wall !== undefined) end = Math.max(end, r.start + r.wall);
    const total = end - origin;
    note.textContent = 'from ' + date(origin) + ', ' + fmt('wall_ms', total) + (live ? ' so far (live)' : ' in all') +
      '; memory peak and average CPU against each scope\u2019s limits';
    for (const r of rows) timelineRow(t, r, origin, total);
  }
  function showList(id, items, text) {
    const ol = clear(id);
    if (!items || !items.length) ol.appendChild(el('li', 'none'));
    for (const it of items || []) ol.appendChild(el('li', text(it), 'text'));
  }
  // A live Run's display retires soon after the Run ends: its final
  // excerpts are fetched at once and kept here (bounded by the view).
  const kept = new Map();
  async function fetchArtifact(id) {
    if (kept.has(id)) return kept.get(id);
    const r = await api('/api/artifact/' + id);
    if (!r.ok) return { refused: r.status };
    const doc = await r.json();
    kept.set(id, doc);
    return doc;
  }
  async function openArtifact(a) {
    let doc;
    try { doc = await fetchArtifact(a.id); } catch (err) { doc = { refused: 'the display is gone' }; }
    document.getElementById('artifact-name').textContent = a.name + ' (' + fmt('size', a.size) + ', ' + a.id + ')';
    const pre = document.getElementById('artifact');
    if (doc.refused) { pre.textContent = 'refused: ' + doc.refused; return; }
    pre.textContent = doc.binary ? '(not UTF-8 text: not shown)' :
      doc.excerpt + (doc.truncated ? '\n… (excerpt of ' + fmt('size', doc.size) + ')' : '');
  }
  function showArtifacts(v) {
    const ul = clear('artifacts');
    if (!v.artifacts || !v.artifacts.length) ul.appendChild(el('li', 'none'));
    for (const a of v.artifacts || []) {
      const li = el('li');
      const b = el('button', a.name);
      b.type = 'button';
      b.dataset.id = a.id;
      b.addEventListener('click', () => openArtifact(a));
      li.appendChild(b);
      li.appendChild(el('span', ' ' + fmt('size', a.size)));
      ul.appendChild(li);
    }
  }
  function render(v) {
    showSummary(v);
    showScopes(v);
    showList('logs', v.logs, (l) => l);
    showEffects(v);
    showChildren(v);
    showTimeline(v);
    showArtifacts(v);
    state(v.final ? (v.kind === 'packet' ? 'saved packet (verified)' : 'Run ended') : 'live');
  }
  async function poll() {
    if (closed) return;
    let r;
    try {
      r = await api('/api/view');
    } catch (err) {
      state('the display is gone', true);
      return;
    }
    if (r.status === 401) {
      state('refused: this page needs the link jig printed (a reload cannot reuse it)', true);
      return;
    }
    if (!r.ok) { state('refused: ' + r.status, true); return; }
    const text = await r.text();
    const v = JSON.parse(text);
    if (text !== last) { last = text; render(v); }
    if (!v.final) { setTimeout(poll, v.kind === 'run' ? 500 : 1000); return; }
    if (v.kind === 'run') {
      for (const a of v.artifacts || []) {
        try { await fetchArtifact(a.id); } catch (err) { break; }
      }
      state('Run ended; this display has retired (what is shown stays)');
    }
  }
  async function close() {
    closed = true;
    try { await api('/api/close', 'POST'); } catch (err) { /* gone already */ }
    state('closed');
  }
  document.addEventListener('DOMContentLoaded', () => {
    document.getElementById('close').addEventListener('click', close);
    poll();
  });
})();
