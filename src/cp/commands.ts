// CP commands in Raft entries: the binary layout of an Envelope (structures.ts). Codes are
// append-only; decoding is bounds-checked like every wire format (util/bytes.ts), so an entry that
// is malformed (a bug, or a disk that lies) fails loudly with the field named.
//
// Layout (big-endian; str = u32 length + UTF-8; bytes = u32 length + bytes; long = str decimal):
//   str invocation | f64 nowMs | u8 kind | body
//   1 long:        u8 op (1 set, 2 getAndSet, 3 addAndGet, 4 getAndAdd, 5 compareAndSet) | str name | long a | long b
//   2 ref:         u8 op (1 set, 2 getAndSet, 3 compareAndSet) | str name | ref value | ref expected | f64 ifIndex
//                  ref = u8 present | (present) bytes value | u8 hasType | (hasType) str contentType
//   3 latch:       u8 op (1 trySetCount, 2 countDown, 3 await) | str name | f64 count / round / timeoutMs
//   4 destroy:     u8 structure (1 long, 2 ref, 3 latch) | str name
//   5 expireWaits: u32 n | n × str invocation
//   6 session:     u8 op (1 create, 2 heartbeat, 3 close, 4 expire, 5 closeInactive, 6 generateThreadId) |
//                  create: str endpoint | u8 type (1 SERVER, 2 CLIENT) | str endpointName;
//                  heartbeat, close: f64 id; expire: u32 n | n × (f64 id | f64 version)
//   7 lock:        u8 op (1 lock, 2 unlock) | str name | f64 session | f64 thread | f64 timeoutMs / fence
//   8 semaphore:   u8 op (1 init, 2 acquire, 3 release, 4 drain, 5 change) | str name | f64 session |
//                  f64 permits / delta (init: permits; drain: 0) | f64 timeoutMs (acquire only)
//  10 lock with its configuration: a 7 | f64 lock-acquire-limit
//  11 semaphore with its configuration: an 8 | u8 jdk-compatible | f64 initial-permits
//                  10 and 11 carry the leader's configuration (BlockingConfig), so every replica
//                  applies the same; 7 and 8 are entries written before, applied with the member's.
//   9 meta:        u8 op (1 init, 2 createGroup, 3 destroyGroup, 4 addMember, 5 removeMember, 6 groupMembers) |
//                  member = str uuid | str address | str memberUuid; init: u32 n | n × member | u8 groupSize;
//                  createGroup, destroyGroup: str name; addMember: member; removeMember: str uuid; groupMembers: str name | f64 id | u32 n | n × str uuid
import { ByteReader, ByteWriter } from '../util/bytes.js';
import type { CpCommand, Envelope, LongOp, RefOp, RefValue, Structure } from './structures.js';
import type { CpMember, MetadataCommand } from './metadata.js';

export const NAME_BYTES_MAX = 1024;
const INVOCATION_BYTES_MAX = 128;
const CONTENT_TYPE_BYTES_MAX = 256;
const EXPIRE_MAX = 100_000;

const LONG_OPS: readonly LongOp[] = ['set', 'getAndSet', 'addAndGet', 'getAndAdd', 'compareAndSet'];
const REF_OPS: readonly RefOp[] = ['set', 'getAndSet', 'compareAndSet'];
const LATCH_OPS = ['trySetCount', 'countDown', 'await'] as const;
const STRUCTURES: readonly Structure[] = ['long', 'ref', 'latch', 'lock', 'semaphore'];
const SESSION_OPS = ['create', 'heartbeat', 'close', 'expire', 'closeInactive', 'generateThreadId'] as const;
const SEMAPHORE_OPS = ['init', 'acquire', 'release', 'drain', 'change'] as const;
const ENDPOINT_BYTES_MAX = 512;
const META_OPS = ['init', 'createGroup', 'destroyGroup', 'addMember', 'removeMember', 'groupMembers'] as const;
const UUID_BYTES_MAX = 128;
const ADDRESS_BYTES_MAX = 512;
const CP_MEMBERS_MAX = 10_000;

