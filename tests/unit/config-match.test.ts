// Checks src/config/match.ts: map and queue names resolve to the exact configuration, else the
// wildcard pattern with the most literal characters, else `default`; queue names configure by the
// part before `@`. Tie detection is checked by example and against a brute-force oracle that
// enumerates every short name over a small alphabet (seeded PRNG; the seed is in the test name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configNameOf, findPatternTies, patternScore, resolveMapConfig, resolveQueueConfig } from '../../src/config/match.js';
import { defaultMap, defaultQueue } from '../../src/config/draft.js';
import type { MapConfig, QueueConfig } from '../../src/config/types.js';
import { SeededRandom } from '../../src/util/prng.js';

const maps = (...names: string[]): MapConfig[] => names.map((n) => defaultMap(n));
const queues = (...names: string[]): QueueConfig[] => names.map((n) => defaultQueue(n));

test('exact name wins over any pattern', () => {
  const list = maps('default', 'orders*', 'orders', '*');
  assert.equal(resolveMapConfig(list, 'orders').name, 'orders');
});

test('wildcards: prefix, suffix and infix patterns; the longest literal part wins', () => {
  const list = maps('default', 'a*', 'ab*', '*z', 'ab*yz', '*');
  assert.equal(resolveMapConfig(list, 'abcyz').name, 'ab*yz');
  assert.equal(resolveMapConfig(list, 'abc').name, 'ab*');
  assert.equal(resolveMapConfig(list, 'axx').name, 'a*');
  assert.equal(resolveMapConfig(list, 'qqz').name, '*z');
  assert.equal(resolveMapConfig(list, 'qqq').name, '*');
});

test('without a match the default configuration is used', () => {
  const list = maps('x*', 'default', 'y');
  assert.equal(resolveMapConfig(list, 'other').name, 'default');
  assert.equal(resolveMapConfig(list, 'y').name, 'y');
  assert.equal(resolveMapConfig(list, 'x').name, 'x*', 'a pattern matches an empty remainder');
});

test('literal parts of a pattern do not overlap', () => {
  assert.equal(patternScore('ab*ba', 'aba'), -1);
  assert.equal(patternScore('ab*ba', 'abba'), 4);
  assert.equal(patternScore('a*', 'a'), 1);
  assert.equal(patternScore('*', ''), 0);
  assert.equal(patternScore('abc', 'abc'), -1, 'an exact name is not a pattern');
});

test('queues configure by the part before @', () => {
  const list = queues('default', 'jobs', 'tasks-*');
  assert.equal(resolveQueueConfig(list, 'jobs@user42').name, 'jobs');
  assert.equal(resolveQueueConfig(list, 'tasks-1@k').name, 'tasks-*');
  assert.equal(resolveQueueConfig(list, '@k').name, 'default');
  assert.equal(configNameOf('a@b@c'), 'a');
  assert.equal(configNameOf('plain'), 'plain');
});

test('maps do not strip @ (only queues are documented to)', () => {
  assert.equal(resolveMapConfig(maps('default', 'm'), 'm@k').name, 'default');
});

test('ties by example', () => {
  assert.deepEqual(findPatternTies(['a*', '*a']), [['a*', '*a']]);
  assert.deepEqual(findPatternTies(['ab*', 'a*c']), [['ab*', 'a*c']]);
  assert.deepEqual(findPatternTies(['a*', 'b*']), []);
  assert.deepEqual(findPatternTies(['a*', 'ab*']), []);
  assert.deepEqual(findPatternTies(['a*x', 'a*y']), []);
  assert.deepEqual(findPatternTies(['default', 'abc', 'a*']), []);
  assert.deepEqual(findPatternTies(['*']), []);
});

/** Oracle: some name of length <= maxLength over the alphabet has equal best scores under both patterns. */
function bruteTie(a: string, b: string, alphabet: string, maxLength: number): boolean {
  const la = a.length - 1;
  const lb = b.length - 1;
  if (la !== lb) return false;
  const names = [''];
  for (let i = 0; i < names.length; i++) {
    const n = names[i] ?? '';
    if (patternScore(a, n) >= 0 && patternScore(b, n) >= 0) return true;
    if (n.length < maxLength) for (const ch of alphabet) names.push(n + ch);
  }
  return false;
}

test('ties agree with a brute-force oracle on random short patterns (seed=7)', () => {
  const rnd = new SeededRandom(7);
  const alphabet = 'ab';
  const randomPattern = (): string => {
    const len = rnd.nextInt(4);
    let s = '';
    for (let i = 0; i < len; i++) s += alphabet[rnd.nextInt(2)];
    const at = rnd.nextInt(s.length + 1);
    return `${s.slice(0, at)}*${s.slice(at)}`;
  };
  for (let i = 0; i < 2000; i++) {
    const a = randomPattern();
    const b = randomPattern();
    if (a === b) continue;
    // A common name, when one exists, is at most as long as both patterns' literals together.
    const expected = bruteTie(a, b, alphabet, 6);
    assert.equal(findPatternTies([a, b]).length === 1, expected, `${a} vs ${b}`);
  }
});
