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
    default:
      throw new GridError('ERR_CLIENT_PROTOCOL', `message type 0x${type.toString(16)} is not a served CP call`);
  }
}

interface Fixed {
  readonly a: bigint;
  readonly b: bigint;
  readonly flag: boolean;
  readonly invocation: string;
}

function readFixed(r: MessageReader, type: number): Fixed {
  const none: Fixed = { a: 0n, b: 0n, flag: false, invocation: '' };
  switch (type) {
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
  const u = uuidToString(r.uuid(0, 'invocationUid'));
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