export function encodeEnvelope(e: Envelope, valueBytesMax: number): Buffer {
  const w = new ByteWriter(64);
  w.string(e.invocation, INVOCATION_BYTES_MAX).f64(e.nowMs);
  const c = e.command;
  switch (c.kind) {
    case 'long':
      w.u8(1).u8(LONG_OPS.indexOf(c.op) + 1).string(c.name, NAME_BYTES_MAX).string(c.a.toString(), 24).string(c.b.toString(), 24);
      break;
    case 'ref':
      w.u8(2).u8(REF_OPS.indexOf(c.op) + 1).string(c.name, NAME_BYTES_MAX);
      writeRef(w, c.value, valueBytesMax);
      writeRef(w, c.expected, valueBytesMax);
      w.f64(c.ifIndex);
      break;
    case 'latch':
      w.u8(3).u8(LATCH_OPS.indexOf(c.op) + 1).string(c.name, NAME_BYTES_MAX).f64(c.op === 'trySetCount' ? c.count : c.op === 'countDown' ? c.round : c.timeoutMs);
      break;
    case 'destroy':
      w.u8(4).u8(STRUCTURES.indexOf(c.structure) + 1).string(c.name, NAME_BYTES_MAX);
      break;
    case 'expireWaits':
      w.u8(5).u32(c.invocations.length);
      for (const inv of c.invocations) w.string(inv, INVOCATION_BYTES_MAX);
      break;
    case 'session':
      w.u8(6).u8(SESSION_OPS.indexOf(c.op) + 1);
      if (c.op === 'create') w.string(c.endpoint, ENDPOINT_BYTES_MAX).u8(c.endpointType === 'SERVER' ? 1 : 2).string(c.endpointName, ENDPOINT_BYTES_MAX);
      else if (c.op === 'heartbeat' || c.op === 'close') w.f64(c.id);
      else if (c.op === 'expire') {
        w.u32(c.sessions.length);
        for (const x of c.sessions) w.f64(x.id).f64(x.version);
      }
      break;
    case 'lock':
      w.u8(c.op === 'lock' && c.limit !== undefined ? 10 : 7).u8(c.op === 'lock' ? 1 : 2).string(c.name, NAME_BYTES_MAX).f64(c.session).f64(c.thread).f64(c.op === 'lock' ? c.timeoutMs : c.fence);
      if (c.op === 'lock' && c.limit !== undefined) w.f64(c.limit);
      break;
    case 'semaphore':
      w.u8(c.config === undefined ? 8 : 11).u8(SEMAPHORE_OPS.indexOf(c.op) + 1).string(c.name, NAME_BYTES_MAX).f64(c.op === 'init' ? 0 : c.session);
      w.f64(c.op === 'init' || c.op === 'acquire' || c.op === 'release' ? c.permits : c.op === 'change' ? c.delta : 0);
      if (c.op === 'acquire') w.f64(c.timeoutMs);
      if (c.config !== undefined) w.bool(c.config.jdkCompatible).f64(c.config.initialPermits);
      break;
    case 'meta':
      w.u8(9);
      writeMeta(w, c.command);
      break;
  }
  return w.finish();
}

function writeMeta(w: ByteWriter, c: MetadataCommand): void {
  w.u8(META_OPS.indexOf(c.kind) + 1);
  const member = (m: CpMember): void => void w.string(m.uuid, UUID_BYTES_MAX).string(m.address, ADDRESS_BYTES_MAX).string(m.memberUuid, UUID_BYTES_MAX);
  switch (c.kind) {
    case 'init':
      w.u32(c.members.length);
      c.members.forEach(member);
      w.u8(c.groupSize);
      break;
    case 'createGroup':
    case 'destroyGroup':
      w.string(c.name, NAME_BYTES_MAX);
      break;
    case 'addMember':
      member(c.member);
      break;
    case 'removeMember':
      w.string(c.uuid, UUID_BYTES_MAX);
      break;
    case 'groupMembers':
      w.string(c.name, NAME_BYTES_MAX).f64(c.id).u32(c.members.length);
      for (const u of c.members) w.string(u, UUID_BYTES_MAX);
      break;
  }
}

