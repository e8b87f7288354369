// Checks src/http/path.ts against rest.md §3: split on raw `/` first, then percent-decode each segment;
// `%2F` stays inside its segment, `+` is literal, malformed escapes and invalid UTF-8 are
// ERR_HTTP_BAD_PATH; query and fragment are cut off; empty segments are kept; joinTail drops one
// trailing empty segment. Table-driven: each case is a target and the expected split.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeSegment, joinTail, splitTarget } from '../../src/http/path.js';
import { GridError } from '../../src/util/errors.js';

function badPath(fn: () => unknown): void {
  assert.throws(fn, (e: unknown) => e instanceof GridError && e.code === 'ERR_HTTP_BAD_PATH' && e.status === 400);
}

test('plain targets split on "/" without decoding', () => {
  assert.deepEqual(splitTarget('/grid/rest/maps/orders/k000001234'), {
    segments: ['grid', 'rest', 'maps', 'orders', 'k000001234'],
    query: null,
    trailingSlash: false,
  });
  assert.deepEqual(splitTarget('/'), { segments: [''], query: null, trailingSlash: true });
  assert.deepEqual(splitTarget('/grid/health/'), { segments: ['grid', 'health', ''], query: null, trailingSlash: true });
});

test('empty segments from "//" are kept', () => {
  assert.deepEqual(splitTarget('/grid/rest/maps/m/a//b').segments, ['grid', 'rest', 'maps', 'm', 'a', '', 'b']);
  assert.deepEqual(splitTarget('//').segments, ['', '']);
  assert.deepEqual(splitTarget('/a//').segments, ['a', '', '']);
});

test('query and fragment are not part of the path', () => {
  assert.deepEqual(splitTarget('/grid/health?x=1&y=%zz'), { segments: ['grid', 'health'], query: 'x=1&y=%zz', trailingSlash: false });
  assert.deepEqual(splitTarget('/a/?'), { segments: ['a', ''], query: '', trailingSlash: true });
  assert.deepEqual(splitTarget('/a#frag?not-a-query'), { segments: ['a'], query: null, trailingSlash: false });
  assert.deepEqual(splitTarget('/a?q=1#frag'), { segments: ['a'], query: 'q=1', trailingSlash: false });
  // A bad escape in the query or fragment is not a path error: the query is ignored unless documented.
  assert.deepEqual(splitTarget('/a#%zz').segments, ['a']);
});

test('rest.md §3 examples: %2F stays in its segment, %40 is @, + is literal', () => {
  assert.deepEqual(splitTarget('/grid/rest/maps/a%2Fb/k').segments, ['grid', 'rest', 'maps', 'a/b', 'k']);
  assert.deepEqual(splitTarget('/grid/rest/queues/name%40key').segments, ['grid', 'rest', 'queues', 'name@key']);
  assert.deepEqual(splitTarget('/grid/rest/maps/m/a+b').segments, ['grid', 'rest', 'maps', 'm', 'a+b']);
  assert.deepEqual(splitTarget('/grid/rest/maps/m/a%2Bb%20c').segments, ['grid', 'rest', 'maps', 'm', 'a+b c']);
  assert.deepEqual(splitTarget('/grid/rest/maps/m/caf%C3%A9').segments.at(-1), 'café');
  assert.deepEqual(splitTarget('/x/%F0%9F%98%80').segments, ['x', '😀']);
  assert.deepEqual(splitTarget('/x/%00').segments, ['x', '\u0000']);
  assert.equal(splitTarget('/x/k%2F').trailingSlash, false, 'an encoded slash is not a trailing slash');
});

test('malformed escapes are ERR_HTTP_BAD_PATH', () => {
  for (const t of ['/grid/rest/maps/%zz', '/m/%4', '/m/%', '/m/a%', '/m/%%41', '/m/%G1', '/m/ok/%1']) badPath(() => splitTarget(t));
});

test('invalid UTF-8 after decoding is ERR_HTTP_BAD_PATH', () => {
  const cases = [
    '%C3%28', // bad continuation byte
    '%C3', // truncated sequence
    '%E2%82', // truncated 3-byte sequence
    '%80', // lone continuation byte
    '%C0%AF', // overlong '/'
    '%E0%80%AF', // overlong, 3 bytes
    '%ED%A0%80', // UTF-16 surrogate U+D800
    '%ED%BF%BF', // surrogate U+DFFF
    '%F4%90%80%80', // above U+10FFFF
    '%FE',
    '%FF',
  ];
  for (const c of cases) badPath(() => splitTarget(`/grid/rest/maps/m/${c}`));
});

test('a target not in origin-form is ERR_HTTP_BAD_REQUEST, distinct from a bad path', () => {
  for (const t of ['', '*', 'http://h/grid', 'grid/rest', '?q']) {
    assert.throws(() => splitTarget(t), (e: unknown) => e instanceof GridError && e.code === 'ERR_HTTP_BAD_REQUEST');
  }
});

test('decodeSegment returns a segment without "%" unchanged (same string)', () => {
  const s = 'k000001234';
  assert.equal(decodeSegment(s), s);
  assert.equal(decodeSegment('a%2Fb'), 'a/b');
  badPath(() => decodeSegment('%zz'));
});

test('the error message is bounded and printable', () => {
  try {
    splitTarget('/' + '\u0001'.repeat(500) + '%zz');
    assert.fail('expected a throw');
  } catch (e) {
    assert.ok(e instanceof GridError);
    assert.ok(e.message.length < 200);
    assert.doesNotMatch(e.message, /[\x00-\x1f]/);
  }
});

test('joinTail: decoded segments joined with "/", one trailing empty segment dropped', () => {
  const cases: [string[], number, string][] = [
    [['maps', 'm'], 2, ''],
    [['maps', 'm', ''], 2, ''],
    [['maps', 'm', 'k'], 2, 'k'],
    [['maps', 'm', 'k', ''], 2, 'k'],
    [['maps', 'm', 'k', '', ''], 2, 'k/'],
    [['maps', 'm', 'a', 'b', 'c'], 2, 'a/b/c'],
    [['maps', 'm', 'a', '', 'b'], 2, 'a//b'],
    [['maps', 'm', '', ''], 2, ''],
    [['maps', 'm', 'a/b'], 2, 'a/b'],
  ];
  for (const [segs, from, want] of cases) assert.equal(joinTail(segs, from), want, JSON.stringify(segs));
});

test('map keys from whole targets (rest.md §4.1)', () => {
  const key = (t: string): string => joinTail(splitTarget(t).segments, 4);
  assert.equal(key('/grid/rest/maps/m/k'), 'k');
  assert.equal(key('/grid/rest/maps/m/k/'), 'k');
  assert.equal(key('/grid/rest/maps/m/a/b/c'), 'a/b/c');
  assert.equal(key('/grid/rest/maps/m/a%2Fb'), 'a/b');
  assert.equal(key('/grid/rest/maps/m/k%2F'), 'k/', 'only a raw trailing "/" is stripped');
  assert.equal(key('/grid/rest/maps/m/'), '');
  assert.equal(key('/grid/rest/maps/m'), '');
  assert.equal(key('/grid/rest/maps/m/k?x=1'), 'k');
});
