'use strict';
// Eight worker threads call the library at once, on a shared registry and
// on their own, and each reads back its own error messages.

const assert = require('node:assert/strict');
const path = require('node:path');
const { test } = require('node:test');
const { Worker } = require('node:worker_threads');
const { idebridge, checkLeaks } = require('./support');

checkLeaks();

const workerCode = `
const { parentPort, workerData } = require('node:worker_threads');
const koffi = require('koffi');
const idebridge = require(workerData.module);
const { g, shared } = workerData;
const lib = koffi.load(process.env.IDEBRIDGE_LIB);
const publish = lib.func('int idb_registry_publish(uint64_t registry, const char *server, const char *params_json)');
const problems = [];
const own = new idebridge.Registry();
try {
  for (let i = 0; i < 100; i++) {
    const p = JSON.stringify({ uri: 'file:///g' + g + '/' + i + '.go', diagnostics: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, message: 'm' }] });
    if (publish(shared, 'srv' + g, p) !== 0) problems.push('shared publish failed');
    own.publish('srv' + g, p);
    const att = own.drain();
    if (!att || att.files[0].uri !== 'file:///g' + g + '/' + i + '.go') problems.push('own drain ' + JSON.stringify(att));
    const name = 'w' + g + '-' + i + '.lock';
    try {
      idebridge.parseLockfile(name, '{}');
      problems.push(name + ' parsed');
    } catch (e) {
      if (!e.message.includes(name)) problems.push('thread ' + g + ' read ' + e.message);
    }
  }
} finally {
  own.close();
}
parentPort.postMessage(problems);
`;

test('8 worker threads on shared and own registries', async () => {
  // No total limit, so that every drain of the shared registry delivers
  // all that is pending however the threads interleave.
  const shared = new idebridge.Registry({ maxTotal: 1000000 });
  try {
    const runs = [];
    for (let g = 0; g < 8; g++) {
      const w = new Worker(workerCode, {
        eval: true,
        workerData: { g, shared: shared.handle, module: path.resolve(__dirname, '..') },
      });
      runs.push(new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      }));
    }
    const problems = (await Promise.all(runs)).flat();
    assert.deepEqual(problems, []);
    shared.drain();
    const stats = shared.stats();
    assert.equal(stats.published, 800);
    assert.equal(stats.delivered, 800);
  } finally {
    shared.close();
  }
});
