// Seeded fuzzing of src/http/path.ts. Generates thousands of random and mutated request targets and
// checks: (1) splitTarget either returns or throws a GridError (ERR_HTTP_BAD_PATH / _BAD_REQUEST),
// never anything else, and stays fast on long inputs; (2) it agrees with an independent decoder
// (manual %XX parsing + a fatal TextDecoder); (3) round trip: segments → encode → split gives the same
// segments, and a decoded target re-encoded decodes to the same segments. The seed comes from
// FUZZ_SEED (default fixed) and is printed on failure; rerun with FUZZ_SEED=<n> to replay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitTarget } from '../../src/http/path.js';
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';

const FUZZ = fuzz(20240611, 20_000);
const SEED = FUZZ.seed;
const ITERATIONS = FUZZ.iterations;

// Raw characters: node:http hands over ASCII targets only (it answers 400 to other bytes); a few raw
// latin1 characters are kept to check that they pass through untouched.
const ALPHABET = ['/', '/', '/', '%', '%', '%', '?', '#', '+', 'a', 'Z', '0', '2', 'F', 'f', 'C', '3', 'E', 'D', '8', '9', 'A', 'z', '.', '~', ' ', 'é', '\u0000', '\u00ff'];
const HEX = '0123456789abcdefABCDEF';
// Escapes that are interesting for UTF-8: ASCII, lead bytes, continuation bytes, overlong and surrogate leads.
const ESCAPES = ['%2F', '%2f', '%40', '%25', '%20', '%C3', '%A9', '%80', '%BF', '%C0', '%C1', '%E0', '%ED', '%A0', '%F0', '%F4', '%90', '%9F', '%98', '%F5', '%FF', '%00', '%7F'];

const withSeed = (name: string, body: (rnd: SeededRandom) => void): void => FUZZ.case(name, body);

function pickFrom<T>(rnd: SeededRandom, xs: readonly T[]): T {
  return xs[rnd.nextInt(xs.length)] as T;
}

function randomTarget(rnd: SeededRandom, maxLen: number): string {
  let s = rnd.next() < 0.95 ? '/' : '';
  const len = rnd.nextInt(maxLen);
  for (let i = 0; i < len; i++) {
    const r = rnd.next();
    if (r < 0.35) s += pickFrom(rnd, ESCAPES);
    else if (r < 0.45) s += '%' + pickFrom(rnd, [...HEX]) + (rnd.next() < 0.5 ? pickFrom(rnd, [...HEX]) : '');
    else s += pickFrom(rnd, ALPHABET);
  }
  return s;
}

// A random valid string (no lone surrogates) that may contain every troublesome character.
function randomSegment(rnd: SeededRandom): string {
  let s = '';
  const len = rnd.nextInt(12);
  for (let i = 0; i < len; i++) {
    const r = rnd.next();
    if (r < 0.3) s += pickFrom(rnd, ['/', '%', '?', '#', '+', ' ', '&', '=', '@', '%2F', '..']);
    else if (r < 0.5) s += String.fromCodePoint(0x80 + rnd.nextInt(0x800));
    else if (r < 0.6) s += String.fromCodePoint(0x10000 + rnd.nextInt(0x100000 - 0x10000));
    else if (r < 0.65) s += String.fromCodePoint(0xe000 + rnd.nextInt(0x2000));
    else s += String.fromCharCode(0x21 + rnd.nextInt(0x5e));
  }
  return s;
}

