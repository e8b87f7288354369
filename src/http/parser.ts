// The member's HTTP/1.1 request parser (issue #14, part 1): bytes in, requests out, no I/O. It is
// fed a connection's bytes in whatever pieces they arrive and reports, in order, each request's
// head (so the shell can answer `Expect: 100-continue` or refuse a body before it comes), each
// complete request, and at most one error, after which it reads nothing more.
//
// Strict where RFC 9112 says a server must (or may) refuse, in particular every request-smuggling
// shape: Content-Length together with Transfer-Encoding; several Content-Length values that differ,
// or a list of them; a Transfer-Encoding whose last coding is not chunked (400), or with other
// codings before chunked (501); a bare CR anywhere in the head; obsolete line folding; whitespace
// between a field name and its colon; NUL or other control characters in a field; a request line
// or a chunk size that is not exactly what the grammar allows; HTTP/1.1 without one Host field.
// A line may end in a bare LF (RFC 9112 §2.2 allows recognising it); empty lines before a request
// line are skipped.
//
// Limits: the request line and fields (and a chunked body's trailer fields) at most `headBytesMax`
// bytes (431), at most `headerCountMax` fields (431), a body at most `bodyBytesMax` bytes (413).
//
// Invariants: the output does not depend on how the input was split; a request is reported only
// whole; after an error nothing more is reported; every byte is looked at a bounded number of times
// (a head is scanned once for its end, then once to split it).

export interface ParserLimits {
  readonly headBytesMax: number;
  readonly headerCountMax: number;
  readonly bodyBytesMax: number;
}

export interface RequestHead {
  readonly method: string;
  /** The request target in origin form (an absolute-form target is reduced to its path and query). */
  readonly target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  readonly minorVersion: 0 | 1;
  /** Field names lower-cased, values trimmed, in order; repeated fields stay separate. */
  readonly headers: readonly (readonly [string, string])[];
  /** Whether the connection stays open after this request (version default and `Connection`). */
  readonly keepAlive: boolean;
  readonly expectContinue: boolean;
  /** The body's length when it comes with Content-Length; -1 when chunked; 0 when none. */
  readonly contentLength: number;
  readonly chunked: boolean;
}

export interface ParsedRequest {
  readonly head: RequestHead;
  /** null when the request has no body (no Content-Length, not chunked). */
  readonly body: Buffer | null;
  /** Trailer fields of a chunked body (lower-cased names). */
  readonly trailers: readonly (readonly [string, string])[];
}

export interface ParseError {
  /** 400, 413, 431, 501 or 505. */
  readonly status: number;
  readonly message: string;
}

export interface ParserHandler {
  onHead(head: RequestHead): void;
  onRequest(request: ParsedRequest): void;
  onError(error: ParseError): void;
}

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

/** tchar of RFC 9110 §5.6.2. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;

/**
 * The methods of RFC 9110 and PATCH (RFC 5789) but CONNECT: anything else is 501 before the target
 * is looked at (node:http refuses methods it does not know as well; it knows more, WebDAV's).
 */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'PATCH']);

/** Hex digit values, -1 elsewhere. */
const HEX = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c++) HEX[0x30 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX[0x41 + c] = 10 + c;
  HEX[0x61 + c] = 10 + c;
}

/** Hex digits a chunk size may have (16 would already exceed any body limit). */
const CHUNK_SIZE_DIGITS_MAX = 15;
/** Bytes a chunk-size line (with its extensions) may have. */
const CHUNK_LINE_BYTES_MAX = 4096;

type State = 'head' | 'body' | 'chunkSize' | 'chunkData' | 'chunkDataEnd' | 'trailers' | 'failed';

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function refuse(status: number, message: string): never {
  throw new Refusal(status, message);
}

export class RequestParser {
  private buf: Buffer = Buffer.alloc(0);
  private state: State = 'head';
  private head: RequestHead | null = null;
  private bodyParts: Buffer[] = [];
  private bodyBytes = 0;
  private remaining = 0;
  private trailers: (readonly [string, string])[] = [];

