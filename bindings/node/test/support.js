'use strict';
// Shared helpers of the idebridge Node binding tests.

const assert = require('node:assert/strict');
const { beforeEach, afterEach } = require('node:test');
const idebridge = require('..');

/** Fails each test of the calling file that leaves library handles behind. */
function checkLeaks() {
  let before = 0;
  beforeEach(() => {
    before = idebridge.handleCount();
  });
  afterEach(() => {
    const after = idebridge.handleCount();
    assert.equal(after, before, `the test left ${after - before} handle(s) live`);
  });
}

module.exports = { idebridge, checkLeaks };

// cabi/testdata: the publish sequence and the Go API's golden output.
const fs = require('node:fs');
const path = require('node:path');

const TESTDATA = path.resolve(__dirname, '..', '..', '..', 'cabi', 'testdata');

/** Returns the [server, params JSON text] pairs of publishes.tsv. */
function readPublishes() {
  return fs.readFileSync(path.join(TESTDATA, 'publishes.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const i = l.indexOf('\t');
      return [l.slice(0, i), l.slice(i + 1)];
    });
}

/** Returns a golden file without its final newline, as a Buffer. */
function readGolden(name) {
  const data = fs.readFileSync(path.join(TESTDATA, name));
  assert.equal(data[data.length - 1], 0x0a);
  return data.subarray(0, data.length - 1);
}

module.exports.readPublishes = readPublishes;
module.exports.readGolden = readGolden;
