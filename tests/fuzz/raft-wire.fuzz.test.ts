// Seeded fuzzing of the Raft message codec (src/cp/raft/wire.ts): random messages of every type
// round-trip exactly; every truncation of a valid encoding, and random bit flips, inserted and
// deleted bytes, either decode to a message that encodes back to the same bytes or throw a
// GridError (never another error, never a crash); lengths over the limits are refused before
// anything is allocated. FUZZ_SEED and FUZZ_ITERATIONS replay or lengthen it.
import assert from 'node:assert/strict';
import { decodeRaftMessage, encodeRaftMessage } from '../../src/cp/raft/wire.js';
import type { Entry, RaftMessage } from '../../src/cp/raft/types.js';
import { GridError } from '../../src/util/errors.js';
import type { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';

const FUZZ = fuzz(29_000_001, 4_000);
const LIMITS = { dataBytesMax: 256, entriesMax: 16 };

function id(rnd: SeededRandom): string {
  return rnd.next() < 0.1 ? 'ü-member' : `m${rnd.nextInt(1000)}`;
}

function n53(rnd: SeededRandom): number {
  return rnd.next() < 0.1 ? Number.MAX_SAFE_INTEGER - rnd.nextInt(3) : rnd.nextInt(100_000);
}

function data(rnd: SeededRandom): Uint8Array {
  const b = new Uint8Array(rnd.nextInt(40));
  for (let i = 0; i < b.length; i++) b[i] = rnd.nextInt(256);
  return b;
}

function members(rnd: SeededRandom): string[] {
  return Array.from({ length: 1 + rnd.nextInt(7) }, () => id(rnd));
}

function randomMessage(rnd: SeededRandom): RaftMessage {
  const base = { from: id(rnd), to: id(rnd), term: n53(rnd) };
  switch (rnd.nextInt(9)) {
    case 0:
      return { ...base, type: 'preVote', lastIndex: n53(rnd), lastTerm: n53(rnd) };
    case 1:
      return { ...base, type: 'preVoteAnswer', granted: rnd.next() < 0.5 };
    case 2:
      return { ...base, type: 'vote', lastIndex: n53(rnd), lastTerm: n53(rnd), transfer: rnd.next() < 0.5 };
    case 3:
      return { ...base, type: 'voteAnswer', granted: rnd.next() < 0.5 };
    case 4: {
      const prevIndex = rnd.nextInt(1000);
      const entries: Entry[] = Array.from({ length: rnd.nextInt(5) }, (_, i) => {
        const k = rnd.nextInt(3);
        return k === 2 ? { index: prevIndex + 1 + i, term: n53(rnd), kind: 'config', data: new Uint8Array(0), members: members(rnd) } : { index: prevIndex + 1 + i, term: n53(rnd), kind: k === 0 ? 'data' : 'noop', data: k === 0 ? data(rnd) : new Uint8Array(0), members: null };
      });
      return { ...base, type: 'append', prevIndex, prevTerm: n53(rnd), entries, commit: n53(rnd), round: n53(rnd) };
    }
    case 5:
      return { ...base, type: 'appendAnswer', success: rnd.next() < 0.5, index: n53(rnd), hintIndex: n53(rnd), hintTerm: n53(rnd), round: n53(rnd) };
    case 6: {
      const chunk = data(rnd);
      const offset = rnd.nextInt(100);
      return { ...base, type: 'snapshot', index: n53(rnd), snapshotTerm: n53(rnd), members: members(rnd), offset, totalBytes: offset + chunk.length + rnd.nextInt(100), chunk };
    }
    case 7:
      return { ...base, type: 'snapshotAnswer', index: n53(rnd), nextOffset: n53(rnd), matchIndex: n53(rnd) };
    default:
      return { ...base, type: 'timeoutNow' };
  }
}

/** Decodes, and if it decodes, the message must encode back to the same bytes. */
function decodeOrGridError(b: Uint8Array): void {
  let m: RaftMessage;
  try {
    m = decodeRaftMessage(b, LIMITS);
  } catch (e) {
    if (!(e instanceof GridError)) throw e;
    assert.equal(e.code, 'ERR_PROTOCOL_MALFORMED');
    return;
  }
  assert.deepEqual(encodeRaftMessage(m), Buffer.from(b));
}

/** The message with byte arrays as plain arrays (a decoded Buffer and an encoded Uint8Array compare equal). */
function plain(v: unknown): unknown {
  if (v instanceof Uint8Array) return [...v];
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

FUZZ.case('every message type round-trips', (rnd) => {
  const seen = new Set<string>();
  for (let i = 0; i < FUZZ.iterations; i++) {
    const m = randomMessage(rnd);
    seen.add(m.type);
    assert.deepEqual(plain(decodeRaftMessage(encodeRaftMessage(m), LIMITS)), plain(m));
  }
  assert.equal(seen.size, 9);
});

FUZZ.case('every truncation of a valid message is refused with a GridError', (rnd) => {
  for (let i = 0; i < FUZZ.iterations / 10; i++) {
    const b = encodeRaftMessage(randomMessage(rnd));
    for (let cut = 0; cut < b.length; cut++) assert.throws(() => decodeRaftMessage(b.subarray(0, cut), LIMITS), GridError);
    assert.throws(() => decodeRaftMessage(Buffer.concat([b, Buffer.from([0])]), LIMITS), GridError, 'a trailing byte');
  }
});

FUZZ.case('mutated messages decode to themselves or fail with a GridError', (rnd) => {
  for (let i = 0; i < FUZZ.iterations; i++) {
    const b = Buffer.from(encodeRaftMessage(randomMessage(rnd)));
    const k = rnd.nextInt(3);
    let mutated: Uint8Array;
    if (k === 0) {
      for (let f = 0; f < 1 + rnd.nextInt(3); f++) {
        const at = rnd.nextInt(b.length);
        b[at] = (b[at] as number) ^ (1 << rnd.nextInt(8));
      }
      mutated = b;
    } else if (k === 1) {
      const at = rnd.nextInt(b.length + 1);
      mutated = Buffer.concat([b.subarray(0, at), Buffer.from([rnd.nextInt(256)]), b.subarray(at)]);
    } else {
      const at = rnd.nextInt(b.length);
      mutated = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
    }
    decodeOrGridError(mutated);
  }
});

FUZZ.case('limits: too many entries, a chunk or command over the limit, and a chunk past the snapshot end are refused', (rnd) => {
  void rnd;
  const many: RaftMessage = { type: 'append', from: 'a', to: 'b', term: 1, prevIndex: 0, prevTerm: 0, commit: 0, round: 0, entries: Array.from({ length: 17 }, (_, i) => ({ index: i + 1, term: 1, kind: 'noop' as const, data: new Uint8Array(0), members: null })) };
  assert.throws(() => decodeRaftMessage(encodeRaftMessage(many), LIMITS), /entries: 17 exceeds the maximum of 16/);
  const big: RaftMessage = { type: 'append', from: 'a', to: 'b', term: 1, prevIndex: 0, prevTerm: 0, commit: 0, round: 0, entries: [{ index: 1, term: 1, kind: 'data', data: new Uint8Array(257), members: null }] };
  assert.throws(() => decodeRaftMessage(encodeRaftMessage(big), LIMITS), GridError);
  const gap: RaftMessage = { type: 'append', from: 'a', to: 'b', term: 1, prevIndex: 0, prevTerm: 0, commit: 0, round: 0, entries: [{ index: 2, term: 1, kind: 'noop', data: new Uint8Array(0), members: null }] };
  assert.throws(() => decodeRaftMessage(encodeRaftMessage(gap), LIMITS), /expected 1/);
  const past: RaftMessage = { type: 'snapshot', from: 'a', to: 'b', term: 1, index: 5, snapshotTerm: 1, members: ['a'], offset: 10, totalBytes: 12, chunk: new Uint8Array(3) };
  assert.throws(() => decodeRaftMessage(encodeRaftMessage(past), LIMITS), /beyond its 12 bytes/);
});
