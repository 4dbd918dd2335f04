// The browser inspector's page: reads the files the user chooses and hands their bytes to
// tfreq's library compiled to WebAssembly (web/src/lib.rs). Everything taken from a file
// (names, values, messages) reaches the page as text (textContent), never as HTML.
import init, { inspect, Compare } from './tfreq_web.js';
import wasmBase64 from './wasm-bytes.js';

const PAGE = 50; // entries shown at a time
const WHOLE_MAX = 256 * 1024 * 1024; // larger files: counted from slices (keys), not read whole
const $ = (id) => document.getElementById(id);
const status = $('status');
let worker = null;

// An element with attributes and children; a string child becomes a text node.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function table(head, rows) {
  return el('table', {},
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => (c instanceof Node ? c : el('td', {}, c)))))));
}

function findingsTable(findings) {
  if (!findings || findings.length === 0) return null;
  return table(['severity', 'code', 'name', 'explanation'], findings.map((f) => [
    el('td', { class: 'sev-' + f.severity }, f.severity),
    el('td', {}, el('code', {}, f.code)),
    el('td', {}, f.name || ''),
    el('td', {}, f.message),
  ]));
}

function preview(v) {
  const s = (v.values || []).map((x) => (typeof x === 'string' ? JSON.stringify(x) : String(x))).join(', ');
  return v.values_truncated ? s + ', …' : s;
}

// One request's tables: its feeds, its fetches, its findings.
function messageTables(label, m) {
  const box = el('div', { class: 'request' }, el('h4', {}, label));
  if (m.inputs) {
    box.append(table(['feed', 'dtype', 'shape', 'values', 'preview'], m.inputs.map((i) => [
      i.name, i.dtype, i.shape ? '[' + i.shape.join(', ') + ']' : '', String(i.num_elements ?? ''),
      el('td', { class: 'values' }, preview(i)),
    ])));
  }
  if (m.fetches) box.append(el('p', {}, 'fetches: ' + (m.fetches.length ? m.fetches.join(', ') : '(all outputs)')));
  const f = findingsTable(m.problems);
  if (f) box.append(f);
  return box;
}

function showInspected(out, name, i) {
  const box = el('section', { class: 'file' }, el('h3', {}, name));
  out.append(box);
  const err = i.error();
  if (err) {
    box.append(el('p', { class: 'error' }, err));
    return;
  }
  const n = i.entries();
  const head = i.head();
  const pre = el('pre', { class: 'text' });
  const tables = el('div', { class: 'tables' });
  const pager = el('div', { class: 'pager' });
  let start = 0;
  const draw = () => {
    pre.textContent = head + i.page_text(start, PAGE);
    tables.replaceChildren();
    const doc = JSON.parse(i.page_json(start, PAGE));
    if (doc && doc.entries) {
      const f = findingsTable(doc.problems);
      if (f) tables.append(el('p', {}, 'about the file:'), f);
      for (const e of doc.entries) {
        if (e.message) tables.append(messageTables(e.message.file, e.message));
      }
    } else if (doc && doc.kind) {
      tables.append(messageTables(name, doc));
    }
    pager.replaceChildren();
    if (n > PAGE) {
      const prev = el('button', { type: 'button' }, '← previous');
      const next = el('button', { type: 'button' }, 'next →');
      prev.disabled = start === 0;
      next.disabled = start + PAGE >= n;
      prev.onclick = () => { start = Math.max(0, start - PAGE); draw(); };
      next.onclick = () => { start += PAGE; draw(); };
      pager.append(prev, el('span', {}, `entries ${start + 1}–${Math.min(start + PAGE, n)} of ${n}`), next);
    }
  };
  box.append(pager, pre, tables);
  draw();
}

async function inspectFiles(files) {
  const out = $('inspect-out');
  out.replaceChildren();
  for (const f of files) {
    if (f.size > WHOLE_MAX) {
      out.append(el('section', { class: 'file' }, el('h3', {}, f.name),
        el('p', { class: 'error' }, `${f.size} bytes: too large to read whole here; count its keys below (read a slice at a time).`)));
      continue;
    }
    const bytes = new Uint8Array(await f.arrayBuffer());
    showInspected(out, f.name, inspect(f.name, bytes));
  }
  status.textContent = `Inspected ${files.length} file(s).`;
}

