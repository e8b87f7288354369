// Seeded fuzzing of the map-merge payload decoders (decodeMapMerge and decodeMergedRecords in
// src/data/merge-batch.ts), which read bytes from another member inside a MAP_MERGE call and a
// BACKUP.MAP_MERGE write. Random bodies come from the payload schemas (tests/harness/message-sample.ts:
// doubles include infinities, policy codes any u8), then bytes are flipped, overwritten, inserted,
// deleted or cut, or a count prefix is set to 2^32-1. Checks: a decoder returns a value or throws
// GridError ERR_PROTOCOL_MALFORMED, nothing else; what it accepts has a known policy and finite
// times and re-encodes to the same bytes; both outcomes occur. FUZZ_SEED / FUZZ_ITERATIONS as usual.
import assert from 'node:assert/strict';
import { decodeMapMerge, decodeMergedRecords, encodeMapMerge, encodeMergedRecords, MAP_MERGE_BACKUP_SCHEMA, MAP_MERGE_SCHEMA } from '../../src/data/merge-batch.js';
import { MERGE_POLICY_CODES } from '../../src/data/merge-policy.js';
import { encodeWith, type Schema } from '../../src/cluster/protocol/schema-codec.js';
import { GridError } from '../../src/util/errors.js';
import type { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';
import { sample } from '../harness/message-sample.js';

const FUZZ = fuzz(60_013, 1_000);

function mutate(rnd: SeededRandom, bytes: Buffer): Buffer {
  let b = Buffer.from(bytes);
  for (let e = 0; e < 1 + rnd.nextInt(3) || b.equals(bytes); e++) {
    const at = rnd.nextInt(b.length + 1);
    const r = rnd.next();
    if (r < 0.3 && at < b.length) b[at] = (b[at] as number) ^ (1 << rnd.nextInt(8));
    else if (r < 0.5 && at < b.length) b[at] = rnd.nextInt(256);
    else if (r < 0.7) b = Buffer.concat([b.subarray(0, at), Buffer.from([rnd.nextInt(256)]), b.subarray(at)]);
    else if (r < 0.9) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + rnd.nextInt(4))]);
    else b = b.subarray(0, at);
  }
  return b;
}

type Outcome = 'accepted' | 'malformed';

function check(decode: (b: Buffer) => unknown, reencode: (v: never) => Buffer, bytes: Buffer, what: string): Outcome {
  let v: unknown;
  try {
    v = decode(bytes);
  } catch (e) {
    if (!(e instanceof GridError) || e.code !== 'ERR_PROTOCOL_MALFORMED') assert.fail(`${what}: threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)} on ${bytes.toString('hex')}`);
    return 'malformed';
  }
  assert.ok(reencode(v as never).equals(bytes), `${what}: accepted ${bytes.toString('hex')} but it re-encodes differently`);
  return 'accepted';
}

const PAYLOADS: { name: string; schema: Schema; decode: (b: Buffer) => unknown; reencode: (v: never) => Buffer; valid: (body: Record<string, unknown>, rnd: SeededRandom) => void }[] = [
  {
    name: 'MAP_MERGE',
    schema: MAP_MERGE_SCHEMA,
    decode: decodeMapMerge,
    reencode: encodeMapMerge,
    // Half the bodies get a known policy code, so decoding goes past the first byte.
    valid: (body, rnd) => {
      if (rnd.next() < 0.5) body['policy'] = Object.values(MERGE_POLICY_CODES)[rnd.nextInt(7)];
    },
  },
  { name: 'BACKUP.MAP_MERGE', schema: MAP_MERGE_BACKUP_SCHEMA, decode: decodeMergedRecords, reencode: (records) => encodeMergedRecords(records), valid: () => {} },
];

FUZZ.case('mutated merge payloads: a value or ERR_PROTOCOL_MALFORMED, and what is accepted re-encodes identically', (rnd) => {
  for (const p of PAYLOADS) {
    const outcomes = new Map<Outcome, number>();
    for (let n = 0; n < FUZZ.iterations; n++) {
      const body = sample(p.schema, rnd) as Record<string, unknown>;
      p.valid(body, rnd);
      const bytes = encodeWith(p.schema, body as never);
      for (const b of [bytes, mutate(rnd, bytes)]) {
        const o = check(p.decode, p.reencode, b, p.name);
        outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
      }
      // A lying entry count fails at once.
      const lie = Buffer.from(bytes);
      const countAt = p.name === 'MAP_MERGE' ? 1 : 0;
      lie.writeUInt32BE(0xffff_ffff, countAt);
      assert.equal(check(p.decode, p.reencode, lie, `${p.name} count lie`), 'malformed');
    }
    assert.ok((outcomes.get('accepted') ?? 0) > 0 && (outcomes.get('malformed') ?? 0) > 0, `${p.name}: ${JSON.stringify([...outcomes])}`);
  }
});
