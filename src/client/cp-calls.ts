// The CP calls of the client protocol (spec/cp.md "Data structures", reference/cp-subsystem.md §1):
// CPGroup createCPGroup and destroyCPObject, AtomicLong, AtomicReference and CountDownLatch. The
// clients send them to any member with partition id -1; the member routes each to its group's
// leader (src/cp/cp-api.ts). I/O-free: a call is decoded, run on the CP API, its answer encoded.
//
// - A group travels as RaftGroupId: begin frame, a 16-byte frame (seed, id: int64 LE), the name
//   as a String frame, end frame (newer trailing frames skipped).
// - AtomicLong values are exact 64-bit; AtomicReference values are kept as stored bytes with a
//   content type, the mapping the map values use (client/data.ts), and compared that way.
// - apply and alter (Java functions) answer 61 naming the call.
// - countDown and await carry the client's invocation UUID: a retry after a lost answer counts
//   once and re-attaches to its wait. Other writes get one from the member, which retries them
//   itself with it, so an AtomicLong add applies at most once.
import type { Awaitable } from '../member/member-api.js';
import { GridError } from '../util/errors.js';
import type { CpGroupInfo } from '../cp/metadata.js';
import type { CpResult, RefValue, Structure } from '../cp/structures.js';
import { dataOfStored, dataType, storedFormOfData } from './data.js';
import { MessageWriter, SIMPLE_FIXED_AT, booleanAnswer, emptyAnswer, intAnswer, simpleResponse, uuidToString, type MessageReader } from './message.js';
import type { CallContext } from './calls.js';
import { CpApi } from '../cp/cp-api.js';

const CpApiName = (raw: string): { object: string; group: string } => CpApi.name(raw);

export const CP_CALL = {
  CREATE_CP_GROUP: 0x1e0100,
  DESTROY_CP_OBJECT: 0x1e0200,
  LONG_APPLY: 0x090100,
  LONG_ALTER: 0x090200,
  LONG_ADD_AND_GET: 0x090300,
  LONG_COMPARE_AND_SET: 0x090400,
  LONG_GET: 0x090500,
  LONG_GET_AND_ADD: 0x090600,
  LONG_GET_AND_SET: 0x090700,
  REF_APPLY: 0x0a0100,
  REF_COMPARE_AND_SET: 0x0a0200,
  REF_CONTAINS: 0x0a0300,
  REF_GET: 0x0a0400,
  REF_SET: 0x0a0500,
  LATCH_TRY_SET_COUNT: 0x0b0100,
  LATCH_AWAIT: 0x0b0200,
  LATCH_COUNT_DOWN: 0x0b0300,
  LATCH_GET_COUNT: 0x0b0400,
  LATCH_GET_ROUND: 0x0b0500,
  SESSION_CREATE: 0x1f0100,
  SESSION_CLOSE: 0x1f0200,
  SESSION_HEARTBEAT: 0x1f0300,
  SESSION_GENERATE_THREAD_ID: 0x1f0400,
  LOCK_LOCK: 0x070100,
  LOCK_TRY_LOCK: 0x070200,
  LOCK_UNLOCK: 0x070300,
  LOCK_OWNERSHIP: 0x070400,
  SEMAPHORE_INIT: 0x0c0100,
  SEMAPHORE_ACQUIRE: 0x0c0200,
  SEMAPHORE_RELEASE: 0x0c0300,
  SEMAPHORE_DRAIN: 0x0c0400,
  SEMAPHORE_CHANGE: 0x0c0500,
  SEMAPHORE_AVAILABLE: 0x0c0600,
  SEMAPHORE_TYPE: 0x0c0700,
} as const;

export const CP_CALLS: ReadonlySet<number> = new Set(Object.values(CP_CALL));

