// Map and queue calls (rest.md §4). Keys are the decoded tail of the path joined with `/`, one
// trailing `/` stripped. Errors of data calls carry an empty body and a `Grid-Error` header; the
// runtime turns thrown GridErrors into that shape.
import { GridError } from '../../util/errors.js';
import type { MemberApi } from '../../member/member-api.js';
import { empty, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { joinTail } from '../path.js';

function requestContentType(req: HttpRequest): string | null {
  const type = req.headers['content-type'];
  return type === undefined || type === '' ? null : type.toLowerCase();
}

function valueReply(stored: { value: Buffer; contentType: string | null } | null): HttpReply {
  if (stored === null) return empty(204);
  const headers = stored.contentType === null ? undefined : { 'content-type': stored.contentType };
  return headers === undefined ? { status: 200, body: stored.value } : { status: 200, headers, body: stored.value };
}

const EMPTY_BODY = Buffer.alloc(0);

export async function mapPut(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const key = joinTail(req.tail, 0);
  if (key === '') throw new GridError('ERR_DATA_MISSING_KEY', 'missing key');
  await api.mapPut(req.params.map as string, key, req.body ?? EMPTY_BODY, requestContentType(req));
  return empty(200);
}

export async function mapGet(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const key = joinTail(req.tail, 0);
  if (key === '') throw new GridError('ERR_DATA_MISSING_KEY', 'missing key');
  return valueReply(await api.mapGet(req.params.map as string, key));
}

export async function mapDelete(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const key = joinTail(req.tail, 0);
  const map = req.params.map as string;
  if (key === '') await api.mapClear(map);
  else await api.mapRemove(map, key);
  return empty(200);
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

export async function queueOffer(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
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
  if (!(await api.queueOffer(name, value, contentType))) {
    throw new GridError('ERR_DATA_QUEUE_FULL', 'queue is full', { retryAfterSeconds: 1 });
  }
  return empty(200);
}

/** A poll timeout: a non-negative decimal integer of seconds, capped at the member's maximum. */
export function parseTimeoutSeconds(text: string, maxSeconds: number): number {
  if (!/^[0-9]{1,12}$/.test(text)) {
    throw new GridError('ERR_DATA_BAD_TIMEOUT', 'poll timeout must be a non-negative integer number of seconds');
  }
  return Math.min(Number(text), maxSeconds);
}

async function poll(req: HttpRequest, api: MemberApi, timeoutText: string): Promise<HttpReply> {
  const name = queueName(req);
  const seconds = parseTimeoutSeconds(timeoutText, api.pollTimeoutSecondsMax());
  return valueReply(await api.queuePoll(name, seconds, req.client));
}

function queueArgument(req: HttpRequest): string {
  const rest = req.tail;
  if (rest.length === 0) throw new GridError('ERR_HTTP_BAD_REQUEST', 'missing poll timeout');
  if (rest.length > 1) throw new GridError('ERR_HTTP_BAD_REQUEST', 'too many path segments after the queue name');
  return rest[0] as string;
}

export async function queueDelete(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  return poll(req, api, queueArgument(req));
}

export async function queueGet(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const arg = queueArgument(req);
  if (arg.toLowerCase() === 'size') {
    const size = await api.queueSize(queueName(req));
    return { status: 200, headers: { 'content-type': 'text/plain' }, body: String(size) };
  }
  return poll(req, api, arg);
}
