// Map and queue calls (rest.md §4). Keys are the decoded tail of the path joined with `/`, one
// trailing `/` stripped. Errors of data calls carry an empty body and a `Grid-Error` header; the
// runtime turns thrown GridErrors into that shape.
import { GridError } from '../../util/errors.js';
import { then, type Awaitable, type MemberApi, type StoredValue } from '../../member/member-api.js';
import { empty, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { joinTail } from '../path.js';

/** The last Content-Type seen and its lower-cased form (clients repeat theirs: no new string per request). */
let lastType = '';
let lastTypeLower = '';

function requestContentType(req: HttpRequest): string | null {
  const type = req.header('content-type');
  if (type === undefined || type === '') return null;
  if (type !== lastType) {
    lastType = type;
    lastTypeLower = type.toLowerCase();
  }
  return lastTypeLower;
}

function valueReply(stored: StoredValue | null): HttpReply {
  if (stored === null) return NO_CONTENT;
  return stored.contentType === null ? { status: 200, body: stored.value } : { status: 200, contentType: stored.contentType, body: stored.value };
}

const EMPTY_BODY = Buffer.alloc(0);
const OK = empty(200);
const NO_CONTENT = empty(204);
const ok = (): HttpReply => OK;

export function mapPut(req: HttpRequest, api: MemberApi): Awaitable<HttpReply> {
  const key = joinTail(req.tail, 0);
  if (key === '') throw new GridError('ERR_DATA_MISSING_KEY', 'missing key');
  return then(api.mapPut(req.params.map as string, key, req.body ?? EMPTY_BODY, requestContentType(req)), ok);
}

export function mapGet(req: HttpRequest, api: MemberApi): Awaitable<HttpReply> {
  const key = joinTail(req.tail, 0);
  if (key === '') throw new GridError('ERR_DATA_MISSING_KEY', 'missing key');
  return then(api.mapGet(req.params.map as string, key), valueReply);
}

export function mapDelete(req: HttpRequest, api: MemberApi): Awaitable<HttpReply> {
  const key = joinTail(req.tail, 0);
  const map = req.params.map as string;
  return then(key === '' ? api.mapClear(map) : api.mapRemove(map, key), ok);
}

/** HEAD on any data path: 200 without an existence check, as the reference answers. */
export function dataHead(): HttpReply {
  return empty(200);
}

function queueName(req: HttpRequest): string {
  const name = req.params.queue as string;
  if (name === '') throw new GridError('ERR_DATA_MISSING_NAME', 'missing queue name');
  return name;
}

export function queueOffer(req: HttpRequest, api: MemberApi): Awaitable<HttpReply> {
  const name = queueName(req);
  const rest = req.tail;
  let value: Buffer;
  let contentType: string | null;
  if (rest.length === 0 || (rest.length === 1 && rest[0] === '')) {
    value = req.body ?? EMPTY_BODY;
    contentType = requestContentType(req);
  } else if (rest.length === 1 || (rest.length === 2 && rest[1] === '')) {
    value = Buffer.from(rest[0] as string, 'utf8');
    contentType = 'text/plain';
  } else {
    throw new GridError('ERR_HTTP_BAD_REQUEST', 'too many path segments after the queue name');
  }
  return then(api.queueOffer(name, value, contentType), offered);
}

function offered(accepted: boolean): HttpReply {
  if (!accepted) throw new GridError('ERR_DATA_QUEUE_FULL', 'queue is full', { retryAfterSeconds: 1 });
  return OK;
}

/** A poll timeout: a non-negative decimal integer of seconds, capped at the member's maximum. */
export function parseTimeoutSeconds(text: string, maxSeconds: number): number {
  if (!/^[0-9]{1,12}$/.test(text)) {
    throw new GridError('ERR_DATA_BAD_TIMEOUT', 'poll timeout must be a non-negative integer number of seconds');
  }
  return Math.min(Number(text), maxSeconds);
}

function poll(req: HttpRequest, api: MemberApi, timeoutText: string): Awaitable<HttpReply> {
  const name = queueName(req);
  const seconds = parseTimeoutSeconds(timeoutText, api.pollTimeoutSecondsMax());
  return then(api.queuePoll(name, seconds, req.client), valueReply);
}

function queueArgument(req: HttpRequest): string {
  const rest = req.tail;
  if (rest.length === 0) throw new GridError('ERR_HTTP_BAD_REQUEST', 'missing poll timeout');
  if (rest.length > 1) throw new GridError('ERR_HTTP_BAD_REQUEST', 'too many path segments after the queue name');
  return rest[0] as string;
}

export function queueDelete(req: HttpRequest, api: MemberApi): Awaitable<HttpReply> {
  return poll(req, api, queueArgument(req));
}

export function queueGet(req: HttpRequest, api: MemberApi): Awaitable<HttpReply> {
  const arg = queueArgument(req);
  if (arg.toLowerCase() === 'size') return then(api.queueSize(queueName(req)), sizeReply);
  return poll(req, api, arg);
}

function sizeReply(size: number): HttpReply {
  return { status: 200, contentType: 'text/plain', body: String(size) };
}