const SERVICES: Readonly<Record<string, Structure>> = {
  'hz:raft:atomicLongService': 'long',
  'hz:raft:atomicRefService': 'ref',
  'hz:raft:countDownLatchService': 'latch',
  'hz:raft:lockService': 'lock',
  'hz:raft:semaphoreService': 'semaphore',
};

const GROUP_ID_FIXED_BYTES = 16;
const NAME_CHARS_MAX = 1024;

export function answerCp(r: MessageReader, c: CallContext): Awaitable<Buffer> {
  return run(r, c);
}

async function run(r: MessageReader, c: CallContext): Promise<Buffer> {
  if (c.api.cpMemberCount() === 0) throw new GridError('ERR_CP_DISABLED', 'CP subsystem is not enabled: set <cp-subsystem><cp-member-count>');
  const cp = c.api.cp();
  const type = r.type;
  const id = r.correlationId;
  switch (type) {
    case CP_CALL.CREATE_CP_GROUP: {
      const g = await cp.groupOf(r.string('proxyName'));
      return MessageWriter.response(type + 1, id).begin().fixedFrame(groupIdFixed(g)).string(g.name).end().build();
    }
    case CP_CALL.SEMAPHORE_TYPE: {
      // The proxy name as the client has it; the configuration is found by the object's name.
      const { object } = CpApiName(r.string('proxyName'));
      return booleanAnswer(type, id, cp.semaphoreConfig(object).jdkCompatible);
    }
    case CP_CALL.LONG_APPLY:
    case CP_CALL.LONG_ALTER:
    case CP_CALL.REF_APPLY:
      throw new GridError('ERR_CP_UNSUPPORTED', `${type === CP_CALL.LONG_APPLY ? 'AtomicLong.apply' : type === CP_CALL.LONG_ALTER ? 'AtomicLong.alter' : 'AtomicReference.apply/alter'} runs a Java function, which Grid cannot run; read, compute in the client, and compareAndSet`);
    default:
      break;
  }
  // Fixed parameters first (they are in the initial frame), then the group and the name.
  const fixed = readFixed(r, type);
  const group = await groupOfFrames(r, c);
  const session = await runSession(r, c, type, group, fixed);
  if (session !== null) return session;
  const name = objectName(r.string('name'));
  switch (type) {
    case CP_CALL.DESTROY_CP_OBJECT: {
      // serviceName came before objectName: `name` above is the service, the object follows.
      const structure = SERVICES[name];
      if (structure === undefined) throw new GridError('ERR_CP_BAD_REQUEST', `unknown CP service ${name}`);
      await cp.write(group, { kind: 'destroy', structure, name: objectName(r.string('objectName')) }, '');
      return emptyAnswer(type, id);
    }
    case CP_CALL.LONG_ADD_AND_GET:
    case CP_CALL.LONG_GET_AND_ADD:
    case CP_CALL.LONG_GET_AND_SET: {
      const op = type === CP_CALL.LONG_ADD_AND_GET ? 'addAndGet' : type === CP_CALL.LONG_GET_AND_ADD ? 'getAndAdd' : 'getAndSet';
      return longAnswer(type, id, await cp.write(group, { kind: 'long', op, name, a: fixed.a, b: 0n }, ''));
    }
    case CP_CALL.LONG_COMPARE_AND_SET: {
      const res = await cp.write(group, { kind: 'long', op: 'compareAndSet', name, a: fixed.a, b: fixed.b }, '');
      return booleanAnswer(type, id, res.type === 'cas' && res.result);
    }
    case CP_CALL.LONG_GET: {
      const a = await cp.query(group, { q: 'long', name });
      if (a.type !== 'long') throw unexpected(a.type);
      return longValueAnswer(type, id, a.value);
    }
    case CP_CALL.REF_GET: {
      const a = await cp.query(group, { q: 'ref', name });
      if (a.type !== 'ref') throw unexpected(a.type);
      return refAnswer(type, id, a.value);
    }
    case CP_CALL.REF_CONTAINS: {
      const value = refOf(r.nullableBytes('value'));
      const a = await cp.query(group, { q: 'refContains', name, value });
      if (a.type !== 'bool') throw unexpected(a.type);
      return booleanAnswer(type, id, a.result);
    }
    case CP_CALL.REF_COMPARE_AND_SET: {
      const expected = refOf(r.nullableBytes('oldValue'));
      const value = refOf(r.nullableBytes('newValue'));
      const res = await cp.write(group, { kind: 'ref', op: 'compareAndSet', name, value, expected, ifIndex: -1 }, '');
      return booleanAnswer(type, id, res.type === 'ref' && res.ok);
    }
    case CP_CALL.REF_SET: {
      const value = refOf(r.nullableBytes('newValue'));
      const res = await cp.write(group, { kind: 'ref', op: fixed.flag ? 'getAndSet' : 'set', name, value, expected: null, ifIndex: -1 }, '');
      if (res.type !== 'ref') throw unexpected(res.type);
      return refAnswer(type, id, fixed.flag ? res.old : null);
    }
    case CP_CALL.LATCH_TRY_SET_COUNT: {
      const res = await cp.write(group, { kind: 'latch', op: 'trySetCount', name, count: Number(fixed.a) }, '');
      return booleanAnswer(type, id, res.type === 'bool' && res.result);
    }
    case CP_CALL.LATCH_AWAIT: {
      const timeoutMs = Math.max(0, Math.min(Number(fixed.b), 0x7fff_ffff));
      const res = await cp.write(group, { kind: 'latch', op: 'await', name, timeoutMs }, fixed.invocation, timeoutMs);
      return booleanAnswer(type, id, res.type === 'bool' && res.result);
    }
    case CP_CALL.LATCH_COUNT_DOWN: {
      await cp.write(group, { kind: 'latch', op: 'countDown', name, round: Number(fixed.a) }, fixed.invocation);
      return emptyAnswer(type, id);
    }
    case CP_CALL.LATCH_GET_COUNT:
    case CP_CALL.LATCH_GET_ROUND: {
      const a = await cp.query(group, { q: 'latch', name });
      if (a.type !== 'latch') throw unexpected(a.type);
      return intAnswer(type, id, type === CP_CALL.LATCH_GET_COUNT ? a.count : a.round);
    }
    case CP_CALL.LOCK_LOCK:
    case CP_CALL.LOCK_TRY_LOCK: {
      // lock waits for ever; tryLock waits its timeout (0: not at all). Fence 0: not acquired
      // (the timeout passed, or the owner holds it lock-acquire-limit times), as the reference.
      const timeoutMs = type === CP_CALL.LOCK_LOCK ? -1 : clampMs(fixed.b);
      const res = await cp.write(group, { kind: 'lock', op: 'lock', name, session: sessionOf(fixed.a), thread: threadOf(fixed.thread), timeoutMs }, fixed.invocation, timeoutMs < 0 ? Infinity : timeoutMs);
      if (res.type !== 'fence') throw unexpected(res.type);
      return longValueAnswer(type, id, BigInt(res.fence));
    }
    case CP_CALL.LOCK_UNLOCK: {
      const res = await cp.write(group, { kind: 'lock', op: 'unlock', name, session: sessionOf(fixed.a), thread: threadOf(fixed.thread), fence: 0 }, fixed.invocation);
      if (res.type !== 'unlocked') throw unexpected(res.type);
      return booleanAnswer(type, id, res.stillLocked);
    }
    case CP_CALL.LOCK_OWNERSHIP: {
      const a = await cp.query(group, { q: 'lock', name });
      if (a.type !== 'lock' || a.ownership.type !== 'ownership') throw unexpected(a.type);
      const o = a.ownership;
      const out = simpleResponse(type + 1, id, 28);
      out.writeBigInt64LE(BigInt(o.fence), SIMPLE_FIXED_AT);
      out.writeInt32LE(o.lockCount, SIMPLE_FIXED_AT + 8);
      out.writeBigInt64LE(BigInt(o.lockCount === 0 ? -1 : o.sessionId), SIMPLE_FIXED_AT + 12);
      out.writeBigInt64LE(BigInt(o.lockCount === 0 ? -1 : o.threadId), SIMPLE_FIXED_AT + 20);
      return out;
    }
    case CP_CALL.SEMAPHORE_INIT: {
      const res = await cp.write(group, { kind: 'semaphore', op: 'init', name, permits: fixed.permits }, '');
      return booleanAnswer(type, id, res.type === 'bool' && res.result);
    }
    case CP_CALL.SEMAPHORE_ACQUIRE: {
      const timeoutMs = fixed.b < 0n ? -1 : clampMs(fixed.b);
      const res = await cp.write(group, { kind: 'semaphore', op: 'acquire', name, session: sessionOf(fixed.a), permits: fixed.permits, timeoutMs }, fixed.invocation, timeoutMs < 0 ? Infinity : timeoutMs);
      return booleanAnswer(type, id, res.type === 'acquired' && res.acquired);
    }
    case CP_CALL.SEMAPHORE_RELEASE: {
      await cp.write(group, { kind: 'semaphore', op: 'release', name, session: sessionOf(fixed.a), permits: fixed.permits }, fixed.invocation);
      return booleanAnswer(type, id, true);
    }
    case CP_CALL.SEMAPHORE_DRAIN: {
      const res = await cp.write(group, { kind: 'semaphore', op: 'drain', name, session: sessionOf(fixed.a) }, fixed.invocation);
      if (res.type !== 'permits') throw unexpected(res.type);
      return intAnswer(type, id, res.permits);
    }
    case CP_CALL.SEMAPHORE_CHANGE: {
      const res = await cp.write(group, { kind: 'semaphore', op: 'change', name, session: sessionOf(fixed.a), delta: fixed.permits }, fixed.invocation);
      return booleanAnswer(type, id, res.type === 'bool' && res.result);
    }
    case CP_CALL.SEMAPHORE_AVAILABLE: {
      const a = await cp.query(group, { q: 'semaphore', name });
      if (a.type !== 'semaphore') throw unexpected(a.type);
      return intAnswer(type, id, a.available);
    }
    default:
      throw new GridError('ERR_CLIENT_PROTOCOL', `message type 0x${type.toString(16)} is not a served CP call`);
  }
}

