// Seeded fuzzing of the client protocol's CP calls (src/client/cp-calls.ts): every CP message type,
// built valid, answers without an error; then truncated fixed parameters, random fixed bytes,
// missing frames, a frame's bytes replaced and a malformed group id each end in an answer or a
// typed error response: never an exception out of runCall and never an internal error (which would
// be a bug the client sees as error 24). The calls run on a real group state machine behind a
// stand-in for the CP API, so what decodes is also applied. FUZZ_SEED replays it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { MessageReader } from '../../src/client/message.js';
import { runCall, type CallContext } from '../../src/client/calls.js';
import { CP_CALL } from '../../src/client/cp-calls.js';
import { FLAG_BEGIN_STRUCT, FLAG_END_STRUCT, type ClientMessage } from '../../src/client/frames.js';
import { CpApi } from '../../src/cp/cp-api.js';
import { runQuery, type CpQuery } from '../../src/cp/call-wire.js';
import type { CpGroupInfo } from '../../src/cp/metadata.js';
import { CpStructures, type CpCommand, type CpResult } from '../../src/cp/structures.js';
import type { MemberApi } from '../../src/member/member-api.js';
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';
import { encodeFrames, requestInitial, splitFrames, uuidBytes, wireFrame, type WireFrame } from '../harness/client-wire.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 30_000_001);
const ITERATIONS = Number(process.env['FUZZ_ITERATIONS'] ?? 3000);
const GROUP: CpGroupInfo = { name: 'default', id: 1, seed: 0, members: ['a'], status: 'ACTIVE' };

function setup(): { context: CallContext; internal: string[] } {
  const sm = new CpStructures(300_000, { ttlMs: 300_000, heartbeatMs: 5000 }, { lockAcquireLimit: (n) => (n === 'once' ? 1 : 0), semaphore: (n) => ({ jdkCompatible: n === 'jdk', initialPermits: 0 }) });
  let index = 0;
  const cp = {
    groupOf: async (proxy: string): Promise<CpGroupInfo> => (CpApi.name(proxy), GROUP),
    groupById: async (name: string, seed: number, id: number): Promise<CpGroupInfo> => {
      if (name !== GROUP.name || seed !== GROUP.seed || id !== GROUP.id) throw new GridError('ERR_CP_GROUP_DESTROYED', `no group ${name} ${seed} ${id}`);
      return GROUP;
    },
    write: async (_g: CpGroupInfo, command: CpCommand, invocation: string): Promise<CpResult> => {
      const r = sm.apply(++index, { invocation, nowMs: index, command }).result;
      if (r.type === 'error') throw new GridError(r.code === 'session-expired' ? 'ERR_CP_SESSION_EXPIRED' : 'ERR_CP_ILLEGAL_STATE', r.message);
      // A call that would wait at the leader: here it times out.
      if (r.type === 'waiting') throw new GridError('ERR_CP_UNAVAILABLE', 'waiting', { retryAfterSeconds: 1 });
      return r;
    },
    query: async (_g: CpGroupInfo, q: CpQuery) => runQuery(q, sm, { term: 1, commit: index, leader: 'a', members: ['a'] }),
    semaphoreConfig: (n: string) => ({ jdkCompatible: n === 'jdk', initialPermits: 0 }),
  };
  const internal: string[] = [];
  const api = { cpMemberCount: () => 3, cp: () => cp } as unknown as MemberApi;
  const context: CallContext = {
    api,
    client: { isGone: () => false, onGone: () => () => {} },
    pollSecondsMax: 300,
    answerBytesMax: 1 << 20,
    internalError: (e) => void internal.push(e instanceof Error ? (e.stack ?? e.message) : String(e)),
    memberStopping: () => false,
    remoteAddress: '127.0.0.1:40000',
  };
  return { context, internal };
}