  constructor(
    private readonly limits: ParserLimits,
    private readonly handler: ParserHandler,
  ) {}

  /** Whether an error ended the parse. */
  get failed(): boolean {
    return this.state === 'failed';
  }

  /** Feeds the next bytes of the connection. */
  push(chunk: Uint8Array): void {
    if (this.state === 'failed') return;
    this.buf = this.buf.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length) : Buffer.concat([this.buf, chunk]);
    try {
      while (this.step());
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      this.state = 'failed';
      this.buf = Buffer.alloc(0);
      this.handler.onError({ status: e.status, message: e.message });
    }
  }

  /** The connection ended: a request cut short is an error (400); nothing happens between requests. */
  end(): void {
    if (this.state === 'failed') return;
    if (this.state === 'head' && this.buf.every((b) => b === CR || b === LF)) return;
    this.state = 'failed';
    this.buf = Buffer.alloc(0);
    this.handler.onError({ status: 400, message: 'the connection ended in the middle of a request' });
  }

  /** One step of work on the buffered bytes; false when more bytes are needed. */
  private step(): boolean {
    switch (this.state) {
      case 'head':
        return this.readHead();
      case 'body':
        return this.readBody();
      case 'chunkSize':
        return this.readChunkSize();
      case 'chunkData':
        return this.readChunkData();
      case 'chunkDataEnd':
        return this.readChunkDataEnd();
      case 'trailers':
        return this.readTrailers();
      case 'failed':
        return false;
    }
  }

  private readHead(): boolean {
    // Empty lines before a request line are skipped (RFC 9112 §2.2).
    // CR and LF bytes before a request line are skipped (RFC 9112 §2.2 asks to ignore at least one
    // empty line; node:http skips any such bytes there too).
    let start = 0;
    while (start < this.buf.length && (this.buf[start] === CR || this.buf[start] === LF)) start++;
    if (start > 0) this.buf = this.buf.subarray(start);
    if (this.buf.length === 0) return false;
    const end = findHeadEnd(this.buf, this.limits.headBytesMax);
    if (end < 0) {
      if (this.buf.length > this.limits.headBytesMax) refuse(431, `the request line and header fields are larger than ${this.limits.headBytesMax} bytes`);
      return false;
    }
    if (end > this.limits.headBytesMax) refuse(431, `the request line and header fields are larger than ${this.limits.headBytesMax} bytes`);
    const headBytes = this.buf.subarray(0, end);
    this.buf = this.buf.subarray(end);
    const head = parseHead(headBytes, this.limits);
    this.head = head;
    this.handler.onHead(head);
    if (this.state === 'failed') return false;
    this.bodyParts = [];
    this.bodyBytes = 0;
    this.trailers = [];
    if (head.chunked) {
      this.state = 'chunkSize';
      return true;
    }
    if (head.contentLength > 0) {
      this.remaining = head.contentLength;
      this.state = 'body';
      return true;
    }
    this.finish(head.contentLength === 0 && hasField(head, 'content-length') ? Buffer.alloc(0) : null);
    return true;
  }

  private readBody(): boolean {
    if (this.buf.length === 0) return false;
    const take = Math.min(this.remaining, this.buf.length);
    this.bodyParts.push(this.buf.subarray(0, take));
    this.buf = this.buf.subarray(take);
    this.remaining -= take;
    if (this.remaining > 0) return false;
    this.finish(this.bodyParts.length === 1 ? Buffer.from(this.bodyParts[0] as Buffer) : Buffer.concat(this.bodyParts));
    return true;
  }

  private readChunkSize(): boolean {
    const lineEnd = this.buf.indexOf(LF);
    if (lineEnd < 0) {
      if (this.buf.length > CHUNK_LINE_BYTES_MAX) refuse(400, 'a chunk-size line is too long');
      return false;
    }
    if (lineEnd > CHUNK_LINE_BYTES_MAX) refuse(400, 'a chunk-size line is too long');
    if (lineEnd === 0 || this.buf[lineEnd - 1] !== CR) refuse(400, 'a line ending in LF without CR');
    const line = this.buf.subarray(0, lineEnd - 1);
    this.buf = this.buf.subarray(lineEnd + 1);
    let i = 0;
    let size = 0;
    while (i < line.length && HEX[line[i] as number]! >= 0) {
      if (i >= CHUNK_SIZE_DIGITS_MAX) refuse(400, 'a chunk size has too many digits');
      size = size * 16 + (HEX[line[i] as number] as number);
      i++;
    }
    if (i === 0) refuse(400, 'a chunk size is not a hexadecimal number');
    parseChunkExtensions(line, i);
    if (size === 0) {
      this.state = 'trailers';
      return true;
    }
    if (this.bodyBytes + size > this.limits.bodyBytesMax) refuse(413, `the request body is larger than ${this.limits.bodyBytesMax} bytes`);
    this.remaining = size;
    this.state = 'chunkData';
    return true;
  }

  private readChunkData(): boolean {
    if (this.buf.length === 0) return false;
    const take = Math.min(this.remaining, this.buf.length);
    this.bodyParts.push(this.buf.subarray(0, take));
    this.bodyBytes += take;
    this.buf = this.buf.subarray(take);
    this.remaining -= take;
    if (this.remaining > 0) return false;
    this.state = 'chunkDataEnd';
    return true;
  }

  private readChunkDataEnd(): boolean {
    // Chunk data ends with CRLF.
    if (this.buf.length === 0) return false;
    if (this.buf[0] === LF) {
      refuse(400, 'a line ending in LF without CR');
    } else if (this.buf[0] === CR) {
      if (this.buf.length < 2) return false;
      if (this.buf[1] !== LF) refuse(400, 'chunk data is not followed by CRLF');
      this.buf = this.buf.subarray(2);
    } else {
      refuse(400, 'chunk data is longer than its chunk size');
    }
    this.state = 'chunkSize';
    return true;
  }

  private readTrailers(): boolean {
    // Trailer fields, then an empty line: an empty line at once is the common case.
    if (this.buf.length === 0) return false;
    if (this.buf[0] === LF) refuse(400, 'a line ending in LF without CR');
    if (this.buf[0] === CR && this.buf[1] === LF) {
      this.buf = this.buf.subarray(2);
      this.finish(Buffer.concat(this.bodyParts));
      return true;
    }
    if (this.buf[0] === CR && this.buf.length < 2) return false;
    const end = findFieldsEnd(this.buf, this.limits.headBytesMax);
    if (end < 0) {
      if (this.buf.length > this.limits.headBytesMax) refuse(431, `the trailer fields are larger than ${this.limits.headBytesMax} bytes`);
      return false;
    }
    const block = this.buf.subarray(0, end);
    this.buf = this.buf.subarray(end);
    this.trailers = parseFields(block, 0, this.limits.headerCountMax);
    this.finish(Buffer.concat(this.bodyParts));
    return true;
  }

  private finish(body: Buffer | null): void {
    const head = this.head as RequestHead;
    this.handler.onRequest({ head, body, trailers: this.trailers });
    this.head = null;
    this.bodyParts = [];
    if (this.state !== 'failed') this.state = 'head';
  }
}

