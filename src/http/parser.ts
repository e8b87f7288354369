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
// or a chunk size that is not exactly what the grammar allows; HTTP/1.1 without one Host field; a
// line ending in a bare LF; an empty element or a tab in Transfer-Encoding. Empty lines before a
// request line are skipped.
//
// Limits: the request line and fields (and a chunked body's trailer fields) at most `headBytesMax`
// bytes (431), at most `headerCountMax` fields (431), a body at most `bodyBytesMax` bytes (413).
//
// Invariants: the output does not depend on how the input was split; a request is reported only
// whole; after an error nothing more is reported; every byte of a head is looked at once, line by
// line as lines complete, however the head was split (a read that leaves a partial head copies only
// that part forward); pause() stops reporting mid-read and resume() goes on from there.
//
// Borrowed input (`push(chunk, true)`): the chunk's memory is reused by the caller once push returns
// (a read buffer shared by all connections, src/runtime/shared-reads.ts). Nothing the parser hands
// out or keeps may point into it then: a body reported is a copy, and at the end of the push what
// stays (the unused bytes, the parts of a body still arriving, the head of that request) is copied
// out. A head reported while its request completed is left in place; a handler that keeps it past
// its report (an answer that waits) calls its detach() first.

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
  /** Whether a Content-Length field was given (a `Content-Length: 0` body is empty, not absent). */
  readonly hasContentLength: boolean;
  /**
   * One field's value by its lower-case name, read from the head's bytes without building the
   * others: the first value for fields that allow one (`content-type`, `authorization`, …), the
   * values joined with ", " for list fields; undefined when absent.
   */
  header(lowerName: string): string | undefined;
  /**
   * Copies the head's field bytes into memory of its own. Called by whoever keeps a head past the
   * report of a request that was pushed borrowed (its bytes are about to be reused).
   */
  detach(): void;
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
  /** The member's error code for it (docs/errors), e.g. ERR_HTTP_BODY_TOO_LARGE. */
  readonly code: HttpErrorCode;
  readonly message: string;
  /**
   * The request line of the request the error belongs to, when it was read (an error in its fields
   * or its body); null for an error in the request line itself or before it.
   */
  readonly request: { readonly method: string; readonly target: string } | null;
}

export type HttpErrorCode = 'ERR_HTTP_BAD_REQUEST' | 'ERR_HTTP_BODY_TOO_LARGE' | 'ERR_HTTP_HEADERS_TOO_LARGE' | 'ERR_HTTP_TRANSFER_CODING' | 'ERR_HTTP_METHOD' | 'ERR_HTTP_VERSION';

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
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const CODE_OF_STATUS: Readonly<Record<number, HttpErrorCode>> = {
  400: 'ERR_HTTP_BAD_REQUEST',
  413: 'ERR_HTTP_BODY_TOO_LARGE',
  431: 'ERR_HTTP_HEADERS_TOO_LARGE',
  505: 'ERR_HTTP_VERSION',
};

function refuse(status: number, message: string, code: HttpErrorCode = CODE_OF_STATUS[status] as HttpErrorCode): never {
  throw new Refusal(status, code, message);
}