const fixedOf = (...parts: Buffer[]): Buffer => Buffer.concat(parts);
const long = (v: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(v);
  return b;
};
const int = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v);
  return b;
};

function groupFrames(seed = 0n, id = 1n, name = 'default'): WireFrame[] {
  return [wireFrame(Buffer.alloc(0), FLAG_BEGIN_STRUCT), wireFrame(fixedOf(long(seed), long(id))), wireFrame(name), wireFrame(Buffer.alloc(0), FLAG_END_STRUCT)];
}

/** A valid request of every CP call type the member serves (session 1 exists once created). */
function valid(rnd: SeededRandom): { type: number; fixed: Buffer; frames: WireFrame[] }[] {
  const uuid = (): Buffer => uuidBytes(`${rnd.nextInt(0xffff).toString(16).padStart(8, '0')}-0000-4000-8000-${rnd.nextInt(0xffff).toString(16).padStart(12, '0')}`);
  const owner = (session = 1n): Buffer => fixedOf(long(session), long(BigInt(rnd.nextInt(5))), uuid());
  const named = (name: string): WireFrame[] => [...groupFrames(), wireFrame(name)];
  return [
    { type: CP_CALL.CREATE_CP_GROUP, fixed: Buffer.alloc(0), frames: [wireFrame('x@default')] },
    { type: CP_CALL.SESSION_CREATE, fixed: Buffer.alloc(0), frames: [...groupFrames(), wireFrame('app')] },
    { type: CP_CALL.SESSION_HEARTBEAT, fixed: long(1n), frames: groupFrames() },
    { type: CP_CALL.SESSION_GENERATE_THREAD_ID, fixed: Buffer.alloc(0), frames: groupFrames() },
    { type: CP_CALL.LOCK_LOCK, fixed: owner(), frames: named('l') },
    { type: CP_CALL.LOCK_OWNERSHIP, fixed: Buffer.alloc(0), frames: named('l') },
    { type: CP_CALL.LOCK_TRY_LOCK, fixed: fixedOf(owner(), long(0n)), frames: named('t') },
    { type: CP_CALL.SEMAPHORE_INIT, fixed: int(3), frames: named('s') },
    { type: CP_CALL.SEMAPHORE_ACQUIRE, fixed: fixedOf(owner(), int(1), long(0n)), frames: named('s') },
    { type: CP_CALL.SEMAPHORE_RELEASE, fixed: fixedOf(owner(), int(1)), frames: named('s') },
    { type: CP_CALL.SEMAPHORE_DRAIN, fixed: owner(), frames: named('s') },
    { type: CP_CALL.SEMAPHORE_CHANGE, fixed: fixedOf(owner(), int(2)), frames: named('s') },
    { type: CP_CALL.SEMAPHORE_AVAILABLE, fixed: Buffer.alloc(0), frames: named('s') },
    { type: CP_CALL.SEMAPHORE_TYPE, fixed: Buffer.alloc(0), frames: [wireFrame('jdk@default')] },
    { type: CP_CALL.LONG_ADD_AND_GET, fixed: long(5n), frames: named('n') },
    { type: CP_CALL.LONG_COMPARE_AND_SET, fixed: fixedOf(long(5n), long(6n)), frames: named('n') },
    { type: CP_CALL.LONG_GET, fixed: Buffer.alloc(0), frames: named('n') },
    { type: CP_CALL.LATCH_TRY_SET_COUNT, fixed: int(2), frames: named('c') },
    { type: CP_CALL.LATCH_COUNT_DOWN, fixed: fixedOf(uuid(), int(1)), frames: named('c') },
    { type: CP_CALL.LATCH_GET_COUNT, fixed: Buffer.alloc(0), frames: named('c') },
    { type: CP_CALL.LOCK_UNLOCK, fixed: fixedOf(long(1n), long(0n), uuid()), frames: named('l') },
    { type: CP_CALL.SESSION_CLOSE, fixed: long(1n), frames: groupFrames() },
  ];
}

