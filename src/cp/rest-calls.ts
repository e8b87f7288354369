// Grid's REST interface to the CP data structures (spec/cp.md "REST: data structures"), as pure
// functions: a request becomes a plan (a write with its command, or a linearizable read), and the
// outcome becomes the answer (status, body, ETag). The HTTP handler routes the plan to the group's
// leader and writes the answer; nothing here does I/O.
//
// - Names are `name[@group]` (metadata.ts parseCpName); numbers are decimal text, 64-bit for
//   AtomicLong; a malformed one is 400 with a message naming what was expected.
// - Every write's answer and every GET of an object carries `ETag: "<group-id>.<seed>.<index>"`,
//   the Raft index of the write that produced the object's state. `If-Match` on an AtomicReference
//   write compares that index (compare-and-set by version, no ABA): another one is 412.
// - 64-bit values are written into JSON as number text (JSON.stringify cannot hold them).
import { parseCpName } from './metadata.js';
import type { CpCommand, CpResult, RefValue } from './structures.js';
import type { CpQuery, QueryAnswer } from './call-wire.js';

export type CpStructureKind = 'atomiclongs' | 'atomicrefs' | 'countdownlatches' | 'sessions' | 'locks' | 'semaphores';

/** REST's lock holder is a session plus this thread id (spec/cp.md). */
export const REST_THREAD = 0;

export interface CpRestRequest {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly structure: CpStructureKind;
  /** The object's name as given (URL-decoded), `name` or `name@group`. */
  readonly name: string;
  /** The operation segment after the name, or null. */
  readonly op: string | null;
  /** A further path parameter (await's timeout in seconds). */
  readonly arg: string | null;
  readonly body: Uint8Array;
  readonly contentType: string | null;
  readonly ifMatch: string | null;
  /** Who calls (its address): a session's endpoint. */
  readonly endpoint?: string;
  /** Whether the semaphore of this name is jdk-compatible (sessionless), from the configuration. */
  readonly jdkCompatible?: (name: string) => boolean;
}

export interface CpRestAnswer {
  readonly status: number;
  readonly body: string | Uint8Array | null;
  readonly contentType: string | null;
  /** The Raft index for the ETag (the handler adds the group id and seed). */
  readonly etagIndex: number | null;
}

export type CpRestPlan =
  | {
      readonly kind: 'write';
      readonly group: string;
      readonly command: CpCommand;
      readonly ifMatch: string | null;
      readonly render: (r: CpResult, index: number) => CpRestAnswer;
      /** How long the call may wait at the leader (a lock, an acquire, an await): -1 for ever. */
      readonly waitMs?: number;
    }
  | { readonly kind: 'read'; readonly group: string; readonly query: CpQuery; readonly render: (a: QueryAnswer) => CpRestAnswer }
  | { readonly kind: 'bad'; readonly status: 400 | 404 | 405; readonly message: string };

const JSON_TYPE = 'application/json';

/** The ETag of an answer: `"<group-id>.<seed>.<index>"`. */
export function etag(groupId: number, seed: number, index: number): string {
  return `"${groupId}.${seed}.${index}"`;
}

/**
 * The index an `If-Match` names for this group, or null when it names another group or seed (which
 * then matches nothing: 412). `*` matches any version (-1).
 */
export function ifMatchIndex(header: string, groupId: number, seed: number): number | null {
  const h = header.trim();
  if (h === '*') return -1;
  const m = /^(?:W\/)?"(\d+)\.(\d+)\.(\d+)"$/.exec(h);
  if (m === null || Number(m[1]) !== groupId || Number(m[2]) !== seed) return null;
  const i = Number(m[3]);
  return Number.isSafeInteger(i) ? i : null;
}