export class RequestParser {
  /** Bytes read and not yet used: buf[pos, buf.length). */
  private buf: Buffer = EMPTY;
  private pos = 0;
  private state: State = 'head';
  // The head being read. Offsets are into `buf`; a head is consumed (pos moves) only when complete.
  /** Where the request line starts; -1 before its first byte. */
  private headStart = -1;
  /** Where the line being scanned starts. */
  private lineStart = 0;
  /** The next byte to scan for a line end. */
  private scanPos = 0;
  private fieldsStart = 0;
  private fieldCount = 0;
  /** -2 while no Content-Length field was seen. */
  private contentLength = -2;
  private transferEncoding: string | null = null;
  private hosts = 0;
  private connection = '';
  private expect: string | null = null;
  /** Where the first Content-Type value is (-1: none): handlers ask for it on every write. */
  private typeStart = -1;
  private typeEnd = -1;
  /** The request line of the request being read, once read (errors name it). */
  private hasLine = false;
  private lineMethod = '';
  private lineTarget = '';
  private lineMinor: 0 | 1 = 1;
  private head: Head | null = null;
  private bodyParts: Buffer[] = [];
  private bodyBytes = 0;
  private remaining = 0;
  private trailers: readonly (readonly [string, string])[] = NO_FIELDS;
  private paused = false;
  private stepping = false;
  /** Requests reported whole so far. */
  requestsDone = 0;
  /** The memory of the borrowed chunk being pushed; null outside such a push. */
  private borrowed: ArrayBufferLike | null = null;

  constructor(
    private readonly limits: ParserLimits,
    private readonly handler: ParserHandler,
  ) {}

  /** Whether an error ended the parse. */
  get failed(): boolean {
    return this.state === 'failed';
  }

  /** Whether part of a request (head or body) has been read and its end has not. */
  get midRequest(): boolean {
    return this.state !== 'head' ? this.state !== 'failed' : this.buf.length > this.pos;
  }

  /** Whether the part being read is a head (request line and fields), not a body. */
  get readingHead(): boolean {
    return this.state === 'head';
  }

  /** Bytes held that no request has used yet. */
  get buffered(): number {
    return this.buf.length - this.pos;
  }

  /** The request line of the request being read, once read; else null. */
  get currentRequest(): { readonly method: string; readonly target: string } | null {
    return this.hasLine ? { method: this.lineMethod, target: this.lineTarget } : null;
  }

  /**
   * Stops reporting: called from a handler, no further head or request is reported (the rest of
   * the bytes pushed so far stay buffered) until resume().
   */
  pause(): void {
    this.paused = true;
  }

  /** Reports what the buffered bytes still hold, then goes on as pushes come. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.run();
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Feeds the next bytes of the connection. `borrowed`: the chunk's memory is reused once this
   * returns, so nothing may keep pointing into it (see the top of this file).
   */
  push(chunk: Uint8Array, borrowed = false): void {
    if (this.state === 'failed') return;
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const rest = this.buf.length - this.pos;
    if (rest === 0) {
      this.buf = bytes;
      this.pos = 0;
    } else {
      // The unused bytes move to the front of a new buffer; offsets into the old one move with them.
      const next = Buffer.allocUnsafe(rest + bytes.length);
      this.buf.copy(next, 0, this.pos);
      bytes.copy(next, rest);
      this.moveTo(next);
    }
    if (!borrowed) {
      this.run();
      return;
    }
    this.borrowed = bytes.buffer;
    try {
      this.run();
    } finally {
      this.borrowed = null;
      this.giveBack(bytes.buffer);
    }
  }

  /** The unused bytes (from `pos`) are now at the front of `next`: offsets move with them. */
  private moveTo(next: Buffer): void {
    const shift = this.pos;
    this.buf = next;
    this.pos = 0;
    if (this.headStart >= 0) {
      this.headStart -= shift;
      this.lineStart -= shift;
      this.scanPos -= shift;
      this.fieldsStart -= shift;
      if (this.typeStart >= 0) {
        this.typeStart -= shift;
        this.typeEnd -= shift;
      }
    }
  }

  /** The end of a borrowed push: what stays is copied out of the chunk's memory. */
  private giveBack(memory: ArrayBufferLike): void {
    if (this.buf.buffer === memory) this.moveTo(Buffer.from(this.buf.subarray(this.pos)));
    const parts = this.bodyParts;
    for (let i = 0; i < parts.length; i++) if ((parts[i] as Buffer).buffer === memory) parts[i] = Buffer.from(parts[i] as Buffer);
    if (this.head !== null) this.head.detachFrom(memory);
  }

