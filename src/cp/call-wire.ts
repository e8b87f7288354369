// What a CP call carries between the member that receives it and the member of the group's leader
// (the cpCall / cpAnswer messages): a write is a Raft command (commands.ts) with an invocation
// UUID; a read is a query, answered from the state machine at a confirmed commit index. Answers
// travel as JSON with 64-bit integers and bytes tagged (`{"$big":"…"}`, `{"$b64":"…"}`).
//
// Decoding is checked like every wire format: a malformed query is ERR_PROTOCOL_MALFORMED-like
// (a thrown Error the service answers as a failure), never a crash of the member.
import type { CpCommand, CpStructures, RefValue } from './structures.js';
import { decodeEnvelope, encodeEnvelope } from './commands.js';
import { packJson, unpackJson } from './tagged-json.js';

export { packJson, unpackJson } from './tagged-json.js';
import type { BlockingResult } from './blocking.js';
import type { SessionInfo } from './sessions.js';

export const QUERY_BYTES_MAX = 1024 * 1024;

export type CpQuery =
  | { readonly q: 'long'; readonly name: string }
  | { readonly q: 'ref'; readonly name: string }
  | { readonly q: 'refContains'; readonly name: string; readonly value: RefValue | null }
  | { readonly q: 'latch'; readonly name: string }
  | { readonly q: 'lock'; readonly name: string }
  | { readonly q: 'semaphore'; readonly name: string }
  | { readonly q: 'sessions' }
  /** The group's Raft status as its leader sees it (term, commit index, members). */
  | { readonly q: 'status' }
  /** METADATA's state (metadata.ts snapshot). */
  | { readonly q: 'metadata' };

export type QueryAnswer =
  | { readonly type: 'long'; readonly value: bigint; readonly index: number }
  | { readonly type: 'ref'; readonly value: RefValue | null; readonly index: number }
  | { readonly type: 'bool'; readonly result: boolean }
  | { readonly type: 'latch'; readonly count: number; readonly round: number; readonly index: number }
  | { readonly type: 'lock'; readonly ownership: BlockingResult; readonly index: number }
  | { readonly type: 'semaphore'; readonly available: number; readonly index: number }
  | { readonly type: 'sessions'; readonly sessions: readonly SessionInfo[] }
  | { readonly type: 'status'; readonly term: number; readonly commit: number; readonly leader: string | null; readonly members: readonly string[] }
  | { readonly type: 'metadata'; readonly snapshot: Uint8Array };

/** The leader's side of a read: the state machine, and its Raft status. */
export function runQuery(q: CpQuery, s: CpStructures, status: { term: number; commit: number; leader: string | null; members: readonly string[] }): QueryAnswer {
  switch (q.q) {
    case 'long': {
      const l = s.getLong(q.name);
      return { type: 'long', value: l.value, index: l.index };
    }
    case 'ref': {
      const r = s.getRef(q.name);
      return { type: 'ref', value: r.value, index: r.index };
    }
    case 'refContains': {
      const r = s.getRef(q.name).value;
      const same = r === null || q.value === null ? r === q.value : Buffer.from(r.value).equals(Buffer.from(q.value.value)) && r.contentType === q.value.contentType;
      return { type: 'bool', result: same };
    }
    case 'latch': {
      const l = s.getLatch(q.name);
      return { type: 'latch', count: l.count, round: l.round, index: l.index };
    }
    case 'lock':
      return { type: 'lock', ownership: s.locks.ownership(q.name), index: s.locks.indexOf(q.name) };
    case 'semaphore':
      return { type: 'semaphore', available: s.semaphores.available(q.name), index: s.semaphores.indexOf(q.name) };
    case 'sessions':
      return { type: 'sessions', sessions: s.sessions.list() };
    case 'status':
      return { type: 'status', term: status.term, commit: status.commit, leader: status.leader, members: [...status.members] };
    case 'metadata':
      return { type: 'metadata', snapshot: s.metadata.snapshot() };
  }
}

