// Seeded fuzzing of the CP command codec (src/cp/commands.ts): random commands of every kind
// round-trip exactly; truncations and mutations either decode to a command that encodes back to
// the same bytes or throw a GridError; values over the limit are refused. FUZZ_SEED replays it.
import assert from 'node:assert/strict';
import { decodeEnvelope, encodeEnvelope } from '../../src/cp/commands.js';
import type { CpCommand, Envelope, RefValue } from '../../src/cp/structures.js';
import { GridError } from '../../src/util/errors.js';
import type { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';

const FUZZ = fuzz(29_000_002, 3_000);
const VALUE_BYTES_MAX = 64;

function long(rnd: SeededRandom): bigint {
  const k = rnd.nextInt(4);
  if (k === 0) return 2n ** 63n - 1n;
  if (k === 1) return -(2n ** 63n);
  return BigInt(rnd.nextInt(2_000_000) - 1_000_000);
}

function ref(rnd: SeededRandom): RefValue | null {
  if (rnd.next() < 0.3) return null;
  const value = Uint8Array.from({ length: rnd.nextInt(20) }, () => rnd.nextInt(256));
  return { value, contentType: rnd.next() < 0.5 ? null : 'text/plain; charset=utf-8' };
}

/** A semaphore's configuration as the leader stamps it, or none (an entry written before it was carried). */
function settings(rnd: SeededRandom): { config?: { jdkCompatible: boolean; initialPermits: number } } {
  return rnd.next() < 0.3 ? {} : { config: { jdkCompatible: rnd.next() < 0.5, initialPermits: rnd.nextInt(5) } };
}

function command(rnd: SeededRandom): CpCommand {
  const name = rnd.next() < 0.2 ? 'näme@group' : `n${rnd.nextInt(100)}`;
  const n = (): number => rnd.nextInt(1000) - 1;
  switch (rnd.nextInt(13)) {
    case 7:
      return { kind: 'session', op: 'create', endpoint: '127.0.0.1:5701', endpointType: rnd.next() < 0.5 ? 'SERVER' : 'CLIENT', endpointName: 'app' };
    case 8:
      return rnd.next() < 0.5 ? { kind: 'session', op: 'heartbeat', id: n() } : { kind: 'session', op: rnd.next() < 0.5 ? 'closeInactive' : 'generateThreadId' };
    case 9:
      return { kind: 'session', op: 'expire', sessions: [{ id: n(), version: n() }] };
    case 10:
      if (rnd.next() < 0.5) return { kind: 'lock', op: 'unlock', name, session: n(), thread: n(), fence: n() };
      // With the leader's lock-acquire-limit (what members write) or without (entries written before it was carried).
      return rnd.next() < 0.5 ? { kind: 'lock', op: 'lock', name, session: n(), thread: n(), timeoutMs: n() } : { kind: 'lock', op: 'lock', name, session: n(), thread: n(), timeoutMs: n(), limit: rnd.nextInt(10) };
    case 11:
      return { kind: 'semaphore', op: 'acquire', name, session: n(), permits: n(), timeoutMs: n(), ...settings(rnd) };
    case 12: {
      const k = rnd.nextInt(4);
      if (k === 0) return { kind: 'semaphore', op: 'init', name, permits: n(), ...settings(rnd) };
      if (k === 1) return { kind: 'semaphore', op: 'release', name, session: n(), permits: n(), ...settings(rnd) };
      if (k === 2) return { kind: 'semaphore', op: 'drain', name, session: n(), ...settings(rnd) };
      return { kind: 'semaphore', op: 'change', name, session: n(), delta: n(), ...settings(rnd) };
    }
    case 0:
      return { kind: 'long', op: (['set', 'getAndSet', 'addAndGet', 'getAndAdd', 'compareAndSet'] as const)[rnd.nextInt(5)] as 'set', name, a: long(rnd), b: long(rnd) };
    case 1:
      return { kind: 'ref', op: (['set', 'getAndSet', 'compareAndSet'] as const)[rnd.nextInt(3)] as 'set', name, value: ref(rnd), expected: ref(rnd), ifIndex: rnd.nextInt(1000) - 1 };
    case 2:
      return { kind: 'latch', op: 'trySetCount', name, count: rnd.nextInt(100) };
    case 3:
      return { kind: 'latch', op: 'countDown', name, round: rnd.nextInt(10) - 1 };
    case 4:
      return { kind: 'latch', op: 'await', name, timeoutMs: rnd.nextInt(100_000) };
    case 5:
      return { kind: 'destroy', structure: (['long', 'ref', 'latch', 'lock', 'semaphore'] as const)[rnd.nextInt(5)] as 'long', name };
    default:
      return { kind: 'expireWaits', invocations: Array.from({ length: rnd.nextInt(4) }, (_, i) => `inv-${i}`) };
  }
}

function envelope(rnd: SeededRandom): Envelope {
  return { invocation: rnd.next() < 0.3 ? '' : `0000-${rnd.nextInt(1e6)}`, nowMs: rnd.nextInt(2 ** 31) * 1000, command: command(rnd) };
}

function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return [...v];
  if (typeof v === 'bigint') return `${v}n`;
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

FUZZ.case('every command kind round-trips', (rnd) => {
  for (let i = 0; i < FUZZ.iterations; i++) {
    const e = envelope(rnd);
    assert.deepEqual(plain(decodeEnvelope(encodeEnvelope(e, VALUE_BYTES_MAX), VALUE_BYTES_MAX)), plain(e));
  }
});

FUZZ.case('truncated and mutated commands decode to themselves or fail with a GridError', (rnd) => {
  for (let i = 0; i < FUZZ.iterations; i++) {
    const b = Buffer.from(encodeEnvelope(envelope(rnd), VALUE_BYTES_MAX));
    const cut = rnd.nextInt(b.length);
    assert.throws(() => decodeEnvelope(b.subarray(0, cut), VALUE_BYTES_MAX), GridError);
    const at = rnd.nextInt(b.length);
    b[at] = (b[at] as number) ^ (1 << rnd.nextInt(8));
    try {
      const e = decodeEnvelope(b, VALUE_BYTES_MAX);
      assert.deepEqual(encodeEnvelope(e, VALUE_BYTES_MAX), b);
    } catch (err) {
      if (!(err instanceof GridError)) throw err;
    }
  }
});

FUZZ.case('a reference value over the limit and a long outside 64 bits are refused', (rnd) => {
  void rnd;
  const big: Envelope = { invocation: '', nowMs: 1, command: { kind: 'ref', op: 'set', name: 'r', value: { value: new Uint8Array(65), contentType: null }, expected: null, ifIndex: -1 } };
  assert.throws(() => decodeEnvelope(encodeEnvelope(big, 100), VALUE_BYTES_MAX), GridError);
  const wide: Envelope = { invocation: '', nowMs: 1, command: { kind: 'long', op: 'set', name: 'n', a: 2n ** 63n, b: 0n } };
  assert.throws(() => decodeEnvelope(encodeEnvelope(wide, VALUE_BYTES_MAX), VALUE_BYTES_MAX), /outside 64 bits/);
});
