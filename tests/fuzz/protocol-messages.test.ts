// Seeded fuzzing of the member-protocol message decoder (decodeMessage in src/cluster/messages.ts over
// src/cluster/protocol/schema-codec.ts). For every message kind it builds random valid bodies from the
// kind's schema, encodes them, then mutates the bytes: bit flips, overwritten, inserted and deleted
// bytes, truncation, and lies in the u32 length/count prefixes (2^32-1, 2^31, off by one, one past the
// bytes left), found by walking the schema alongside the value. Checks: decodeMessage either returns
// a message or throws GridError ERR_PROTOCOL_MALFORMED, nothing else; anything it accepts re-encodes
// to exactly the same bytes (the encoding is canonical); no single decode is slow; every length
// prefix set to 2^32-1 fails at once. Random garbage under every type number is refused the same way.
// The seed comes from FUZZ_SEED (default fixed), iterations per kind from FUZZ_ITERATIONS; the seed
// is printed on failure.
import assert from 'node:assert/strict';
import { decodeMessage, encodeBody, MESSAGE_SCHEMAS, MESSAGE_TYPES, type Message, type MessageKind } from '../../src/cluster/messages.js';
import type { Scalar, Schema } from '../../src/cluster/protocol/schema-codec.js';
import { GridError } from '../../src/util/errors.js';
import type { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';
import { pick, sample } from '../harness/message-sample.js';

const FUZZ = fuzz(48_271, 1_000);
const ITERATIONS = FUZZ.iterations;
const KINDS = Object.keys(MESSAGE_SCHEMAS) as MessageKind[];
/** Far above any honest decode of these small inputs; a decode this slow is a hang in the making. */
const DECODE_MS_MAX = 100;

const FIXED_BYTES: Partial<Record<Scalar, number>> = { u8: 1, bool: 1, u16: 2, u32: 4, i32: 4, u53: 8, f64: 8 };

/**
 * Walks `schema` and `value` as the encoder does, collecting the offsets of every u32 length or count
 * prefix; returns the offset just past the value.
 */
function prefixOffsets(schema: Schema, value: unknown, at: number, out: number[]): number {
  if (typeof schema === 'string') {
    const fixed = FIXED_BYTES[schema as Scalar];
    if (fixed !== undefined) return at + fixed;
    if (schema === 'strOrNull') return value === null ? at + 1 : prefixOffsets('str', value, at + 1, out);
    out.push(at);
    return at + 4 + (schema === 'str' ? Buffer.byteLength(value as string) : (value as Uint8Array).length);
  }
  if (Array.isArray(schema)) {
    out.push(at);
    let pos = at + 4;
    for (const item of value as unknown[]) pos = prefixOffsets((schema as readonly [Schema])[0], item, pos, out);
    return pos;
  }
  let pos = at;
  const record = value as Record<string, unknown>;
  for (const [field, s] of Object.entries(schema as Record<string, Schema>)) pos = prefixOffsets(s, record[field], pos, out);
  return pos;
}

function randomBytes(rnd: SeededRandom, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = rnd.nextInt(256);
  return b;
}

/** Writes a lying value into one length/count prefix. */
function lie(rnd: SeededRandom, bytes: Buffer, offsets: readonly number[]): Buffer {
  const b = Buffer.from(bytes);
  const at = pick(rnd, offsets);
  const honest = b.readUInt32BE(at);
  const left = b.length - at - 4;
  const lies = [0xffff_ffff, 0x8000_0000, 0x7fff_ffff, honest + 1, Math.max(0, honest - 1), left + 1, rnd.nextInt(0x1_0000_0000)];
  b.writeUInt32BE(Math.min(0xffff_ffff, pick(rnd, lies)), at);
  return b;
}

function mutate(rnd: SeededRandom, bytes: Buffer, offsets: readonly number[]): Buffer {
  // A lie first, while the offsets still match the bytes; then blind edits.
  let b = offsets.length > 0 && rnd.next() < 0.4 ? lie(rnd, bytes, offsets) : Buffer.from(bytes);
  const edits = rnd.nextInt(3);
  for (let e = 0; e < edits || b.equals(bytes); e++) {
    const at = rnd.nextInt(b.length + 1);
    const r = rnd.next();
    if (r < 0.3 && at < b.length) b[at] = (b[at] as number) ^ (1 << rnd.nextInt(8));
    else if (r < 0.5 && at < b.length) b[at] = rnd.nextInt(256);
    else if (r < 0.7) b = Buffer.concat([b.subarray(0, at), randomBytes(rnd, 1 + rnd.nextInt(4)), b.subarray(at)]);
    else if (r < 0.9) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + rnd.nextInt(4))]);
    else b = b.subarray(0, at);
  }
  return b;
}

