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
  function showSummary(v) {
    const dl = clear('summary');
    dl.appendChild(el('dt', 'shown'));
    dl.appendChild(el('dd', v.kind === 'packet' ? 'a saved packet' : 'a live Run'));
    for (const [k, val] of Object.entries(v.summary || {})) {
      if (val === null || val === '') continue;
      dl.appendChild(el('dt', k));
      dl.appendChild(el('dd', val, 'text'));
    }
  }
  function showScopes(v) {
    const t = clear('scopes');
    for (const s of v.scopes || []) {
      for (const [k, val] of Object.entries(s)) {
        const tr = el('tr');
        tr.appendChild(el('th', k));
        tr.appendChild(el('td', val, 'text'));
        t.appendChild(tr);
      }
    }
  }
  function showList(id, items, fmt) {
    const ol = clear(id);
    if (!items || !items.length) ol.appendChild(el('li', 'none'));
    for (const it of items || []) ol.appendChild(el('li', fmt(it), 'text'));
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
    document.getElementById('artifact-name').textContent = a.name + ' (' + a.size + ' bytes, ' + a.id + ')';
    const pre = document.getElementById('artifact');
    if (doc.refused) { pre.textContent = 'refused: ' + doc.refused; return; }
    pre.textContent = doc.binary ? '(not UTF-8 text: not shown)' :
      doc.excerpt + (doc.truncated ? '\n… (excerpt of ' + doc.size + ' bytes)' : '');
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
      li.appendChild(el('span', ' ' + a.size + ' bytes'));
      ul.appendChild(li);
    }
  }
  function render(v) {
    showSummary(v);
    showScopes(v);
    showList('logs', v.logs, (l) => l);
    showList('effects', v.effects, (e) => Object.entries(e).map(([k, x]) => k + '=' + x).join('  '));
    showList('children', v.children, (c) => JSON.stringify(c));
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