interface Fixed {
  readonly a: bigint;
  readonly b: bigint;
  readonly flag: boolean;
  readonly invocation: string;
  /** A lock or semaphore call's thread id (the owner is the session and this). */
  readonly thread: bigint;
  /** A semaphore call's permits (or delta). */
  readonly permits: number;
}

/**
 * The CPSession calls: create, close, heartbeat, generateThreadId (their frames end after the
 * group). Null for any other call.
 */
async function runSession(r: MessageReader, c: CallContext, type: number, group: CpGroupInfo, fixed: Fixed): Promise<Buffer | null> {
  const cp = c.api.cp();
  const id = r.correlationId;
  switch (type) {
    case CP_CALL.SESSION_CREATE: {
      const endpointName = r.string('endpointName');
      const endpoint = c.remoteAddress ?? '';
      const res = await cp.write(group, { kind: 'session', op: 'create', endpoint, endpointType: 'CLIENT', endpointName: endpointName.slice(0, 256) }, '');
      if (res.type !== 'session') throw unexpected(res.type);
      const out = simpleResponse(type + 1, id, 24);
      out.writeBigInt64LE(BigInt(res.id), SIMPLE_FIXED_AT);
      out.writeBigInt64LE(BigInt(res.ttlMs), SIMPLE_FIXED_AT + 8);
      out.writeBigInt64LE(BigInt(res.heartbeatMs), SIMPLE_FIXED_AT + 16);
      return out;
    }
    case CP_CALL.SESSION_CLOSE: {
      try {
        await cp.write(group, { kind: 'session', op: 'close', id: sessionOf(fixed.a) }, '');
        return booleanAnswer(type, id, true);
      } catch (e) {
        // An unknown or expired session: nothing to close (the reference answers false).
        if (e instanceof GridError && e.code === 'ERR_CP_SESSION_EXPIRED') return booleanAnswer(type, id, false);
        throw e;
      }
    }
    case CP_CALL.SESSION_HEARTBEAT:
      await cp.write(group, { kind: 'session', op: 'heartbeat', id: sessionOf(fixed.a) }, '');
      return emptyAnswer(type, id);
    case CP_CALL.SESSION_GENERATE_THREAD_ID: {
      const res = await cp.write(group, { kind: 'session', op: 'generateThreadId' }, '');
      if (res.type !== 'threadId') throw unexpected(res.type);
      return longValueAnswer(type, id, BigInt(res.id));
    }
    default:
      return null;
  }
}