// Escapes only what must be escaped in a segment, with random hex case: a second encoder to vary input.
function encodeMinimal(rnd: SeededRandom, s: string): string {
  let out = '';
  for (const ch of s) {
    if (/[A-Za-z0-9\-._~!$&'()*+,;=:@]/.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) {
      const hex = b.toString(16).padStart(2, '0');
      out += '%' + (rnd.next() < 0.5 ? hex.toUpperCase() : hex);
    }
  }
  return out;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

// The independent oracle: raw characters pass through; each run of %XX escapes becomes bytes decoded
// with a fatal UTF-8 decoder. Returns null where the input is invalid.
function referenceDecode(seg: string): string | null {
  let out = '';
  let i = 0;
  while (i < seg.length) {
    if (seg[i] !== '%') {
      out += seg[i];
      i++;
      continue;
    }
    const bytes: number[] = [];
    while (i < seg.length && seg[i] === '%') {
      const hex = seg.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 3;
    }
    try {
      out += strictUtf8.decode(Uint8Array.from(bytes));
    } catch {
      return null;
    }
  }
  return out;
}

function referenceSplit(target: string): string[] | null {
  const end = Math.min(...['?', '#'].map((c) => (target.includes(c) ? target.indexOf(c) : target.length)));
  const out: string[] = [];
  for (const raw of target.slice(1, end).split('/')) {
    const d = referenceDecode(raw);
    if (d === null) return null;
    out.push(d);
  }
  return out;
}

function trySplit(target: string): string[] | GridError {
  try {
    return splitTarget(target).segments;
  } catch (e) {
    assert.ok(e instanceof GridError, `non-GridError for ${JSON.stringify(target)}: ${String(e)}`);
    assert.ok(e.code === 'ERR_HTTP_BAD_PATH' || e.code === 'ERR_HTTP_BAD_REQUEST', e.code);
    return e;
  }
}

withSeed('random targets: only GridError, and agreement with an independent decoder', (rnd) => {
  let ok = 0;
  for (let n = 0; n < ITERATIONS; n++) {
    const target = randomTarget(rnd, 40);
    const got = trySplit(target);
    if (!target.startsWith('/')) {
      assert.ok(got instanceof GridError && got.code === 'ERR_HTTP_BAD_REQUEST', JSON.stringify(target));
      continue;
    }
    const want = referenceSplit(target);
    if (want === null) assert.ok(got instanceof GridError && got.code === 'ERR_HTTP_BAD_PATH', JSON.stringify(target));
    else {
      assert.deepEqual(got, want, JSON.stringify(target));
      ok++;
    }
  }
  assert.ok(ok > ITERATIONS / 20, `too few valid targets generated (${ok}): the generator is off`);
});

withSeed('round trip: segments → encode → split gives the same segments', (rnd) => {
  for (let n = 0; n < ITERATIONS / 4; n++) {
    const segments = Array.from({ length: 1 + rnd.nextInt(6) }, () => randomSegment(rnd));
    const encode = rnd.next() < 0.5 ? encodeURIComponent : (s: string) => encodeMinimal(rnd, s);
    const target = '/' + segments.map(encode).join('/') + (rnd.next() < 0.3 ? '?q=%zz#f' : '');
    assert.deepEqual(splitTarget(target).segments, segments, JSON.stringify(target));
  }
});

withSeed('mutated valid targets: only GridError; decoded then re-encoded decodes the same', (rnd) => {
  const base = ['/grid/rest/maps/orders/k000001234', '/grid/rest/maps/a%2Fb/caf%C3%A9/%F0%9F%98%80', '/grid/rest/queues/q%40k/10', '/grid/health/ready?x=1'];
  for (let n = 0; n < ITERATIONS; n++) {
    let t = pickFrom(rnd, base);
    const edits = 1 + rnd.nextInt(4);
    for (let e = 0; e < edits; e++) {
      const at = rnd.nextInt(t.length + 1);
      const r = rnd.next();
      if (r < 0.3) t = t.slice(0, at) + t.slice(at + 1);
      else if (r < 0.6) t = t.slice(0, at) + pickFrom(rnd, rnd.next() < 0.5 ? ESCAPES : ALPHABET) + t.slice(at);
      else if (r < 0.8) t = t.slice(0, at) + pickFrom(rnd, ALPHABET) + t.slice(at + 1);
      else t = t.slice(0, at);
    }
    const got = trySplit(t);
    if (got instanceof GridError) continue;
    const again = '/' + got.map(encodeURIComponent).join('/');
    assert.deepEqual(splitTarget(again).segments, got, JSON.stringify(t));
  }
});

withSeed('long targets stay linear (no hang)', (rnd) => {
  const long = [
    '/' + 'a/'.repeat(50_000),
    '/' + '%41'.repeat(50_000),
    '/' + '%C3%A9/'.repeat(20_000) + '%zz',
    '/' + '%'.repeat(100_000),
    '/' + '/'.repeat(100_000),
    randomTarget(rnd, 100_000),
  ];
  for (const t of long) {
    // CPU time, not wall time: a runner descheduled on a busy machine is not a slow splitter.
    const start = process.cpuUsage();
    trySplit(t);
    const used = process.cpuUsage(start);
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 500, `a ${t.length}-char target took ${ms.toFixed(1)} ms of CPU`);
  }
});
