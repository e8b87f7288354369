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

export type CpStructureKind = 'atomiclongs' | 'atomicrefs' | 'countdownlatches';

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
}

export interface CpRestAnswer {
  readonly status: number;
  readonly body: string | Uint8Array | null;
  readonly contentType: string | null;
  /** The Raft index for the ETag (the handler adds the group id and seed). */
  readonly etagIndex: number | null;
}

export type CpRestPlan =
  | { readonly kind: 'write'; readonly group: string; readonly command: CpCommand; readonly ifMatch: string | null; readonly render: (r: CpResult, index: number) => CpRestAnswer }
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
  }
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