/** A session id from the wire: -1 (sessionless) or a positive id the state machine may know. */
function sessionOf(v: bigint): number {
  if (v < -1n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GridError('ERR_CP_SESSION_EXPIRED', `CP session ${v} is closed or expired`);
  return Number(v);
}

/** A thread id from the wire (the clients choose them: Node counts from 0, Python uses its thread's ident). */
function threadOf(v: bigint): number {
  if (v < -(2n ** 53n) || v > 2n ** 53n) throw new GridError('ERR_CP_BAD_REQUEST', `a thread id within ±2^53, not ${v}`);
  return Number(v);
}

function clampMs(v: bigint): number {
  return v <= 0n ? 0 : v > 0x7fff_ffffn ? 0x7fff_ffff : Number(v);
}

function readFixed(r: MessageReader, type: number): Fixed {
  const none: Fixed = { a: 0n, b: 0n, flag: false, invocation: '', thread: 0n, permits: 0 };
  // sessionId @0, threadId @8, invocationUid @16 (17 bytes): the lock and semaphore calls' head.
  const owner = (): Fixed => ({ ...none, a: r.bigLong(0, 'sessionId'), thread: r.bigLong(8, 'threadId'), invocation: invocationAt(r, 16) });
  switch (type) {
    case CP_CALL.SESSION_CLOSE:
    case CP_CALL.SESSION_HEARTBEAT:
      return { ...none, a: r.bigLong(0, 'sessionId') };
    case CP_CALL.LOCK_LOCK:
    case CP_CALL.LOCK_UNLOCK:
    case CP_CALL.SEMAPHORE_DRAIN:
      return owner();
    case CP_CALL.LOCK_TRY_LOCK:
      return { ...owner(), b: r.bigLong(33, 'timeoutMs') };
    case CP_CALL.SEMAPHORE_INIT: {
      const permits = r.int(0, 'permits');
      if (permits < 0) throw new GridError('ERR_CP_BAD_REQUEST', `permits must not be negative, not ${permits}`);
      return { ...none, permits };
    }
    case CP_CALL.SEMAPHORE_ACQUIRE:
    case CP_CALL.SEMAPHORE_RELEASE: {
      const permits = r.int(33, 'permits');
      if (permits <= 0) throw new GridError('ERR_CP_BAD_REQUEST', `permits must be positive, not ${permits}`);
      return { ...owner(), permits, b: type === CP_CALL.SEMAPHORE_ACQUIRE ? r.bigLong(37, 'timeoutMs') : 0n };
    }
    case CP_CALL.SEMAPHORE_CHANGE:
      return { ...owner(), permits: r.int(33, 'permits') };
    case CP_CALL.LONG_ADD_AND_GET:
    case CP_CALL.LONG_GET_AND_ADD:
    case CP_CALL.LONG_GET_AND_SET:
      return { ...none, a: r.bigLong(0, type === CP_CALL.LONG_GET_AND_SET ? 'newValue' : 'delta') };
    case CP_CALL.LONG_COMPARE_AND_SET:
      return { ...none, a: r.bigLong(0, 'expected'), b: r.bigLong(8, 'updated') };
    case CP_CALL.REF_SET:
      return { ...none, flag: r.boolean(0, 'returnOldValue') };
    case CP_CALL.LATCH_TRY_SET_COUNT: {
      const count = r.int(0, 'count');
      if (count <= 0) throw new GridError('ERR_CP_BAD_REQUEST', `count must be positive, not ${count}`);
      return { ...none, a: BigInt(count) };
    }
    case CP_CALL.LATCH_AWAIT:
      return { ...none, invocation: invocationOf(r), b: r.bigLong(17, 'timeoutMs') };
    case CP_CALL.LATCH_COUNT_DOWN:
      return { ...none, invocation: invocationOf(r), a: BigInt(r.int(17, 'expectedRound')) };
    default:
      return none;
  }
}

function invocationOf(r: MessageReader): string {
  return invocationAt(r, 0);
}

function invocationAt(r: MessageReader, offset: number): string {
  const u = uuidToString(r.uuid(offset, 'invocationUid'));
  if (u === null) throw new GridError('ERR_CP_BAD_REQUEST', 'a null invocation UUID');
  return u;
}

/** The RaftGroupId frames: the group must still be the one the client named. */
async function groupOfFrames(r: MessageReader, c: CallContext): Promise<CpGroupInfo> {
  const s = r.struct('groupId', GROUP_ID_FIXED_BYTES, 1);
  const seed = s.fixed.readBigInt64LE(0);
  const gid = s.fixed.readBigInt64LE(8);
  const name = objectName(Buffer.from(s.frames[0] as Buffer).toString('utf8'));
  if (seed < 0n || gid < 0n || seed > BigInt(Number.MAX_SAFE_INTEGER) || gid > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new GridError('ERR_CP_GROUP_DESTROYED', `CP group ${name}: seed ${seed} and id ${gid} name no group`);
  }
  return c.api.cp().groupById(name, Number(seed), Number(gid));
}

function objectName(s: string): string {
  if (s.length === 0 || s.length > NAME_CHARS_MAX) throw new GridError('ERR_CP_BAD_REQUEST', `a CP name of 1 to ${NAME_CHARS_MAX} characters, not ${s.length}`);
  return s;
}

function groupIdFixed(g: CpGroupInfo): Buffer {
  const b = Buffer.alloc(GROUP_ID_FIXED_BYTES);
  b.writeBigInt64LE(BigInt(g.seed), 0);
  b.writeBigInt64LE(BigInt(g.id), 8);
  return b;
}

/** The serializer type id of a serialized null (what the clients send for `set(null)` and `isNull`). */
const TYPE_NULL = 0;

function refOf(data: Buffer | null): RefValue | null {
  if (data === null || dataType(data) === TYPE_NULL) return null;
  const s = storedFormOfData(data);
  return { value: s.value, contentType: s.contentType };
}

function unexpected(what: string): GridError {
  return new GridError('ERR_INTERNAL', `unexpected answer ${what} from the CP group`);
}

function longAnswer(type: number, id: bigint, res: CpResult): Buffer {
  if (res.type !== 'long') throw unexpected(res.type);
  return longValueAnswer(type, id, res.value);
}

function longValueAnswer(type: number, id: bigint, value: bigint): Buffer {
  const out = simpleResponse(type + 1, id, 8);
  out.writeBigInt64LE(BigInt.asIntN(64, value), SIMPLE_FIXED_AT);
  return out;
}



function refAnswer(type: number, id: bigint, value: RefValue | null): Buffer {
  const w = MessageWriter.response(type + 1, id);
  if (value === null) w.nullFrame();
  else w.bytes(dataOfStored(value.value, value.contentType));
  return w.build();
}