async function bytesOf(f) {
  return new Uint8Array(await f.arrayBuffer());
}

function showReport(out, title, res) {
  out.replaceChildren();
  if (res.error) {
    out.append(el('h3', {}, title), el('p', { class: 'error' }, res.error));
    return;
  }
  const r = res.report;
  out.append(el('h3', {}, title, ' ',
    el('span', { class: 'verdict ' + (res.code === 0 ? 'ok' : 'bad'), id: out.id + '-verdict' }, r.verdict)));
  const rows = (r.requests || []).map((q) => [
    q.label, el('td', {}, el('span', { class: 'verdict ' + (q.findings.some((f) => f.severity === 'error') ? 'bad' : 'ok') }, q.verdict)),
    el('td', {}, ...q.findings.map((f) => el('div', {}, el('code', { class: 'sev-' + f.severity }, f.code), ' ', f.message))),
  ]);
  if (rows.length) out.append(table(['request', 'verdict', 'findings'], rows));
  out.append(el('pre', { class: 'text' }, res.text));
}

async function compare() {
  const w = $('warmup').files[0];
  const prod = [...$('production').files];
  const m = $('model').files[0];
  const c = new Compare();
  if (w) c.set_warmup(w.name, await bytesOf(w));
  for (const f of prod) c.add_production(f.name, await bytesOf(f));
  if (m) c.set_model(m.name, await bytesOf(m));
  if (w && prod.length) showReport($('diff-out'), 'tfreq diff', JSON.parse(c.diff()));
  else $('diff-out').replaceChildren();
  if (m && prod.length) showReport($('check-out'), 'tfreq check', JSON.parse(c.check()));
  else $('check-out').replaceChildren();
  c.free();
  status.textContent = 'Compared.';
}

function countKeys(file) {
  const bar = $('keys-progress');
  const done = $('keys-done');
  const text = $('keys-text');
  bar.hidden = false;
  bar.max = Math.max(file.size, 1);
  bar.value = 0;
  done.textContent = 'counting…';
  text.textContent = '';
  worker.onmessage = (e) => {
    const d = e.data;
    if (d.progress !== undefined) {
      bar.value = d.progress;
      done.textContent = `${Math.round((100 * d.progress) / bar.max)}%`;
    } else if (d.done) {
      bar.value = bar.max;
      const r = d.done;
      if (r.error) {
        done.textContent = 'failed';
        text.textContent = r.error;
      } else {
        done.textContent = `done: ${r.requests} requests in ${(r.ms / 1000).toFixed(1)} s`;
        text.textContent = r.text;
      }
      document.body.dataset.keysMs = String(Math.round(r.ms));
    }
  };
  worker.postMessage({ file });
}

function wire() {
  $('files').addEventListener('change', (e) => inspectFiles([...e.target.files]));
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    inspectFiles([...e.dataTransfer.files]);
  });
  // A file dropped elsewhere on the page is not opened by the browser in its place.
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => e.preventDefault());
  for (const id of ['warmup', 'production', 'model']) $(id).addEventListener('change', compare);
  $('log').addEventListener('change', (e) => e.target.files[0] && countKeys(e.target.files[0]));
}

async function start() {
  // The module is compiled from bytes this page's own script holds (gzip, base64): no fetch.
  const gz = Uint8Array.from(atob(wasmBase64), (c) => c.charCodeAt(0));
  const inflated = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  const module = await WebAssembly.compile(await new Response(inflated).arrayBuffer());
  await init({ module_or_path: module });
  worker = new Worker('worker.js', { type: 'module' });
  await new Promise((ok, fail) => {
    worker.onmessage = (e) => (e.data.ready ? ok() : fail(new Error(e.data.error)));
    worker.onerror = (e) => fail(new Error(e.message));
    worker.postMessage({ module });
  });
  wire();
  status.textContent = 'Ready. Nothing you choose is uploaded.';
  document.body.dataset.ready = '1';
}

start().catch((e) => {
  status.textContent = 'The page could not start: ' + e;
  status.className = 'status error';
});
