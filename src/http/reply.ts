// What a handler returns: status, headers, body. The runtime writes it; handlers never touch sockets,
// so they can be tested by calling them. Data calls answer errors with an empty body and a
// `Grid-Error` header; every other call answers errors with {"status":"fail","message":"..."}.
import type { GridError } from '../util/errors.js';

export interface HttpReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** The Content-Type, kept out of `headers` so the common data reply needs no header object. */
  readonly contentType?: string;
  readonly body?: Buffer | string;
  /** Close the connection after this reply. */
  readonly close?: boolean;
}

const JSON_TYPE = 'application/json';

export function empty(status: number, headers?: Readonly<Record<string, string>>): HttpReply {
  return headers === undefined ? { status } : { status, headers };
}

export function json(status: number, value: unknown, extraHeaders?: Readonly<Record<string, string>>): HttpReply {
  return { status, headers: { 'content-type': JSON_TYPE, ...extraHeaders }, body: JSON.stringify(value) };
}

export function text(status: number, body: string): HttpReply {
  return { status, headers: { 'content-type': 'text/plain' }, body };
}

export function fail(status: number, message: string, extraHeaders?: Readonly<Record<string, string>>): HttpReply {
  return json(status, { status: 'fail', message }, extraHeaders);
}

function retryHeaders(e: GridError): Record<string, string> {
  return e.retryAfterSeconds === null ? {} : { 'retry-after': String(e.retryAfterSeconds) };
}

/** The error answer of a data call: empty body, the reason in `Grid-Error`. */
export function dataError(e: GridError): HttpReply {
  return { status: e.status, headers: { 'grid-error': headerSafe(e.message), ...retryHeaders(e) } };
}

/** The error answer of every other call: JSON fail body. */
export function jsonError(e: GridError): HttpReply {
  return fail(e.status, e.message, retryHeaders(e));
}

/** Header values must be visible ASCII; anything else (a key echoed into a message) is replaced. */
export function headerSafe(message: string): string {
  return message.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}