function hasField(head: RequestHead, name: string): boolean {
  return head.headers.some(([n]) => n === name);
}

/** The offset just after the empty line that ends a head starting at 0, or -1 (looks at most `max` + 4 bytes). */
function findHeadEnd(b: Buffer, max: number): number {
  return findFieldsEnd(b, max, true);
}

/**
 * The offset after the empty line ending a block of lines (a head, or trailer fields). With
 * `firstLine`, the block starts with a request line. Looks no further than `max` + 4 bytes.
 */
function findFieldsEnd(b: Buffer, max: number, firstLine = false): number {
  const limit = Math.min(b.length, max + 4);
  let lineStart = 0;
  for (let i = 0; i < limit; i++) {
    if (b[i] !== LF) continue;
    if (i === 0 || b[i - 1] !== CR) refuse(400, 'a line ending in LF without CR');
    const lineLength = i - lineStart - 1;
    if (lineLength === 0 && (lineStart > 0 || !firstLine)) return i + 1;
    lineStart = i + 1;
  }
  return -1;
}

/**
 * A parsed head. Field names and values stay bytes in the head's buffer until `headers` is asked for
 * (a handler that reads no header costs no string per field); the fields framing needs were read
 * while parsing.
 */
class Head implements RequestHead {
  private materialized: (readonly [string, string])[] | null = null;