export function planCpRest(r: CpRestRequest): CpRestPlan {
  if (r.structure === 'sessions') return planSession(r);
  const parsed = parseCpName(r.name);
  if ('error' in parsed) return bad(400, parsed.error);
  const { object, group } = parsed;
  switch (r.structure) {
    case 'atomiclongs':
      return planLong(r, group, object);
    case 'atomicrefs':
      return planRef(r, group, object);
    case 'countdownlatches':
      return planLatch(r, group, object);
    case 'locks':
      return planLock(r, group, object);
    case 'semaphores':
      return planSemaphore(r, group, object);
  }
}

/** A group's name in a sessions path: a plain group name (no `@`), `default` included. */
function planSession(r: CpRestRequest): CpRestPlan {
  const parsed = parseCpName(`session@${r.name}`);
  if ('error' in parsed) return bad(400, parsed.error);
  const group = parsed.group;
  if (r.op === null) {
    if (r.method !== 'POST') return bad(405, `${r.method} is not a call of CP sessions: POST creates one`);
    const endpoint = r.endpoint ?? '';
    return {
      kind: 'write',
      group,
      command: { kind: 'session', op: 'create', endpoint, endpointType: 'CLIENT', endpointName: `rest:${endpoint}` },
      ifMatch: null,
      render: (res, index) => (res.type === 'session' ? answer(201, `{"sessionId":${res.id},"ttlMillis":${res.ttlMs},"heartbeatMillis":${res.heartbeatMs}}`, index) : unexpected(res)),
    };
  }
  const id = sessionId(r.op);
  if (typeof id === 'string' || id < 1) return bad(404, `no CP session ${JSON.stringify(r.op.slice(0, 40))} in group ${group}`);
  const done = (res: CpResult, index: number): CpRestAnswer => (res.type === 'none' ? answer(200, '{"status":"success"}', index) : res.type === 'error' && res.code === 'session-expired' ? notFound(`CP session ${id} of group ${group} is closed or expired`) : unexpected(res));
  if (r.method === 'DELETE' && r.arg === null) return { kind: 'write', group, command: { kind: 'session', op: 'close', id }, ifMatch: null, render: done };
  if (r.method === 'POST' && r.arg === 'heartbeat') return { kind: 'write', group, command: { kind: 'session', op: 'heartbeat', id }, ifMatch: null, render: done };
  if (r.arg !== null && r.arg !== 'heartbeat') return bad(404, `a CP session has no operation ${r.arg}`);
  return bad(405, `${r.method} is not a call of a CP session: POST …/heartbeat or DELETE`);
}

function planLock(r: CpRestRequest, group: string, name: string): CpRestPlan {
  if (r.method === 'GET' && r.op === null) {
    return {
      kind: 'read',
      group,
      query: { q: 'lock', name },
      render: (a) => {
        if (a.type !== 'lock' || a.ownership.type !== 'ownership') return unexpectedRead(a);
        const o = a.ownership;
        return answer(200, `{"locked":${o.lockCount > 0},"fence":${o.fence},"lockCount":${o.lockCount},"sessionId":${o.sessionId}}`, a.index);
      },
    };
  }
  if (r.method !== 'POST') return bad(405, `${r.method} is not a call of a FencedLock`);
  const fields = bodyFields(r.body);
  const session = sessionField(fields[0]);
  if (typeof session === 'string') return bad(400, session);
  if (r.op === 'lock') {
    if (fields.length > 2) return bad(400, 'lock takes the body sessionId[&timeoutSeconds]');
    const timeoutMs = fields.length === 2 ? secondsField(fields[1] as string) : -1;
    if (typeof timeoutMs === 'string') return bad(400, timeoutMs);
    return {
      kind: 'write',
      group,
      command: { kind: 'lock', op: 'lock', name, session, thread: REST_THREAD, timeoutMs },
      ifMatch: null,
      waitMs: timeoutMs,
      render: (res, index) => {
        if (res.type === 'fence') {
          if (res.fence > 0) return answer(200, `{"fence":${res.fence}}`, index);
          if (res.limitReached === true) return conflict(`FencedLock ${name}: this session holds it lock-acquire-limit times already`);
          return noContent();
        }
        return blockingError(res, group, session);
      },
    };
  }
  if (r.op === 'unlock') {
    if (fields.length !== 2) return bad(400, 'unlock takes the body sessionId&fence');
    const fence = fenceField(fields[1] as string);
    if (typeof fence === 'string') return bad(400, fence);
    return {
      kind: 'write',
      group,
      command: { kind: 'lock', op: 'unlock', name, session, thread: REST_THREAD, fence },
      ifMatch: null,
      render: (res, index) => (res.type === 'unlocked' ? answer(200, `{"locked":${res.stillLocked}}`, index) : blockingError(res, group, session)),
    };
  }
  return bad(404, `FencedLock has no operation ${r.op ?? ''}`);
}

