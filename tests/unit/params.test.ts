// Checks management-call parameter parsing: positional `&` split with a limit, percent decoding,
// `+` as space only for form bodies, Basic credentials, and the "expects at least N" error.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readManagementParams, splitParams } from '../../src/http/params.js';
import type { HttpRequest } from '../../src/http/request.js';
import { GridError } from '../../src/util/errors.js';

function req(body: string | null, headers: Record<string, string> = {}): HttpRequest {
  return { method: 'POST', segments: [], params: {}, tail: [], header: (name: string) => headers[name], body: body === null ? null : Buffer.from(body), remoteAddress: '127.0.0.1', client: { isGone: () => false, onGone: () => () => {} } };
}

test('split keeps extra & in the last parameter and empty positions', () => {
  assert.deepEqual(splitParams(Buffer.from('a&&b&c&d'), 3, false), ['a', '', 'b&c&d']);
  assert.deepEqual(splitParams(Buffer.from(''), 2, false), ['']);
  assert.deepEqual(splitParams(null, 2, false), []);
  assert.deepEqual(splitParams(Buffer.from('dev&'), 2, false), ['dev', '']);
  assert.deepEqual(splitParams(Buffer.from('a%26b&c+d'), 2, false), ['a&b', 'c+d']);
  assert.deepEqual(splitParams(Buffer.from('a%26b&c+d'), 2, true), ['a&b', 'c d']);
  assert.throws(() => splitParams(Buffer.from('%zz&x'), 2, false), GridError);
});

test('credentials from the body or from a Basic header', () => {
  assert.deepEqual(readManagementParams(req('dev&pw&frozen'), 1), { credentials: { user: 'dev', password: 'pw' }, values: ['frozen'] });
  const basic = 'Basic ' + Buffer.from('admin:s3:cret').toString('base64');
  assert.deepEqual(readManagementParams(req('frozen', { authorization: basic }), 1), { credentials: { user: 'admin', password: 's3:cret' }, values: ['frozen'] });
  assert.deepEqual(readManagementParams(req(null, { authorization: basic }), 0), { credentials: { user: 'admin', password: 's3:cret' }, values: [] });
});

test('too few parameters name the expected count', () => {
  assert.throws(() => readManagementParams(req('dummy'), 0), (e: unknown) => e instanceof GridError && e.status === 400 && e.message === 'This endpoint expects at least 2 parameters');
  assert.throws(() => readManagementParams(req('dev&'), 1), (e: unknown) => e instanceof GridError && e.message === 'This endpoint expects at least 3 parameters');
  assert.throws(() => readManagementParams(req(null), 0), GridError);
});
