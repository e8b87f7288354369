// The data calls of the client protocol, served through the same member API (and so the same
// invocation path: forwarding, retries, backups, cluster states, WAN events, persistence) as REST
// (spec/client.md "Calls"; wire layout in docs/client-calls.md). I/O-free: a call is decoded, run on
// the MemberApi, and its answer encoded; errors become the error response.
//
// Served: map put, set, putIfAbsent, putTransient (each also with a TTL and a max-idle of its own),
// replace, replaceIfSame, get, getAll, putAll, remove, removeIfSame, delete, containsKey, size,
// isEmpty, clear, keySet, values, entrySet;
// queue offer (waiting for room up to its timeout), put, poll, take, peek, size, isEmpty, clear,
// drainTo (with or without a maximum); the CP calls of cp-calls.ts. put, take and a waiting offer or poll wait at most
// grid.queue.poll.timeout.seconds.max. Every other call is answered with error 61 by the caller
// (docs/client.md).
import { valueKind } from '../data/value-kind.js';
import type { Awaitable, ClientLiveness, MemberApi, StoredValue } from '../member/member-api.js';
import { then } from '../member/member-api.js';
import { GridError } from '../util/errors.js';
import { dataLengthOfKind, dataOfStored, keyData, keyOfData, storedFormOfData, stringData, writeDataOfKind } from './data.js';
import { clientCodeOf, clientMessageOf, encodeErrorResponse } from './errors.js';
import { MessageWriter, booleanAnswer, emptyAnswer, intAnswer, simpleResponse, type MessageReader } from './message.js';
import { answerCp, CP_CALLS } from './cp-calls.js';

export const CALL = {
  MAP_PUT: 0x010100,
  MAP_GET: 0x010200,
  MAP_REMOVE: 0x010300,
  MAP_PUT_IF_ABSENT: 0x010e00,
  MAP_CONTAINS_KEY: 0x010600,
  MAP_DELETE: 0x010900,
  MAP_SET: 0x010f00,
  MAP_GET_ALL: 0x012300,
  MAP_PUT_ALL: 0x012c00,
  MAP_SIZE: 0x012a00,
  MAP_IS_EMPTY: 0x012b00,
  MAP_CLEAR: 0x012d00,
  MAP_PUT_TRANSIENT: 0x010d00,
  MAP_PUT_WITH_MAX_IDLE: 0x014400,
  MAP_PUT_TRANSIENT_WITH_MAX_IDLE: 0x014500,
  MAP_PUT_IF_ABSENT_WITH_MAX_IDLE: 0x014600,
  MAP_SET_WITH_MAX_IDLE: 0x014700,
  MAP_REPLACE: 0x010400,
  MAP_REPLACE_IF_SAME: 0x010500,
  MAP_REMOVE_IF_SAME: 0x010800,
  MAP_KEY_SET: 0x012200,
  MAP_VALUES: 0x012400,
  MAP_ENTRY_SET: 0x012500,
  QUEUE_OFFER: 0x030100,
  QUEUE_PUT: 0x030200,
  QUEUE_CLEAR: 0x030f00,
  QUEUE_DRAIN_TO: 0x030900,
  QUEUE_DRAIN_TO_MAX_SIZE: 0x030a00,
  QUEUE_SIZE: 0x030300,
  QUEUE_POLL: 0x030500,
  QUEUE_TAKE: 0x030600,
  QUEUE_PEEK: 0x030700,
  QUEUE_IS_EMPTY: 0x031400,
} as const;

const SERVED: ReadonlySet<number> = new Set([...Object.values(CALL), ...CP_CALLS]);

export function isServedCall(type: number): boolean {
  return SERVED.has(type);
}

export interface CallContext {
  readonly api: MemberApi;
  /** The connection, for waiting polls: an item is never handed to a closed connection. */
  readonly client: ClientLiveness;
  /** grid.queue.poll.timeout.seconds.max: the longest a poll, take, put or waiting offer waits. */
  readonly pollSecondsMax: number;
  /** The most bytes of keys and values one whole-map read (keySet, values, entrySet) answers with. */
  readonly answerBytesMax: number;
  /** A failure that is no GridError (a bug): logged with its stack; the client gets error 24. */
  readonly internalError: (error: unknown, type: number) => void;
  /**
   * True once the member has begun to shut down: its waits (poll, take, put, a waiting offer) end
   * early then, and such a call is answered 19 so that the client sends it to another member.
   */
  readonly memberStopping: () => boolean;
  /** The client's address (`host:port`): a CP session's endpoint. */
  readonly remoteAddress?: string;
}