function planSemaphore(r: CpRestRequest, group: string, name: string): CpRestPlan {
  const jdk = r.jdkCompatible?.(name) ?? false;
  if (r.method === 'GET' && r.op === null) {
    return { kind: 'read', group, query: { q: 'semaphore', name }, render: (a) => (a.type === 'semaphore' ? answer(200, `{"available":${a.available},"jdkCompatible":${jdk}}`, a.index) : unexpectedRead(a)) };
  }
  if (r.method !== 'POST') return bad(405, `${r.method} is not a call of a Semaphore`);
  const fields = bodyFields(r.body);
  if (r.op === 'init') {
    const permits = countField(fields.length === 1 ? (fields[0] as string) : '', 'permits', 0);
    if (typeof permits === 'string') return bad(400, `init takes the body permits: ${permits}`);
    return { kind: 'write', group, command: { kind: 'semaphore', op: 'init', name, permits }, ifMatch: null, render: (res, index) => (res.type === 'bool' ? answer(200, `{"result":${res.result}}`, index) : blockingError(res, group, -1)) };
  }
  const session = fields.length > 0 ? semaphoreSession(fields[0] as string, jdk, name) : 'the body starts with the sessionId';
  if (typeof session === 'string') return bad(400, session);
  switch (r.op) {
    case 'acquire': {
      if (fields.length < 2 || fields.length > 3) return bad(400, 'acquire takes the body sessionId&permits[&timeoutSeconds]');
      const permits = countField(fields[1] as string, 'permits', 1);
      if (typeof permits === 'string') return bad(400, permits);
      const timeoutMs = fields.length === 3 ? secondsField(fields[2] as string) : -1;
      if (typeof timeoutMs === 'string') return bad(400, timeoutMs);
      return {
        kind: 'write',
        group,
        command: { kind: 'semaphore', op: 'acquire', name, session, permits, timeoutMs },
        ifMatch: null,
        waitMs: timeoutMs,
        render: (res, index) => (res.type === 'acquired' ? (res.acquired ? answer(200, '{"acquired":true}', index) : noContent()) : blockingError(res, group, session)),
      };
    }
    case 'release': {
      if (fields.length !== 2) return bad(400, 'release takes the body sessionId&permits');
      const permits = countField(fields[1] as string, 'permits', 1);
      if (typeof permits === 'string') return bad(400, permits);
      return { kind: 'write', group, command: { kind: 'semaphore', op: 'release', name, session, permits }, ifMatch: null, render: (res, index) => (res.type === 'permits' ? answer(200, `{"released":${res.permits}}`, index) : blockingError(res, group, session)) };
    }
    case 'drain':
      if (fields.length !== 1) return bad(400, 'drain takes the body sessionId');
      return { kind: 'write', group, command: { kind: 'semaphore', op: 'drain', name, session }, ifMatch: null, render: (res, index) => (res.type === 'permits' ? answer(200, `{"drained":${res.permits}}`, index) : blockingError(res, group, session)) };
    case 'change': {
      if (fields.length !== 2) return bad(400, 'change takes the body sessionId&delta');
      const t = (fields[1] as string).trim();
      const delta = /^[-+]?\d{1,10}$/.test(t) ? Number(t) : NaN;
      if (!Number.isSafeInteger(delta) || delta < -2_147_483_648 || delta > 2_147_483_647) return bad(400, `delta must be a 32-bit integer, not ${JSON.stringify(t.slice(0, 40))}`);
      return { kind: 'write', group, command: { kind: 'semaphore', op: 'change', name, session, delta }, ifMatch: null, render: (res, index) => (res.type === 'bool' ? answer(200, `{"result":${res.result}}`, index) : blockingError(res, group, session)) };
    }
    default:
      return bad(404, `Semaphore has no operation ${r.op ?? ''}`);
  }
}

