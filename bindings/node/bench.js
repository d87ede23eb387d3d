'use strict';
// Per-call overhead of the Node binding, in the units the C benchmark uses.
//
// Run after `make lib` (make bench-abi runs it beside the Go, C and Python
// figures):
//
//     IDEBRIDGE_LIB=build/libidebridge.so node bindings/node/bench.js
//
// Each figure is the median of 9 samples of a timed loop, in microseconds
// (us) or nanoseconds (ns) per call. The Promise form is measured on a
// trivial blocking export (idb_discover with no lockfile directory: about
// 10 us of work in Go) against the same export called directly through
// koffi, in interleaved batches, and reported as the median difference.

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');
const idebridge = require('.');

function report(name, ns, note) {
  const [unit, value] = ns >= 10000 ? ['us', ns / 1000] : ['ns', ns];
  console.log(`node    ${name.padEnd(44)} ${value.toFixed(1).padStart(10)} ${unit}/call (${note})`);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function bench(name, fn, iters) {
  for (let i = 0; i < iters / 10; i++) fn();
  const samples = [];
  for (let k = 0; k < 9; k++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iters; i++) fn();
    samples.push(Number(process.hrtime.bigint() - t0) / iters);
  }
  report(name, median(samples), `median of 9 x ${iters}`);
}

async function interleaved(name, base, form, iters, rounds = 15) {
  for (let i = 0; i < iters; i++) {
    base();
    await form();
  }
  const bs = [];
  const fs_ = [];
  const ds = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iters; i++) base();
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < iters; i++) await form();
    const t2 = process.hrtime.bigint();
    const b = Number(t1 - t0) / iters;
    const f = Number(t2 - t1) / iters;
    bs.push(b);
    fs_.push(f);
    ds.push(f - b);
  }
  report(name, median(fs_), `median of ${rounds} x ${iters}; base ${(median(bs) / 1000).toFixed(1)} us, added ${(median(ds) / 1000).toFixed(1)} us`);
}

async function main() {
  const lib = koffi.load(process.env.IDEBRIDGE_LIB);
  const count = lib.func('int idb_handle_count(_Out_ uint64_t *out)');
  const discover = lib.func('int idb_discover(const char *options_json, int64_t timeout_ms, _Out_ void **out)');
  const free = lib.func('void idb_free(void *p)');
  const out = [null];
  bench('koffi idb_handle_count (trivial, raw)', () => count(out), 200000);
  bench('idebridge.handleCount() (trivial)', idebridge.handleCount, 200000);
  bench('idebridge.version() (string out, freed)', idebridge.version, 200000);

  const params = fs.readFileSync(path.join(__dirname, '..', '..', 'cabi', 'testdata', 'publish10.json'), 'utf8').trim();
  const reg = new idebridge.Registry();
  try {
    bench('Registry.publish (10 diagnostics, string)', () => reg.publish('plugin:go:gopls', params), 5000);
    bench('Registry publish+drain+reset (10, decoded)', () => {
      reg.publish('plugin:go:gopls', params);
      reg.drain();
      reg.reset();
    }, 5000);
  } finally {
    reg.close();
  }

  const opts = '{"lockfileDirs":[],"env":{}}';
  const direct = () => {
    const p = [null];
    if (discover(opts, 0, p) !== 0) throw new Error('idb_discover failed');
    free(p[0]);
  };
  await interleaved('discover, blocking form (discoverSync)', direct, async () => idebridge.discoverSync({ lockfileDirs: [], env: {} }), 1000);
  await interleaved('discover, Promise form (await discover())', direct, () => idebridge.discover({ lockfileDirs: [], env: {} }), 1000);
  const ac = new AbortController();
  await interleaved('discover, Promise form with an AbortSignal', direct, () => idebridge.discover({ lockfileDirs: [], env: {}, signal: ac.signal }), 1000);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