function readMeta(r: ByteReader): MetadataCommand {
  const op = META_OPS[r.u8() - 1] ?? r.fail('unknown METADATA operation');
  const member = (): CpMember => ({ uuid: r.string(UUID_BYTES_MAX, 'CP member uuid'), address: r.string(ADDRESS_BYTES_MAX, 'CP member address'), memberUuid: r.string(UUID_BYTES_MAX, 'member uuid') });
  switch (op) {
    case 'init': {
      const n = r.count(CP_MEMBERS_MAX, 'CP members');
      const members: CpMember[] = [];
      for (let i = 0; i < n; i++) members.push(member());
      return { kind: 'init', members, groupSize: r.u8() };
    }
    case 'createGroup':
    case 'destroyGroup':
      return { kind: op, name: r.string(NAME_BYTES_MAX, 'group name') };
    case 'addMember':
      return { kind: 'addMember', member: member() };
    case 'removeMember':
      return { kind: 'removeMember', uuid: r.string(UUID_BYTES_MAX, 'CP member uuid') };
    case 'groupMembers': {
      const name = r.string(NAME_BYTES_MAX, 'group name');
      const id = readInt(r, 'group id');
      const n = r.count(16, 'group members');
      const members: string[] = [];
      for (let i = 0; i < n; i++) members.push(r.string(UUID_BYTES_MAX, 'CP member uuid'));
      return { kind: 'groupMembers', name, id, members };
    }
  }
}

function writeRef(w: ByteWriter, v: RefValue | null, valueBytesMax: number): void {
  w.bool(v !== null);
  if (v === null) return;
  w.bytes(v.value, valueBytesMax).bool(v.contentType !== null);
  if (v.contentType !== null) w.string(v.contentType, CONTENT_TYPE_BYTES_MAX);
}

export function decodeEnvelope(buf: Uint8Array, valueBytesMax: number): Envelope {
  const r = new ByteReader(buf);
  const invocation = r.string(INVOCATION_BYTES_MAX, 'invocation');
  const nowMs = r.f64();
  const kind = r.u8();
  let command: CpCommand;
  switch (kind) {
    case 1: {
      const op = LONG_OPS[r.u8() - 1] ?? r.fail('unknown AtomicLong operation');
      command = { kind: 'long', op, name: r.string(NAME_BYTES_MAX, 'name'), a: readLong(r), b: readLong(r) };
      break;
    }
    case 2: {
      const op = REF_OPS[r.u8() - 1] ?? r.fail('unknown AtomicReference operation');
      const name = r.string(NAME_BYTES_MAX, 'name');
      const value = readRef(r, valueBytesMax);
      const expected = readRef(r, valueBytesMax);
      const ifIndex = r.f64();
      if (!Number.isSafeInteger(ifIndex) || ifIndex < -1) r.fail(`If-Match index ${ifIndex}`);
      command = { kind: 'ref', op, name, value, expected, ifIndex };
      break;
    }
    case 3: {
      const op = LATCH_OPS[r.u8() - 1] ?? r.fail('unknown CountDownLatch operation');
      const name = r.string(NAME_BYTES_MAX, 'name');
      const n = r.f64();
      if (!Number.isSafeInteger(n)) r.fail(`latch ${op} argument ${n}`);
      command = op === 'trySetCount' ? { kind: 'latch', op, name, count: n } : op === 'countDown' ? { kind: 'latch', op, name, round: n } : { kind: 'latch', op, name, timeoutMs: n };
      break;
    }
    case 4: {
      const structure = STRUCTURES[r.u8() - 1] ?? r.fail('unknown structure');
      command = { kind: 'destroy', structure, name: r.string(NAME_BYTES_MAX, 'name') };
      break;
    }
    case 5: {
      const n = r.count(EXPIRE_MAX, 'expired waits');
      const invocations: string[] = [];
      for (let i = 0; i < n; i++) invocations.push(r.string(INVOCATION_BYTES_MAX, 'invocation'));
      command = { kind: 'expireWaits', invocations };
      break;
    }
    case 6:
      command = readSession(r);
      break;
    case 7:
    case 10: {
      const op = r.u8();
      if (op !== 1 && op !== 2) r.fail(`unknown FencedLock operation ${op}`);
      const name = r.string(NAME_BYTES_MAX, 'name');
      const session = readInt(r, 'session');
      const thread = readInt(r, 'thread');
      const n = readInt(r, op === 1 ? 'timeout' : 'fence');
      if (kind === 10 && op !== 1) r.fail('only a lock carries lock-acquire-limit');
      if (op === 1) {
        const limit = kind === 10 ? readCount(r, 'lock-acquire-limit') : undefined;
        command = limit === undefined ? { kind: 'lock', op: 'lock', name, session, thread, timeoutMs: n } : { kind: 'lock', op: 'lock', name, session, thread, timeoutMs: n, limit };
      } else command = { kind: 'lock', op: 'unlock', name, session, thread, fence: n };
      break;
    }
    case 8:
    case 11: {
      const op = SEMAPHORE_OPS[r.u8() - 1] ?? r.fail('unknown Semaphore operation');
      const name = r.string(NAME_BYTES_MAX, 'name');
      const session = readInt(r, 'session');
      const n = readInt(r, 'permits');
      const timeoutMs = op === 'acquire' ? readInt(r, 'timeout') : 0;
      const config = kind === 11 ? { jdkCompatible: r.bool(), initialPermits: readCount(r, 'initial-permits') } : undefined;
      const withConfig = config === undefined ? {} : { config };
      if (op === 'init') command = { kind: 'semaphore', op, name, permits: n, ...withConfig };
      else if (op === 'acquire') command = { kind: 'semaphore', op, name, session, permits: n, timeoutMs, ...withConfig };
      else if (op === 'release') command = { kind: 'semaphore', op, name, session, permits: n, ...withConfig };
      else if (op === 'drain') command = { kind: 'semaphore', op, name, session, ...withConfig };
      else command = { kind: 'semaphore', op, name, session, delta: n, ...withConfig };
      if (op === 'init' && !Object.is(session, 0)) r.fail('init carries no session');
      if (op === 'drain' && !Object.is(n, 0)) r.fail('drain carries no permits');
      break;
    }
    case 9:
      command = { kind: 'meta', command: readMeta(r) };
      break;
    default:
      return r.fail(`unknown CP command kind ${kind}`);
  }
  r.expectEnd('CP command');
  return { invocation, nowMs, command };
}

