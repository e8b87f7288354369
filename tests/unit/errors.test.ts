// Keeps src/util/errors.ts and docs/errors.md in step: every code is documented with its status, and
// the document names no code that does not exist. Also checks the GridError shape.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, GridError } from '../../src/util/errors.js';
import { REPO_ROOT } from '../harness/member-process.js';

test('docs/errors.md lists every code with its status, and nothing else', () => {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'errors.md'), 'utf8');
  for (const [code, { status }] of Object.entries(ERROR_CODES)) {
    assert.match(doc, new RegExp('\\| `' + code + '` \\| ' + status + ' \\|'), `${code} missing or with another status`);
  }
  const documented = [...doc.matchAll(/`(ERR_[A-Z_]+)`/g)].map((m) => m[1]);
  for (const code of documented) assert.ok(code !== undefined && code in ERROR_CODES, `${code} is documented but not defined`);
});

test('GridError carries code, status and retry hint', () => {
  const e = new GridError('ERR_DATA_QUEUE_FULL', 'queue is full', { retryAfterSeconds: 1 });
  assert.equal(e.status, 503);
  assert.equal(e.code, 'ERR_DATA_QUEUE_FULL');
  assert.equal(e.retryAfterSeconds, 1);
  assert.equal(new GridError('ERR_HTTP_BAD_PATH', 'x').retryAfterSeconds, null);
});