function bodyFields(body: Uint8Array): string[] {
  const text = Buffer.from(body).toString('utf8').trim();
  return text === '' ? [] : text.split('&').map((f) => f.trim());
}

function sessionId(text: string): number | string {
  if (!/^\d{1,15}$/.test(text)) return `a session id is a positive decimal number, not ${JSON.stringify(text.slice(0, 40))}`;
  return Number(text);
}

function sessionField(text: string | undefined): number | string {
  if (text === undefined) return 'the body starts with the sessionId (POST /grid/rest/cp/sessions/{group} makes one)';
  const id = sessionId(text);
  if (typeof id === 'string' || id < 1) return typeof id === 'string' ? id : 'a session id is a positive decimal number';
  return id;
}

/** A session-aware semaphore needs a session; a jdk-compatible one takes -1 (sessionless). */
function semaphoreSession(text: string, jdk: boolean, name: string): number | string {
  if (jdk) return text === '-1' ? -1 : `Semaphore ${name} is jdk-compatible (sessionless): its sessionId is -1, not ${JSON.stringify(text.slice(0, 40))}`;
  return sessionField(text);
}

function secondsField(text: string): number | string {
  if (!/^\d{1,9}$/.test(text)) return `timeoutSeconds must be whole seconds (0 or more), not ${JSON.stringify(text.slice(0, 40))}`;
  return Number(text) * 1000;
}

function fenceField(text: string): number | string {
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1) return `fence must be the positive number the lock call answered, not ${JSON.stringify(text.slice(0, 40))}`;
  return Number(text);
}

function countField(text: string, what: string, min: number): number | string {
  const t = text.trim();
  if (!/^\d{1,10}$/.test(t) || Number(t) < min || Number(t) > 2_147_483_647) return `${what} must be a whole number from ${min} to 2147483647, not ${JSON.stringify(t.slice(0, 40))}`;
  return Number(t);
}

/** A lock's or semaphore's failure as REST names it. */
function blockingError(res: CpResult, group: string, session: number): CpRestAnswer {
  if (res.type !== 'error') return unexpected(res);
  switch (res.code) {
    case 'session-expired':
      return notFound(`CP session ${session} of group ${group} is closed or expired: create a new one`);
    case 'not-owner':
    case 'not-enough-permits':
    case 'illegal-state':
      return conflict(res.message);
    default:
      return errorAnswer(res.message);
  }
}

function notFound(message: string): CpRestAnswer {
  return { status: 404, body: JSON.stringify({ status: 'fail', message }), contentType: JSON_TYPE, etagIndex: null };
}

function conflict(message: string): CpRestAnswer {
  return { status: 409, body: JSON.stringify({ status: 'fail', message }), contentType: JSON_TYPE, etagIndex: null };
}

function noContent(): CpRestAnswer {
  return { status: 204, body: null, contentType: null, etagIndex: null };
}

