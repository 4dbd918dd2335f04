#!/usr/bin/env bash
# Builds the browser inspector into web/dist/ (or $1): the page (web/page/), the JavaScript
# glue of wasm-bindgen and the WebAssembly module of web/src/ (tfreq's library), from a clean
# clone. Installs what it needs the way the project installs its tools, each once, outside
# the repository:
#   - the wasm32-unknown-unknown target (rustup);
#   - wasm-bindgen-cli at the version Cargo.lock pins for wasm-bindgen (cargo install, into
#     ${TFREQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tfreq}/wasm-bindgen-VERSION);
#   - with TFREQ_WASM_OPT=1, Binaryen's wasm-opt from npm's `binaryen` package (same cache).
#
#   bash web/build.sh && python3 -m http.server -d web/dist 8000
#
# The module is kept in dist/wasm-bytes.js (gzip, base64; the page inflates it with the
# browser's DecompressionStream), not fetched as a .wasm: the page's Content-Security-Policy
# forbids every connection (connect-src 'none').
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/web/dist}"
cache="${TFREQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tfreq}"
cd "$root"

if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "web/build.sh: rustup target add wasm32-unknown-unknown (once)" >&2
  rustup target add wasm32-unknown-unknown >&2
fi

# The CLI must be the version of the wasm-bindgen crate the module is built with.
version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
[ -n "$version" ] || { echo "web/build.sh: no wasm-bindgen in Cargo.lock" >&2; exit 2; }
bindgen="$cache/wasm-bindgen-$version/bin/wasm-bindgen"
if [ ! -x "$bindgen" ]; then
  echo "web/build.sh: cargo install wasm-bindgen-cli $version (once; a few minutes)" >&2
  # --locked first (the CLI's own lock file); a registry that lacks one of those exact
  # versions gets the newest compatible ones instead.
  cargo install --quiet wasm-bindgen-cli --version "=$version" --locked --root "$cache/wasm-bindgen-$version" >&2 ||
    cargo install --quiet wasm-bindgen-cli --version "=$version" --root "$cache/wasm-bindgen-$version" >&2
fi

echo "web/build.sh: cargo build -p tfreq-web (wasm32, profile wasm)" >&2
cargo build --quiet --locked -p tfreq-web --target wasm32-unknown-unknown --profile wasm
wasm="$root/target/wasm32-unknown-unknown/wasm/tfreq_web.wasm"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
"$bindgen" --target web --no-typescript --remove-name-section --remove-producers-section \
  --out-dir "$stage" "$wasm"

if [ "${TFREQ_WASM_OPT:-0}" = 1 ]; then
  opt="$cache/binaryen/node_modules/.bin/wasm-opt"
  if [ ! -x "$opt" ]; then
    echo "web/build.sh: npm install binaryen (once)" >&2
    npm install --silent --no-audit --no-fund --prefix "$cache/binaryen" binaryen@132.0.0 >&2
  fi
  "$opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$stage/tfreq_web_bg.wasm" -o "$stage/opt.wasm"
  mv "$stage/opt.wasm" "$stage/tfreq_web_bg.wasm"
fi

rm -rf "$out"
mkdir -p "$out"
cp web/page/index.html web/page/style.css web/page/app.js web/page/worker.js web/page/favicon.svg "$out/"
cp "$stage/tfreq_web.js" "$out/"
{
  printf '// tfreq_web_bg.wasm (web/src/lib.rs built by web/build.sh), gzip-compressed, base64.\nexport default "'
  gzip -9 -n -c "$stage/tfreq_web_bg.wasm" | base64 -w0
  printf '";\n'
} >"$out/wasm-bytes.js"

size="$(du -cb "$out"/* | tail -n1 | cut -f1)"
wasm_size="$(stat -c %s "$stage/tfreq_web_bg.wasm")"
echo "web/build.sh: $out: $size bytes (the module: $wasm_size bytes)" >&2
if [ "$size" -ge $((1500 * 1024)) ]; then
  echo "web/build.sh: $out is $size bytes, over 1.5 MB" >&2
  exit 1
fi