  constructor(
    readonly method: string,
    readonly target: string,
    readonly minorVersion: 0 | 1,
    readonly keepAlive: boolean,
    readonly expectContinue: boolean,
    readonly contentLength: number,
    readonly chunked: boolean,
    private readonly bytes: Buffer,
    /** name start, name end, value start, value end per field. */
    private readonly spans: readonly number[],
  ) {}

  get headers(): readonly (readonly [string, string])[] {
    if (this.materialized === null) this.materialized = materialize(this.bytes, this.spans);
    return this.materialized;
  }
}

function materialize(b: Buffer, spans: readonly number[]): (readonly [string, string])[] {
  const out: (readonly [string, string])[] = [];
  for (let i = 0; i < spans.length; i += 4) out.push([b.toString('latin1', spans[i], spans[i + 1]).toLowerCase(), b.toString('latin1', spans[i + 2], spans[i + 3])]);
  return out;
}

function fieldValue(b: Buffer, spans: readonly number[], i: number): string {
  return b.toString('latin1', spans[i + 2], spans[i + 3]);
}

/** Whether b[start, end) is `lower` (lower-case ASCII) compared without case. */
function nameIs(b: Buffer, start: number, end: number, lower: string): boolean {
  if (end - start !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) if (((b[start + i] as number) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/** Splits a head's bytes (request line, fields, empty line) and checks every rule. */
function parseHead(b: Buffer, limits: ParserLimits): RequestHead {
  const lineEnd = b.indexOf(LF);
  const requestLine = b.subarray(0, lineEnd > 0 && b[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd);
  const { method, target, minorVersion } = parseRequestLine(requestLine);
  const spans = parseFieldSpans(b, lineEnd + 1, limits.headerCountMax);
  let contentLength = -2; // -2: none seen
  let transferEncoding: string | null = null;
  let hosts = 0;
  let connection = '';
  let expect: string | null = null;
  for (let i = 0; i < spans.length; i += 4) {
    const ns = spans[i] as number;
    const ne = spans[i + 1] as number;
    switch (ne - ns) {
      case 14:
        if (nameIs(b, ns, ne, 'content-length')) {
          const v = fieldValue(b, spans, i);
          if (contentLength !== -2 || v.includes(',')) refuse(400, 'Content-Length is given more than once');
          if (!/^[0-9]{1,15}$/.test(v)) refuse(400, `Content-Length '${clip(v)}' is not a number of bytes`);
          contentLength = Number(v);
        }
        break;
      case 17:
        if (nameIs(b, ns, ne, 'transfer-encoding')) transferEncoding = transferEncoding === null ? fieldValue(b, spans, i) : `${transferEncoding}, ${fieldValue(b, spans, i)}`;
        break;
      case 4:
        if (nameIs(b, ns, ne, 'host')) hosts++;
        break;
      case 10:
        if (nameIs(b, ns, ne, 'connection')) connection = connection === '' ? fieldValue(b, spans, i).toLowerCase() : `${connection}, ${fieldValue(b, spans, i).toLowerCase()}`;
        break;
      case 6:
        if (nameIs(b, ns, ne, 'expect')) expect = fieldValue(b, spans, i).toLowerCase();
        break;
    }
  }
  if (minorVersion === 1 && hosts !== 1) refuse(400, hosts === 0 ? 'an HTTP/1.1 request without Host' : 'more than one Host field');
  let chunked = false;
  if (transferEncoding !== null) {
    if (contentLength !== -2) refuse(400, 'both Transfer-Encoding and Content-Length: the body length is ambiguous');
    if (minorVersion === 0) refuse(400, 'Transfer-Encoding in an HTTP/1.0 request');
    const codings = transferEncoding.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '');
    const last = codings[codings.length - 1];
    if (last !== 'chunked') refuse(400, `Transfer-Encoding '${clip(transferEncoding)}' does not end with chunked: the body length cannot be determined`);
    const before = codings.slice(0, -1);
    if (before.includes('chunked')) refuse(400, `Transfer-Encoding '${clip(transferEncoding)}' applies chunked more than once`);
    if (before.length > 0) refuse(501, `transfer coding '${clip(before.join(', '))}' is not supported (only chunked)`);
    chunked = true;
  }
  if (contentLength > limits.bodyBytesMax) refuse(413, `the request body is larger than ${limits.bodyBytesMax} bytes`);
  let keepAlive = minorVersion === 1;
  if (connection !== '') {
    const tokens = connection.split(',').map((t) => t.trim());
    keepAlive = minorVersion === 1 ? !tokens.includes('close') : tokens.includes('keep-alive') && !tokens.includes('close');
  }
  return new Head(method, target, minorVersion, keepAlive, minorVersion === 1 && expect === '100-continue', chunked ? -1 : contentLength === -2 ? 0 : contentLength, chunked, b, spans);
}

function parseRequestLine(line: Buffer): { method: string; target: string; minorVersion: 0 | 1 } {
  const firstSp = line.indexOf(SP);
  if (firstSp <= 0) refuse(400, 'a malformed request line');
  for (let i = 0; i < firstSp; i++) if (TCHAR[line[i] as number] !== 1) refuse(400, 'a malformed method');
  const secondSp = line.indexOf(SP, firstSp + 1);
  if (secondSp < 0) refuse(400, 'a request line without an HTTP version (HTTP/0.9 is not supported)');
  if (secondSp === firstSp + 1) refuse(400, 'a request line with more than one space between its parts');
  const version = line.subarray(secondSp + 1);
  if (version[0] === SP) refuse(400, 'a request line with more than one space between its parts');
  if (version.length !== 8 || version.toString('latin1', 0, 5) !== 'HTTP/' || version[6] !== 0x2e) refuse(400, 'a malformed HTTP version');
  const major = (version[5] as number) - 0x30;
  const minor = (version[7] as number) - 0x30;
  if (major < 0 || major > 9 || minor < 0 || minor > 9) refuse(400, 'a malformed HTTP version');
  if (major !== 1 || (minor !== 0 && minor !== 1)) refuse(505, `HTTP/${major}.${minor} is not supported`);
  for (let i = firstSp + 1; i < secondSp; i++) {
    const c = line[i] as number;
    if (c <= SP || c >= 0x7f) refuse(400, 'a request target with a control character, space or non-ASCII byte');
  }
  const method = line.toString('latin1', 0, firstSp);
  if (!METHODS.has(method)) refuse(501, `method '${clip(method)}' is not implemented`);
  let target = line.toString('latin1', firstSp + 1, secondSp);
  if (target.charCodeAt(0) !== 0x2f) {
    if (target === '*') {
      if (method !== 'OPTIONS') refuse(400, 'the asterisk form is for OPTIONS only');
    } else {
      const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^#]*)$/.exec(target);
      if (m === null) refuse(400, 'a request target that is neither a path nor an absolute URI');
      const rest = m[1] as string;
      target = rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
    }
  }
  if (target.includes('#')) refuse(400, 'a request target with a fragment');
  return { method, target, minorVersion: minor as 0 | 1 };
}

/** Field lines from `from` up to the empty line; lower-cased names, trimmed values. */
function parseFields(b: Buffer, from: number, countMax: number): (readonly [string, string])[] {
  return materialize(b, parseFieldSpans(b, from, countMax));
}

/**
 * Checks the field lines from `from` up to the empty line and returns, per field, the start and end
 * of its name and of its value (trimmed of SP and HTAB).
 */
function parseFieldSpans(b: Buffer, from: number, countMax: number): number[] {
  const out: number[] = [];
  let pos = from;
  for (;;) {
    const lf = b.indexOf(LF, pos);
    if (lf < 0) refuse(400, 'a header block without its end');
    const end = lf > pos && b[lf - 1] === CR ? lf - 1 : lf;
    if (end === pos) return out;
    if (out.length >= countMax * 4) refuse(431, `more than ${countMax} header fields`);
    const first = b[pos] as number;
    if (first === SP || first === HTAB) refuse(400, 'obsolete line folding in a header field');
    let colon = pos;
    while (colon < end && b[colon] !== COLON) {
      const c = b[colon] as number;
      if (c === SP || c === HTAB) {
        if (b.indexOf(COLON, colon) < end && b.indexOf(COLON, colon) >= 0) refuse(400, 'whitespace between a header field name and its colon');
        refuse(400, 'a header field without a colon');
      }
      if (TCHAR[c] !== 1) refuse(400, 'a header field name with a character that is not a token character');
      colon++;
    }
    if (colon >= end) refuse(400, 'a header field without a colon');
    if (colon === pos) refuse(400, 'a header field with an empty name');
    let vs = colon + 1;
    let ve = end;
    while (vs < ve && (b[vs] === SP || b[vs] === HTAB)) vs++;
    while (ve > vs && (b[ve - 1] === SP || b[ve - 1] === HTAB)) ve--;
    // A tab after a Content-Length value is refused (node:http refuses it; before it, it is OWS).
    if (colon - pos === 14 && nameIs(b, pos, colon, 'content-length')) for (let i = vs; i < end; i++) if (b[i] === HTAB) refuse(400, 'a tab after a Content-Length value');
    for (let i = vs; i < ve; i++) {
      const c = b[i] as number;
      if (c === CR) refuse(400, 'a bare CR in a header field');
      if ((c < SP && c !== HTAB) || c === 0x7f) refuse(400, c === 0 ? 'a NUL in a header field' : 'a control character in a header field');
    }
    out.push(pos, colon, vs, ve);
    pos = lf + 1;
  }
}

/**
 * Checks `;name[=value]` chunk extensions after the size (values: token or quoted-string). No
 * whitespace anywhere on the line: the grammar allows some (BWS), node:http refuses it, and so does
 * this parser, so neither reads a chunk line the other refuses.
 */
function parseChunkExtensions(line: Buffer, from: number): void {
  let i = from;
  const ws = (): void => {
    if (i < line.length && (line[i] === SP || line[i] === HTAB)) refuse(400, 'whitespace in a chunk-size line');
  };
  ws();
  while (i < line.length) {
    if (line[i] !== 0x3b) refuse(400, 'a chunk size followed by something other than an extension');
    i++;
    ws();
    const nameStart = i;
    while (i < line.length && TCHAR[line[i] as number] === 1) i++;
    if (i === nameStart) refuse(400, 'a chunk extension without a name');
    ws();
    if (i < line.length && line[i] === 0x3d) {
      i++;
      ws();
      if (line[i] === 0x22) {
        i++;
        for (;;) {
          if (i >= line.length) refuse(400, 'an unterminated quoted chunk extension value');
          const c = line[i] as number;
          if (c === 0x22) break;
          if (c === 0x5c) i++;
          else if ((c < SP && c !== HTAB) || c === 0x7f) refuse(400, 'a control character in a chunk extension');
          i++;
        }
        i++;
      } else {
        const valueStart = i;
        while (i < line.length && TCHAR[line[i] as number] === 1) i++;
        if (i === valueStart) refuse(400, 'a chunk extension with an empty value');
      }
      ws();
    }
  }
  for (let k = from; k < line.length; k++) if (line[k] === CR) refuse(400, 'a bare CR in a chunk-size line');
}

function clip(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 60)}…`;
}