function message(type: number, fixed: Buffer, frames: WireFrame[]): ClientMessage {
  const bytes = encodeFrames([requestInitial(type, 7n, -1, fixed), ...frames]);
  return { frames: splitFrames(bytes).map((f) => ({ flags: f.flags, content: f.content })), bytes: bytes.length };
}

/** The answer's message type (0: an error response) and its error code. */
async function run(context: CallContext, type: number, fixed: Buffer, frames: WireFrame[]): Promise<{ type: number; code: number }> {
  const out = await runCall(new MessageReader(message(type, fixed, frames)), context);
  const f = splitFrames(out);
  const first = f[0] as WireFrame;
  const answerType = first.content.readInt32LE(0);
  // An error response: the initial frame, a list begin, the holder begin, then the code frame.
  return { type: answerType, code: answerType === 0 ? (f[3] as WireFrame).content.readInt32LE(0) : -1 };
}

test('CP client calls: every type answers when valid, in the order a client would send them', async () => {
  const { context, internal } = setup();
  // Lock 'l' with thread 0 so that the unlock below (thread 0) is the owner's.
  for (const c of valid(new SeededRandom(SEED))) {
    const fixed = c.type === CP_CALL.LOCK_LOCK ? Buffer.concat([long(1n), long(0n), c.fixed.subarray(16)]) : c.fixed;
    const a = await run(context, c.type, fixed, c.frames);
    assert.equal(a.type, c.type + 1, `0x${c.type.toString(16)} answered with 0x${a.type.toString(16)} (error ${a.code})`);
  }
  assert.deepEqual(internal, []);
});

test(`CP client calls: mutated requests end in an answer or a typed error (seed=${SEED})`, async () => {
  const rnd = new SeededRandom(SEED);
  const { context, internal } = setup();
  await run(context, CP_CALL.SESSION_CREATE, Buffer.alloc(0), [...groupFrames(), wireFrame('app')]);
  let errors = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const cases = valid(rnd);
    const c = cases[rnd.nextInt(cases.length)] as (typeof cases)[number];
    let fixed = c.fixed;
    let frames = c.frames.map((f) => ({ flags: f.flags, content: f.content }));
    switch (rnd.nextInt(6)) {
      case 0:
        fixed = fixed.subarray(0, rnd.nextInt(fixed.length + 1));
        break;
      case 1:
        fixed = Buffer.from(Array.from({ length: fixed.length }, () => rnd.nextInt(256)));
        break;
      case 2:
        frames = frames.slice(0, rnd.nextInt(frames.length + 1));
        break;
      case 3: {
        if (frames.length === 0) break;
        const k = rnd.nextInt(frames.length);
        (frames[k] as WireFrame).content = Buffer.from(Array.from({ length: rnd.nextInt(40) }, () => rnd.nextInt(256)));
        break;
      }
      case 4:
        frames = [...groupFrames(BigInt(rnd.nextInt(3)) - 1n, BigInt(rnd.nextInt(4)) - 1n, rnd.next() < 0.5 ? 'default' : 'other'), ...frames.slice(4)];
        break;
      default:
        fixed = Buffer.concat([fixed, Buffer.from([rnd.nextInt(256)])]);
        break;
    }
    try {
      const a = await run(context, c.type, fixed, frames);
      assert.ok(a.type === 0 || a.type === c.type + 1, `answer type 0x${a.type.toString(16)}`);
      if (a.type === 0) {
        errors++;
        assert.notEqual(a.code, 24, 'no internal error');
      }
    } catch (e) {
      console.error(`FUZZ FAILURE at iteration ${i}: rerun with FUZZ_SEED=${SEED}`);
      throw e;
    }
  }
  assert.deepEqual(internal, [], 'every failure was a typed error');
  assert.ok(errors > ITERATIONS / 10, `mutations were refused (${errors} of ${ITERATIONS})`);
});