function readLong(r: ByteReader): bigint {
  const s = r.string(24, 'long');
  if (!/^(0|-?[1-9]\d{0,18})$/.test(s)) r.fail(`not a 64-bit integer: ${JSON.stringify(s)}`);
  const v = BigInt(s);
  if (v !== BigInt.asIntN(64, v)) r.fail(`outside 64 bits: ${s}`);
  return v;
}

function readRef(r: ByteReader, valueBytesMax: number): RefValue | null {
  if (!r.bool()) return null;
  const value = r.bytes(valueBytesMax, 'reference value');
  const contentType = r.bool() ? r.string(CONTENT_TYPE_BYTES_MAX, 'content type') : null;
  return { value, contentType };
}

function readInt(r: ByteReader, what: string): number {
  const v = r.f64();
  if (!Number.isSafeInteger(v)) r.fail(`${what} is not an integer: ${v}`);
  return v;
}

function readCount(r: ByteReader, what: string): number {
  const v = readInt(r, what);
  if (v < 0) r.fail(`${what} is negative: ${v}`);
  return v;
}

function readSession(r: ByteReader): CpCommand {
  const op = SESSION_OPS[r.u8() - 1] ?? r.fail('unknown session operation');
  switch (op) {
    case 'create': {
      const endpoint = r.string(ENDPOINT_BYTES_MAX, 'endpoint');
      const t = r.u8();
      if (t !== 1 && t !== 2) r.fail(`unknown endpoint type ${t}`);
      return { kind: 'session', op, endpoint, endpointType: t === 1 ? 'SERVER' : 'CLIENT', endpointName: r.string(ENDPOINT_BYTES_MAX, 'endpoint name') };
    }
    case 'heartbeat':
    case 'close':
      return { kind: 'session', op, id: readInt(r, 'session') };
    case 'expire': {
      const n = r.count(EXPIRE_MAX, 'sessions');
      const sessions: { id: number; version: number }[] = [];
      for (let i = 0; i < n; i++) sessions.push({ id: readInt(r, 'session'), version: readInt(r, 'version') });
      return { kind: 'session', op, sessions };
    }
    default:
      return { kind: 'session', op };
  }
}