function planLong(r: CpRestRequest, group: string, name: string): CpRestPlan {
  const value = (n: bigint, index: number): CpRestAnswer => answer(200, `{"value":${n}}`, index);
  if (r.method === 'GET' && r.op === null) {
    return { kind: 'read', group, query: { q: 'long', name }, render: (a) => (a.type === 'long' ? value(a.value, a.index) : unexpectedRead(a)) };
  }
  if (r.method !== 'POST') return bad(405, `${r.method} is not a call of an AtomicLong`);
  const text = Buffer.from(r.body).toString('utf8').trim();
  const long = (what: string): bigint | string => parseLong(text, what);
  const write = (op: CpCommand & { kind: 'long' }, render: (res: CpResult, index: number) => CpRestAnswer): CpRestPlan => ({ kind: 'write', group, command: op, ifMatch: null, render });
  const asValue = (res: CpResult, index: number): CpRestAnswer => (res.type === 'long' ? value(res.value, index) : unexpected(res));
  switch (r.op) {
    case null: {
      const v = long('the new value');
      return typeof v === 'string' ? bad(400, v) : write({ kind: 'long', op: 'set', name, a: v, b: 0n }, asValue);
    }
    case 'addAndGet':
    case 'getAndAdd': {
      const d = long('the delta');
      return typeof d === 'string' ? bad(400, d) : write({ kind: 'long', op: r.op, name, a: d, b: 0n }, asValue);
    }
    case 'incrementAndGet':
    case 'decrementAndGet':
      return write({ kind: 'long', op: 'addAndGet', name, a: r.op === 'incrementAndGet' ? 1n : -1n, b: 0n }, asValue);
    case 'getAndSet': {
      const v = long('the new value');
      return typeof v === 'string' ? bad(400, v) : write({ kind: 'long', op: 'getAndSet', name, a: v, b: 0n }, asValue);
    }
    case 'compareAndSet': {
      const parts = text.split('&');
      if (parts.length !== 2) return bad(400, 'compareAndSet takes the body expected&updated');
      const e = parseLong((parts[0] as string).trim(), 'expected');
      const u = parseLong((parts[1] as string).trim(), 'updated');
      if (typeof e === 'string') return bad(400, e);
      if (typeof u === 'string') return bad(400, u);
      return write({ kind: 'long', op: 'compareAndSet', name, a: e, b: u }, (res, index) => (res.type === 'cas' ? answer(200, `{"result":${res.result},"value":${res.value}}`, index) : unexpected(res)));
    }
    default:
      return bad(404, `AtomicLong has no operation ${r.op}`);
  }
}

function planRef(r: CpRestRequest, group: string, name: string): CpRestPlan {
  if (r.op !== null) return bad(404, `AtomicReference has no operation ${r.op}`);
  if (r.method === 'GET') {
    return {
      kind: 'read',
      group,
      query: { q: 'ref', name },
      render: (v) => {
        if (v.type !== 'ref') return unexpectedRead(v);
        return v.value === null ? { status: 204, body: null, contentType: null, etagIndex: v.index } : { status: 200, body: v.value.value, contentType: v.value.contentType, etagIndex: v.index };
      },
    };
  }
  const value: RefValue | null = r.method === 'DELETE' ? null : { value: Uint8Array.from(r.body), contentType: r.contentType };
  return {
    kind: 'write',
    group,
    command: { kind: 'ref', op: 'set', name, value, expected: null, ifIndex: -1 },
    ifMatch: r.ifMatch,
    render: (res, index) => {
      if (res.type !== 'ref') return unexpected(res);
      if (!res.ok) return { status: 412, body: `{"status":"fail","message":"If-Match names another version of AtomicReference ${name}"}`, contentType: JSON_TYPE, etagIndex: res.index };
      return answer(200, '{"status":"success"}', index);
    },
  };
}

