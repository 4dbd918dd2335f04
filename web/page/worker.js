// Counts the keys of a log off the page's thread, reading the chosen file a slice at a time
// (FileReaderSync over File.slice), so a log of any size never sits whole in memory.
import { initSync, count_keys } from './tfreq_web.js';

let file = null;
let last = 0;
const reader = new FileReaderSync();

// Called by the WebAssembly module (web/src/lib.rs, `read_slice`) for each slice it reads.
self.tfreqReadSlice = (at, len) => {
  const buf = reader.readAsArrayBuffer(file.slice(at, at + len));
  const now = performance.now();
  if (now - last > 100) {
    last = now;
    postMessage({ progress: at + buf.byteLength });
  }
  return new Uint8Array(buf);
};

onmessage = (e) => {
  if (e.data.module) {
    try {
      initSync({ module: e.data.module });
      postMessage({ ready: true });
    } catch (err) {
      postMessage({ error: String(err) });
    }
    return;
  }
  file = e.data.file;
  const t0 = performance.now();
  let out;
  try {
    out = JSON.parse(count_keys(file.name, file.size));
  } catch (err) {
    out = { error: String(err) };
  }
  out.ms = performance.now() - t0;
  file = null;
  postMessage({ done: out });
};