/** A wait cut short by the member's shutdown (client error 19: the client goes to another member). */
function stoppingError(): GridError {
  return new GridError('ERR_CLUSTER_UNAVAILABLE', 'this member is shutting down: the call goes to another member', { retryAfterSeconds: 1, failureKind: 'stopping' });
}

/** Runs one served call; the answer (or the error response) as bytes, now or later. Never throws. */
export function runCall(r: MessageReader, c: CallContext): Awaitable<Buffer> {
  const correlationId = r.correlationId;
  try {
    const out = answer(r, c);
    if (!(out instanceof Promise)) return out;
    return out.catch((e: unknown) => errorAnswer(correlationId, e, r.type, c));
  } catch (e) {
    return errorAnswer(correlationId, e, r.type, c);
  }
}

function errorAnswer(correlationId: bigint, e: unknown, type: number, c: CallContext): Buffer {
  if (!(e instanceof GridError)) c.internalError(e, type);
  return encodeErrorResponse(correlationId, clientCodeOf(e), clientMessageOf(e));
}

function answer(r: MessageReader, c: CallContext): Awaitable<Buffer> {
  const id = r.correlationId;
  const api = c.api;
  const type = r.type;
  switch (type) {
    case CALL.MAP_GET: {
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      return then(api.mapGet(name, key), (v) => nullableDataAnswer(type, id, v));
    }
    case CALL.MAP_CONTAINS_KEY: {
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      return then(api.mapGet(name, key), (v) => booleanAnswer(type, id, v !== null));
    }
    case CALL.MAP_SET:
    case CALL.MAP_PUT:
    case CALL.MAP_PUT_IF_ABSENT:
    case CALL.MAP_PUT_TRANSIENT:
    case CALL.MAP_PUT_WITH_MAX_IDLE:
    case CALL.MAP_PUT_TRANSIENT_WITH_MAX_IDLE:
    case CALL.MAP_PUT_IF_ABSENT_WITH_MAX_IDLE:
    case CALL.MAP_SET_WITH_MAX_IDLE: {
      // ttl and maxIdle in ms: -1 (any negative) the map's, 0 never. A transient put is a set here
      // (Grid has no map store to skip). The WithMaxIdle calls answer a nullable value, even for a set.
      const withMaxIdle = type === CALL.MAP_PUT_WITH_MAX_IDLE || type === CALL.MAP_PUT_TRANSIENT_WITH_MAX_IDLE || type === CALL.MAP_PUT_IF_ABSENT_WITH_MAX_IDLE || type === CALL.MAP_SET_WITH_MAX_IDLE;
      const ttl = r.long(8, 'ttl');
      const maxIdle = withMaxIdle ? r.long(16, 'maxIdle') : -1;
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      const value = storedFormOfData(r.bytes('value'));
      const mode = type === CALL.MAP_PUT || type === CALL.MAP_PUT_WITH_MAX_IDLE ? 'put' : type === CALL.MAP_PUT_IF_ABSENT || type === CALL.MAP_PUT_IF_ABSENT_WITH_MAX_IDLE ? 'putIfAbsent' : 'set';
      const answerWith = mode === 'set' && !withMaxIdle ? () => emptyAnswer(type, id) : (v: StoredValue | null) => nullableDataAnswer(type, id, v);
      if (ttl < 0 && maxIdle < 0) {
        // The map's own expiry: the plain writes REST makes too.
        if (mode === 'set') return then(api.mapPut(name, key, value.value, value.contentType), () => answerWith(null));
        return then(mode === 'put' ? api.mapGetAndPut(name, key, value.value, value.contentType) : api.mapPutIfAbsent(name, key, value.value, value.contentType), answerWith);
      }
      return then(api.mapPutWithExpiry(name, key, value.value, value.contentType, ttl, maxIdle, mode), (v) => answerWith(mode === 'set' ? null : v));
    }
    case CALL.MAP_REMOVE: {
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      return then(api.mapGetAndRemove(name, key), (v) => nullableDataAnswer(type, id, v));
    }
    case CALL.MAP_DELETE: {
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      return then(api.mapRemove(name, key), () => emptyAnswer(type, id));
    }
    case CALL.MAP_GET_ALL: {
      // As in the reference, not one atomic read: each key is read on its owner.
      const name = r.structureName('name');
      const keys = r.bytesList('keys').map((k) => keyOfData(k));
      const reads = keys.map((k) => settled(() => api.mapGet(name, k)));
      const answerWith = (values: (StoredValue | null)[]): Buffer => {
        const w = MessageWriter.response(type + 1, id).begin();
        values.forEach((v, i) => {
          if (v !== null) w.bytes(stringData(keys[i] as string)).bytes(dataOfStored(v.value, v.contentType));
        });
        return w.end().build();
      };
      return reads.some((x) => x instanceof Promise) ? Promise.all(reads).then(answerWith) : answerWith(reads as (StoredValue | null)[]);
    }
    case CALL.MAP_PUT_ALL: {
      // Each entry is written on its owner; not atomic as a whole (nor in the reference).
      const name = r.structureName('name');
      const entries = r.entryList('entries').map(([k, v]) => [keyOfData(k), storedFormOfData(v)] as const);
      const writes = entries.map(([k, v]) => settled(() => api.mapPut(name, k, v.value, v.contentType)));
      const pending = writes.filter((x): x is Promise<void> => x instanceof Promise);
      return pending.length === 0 ? emptyAnswer(type, id) : Promise.all(pending).then(() => emptyAnswer(type, id));
    }
    case CALL.MAP_SIZE:
      return then(api.mapSize(r.structureName('name')), (n) => intAnswer(type, id, n));
    case CALL.MAP_IS_EMPTY:
      return then(api.mapSize(r.structureName('name')), (n) => booleanAnswer(type, id, n === 0));
    case CALL.MAP_CLEAR:
      return then(api.mapClear(r.structureName('name')), () => emptyAnswer(type, id));
    case CALL.MAP_REPLACE: {
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      const value = storedFormOfData(r.bytes('value'));
      return then(api.mapReplace(name, key, value.value, value.contentType), (v) => nullableDataAnswer(type, id, v));
    }
    case CALL.MAP_REPLACE_IF_SAME: {
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      const expected = storedFormOfData(r.bytes('testValue'));
      const value = storedFormOfData(r.bytes('value'));
      return then(api.mapReplaceIfSame(name, key, expected, value.value, value.contentType), (ok) => booleanAnswer(type, id, ok));
    }
    case CALL.MAP_REMOVE_IF_SAME: {
      const name = r.structureName('name');
      const key = keyOfData(r.bytes('key'));
      const expected = storedFormOfData(r.bytes('value'));
      return then(api.mapRemoveIfSame(name, key, expected), (ok) => booleanAnswer(type, id, ok));
    }
    case CALL.MAP_KEY_SET:
    case CALL.MAP_VALUES:
    case CALL.MAP_ENTRY_SET: {
      const select = type === CALL.MAP_KEY_SET ? 'keys' : type === CALL.MAP_VALUES ? 'values' : 'entries';
      return then(api.mapEntries(r.structureName('name'), select, c.answerBytesMax), (entries) => {
        const w = MessageWriter.response(type + 1, id).begin();
        for (const e of entries) {
          if (select !== 'values') w.bytes(keyData(e.key));
          if (select !== 'keys' && e.value !== null) w.bytes(dataOfStored(e.value.value, e.value.contentType));
        }
        return w.end().build();
      });
    }
    case CALL.QUEUE_OFFER:
    case CALL.QUEUE_PUT: {
      // offer waits up to its timeout (at most the poll limit); put waits up to the poll limit and
      // then fails with 38, as take does (its wait has no end in the reference).
      const timeoutMs = type === CALL.QUEUE_PUT ? c.pollSecondsMax * 1000 : Math.min(r.long(0, 'timeoutMillis'), c.pollSecondsMax * 1000);
      const name = r.structureName('name');
      const value = storedFormOfData(r.bytes('value'));
      const stored = timeoutMs > 0 ? api.queueOfferWaiting(name, value.value, value.contentType, timeoutMs, c.client) : api.queueOffer(name, value.value, value.contentType);
      return then(stored, (ok) => {
        if (!ok && timeoutMs > 0 && c.memberStopping()) throw stoppingError();
        if (type === CALL.QUEUE_OFFER) return booleanAnswer(type, id, ok);
        if (!ok) throw new GridError('ERR_CLIENT_TIMEOUT', `queue '${name}' stayed full for ${c.pollSecondsMax} s (grid.queue.poll.timeout.seconds.max); put again`);
        return emptyAnswer(type, id);
      });
    }
    case CALL.QUEUE_CLEAR:
      return then(api.queueClear(r.structureName('name')), () => emptyAnswer(type, id));
    case CALL.QUEUE_DRAIN_TO:
    case CALL.QUEUE_DRAIN_TO_MAX_SIZE: {
      // As in the reference: a negative maximum drains all, 0 drains nothing.
      const max = type === CALL.QUEUE_DRAIN_TO ? -1 : r.int(0, 'maxSize');
      const name = r.structureName('name');
      const listAnswer = (items: readonly StoredValue[]): Buffer => {
        const w = MessageWriter.response(type + 1, id).begin();
        for (const v of items) w.bytes(dataOfStored(v.value, v.contentType));
        return w.end().build();
      };
      if (max === 0) return listAnswer([]);
      return then(api.queueDrain(name, max < 0 ? 0 : max), listAnswer);
    }
    case CALL.QUEUE_POLL:
    case CALL.QUEUE_TAKE: {
      // take waits as long as a poll may (its wait has no end in the reference).
      const timeoutMs = type === CALL.QUEUE_TAKE ? -1 : r.long(0, 'timeoutMillis');
      const name = r.structureName('name');
      // A negative timeout (take) and one past the limit wait for the limit.
      const seconds = timeoutMs < 0 ? c.pollSecondsMax : Math.min(timeoutMs / 1000, c.pollSecondsMax);
      return then(api.queuePoll(name, seconds, c.client), (v) => {
        if (v === null && seconds > 0 && c.memberStopping()) throw stoppingError();
        if (v === null && type === CALL.QUEUE_TAKE) {
          throw new GridError('ERR_CLIENT_TIMEOUT', `no item in queue '${name}' within ${c.pollSecondsMax} s (grid.queue.poll.timeout.seconds.max); take again`);
        }
        return nullableDataAnswer(type, id, v);
      });
    }
    case CALL.QUEUE_PEEK:
      return then(api.queuePeek(r.structureName('name')), (v) => nullableDataAnswer(type, id, v));
    case CALL.QUEUE_SIZE:
      return then(api.queueSize(r.structureName('name')), (n) => intAnswer(type, id, n));
    case CALL.QUEUE_IS_EMPTY:
      return then(api.queueSize(r.structureName('name')), (n) => booleanAnswer(type, id, n === 0));
    default:
      if (CP_CALLS.has(type)) return answerCp(r, c);
      throw new GridError('ERR_CLIENT_PROTOCOL', `message type 0x${type.toString(16)} is not a served call`);
  }
}

/**
 * One of several calls made together: a synchronous failure becomes a rejected promise, so that
 * Promise.all observes every failure (none is left unhandled) and the others still run.
 */
function settled<T>(f: () => Awaitable<T>): Awaitable<T> {
  try {
    return f();
  } catch (e) {
    return Promise.reject(e);
  }
}

// The nullable-value answer, built in one buffer (simpleResponse).




function nullableDataAnswer(type: number, id: bigint, value: StoredValue | null): Buffer {
  if (value === null) return simpleResponse(type + 1, id, 0, null);
  const kind = valueKind(value.value, value.contentType);
  const length = dataLengthOfKind(value.value, kind);
  const out = simpleResponse(type + 1, id, 0, length);
  writeDataOfKind(out, out.length - length, value.value, kind);
  return out;
}
