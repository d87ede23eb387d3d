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