const NAMED = new Set(['long', 'ref', 'refContains', 'latch', 'lock', 'semaphore']);
const UNNAMED = new Set(['sessions', 'status', 'metadata']);

export function encodeQuery(q: CpQuery): Buffer {
  return packJson(q);
}

/** A query from the wire, checked field by field. */
export function decodeQuery(b: Uint8Array): CpQuery {
  if (b.length > QUERY_BYTES_MAX) throw new Error(`a CP query of ${b.length} bytes exceeds ${QUERY_BYTES_MAX}`);
  const v = unpackJson(b) as Record<string, unknown> | null;
  if (v === null || typeof v !== 'object' || Array.isArray(v) || typeof v.q !== 'string') throw new Error('a CP query must be an object with q');
  if (UNNAMED.has(v.q)) return { q: v.q } as CpQuery;
  if (!NAMED.has(v.q)) throw new Error(`unknown CP query ${v.q.slice(0, 40)}`);
  if (typeof v.name !== 'string' || v.name.length === 0 || v.name.length > 1024) throw new Error('a CP query needs a name of 1 to 1024 characters');
  if (v.q !== 'refContains') return { q: v.q, name: v.name } as CpQuery;
  return { q: 'refContains', name: v.name, value: refValue(v.value) };
}

function refValue(v: unknown): RefValue | null {
  if (v === null) return null;
  if (typeof v !== 'object' || v === null) throw new Error('a reference value must be null or an object');
  const o = v as Record<string, unknown>;
  if (!(o.value instanceof Uint8Array)) throw new Error('a reference value needs bytes');
  if (o.contentType !== null && typeof o.contentType !== 'string') throw new Error('a reference content type must be a string or null');
  return { value: o.value, contentType: o.contentType as string | null };
}

/** A single-server membership change of a group (the METADATA leader drives them). */
export type MemberChange = { readonly add: string } | { readonly remove: string } | { readonly lead: string };

/** What one cpCall asks of the leader's member. */
export type CallPayload =
  | { readonly kind: 'write'; readonly command: CpCommand }
  | { readonly kind: 'read'; readonly query: CpQuery }
  | { readonly kind: 'change'; readonly change: MemberChange };

/** u8 tag (1 write: a command as commands.ts lays it out; 2 read: a query; 3 change: JSON) | body. */
export function encodeCallPayload(p: CallPayload, valueBytesMax: number): Buffer {
  const tag = Buffer.of(p.kind === 'write' ? 1 : p.kind === 'read' ? 2 : 3);
  if (p.kind === 'write') return Buffer.concat([tag, encodeEnvelope({ invocation: '', nowMs: 0, command: p.command }, valueBytesMax)]);
  if (p.kind === 'read') return Buffer.concat([tag, encodeQuery(p.query)]);
  return Buffer.concat([tag, packJson(p.change)]);
}

export function decodeCallPayload(b: Uint8Array, valueBytesMax: number): CallPayload {
  if (b.length < 1) throw new Error('an empty CP call');
  const body = b.subarray(1);
  switch (b[0]) {
    case 1:
      return { kind: 'write', command: decodeEnvelope(body, valueBytesMax).command };
    case 2:
      return { kind: 'read', query: decodeQuery(body) };
    case 3: {
      if (body.length > 1024) throw new Error('a membership change of more than 1024 bytes');
      const v = unpackJson(body) as Record<string, unknown> | null;
      if (v !== null && typeof v === 'object' && Object.keys(v).length === 1) {
        if (typeof v.add === 'string' && v.add.length > 0 && v.add.length <= 128) return { kind: 'change', change: { add: v.add } };
        if (typeof v.remove === 'string' && v.remove.length > 0 && v.remove.length <= 128) return { kind: 'change', change: { remove: v.remove } };
        if (typeof v.lead === 'string' && v.lead.length > 0 && v.lead.length <= 128) return { kind: 'change', change: { lead: v.lead } };
      }
      throw new Error('a membership change names one member to add, remove or lead');
    }
    default:
      throw new Error(`unknown CP call kind ${b[0]}`);
  }
}
