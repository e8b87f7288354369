// Checks request framing by Transfer-Encoding (src/http/framing.ts, RFC 9112 §6): `chunked` alone
// (any case, any spacing) frames the body; anything else last is 400 (the length cannot be
// determined); another coding before a final `chunked` is 501 (valid framing, a coding the member
// does not decode); `chunked` twice is 400.
import test from 'node:test';
import assert from 'node:assert/strict';
import { transferCodingError } from '../../src/http/framing.js';

test('chunked alone frames the body', () => {
  for (const value of ['chunked', 'Chunked', 'CHUNKED', ' chunked ', 'chunked,', ', chunked']) assert.equal(transferCodingError(value), null, value);
});

test('a coding other than a final chunked is 400 (RFC 9112 §6.3)', () => {
  for (const value of ['gzip', 'identity', 'xchunked', 'chunkedx', 'gzip, identity', 'chunked, gzip', 'chunked;q=1', '', ',']) {
    const e = transferCodingError(value);
    assert.ok(e !== null, value);
    assert.equal(e.code, 'ERR_HTTP_BAD_REQUEST', value);
    assert.equal(e.status, 400, value);
  }
});

test('another coding before a final chunked is 501 naming it (RFC 9112 §6.1)', () => {
  for (const [value, named] of [['gzip, chunked', 'gzip'], ['deflate,chunked', 'deflate'], ['gzip, br, CHUNKED', 'gzip, br']] as const) {
    const e = transferCodingError(value);
    assert.ok(e !== null, value);
    assert.equal(e.code, 'ERR_HTTP_TRANSFER_CODING');
    assert.equal(e.status, 501);
    assert.ok(e.message.includes(`'${named}'`), e.message);
  }
});

test('chunked twice is 400; a long header value is clipped in the message', () => {
  assert.equal(transferCodingError('chunked, chunked')?.status, 400);
  const long = `${'x'.repeat(500)}`;
  const e = transferCodingError(long);
  assert.ok(e !== null && e.message.length < 200, e?.message);
});
