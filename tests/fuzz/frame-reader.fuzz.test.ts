// Seeded fuzzing of src/cluster/protocol/frame-reader.ts. Feeds random bytes and mutated valid streams
// (bit flips, inserted, deleted and overwritten bytes, truncation), cut into random chunks, and checks:
// only GridError is ever thrown; after every call the buffered bytes stay below the frame limit; the
// outcome (frames, then the error code or "waiting for more") does not depend on how the stream was
// chunked; an unmutated stream decodes to exactly the frames that were encoded; the whole run is fast.
// The seed comes from FUZZ_SEED (default fixed) and is printed on failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeFrame, HEADER_BYTES, PREAMBLE, PROTOCOL_VERSION, type Frame, type FrameFields } from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';

const FUZZ = fuzz(7_340_033, 10_000);
const SEED = FUZZ.seed;
const ITERATIONS = FUZZ.iterations;
const FRAME_BYTES_MAX = 512;

const withSeed = (name: string, body: (rnd: SeededRandom) => void): void => FUZZ.case(name, body);

function randomBytes(rnd: SeededRandom, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = rnd.nextInt(256);
  return b;
}

function randomFrame(rnd: SeededRandom): { fields: FrameFields; payload: Buffer } {
  const fields: FrameFields = {
    flags: rnd.nextInt(8),
    messageType: 1 + rnd.nextInt(0xffff),
    partitionId: rnd.nextInt(300) - 1,
    callId: rnd.next() < 0.1 ? Number.MAX_SAFE_INTEGER - rnd.nextInt(10) : rnd.nextInt(1e9),
  };
  return { fields, payload: randomBytes(rnd, rnd.nextInt(FRAME_BYTES_MAX - HEADER_BYTES + 1)) };
}

function validStream(rnd: SeededRandom): { bytes: Buffer; frames: { fields: FrameFields; payload: Buffer }[] } {
  const frames = Array.from({ length: rnd.nextInt(6) }, () => randomFrame(rnd));
  return { bytes: Buffer.concat([PREAMBLE, ...frames.map((f) => encodeFrame(f.fields, f.payload, FRAME_BYTES_MAX))]), frames };
}

function mutate(rnd: SeededRandom, bytes: Buffer): Buffer {
  let b = Buffer.from(bytes);
  const edits = 1 + rnd.nextInt(3);
  for (let e = 0; e < edits; e++) {
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

function chunk(rnd: SeededRandom, bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; ) {
    const n = rnd.next() < 0.3 ? 1 : 1 + rnd.nextInt(rnd.next() < 0.5 ? 8 : 200);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

interface Outcome {
  frames: string[];
  end: string; // 'waiting' or the error code
}

function describe(f: Frame): string {
  return `${f.version}/${f.flags}/${f.messageType}/${f.partitionId}/${f.callId}/${f.payload.toString('hex')}`;
}

// Feeds chunks through append/next, checking the per-call invariants, and records what came out.
function feed(chunks: readonly Buffer[]): Outcome {
  const r = new FrameReader({ frameBytesMax: FRAME_BYTES_MAX });
  const frames: string[] = [];
  try {
    for (const c of chunks) {
      r.append(c);
      for (let f = r.next(); f !== null; f = r.next()) {
        assert.ok(f.payload.length <= FRAME_BYTES_MAX - HEADER_BYTES);
        frames.push(describe(f));
      }
      assert.ok(r.bufferedBytes < FRAME_BYTES_MAX, `buffered ${r.bufferedBytes} bytes`);
    }
    return { frames, end: 'waiting' };
  } catch (e) {
    assert.ok(e instanceof GridError, `non-GridError: ${String(e)}`);
    assert.ok(e.code === 'ERR_PROTOCOL_MALFORMED' || e.code === 'ERR_PROTOCOL_FRAME_TOO_LARGE', e.code);
    assert.equal(r.bufferedBytes, 0);
    return { frames, end: e.code };
  }
}

withSeed('random bytes: only GridError, bounded buffering, chunking does not matter', (rnd) => {
  let errors = 0;
  for (let n = 0; n < ITERATIONS; n++) {
    const body = randomBytes(rnd, rnd.nextInt(2000));
    const bytes = rnd.next() < 0.7 ? Buffer.concat([PREAMBLE, body]) : body;
    const whole = feed([bytes]);
    assert.deepEqual(feed(chunk(rnd, bytes)), whole);
    if (whole.end !== 'waiting') errors++;
  }
  assert.ok(errors > ITERATIONS / 2, 'random bytes should mostly be refused');
});

withSeed('valid streams decode exactly, however they are chunked', (rnd) => {
  for (let n = 0; n < ITERATIONS; n++) {
    const { bytes, frames } = validStream(rnd);
    const want = frames.map((f) =>
      describe({
        version: PROTOCOL_VERSION,
        flags: f.fields.flags ?? 0,
        messageType: f.fields.messageType,
        partitionId: f.fields.partitionId ?? -1,
        callId: f.fields.callId ?? 0,
        payload: f.payload,
      }),
    );
    assert.deepEqual(feed(chunk(rnd, bytes)), { frames: want, end: 'waiting' });
  }
});

withSeed('mutated valid streams: only GridError, bounded buffering, chunking does not matter', (rnd) => {
  const ends = new Map<string, number>();
  for (let n = 0; n < ITERATIONS; n++) {
    const bytes = mutate(rnd, validStream(rnd).bytes);
    const whole = feed([bytes]);
    assert.deepEqual(feed(chunk(rnd, bytes)), whole);
    ends.set(whole.end, (ends.get(whole.end) ?? 0) + 1);
  }
  // The mutations must reach every outcome, or the generator is not exercising the reader.
  for (const end of ['waiting', 'ERR_PROTOCOL_MALFORMED', 'ERR_PROTOCOL_FRAME_TOO_LARGE']) assert.ok((ends.get(end) ?? 0) > 0, end);
});

withSeed('declared lengths around the limit', (rnd) => {
  for (let n = 0; n < ITERATIONS; n++) {
    const declared = rnd.next() < 0.5 ? FRAME_BYTES_MAX - 2 + rnd.nextInt(5) : rnd.nextInt(2 ** 32);
    const head = Buffer.alloc(HEADER_BYTES);
    head.writeUInt32BE(declared, 0);
    head[4] = 1;
    head.writeUInt16BE(1, 6);
    const bytes = Buffer.concat([PREAMBLE, head, randomBytes(rnd, rnd.nextInt(600))]);
    const out = feed(chunk(rnd, bytes));
    if (declared > FRAME_BYTES_MAX) assert.deepEqual(out, { frames: [], end: 'ERR_PROTOCOL_FRAME_TOO_LARGE' });
    else if (declared < HEADER_BYTES) assert.deepEqual(out, { frames: [], end: 'ERR_PROTOCOL_MALFORMED' });
  }
});