function planLatch(r: CpRestRequest, group: string, name: string): CpRestPlan {
  const text = Buffer.from(r.body).toString('utf8').trim();
  if (r.method === 'GET' && r.op === null) {
    return { kind: 'read', group, query: { q: 'latch', name }, render: (l) => (l.type === 'latch' ? answer(200, `{"count":${l.count},"round":${l.round}}`, l.index) : unexpectedRead(l)) };
  }
  if (r.method === 'GET' && r.op === 'await') {
    const seconds = Number(r.arg ?? '');
    if (!/^\d{1,9}$/.test(r.arg ?? '') || !Number.isSafeInteger(seconds)) return bad(400, `await takes a timeout in whole seconds, not ${JSON.stringify(r.arg ?? '')}`);
    return {
      kind: 'write',
      group,
      command: { kind: 'latch', op: 'await', name, timeoutMs: seconds * 1000 },
      ifMatch: null,
      render: (res, index) => (res.type === 'bool' ? (res.result ? answer(200, '{"result":true}', index) : { status: 204, body: null, contentType: null, etagIndex: null }) : unexpected(res)),
    };
  }
  if (r.method !== 'POST') return bad(405, `${r.method} is not a call of a CountDownLatch`);
  if (r.op === null) {
    if (!/^\d{1,10}$/.test(text) || Number(text) < 1 || Number(text) > 2_147_483_647) return bad(400, `trySetCount takes a count from 1 to 2147483647, not ${JSON.stringify(text)}`);
    return { kind: 'write', group, command: { kind: 'latch', op: 'trySetCount', name, count: Number(text) }, ifMatch: null, render: (res, index) => (res.type === 'bool' ? answer(200, `{"result":${res.result}}`, index) : res.type === 'error' ? errorAnswer(res.message) : unexpected(res)) };
  }
  if (r.op === 'countDown') {
    return { kind: 'write', group, command: { kind: 'latch', op: 'countDown', name, round: -1 }, ifMatch: null, render: (res, index) => (res.type === 'count' ? answer(200, `{"count":${res.count}}`, index) : unexpected(res)) };
  }
  return bad(404, `CountDownLatch has no operation ${r.op}`);
}

/** A decimal 64-bit integer, or a message saying what was expected. */
export function parseLong(text: string, what: string): bigint | string {
  if (!/^[-+]?\d{1,19}$/.test(text)) return `${what} must be a decimal 64-bit integer, not ${JSON.stringify(text.slice(0, 40))}`;
  const v = BigInt(text);
  if (v !== BigInt.asIntN(64, v)) return `${what} is outside the 64-bit range: ${text}`;
  return v;
}

function answer(status: number, body: string, index: number): CpRestAnswer {
  return { status, body, contentType: JSON_TYPE, etagIndex: index };
}

function errorAnswer(message: string): CpRestAnswer {
  return { status: 400, body: JSON.stringify({ status: 'fail', message }), contentType: JSON_TYPE, etagIndex: null };
}

function unexpected(res: CpResult): CpRestAnswer {
  return { status: 500, body: JSON.stringify({ status: 'fail', message: `unexpected answer ${res.type} from the state machine` }), contentType: JSON_TYPE, etagIndex: null };
}

function unexpectedRead(a: QueryAnswer): CpRestAnswer {
  return { status: 500, body: JSON.stringify({ status: 'fail', message: `unexpected answer ${a.type} to a read` }), contentType: JSON_TYPE, etagIndex: null };
}

function bad(status: 400 | 404 | 405, message: string): CpRestPlan {
  return { kind: 'bad', status, message };
}

/**
 * Puts an AtomicReference write's `If-Match` into its command, once the group's id and seed are
 * known: an ETag of this group and seed compares its index; one of another group or seed, or a
 * malformed one, matches nothing (412 without a write).
 */
export function resolveIfMatch(plan: CpRestPlan & { kind: 'write' }, groupId: number, seed: number): (CpRestPlan & { kind: 'write' }) | CpRestAnswer {
  if (plan.ifMatch === null || plan.command.kind !== 'ref') return plan;
  const index = ifMatchIndex(plan.ifMatch, groupId, seed);
  if (index === null) return { status: 412, body: '{"status":"fail","message":"If-Match names no version of this AtomicReference"}', contentType: JSON_TYPE, etagIndex: null };
  return { ...plan, command: { ...plan.command, ifIndex: index } };
}