  private run(): void {
    // A handler may push or resume from inside a report; the loop already running picks it up.
    if (this.stepping) return;
    this.stepping = true;
    try {
      while (!this.paused && this.step());
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      this.fail(e.status, e.code, e.message);
    } finally {
      this.stepping = false;
    }
    // Everything used: drop the reference, so a kept-alive connection holds no read buffer.
    if (this.pos >= this.buf.length && this.headStart < 0) {
      this.buf = EMPTY;
      this.pos = 0;
    }
  }

  private fail(status: number, code: HttpErrorCode, message: string): void {
    this.state = 'failed';
    this.buf = EMPTY;
    this.pos = 0;
    this.bodyParts = [];
    this.handler.onError({ status, code, message, request: this.currentRequest });
  }

  /** The connection ended: a request cut short is an error (400); nothing happens between requests. */
  end(): void {
    if (this.state === 'failed') return;
    if (this.state === 'head' && this.buf.subarray(this.pos).every((b) => b === CR || b === LF)) return;
    this.fail(400, 'ERR_HTTP_BAD_REQUEST', 'the connection ended in the middle of a request');
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

  /**
   * Scans for line ends from where the last push stopped; each complete line is checked and read at
   * once (the request line, then fields), so every byte is looked at once however the head was split.
   */
  private readHead(): boolean {
    const b = this.buf;
    const len = b.length;
    let i = this.scanPos;
    if (this.headStart < 0) {
      // CR and LF bytes before a request line are skipped (RFC 9112 §2.2 asks to ignore at least one
      // empty line; node:http skips any such bytes there too).
      let p = this.pos;
      while (p < len && (b[p] === CR || b[p] === LF)) p++;
      this.pos = p;
      if (p >= len) return false;
      this.headStart = p;
      this.lineStart = p;
      i = p;
      this.hasLine = false;
      this.fieldCount = 0;
      this.typeStart = -1;
      this.contentLength = -2;
      this.transferEncoding = null;
      this.hosts = 0;
      this.connection = '';
      this.expect = null;
    }
    const max = this.limits.headBytesMax;
    const stop = Math.min(len, this.headStart + max);
    for (; i < stop; i++) {
      // Line ends are found natively (several times faster than a loop over the bytes).
      i = b.indexOf(LF, i);
      if (i < 0 || i >= stop) {
        i = stop;
        break;
      }
      if (b[i - 1] !== CR) refuse(400, 'a line ending in LF without CR');
      const lineEnd = i - 1;
      if (!this.hasLine) {
        this.readRequestLine(b, this.lineStart, lineEnd);
        this.fieldsStart = i + 1;
      } else if (lineEnd === this.lineStart) {
        this.scanPos = 0;
        return this.headDone(b, lineEnd, i + 1);
      } else {
        this.readField(b, this.lineStart, lineEnd);
      }
      this.lineStart = i + 1;
    }
    this.scanPos = i;
    if (len - this.headStart > max) refuse(431, `the request line and header fields are larger than ${max} bytes`);
    return false;
  }

  /** Checks one field line [s, e) of a head and reads the fields that frame the request. */
  private readField(b: Buffer, s: number, e: number): void {
    if (++this.fieldCount > this.limits.headerCountMax) refuse(431, `more than ${this.limits.headerCountMax} header fields`);
    checkField(b, s, e);
    const colon = fieldColon;
    const vs = fieldValueStart;
    const ve = fieldValueEnd;
    switch (colon - s) {
      case 14:
        if (nameIs(b, s, colon, 'content-length')) {
          for (let k = vs; k < e; k++) if (b[k] === HTAB) refuse(400, 'a tab after a Content-Length value');
          if (this.contentLength !== -2 || b.indexOf(0x2c, vs) >= 0 && b.indexOf(0x2c, vs) < ve) refuse(400, 'Content-Length is given more than once');
          let n = 0;
          const digits = ve - vs;
          let ok = digits >= 1 && digits <= 15;
          for (let k = vs; ok && k < ve; k++) {
            const d = (b[k] as number) - 0x30;
            if (d < 0 || d > 9) ok = false;
            else n = n * 10 + d;
          }
          if (!ok) refuse(400, `Content-Length '${clip(b.toString('latin1', vs, ve))}' is not a number of bytes`);
          this.contentLength = n;
        }
        break;
      case 17:
        if (nameIs(b, s, colon, 'transfer-encoding')) {
          // As for Content-Length, no tab around the framing value (node:http refuses a trailing one).
          for (let k = colon + 1; k < e; k++) if (b[k] === HTAB) refuse(400, 'a tab in a Transfer-Encoding value');
          const v = b.toString('latin1', vs, ve);
          this.transferEncoding = this.transferEncoding === null ? v : `${this.transferEncoding}, ${v}`;
        }
        break;
      case 4:
        if (nameIs(b, s, colon, 'host')) this.hosts++;
        break;
      case 10:
        if (nameIs(b, s, colon, 'connection')) {
          const v = b.toString('latin1', vs, ve).toLowerCase();
          this.connection = this.connection === '' ? v : `${this.connection}, ${v}`;
        }
        break;
      case 6:
        if (nameIs(b, s, colon, 'expect')) this.expect = b.toString('latin1', vs, ve).toLowerCase();
        break;
      case 12:
        if (this.typeStart < 0 && nameIs(b, s, colon, 'content-type')) {
          this.typeStart = vs;
          this.typeEnd = ve;
        }
        break;
    }
  }

  /** The head ends with the empty line at `emptyLine` (its CR); `end` is just after it. */
  private headDone(b: Buffer, emptyLine: number, end: number): boolean {
    const method = this.lineMethod;
    const target = this.lineTarget;
    const minorVersion = this.lineMinor;
    const limits = this.limits;
    if (minorVersion === 1 && this.hosts !== 1) refuse(400, this.hosts === 0 ? 'an HTTP/1.1 request without Host' : 'more than one Host field');
    const contentLength = this.contentLength;
    let chunked = false;
    const transferEncoding = this.transferEncoding;
    if (transferEncoding !== null) {
      if (contentLength !== -2) refuse(400, 'both Transfer-Encoding and Content-Length: the body length is ambiguous');
      if (minorVersion === 0) refuse(400, 'Transfer-Encoding in an HTTP/1.0 request');
      const codings = transferEncoding.split(',').map((c) => c.trim().toLowerCase());
      // An empty list element (`chunked,`) is refused rather than skipped: framing is read exactly as
      // strictly as node:http (and most proxies) read it, so no two readers disagree on a body.
      if (codings.includes('')) refuse(400, `Transfer-Encoding '${clip(transferEncoding)}' has an empty element`);
      const last = codings[codings.length - 1];
      if (last !== 'chunked') refuse(400, `Transfer-Encoding '${clip(transferEncoding)}' does not end with chunked: the body length cannot be determined`);
      const before = codings.slice(0, -1);
      if (before.includes('chunked')) refuse(400, `Transfer-Encoding '${clip(transferEncoding)}' applies chunked more than once`);
      if (before.length > 0) refuse(501, `transfer coding '${clip(before.join(', '))}' is not supported (only chunked)`, 'ERR_HTTP_TRANSFER_CODING');
      chunked = true;
    }
    if (contentLength > limits.bodyBytesMax) refuse(413, `the request body is larger than ${limits.bodyBytesMax} bytes`);
    let keepAlive = minorVersion === 1;
    if (this.connection !== '') {
      const tokens = this.connection.split(',').map((t) => t.trim());
      keepAlive = minorVersion === 1 ? !tokens.includes('close') : tokens.includes('keep-alive') && !tokens.includes('close');
    }
    const hasContentLength = contentLength !== -2;
    const head = new Head(method, target, minorVersion, keepAlive, minorVersion === 1 && this.expect === '100-continue', chunked ? -1 : hasContentLength ? contentLength : 0, chunked, hasContentLength, b, this.fieldsStart, emptyLine, this.typeStart, this.typeEnd);
    this.pos = end;
    this.headStart = -1;
    this.head = head;
    this.handler.onHead(head);
    if (this.state === 'failed') return false;
    if (this.bodyParts.length !== 0) this.bodyParts = [];
    this.bodyBytes = 0;
    this.trailers = NO_FIELDS;
    if (chunked) {
      this.state = 'chunkSize';
      return true;
    }
    if (head.contentLength > 0) {
      this.remaining = head.contentLength;
      this.state = 'body';
      return true;
    }
    this.finish(hasContentLength ? EMPTY : null);
    return true;
  }

  /** Up to `remaining` body bytes from the buffer (a view), or null when none are buffered. */
  private takeBody(): Buffer | null {
    const available = this.buf.length - this.pos;
    if (available === 0) return null;
    const take = Math.min(this.remaining, available);
    const part = this.buf.subarray(this.pos, this.pos + take);
    this.pos += take;
    this.remaining -= take;
    return part;
  }

  private readBody(): boolean {
    const part = this.takeBody();
    if (part === null) return false;
    if (this.remaining > 0) {
      this.bodyParts.push(part);
      return false;
    }
    // One piece: a view of the bytes read (stores copy what they keep).
    if (this.bodyParts.length === 0) this.finish(part);
    else {
      this.bodyParts.push(part);
      this.finish(Buffer.concat(this.bodyParts));
    }
    return true;
  }

  private readChunkSize(): boolean {
    const b = this.buf;
    const pos = this.pos;
    const lineEnd = b.indexOf(LF, pos);
    if (lineEnd < 0) {
      if (b.length - pos > CHUNK_LINE_BYTES_MAX) refuse(400, 'a chunk-size line is too long');
      return false;
    }
    if (lineEnd - pos > CHUNK_LINE_BYTES_MAX) refuse(400, 'a chunk-size line is too long');
    if (lineEnd === pos || b[lineEnd - 1] !== CR) refuse(400, 'a line ending in LF without CR');
    const line = b.subarray(pos, lineEnd - 1);
    this.pos = lineEnd + 1;
    let i = 0;
    let size = 0;
    while (i < line.length && (HEX[line[i] as number] as number) >= 0) {
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
    const part = this.takeBody();
    if (part === null) return false;
    this.bodyParts.push(part);
    this.bodyBytes += part.length;
    if (this.remaining > 0) return false;
    this.state = 'chunkDataEnd';
    return true;
  }

  private readChunkDataEnd(): boolean {
    // Chunk data ends with CRLF.
    const b = this.buf;
    const pos = this.pos;
    if (b.length - pos === 0) return false;
    if (b[pos] === LF) {
      refuse(400, 'a line ending in LF without CR');
    } else if (b[pos] === CR) {
      if (b.length - pos < 2) return false;
      if (b[pos + 1] !== LF) refuse(400, 'chunk data is not followed by CRLF');
      this.pos = pos + 2;
    } else {
      refuse(400, 'chunk data is longer than its chunk size');
    }
    this.state = 'chunkSize';
    return true;
  }

  private readTrailers(): boolean {
    // Trailer fields, then an empty line: an empty line at once is the common case.
    const b = this.buf;
    const pos = this.pos;
    const available = b.length - pos;
    if (available === 0) return false;
    if (b[pos] === LF) refuse(400, 'a line ending in LF without CR');
    if (b[pos] === CR && available >= 2 && b[pos + 1] === LF) {
      this.pos = pos + 2;
      this.finish(Buffer.concat(this.bodyParts));
      return true;
    }
    if (b[pos] === CR && available < 2) return false;
    const block = b.subarray(pos);
    const end = findFieldsEnd(block, this.limits.headBytesMax);
    if (end < 0) {
      if (available > this.limits.headBytesMax) refuse(431, `the trailer fields are larger than ${this.limits.headBytesMax} bytes`);
      return false;
    }
    this.pos = pos + end;
    this.trailers = parseFieldLines(block, 0, end - 2, this.limits.headerCountMax);
    this.finish(Buffer.concat(this.bodyParts));
    return true;
  }

  private finish(body: Buffer | null): void {
    // A body read from a borrowed chunk is handed out as a copy: handlers and stores may keep it.
    if (body !== null && body.length > 0 && body.buffer === this.borrowed) body = Buffer.from(body);
    const head = this.head as Head;
    this.head = null;
    this.hasLine = false;
    if (this.bodyParts.length > 0) this.bodyParts = [];
    this.state = 'head';
    this.requestsDone++;
    // The head is the request too (no object per request beyond it).
    head.body = body;
    head.trailers = this.trailers;
    this.handler.onRequest(head);
  }

  /** The request line b[s, e) (without its CRLF). */
  private readRequestLine(b: Buffer, s: number, e: number): void {
    const firstSp = indexIn(b, SP, s, e);
    if (firstSp <= s) refuse(400, 'a malformed request line');
    for (let i = s; i < firstSp; i++) if (TCHAR[b[i] as number] !== 1) refuse(400, 'a malformed method');
    let secondSp = b.indexOf(SP, firstSp + 1);
    if (secondSp >= e) secondSp = -1;
    if (secondSp < 0) refuse(400, 'a request line without an HTTP version (HTTP/0.9 is not supported)');
    if (secondSp === firstSp + 1) refuse(400, 'a request line with more than one space between its parts');
    const v = secondSp + 1;
    if (b[v] === SP) refuse(400, 'a request line with more than one space between its parts');
    if (e - v !== 8 || b[v] !== 0x48 || b[v + 1] !== 0x54 || b[v + 2] !== 0x54 || b[v + 3] !== 0x50 || b[v + 4] !== 0x2f || b[v + 6] !== 0x2e) refuse(400, 'a malformed HTTP version');
    const major = (b[v + 5] as number) - 0x30;
    const minor = (b[v + 7] as number) - 0x30;
    if (major < 0 || major > 9 || minor < 0 || minor > 9) refuse(400, 'a malformed HTTP version');
    if (major !== 1 || (minor !== 0 && minor !== 1)) refuse(505, `HTTP/${major}.${minor} is not supported`, 'ERR_HTTP_VERSION');
    for (let i = firstSp + 1; i < secondSp; i++) {
      const c = b[i] as number;
      if (c <= SP || c >= 0x7f) refuse(400, 'a request target with a control character, space or non-ASCII byte');
    }
    const method = knownMethod(b, s, firstSp);
    let target = b.toString('latin1', firstSp + 1, secondSp);
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
    this.hasLine = true;
    this.lineMethod = method;
    this.lineTarget = target;
    this.lineMinor = minor as 0 | 1;
  }
}

const EMPTY = Buffer.alloc(0);
const NO_FIELDS: readonly (readonly [string, string])[] = Object.freeze([]);

/**
 * The offset after the empty line ending a block of field lines starting at 0 (trailer fields), or
 * -1. Looks no further than `max` + 4 bytes.
 */
function findFieldsEnd(b: Buffer, max: number): number {
  const limit = Math.min(b.length, max + 4);
  let lineStart = 0;
  for (let i = 0; i < limit; i++) {
    if (b[i] !== LF) continue;
    if (i === 0 || b[i - 1] !== CR) refuse(400, 'a line ending in LF without CR');
    if (i - lineStart - 1 === 0) return i + 1;
    lineStart = i + 1;
  }
  return -1;
}

/**
 * A parsed head. Field names and values stay bytes in the head's buffer until asked for (a handler
 * that reads no header costs no string per field); the fields framing needs were read while parsing.
 */
class Head implements RequestHead, ParsedRequest {
  private materialized: (readonly [string, string])[] | null = null;
  body: Buffer | null = null;
  trailers: readonly (readonly [string, string])[] = NO_FIELDS;

  constructor(
    readonly method: string,
    readonly target: string,
    readonly minorVersion: 0 | 1,
    readonly keepAlive: boolean,
    readonly expectContinue: boolean,
    readonly contentLength: number,
    readonly chunked: boolean,
    readonly hasContentLength: boolean,
    private bytes: Buffer,
    /** Where the field lines start and where they end (the final empty line's CR). */
    private fieldsStart: number,
    private fieldsEnd: number,
    /** The first Content-Type value's span, found while parsing (-1: none). */
    private typeStart: number,
    private typeEnd: number,
  ) {}

  detach(): void {
    const start = this.fieldsStart;
    // The field lines with their CRLFs: lookups walk them line by line up to fieldsEnd.
    this.bytes = Buffer.from(this.bytes.subarray(start, this.fieldsEnd));
    this.fieldsStart = 0;
    this.fieldsEnd -= start;
    if (this.typeStart >= 0) {
      this.typeStart -= start;
      this.typeEnd -= start;
    }
  }

  /** Detaches when the head's bytes live in `memory`. */
  detachFrom(memory: ArrayBufferLike): void {
    if (this.bytes.buffer === memory) this.detach();
  }

  get head(): RequestHead {
    return this;
  }

  get headers(): readonly (readonly [string, string])[] {
    if (this.materialized === null) this.materialized = parseFieldLines(this.bytes, this.fieldsStart, this.fieldsEnd, Number.MAX_SAFE_INTEGER);
    return this.materialized;
  }

  header(lowerName: string): string | undefined {
    if (lowerName === 'content-type') return this.typeStart < 0 ? undefined : valueString(this.bytes, this.typeStart, this.typeEnd);
    const b = this.bytes;
    const end = this.fieldsEnd;
    const n = lowerName.length;
    let out: string | undefined;
    for (let s = this.fieldsStart; s < end; ) {
      let lf = s;
      while (lf < end && b[lf] !== LF) lf++;
      if (b[s + n] === COLON && nameIs(b, s, s + n, lowerName)) {
        checkField(b, s, lf - 1);
        // Content-Type (above) alone goes through the one-entry cache: comparing against the last
        // value of a secret field (credentials) would tell, by its timing, how much a guess got right.
        const value = b.toString('latin1', fieldValueStart, fieldValueEnd);
        if (out === undefined) out = value;
        else if (SINGLE_VALUED.has(lowerName)) break;
        else out = `${out}, ${value}`;
      }
      s = lf + 1;
    }
    return out;
  }
}

/** The last short value read by header(), as bytes and as the string made of them. */
const lastValueBytes = Buffer.alloc(64);
let lastValueLength = -1;
let lastValue = '';

/**
 * b[s, e) as a latin1 string. Clients repeat the same values (a `Content-Type`), so the
 * string made last time is handed out again when the bytes are the same: no new string, and its hash
 * (for interning maps) is already computed.
 */
function valueString(b: Buffer, s: number, e: number): string {
  const n = e - s;
  if (n === lastValueLength) {
    let same = true;
    for (let i = 0; i < n; i++) {
      if (b[s + i] !== lastValueBytes[i]) {
        same = false;
        break;
      }
    }
    if (same) return lastValue;
  }
  const value = b.toString('latin1', s, e);
  if (n <= lastValueBytes.length) {
    b.copy(lastValueBytes, 0, s, e);
    lastValueLength = n;
    lastValue = value;
  }
  return value;
}

/** Fields with one value: a repeated one is ignored after the first (as node:http does). */
const SINGLE_VALUED: ReadonlySet<string> = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** Whether b[start, end) is `lower` (lower-case ASCII) compared without case. */
function nameIs(b: Buffer, start: number, end: number, lower: string): boolean {
  if (end - start !== lower.length) return false;
  for (let i = 0; i < lower.length; i++) if (((b[start + i] as number) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

/** The index of `byte` in b[from, to), or -1. */
function indexIn(b: Buffer, byte: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (b[i] === byte) return i;
  return -1;
}

/** The method b[s, e) as one of the shared constant strings; 501 for any other. */
function knownMethod(b: Buffer, s: number, e: number): string {
  const c0 = b[s] as number;
  switch (e - s) {
    case 3:
      if (c0 === 0x47 && b[s + 1] === 0x45 && b[s + 2] === 0x54) return 'GET';
      if (c0 === 0x50 && b[s + 1] === 0x55 && b[s + 2] === 0x54) return 'PUT';
      break;
    case 4:
      if (c0 === 0x50 && b[s + 1] === 0x4f && b[s + 2] === 0x53 && b[s + 3] === 0x54) return 'POST';
      if (c0 === 0x48 && b[s + 1] === 0x45 && b[s + 2] === 0x41 && b[s + 3] === 0x44) return 'HEAD';
      break;
  }
  const method = b.toString('latin1', s, e);
  if (!METHODS.has(method)) refuse(501, `method '${clip(method)}' is not implemented`, 'ERR_HTTP_METHOD');
  return method;
}

/** Set by checkField: the field's colon and its value's span (trimmed of SP and HTAB). */
let fieldColon = 0;
let fieldValueStart = 0;
let fieldValueEnd = 0;

/** Checks one field line b[s, e) (without its CRLF); leaves its colon and value span in the variables above. */
function checkField(b: Buffer, s: number, e: number): void {
  const first = b[s] as number;
  if (first === SP || first === HTAB) refuse(400, 'obsolete line folding in a header field');
  let colon = s;
  while (colon < e) {
    const c = b[colon] as number;
    if (c === COLON) break;
    if (TCHAR[c] !== 1) {
      if (c === SP || c === HTAB) {
        const k = b.indexOf(COLON, colon);
        if (k >= 0 && k < e) refuse(400, 'whitespace between a header field name and its colon');
        refuse(400, 'a header field without a colon');
      }
      refuse(400, 'a header field name with a character that is not a token character');
    }
    colon++;
  }
  if (colon >= e) refuse(400, 'a header field without a colon');
  if (colon === s) refuse(400, 'a header field with an empty name');
  let vs = colon + 1;
  let ve = e;
  while (vs < ve && (b[vs] === SP || b[vs] === HTAB)) vs++;
  while (ve > vs && (b[ve - 1] === SP || b[ve - 1] === HTAB)) ve--;
  for (let i = vs; i < ve; i++) {
    const c = b[i] as number;
    if (c < SP || c === 0x7f) {
      if (c === HTAB) continue;
      if (c === CR) refuse(400, 'a bare CR in a header field');
      refuse(400, c === 0 ? 'a NUL in a header field' : 'a control character in a header field');
    }
  }
  fieldColon = colon;
  fieldValueStart = vs;
  fieldValueEnd = ve;
}

/** The field lines in b[from, end) (each ending in CRLF), checked: lower-cased names, trimmed values. */
function parseFieldLines(b: Buffer, from: number, end: number, countMax: number): (readonly [string, string])[] {
  const out: (readonly [string, string])[] = [];
  for (let s = from; s < end; ) {
    let lf = s;
    while (lf < end && b[lf] !== LF) lf++;
    if (out.length >= countMax) refuse(431, `more than ${countMax} header fields`);
    checkField(b, s, lf - 1);
    out.push([b.toString('latin1', s, fieldColon).toLowerCase(), b.toString('latin1', fieldValueStart, fieldValueEnd)]);
    s = lf + 1;
  }
  return out;
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