type Outcome = 'accepted' | 'malformed';
let slowestMs = 0;

/** Decodes and checks the contract; re-encoding what was accepted must give the same bytes. */
function decode(type: number, bytes: Buffer, what: string): Outcome {
  let m: Message;
  const started = performance.now();
  try {
    m = decodeMessage(type, 7, bytes);
  } catch (e) {
    if (!(e instanceof GridError) || e.code !== 'ERR_PROTOCOL_MALFORMED') {
      assert.fail(`${what}: decodeMessage threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)} on ${bytes.toString('hex')}`);
    }
    return 'malformed';
  } finally {
    slowestMs = Math.max(slowestMs, performance.now() - started);
  }
  assert.equal(m.callId, 7);
  assert.ok(encodeBody(m).equals(bytes), `${what}: accepted ${bytes.toString('hex')} but it re-encodes differently`);
  return 'accepted';
}

FUZZ.case('mutated valid encodings of every kind: a message or ERR_PROTOCOL_MALFORMED, never anything else', (rnd) => {
  const outcomes = new Map<Outcome, number>();
  for (const kind of KINDS) {
    for (let n = 0; n < ITERATIONS; n++) {
      const body = sample(MESSAGE_SCHEMAS[kind], rnd);
      const bytes = encodeBody({ kind, callId: 7, body } as Message);
      const offsets: number[] = [];
      assert.equal(prefixOffsets(MESSAGE_SCHEMAS[kind], body, 0, offsets), bytes.length, `${kind}: the offset walker disagrees with the encoder`);
      assert.equal(decode(MESSAGE_TYPES[kind], bytes, kind), 'accepted');
      const outcome = decode(MESSAGE_TYPES[kind], mutate(rnd, bytes, offsets), kind);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  }
  // Both outcomes must occur, or the mutations are not exercising the decoder.
  assert.ok((outcomes.get('accepted') ?? 0) > 0 && (outcomes.get('malformed') ?? 0) > 0, JSON.stringify([...outcomes]));
  assert.ok(slowestMs < DECODE_MS_MAX, `slowest decode took ${slowestMs} ms`);
});

FUZZ.case('every length or count prefix set to 2^32-1 fails at once', (rnd) => {
  for (const kind of KINDS) {
    for (let n = 0; n < Math.max(1, ITERATIONS / 10); n++) {
      const body = sample(MESSAGE_SCHEMAS[kind], rnd);
      const bytes = encodeBody({ kind, callId: 7, body } as Message);
      const offsets: number[] = [];
      prefixOffsets(MESSAGE_SCHEMAS[kind], body, 0, offsets);
      for (const at of offsets) {
        const b = Buffer.from(bytes);
        b.writeUInt32BE(0xffff_ffff, at);
        assert.equal(decode(MESSAGE_TYPES[kind], b, `${kind} prefix at ${at}`), 'malformed');
      }
    }
  }
  assert.ok(slowestMs < DECODE_MS_MAX, `slowest decode took ${slowestMs} ms`);
});

FUZZ.case('random garbage under every type number (known or not)', (rnd) => {
  const types = [...Object.values(MESSAGE_TYPES), 0, 1, 2, 0xffff];
  for (let n = 0; n < ITERATIONS * 10; n++) {
    const type = rnd.next() < 0.9 ? pick(rnd, types) : rnd.nextInt(0x1_0000);
    decode(type, randomBytes(rnd, rnd.nextInt(rnd.next() < 0.5 ? 16 : 300)), `type ${type}`);
  }
});
