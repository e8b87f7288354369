// The member's HTTP/1.1 connection shell on node:net (issue #14, part 2): connections arrive from the
// unified listener (or a dedicated REST listener) already sniffed as HTTP, TLS ones already
// decrypted. Bytes go to the request parser (src/http/parser.ts), requests to the dispatcher, and
// answers back to the socket. This file owns the connection rules: answer order, write batching,
// header / body / idle timeouts, requests in flight per connection (back-pressure), staged closes,
// graceful stop.
//
// Invariants:
// - Answers leave in request order. A request answered at once while nothing earlier waits is
//   written into the connection's batch straight away; otherwise it waits in `queue` behind the
//   earlier ones. Handlers START in request order (the parser reports whole requests in order and
//   each is dispatched as it is reported); a waiting poll holds later answers back, not later starts.
// - One write per batch: the answers produced while one read is handled (a pipelined burst) are
//   written with one socket write after the read; answers that arrive later (a remote call, a
//   poll) are batched per microtask turn. A batch above FLUSH_BYTES is written at once.
// - `inFlight` counts requests read and not yet written into a batch; `activeRequests` sums it over
//   live connections, plus each request whose head announced a body that is still arriving. A
//   connection's close releases all of its requests, so a graceful stop never waits for a request
//   whose connection is gone.
// - Every request that is read gets an answer or its connection closes; no malformed request is met
//   with silence. A connection that must close (an answer marked close, a parse error, `Connection:
//   close`, HTTP/1.0 without keep-alive, a stop) is `closing` from that moment: nothing read after
//   that point is served, and once the answers due are written it closes in stages (RFC 9112 §9.6):
//   FIN first, then what the client still sends is read and discarded for at most LINGER_MS /
//   LINGER_BYTES_MAX, then destroy. A close with unread bytes would otherwise make the kernel send a
//   reset that can throw away the final answer before the client reads it.
// - A connection with `pipelineMax` requests in flight, or whose socket has more queued for writing
//   than the kernel takes (the client does not read), is not read from until that drains: the parser
//   stops reporting (the rest of the read stays in it) and the socket is paused. Nothing is buffered
//   without bound and no request is refused for pipelining.
// - Timeouts run from one sweep per second over all connections: a head not complete within the
//   headers timeout, or a body not complete within REQUEST_TIMEOUT_SECONDS_MIN (or the headers
//   timeout when larger), is 408 and close; a connection with nothing in flight and nothing read
//   for the idle timeout is closed. A connection held back by the limits above is not timed out.
// - The hot path (a GET answered synchronously) allocates the parsed head, one request object and
//   the batch's buffer; no promise, closure or timer per request, and a repeated answer head is
//   made once (RestServer.head).
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Dispatcher, Prepared } from '../http/dispatch.js';
import { RequestParser, type ParsedRequest, type ParseError, type ParserHandler, type RequestHead } from '../http/parser.js';
import { CLOSE_TAIL, CONTINUE_HEAD, keepAliveTail, responseHead } from '../http/response-head.js';
import { KIND, RequestStats, resolveKind } from '../http/request-stats.js';
import { jsonError, type HttpReply } from '../http/reply.js';
import type { HttpRequest } from '../http/request.js';
import { splitTarget } from '../http/path.js';
import type { ClientLiveness } from '../member/member-api.js';
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';
import { readIntoSharedBuffer, SHARED_READ_BYTES } from './shared-reads.js';

export interface HttpLimits {
  readonly headerBytesMax: number;
  readonly bodyBytesMax: number;
  readonly pipelineMax: number;
  readonly headersTimeoutSeconds: number;
  readonly idleTimeoutSeconds: number;
  /** Plain connections read into the server's shared buffer when Node allows it (default true; grid.rest.read.buffer.shared). */
  readonly sharedReadBuffer?: boolean;
}

/** Header fields one request (or one trailer block) may carry: beyond, 431. */
const HEADER_COUNT_MAX = 2000;
/** How long a closing connection is still read (and discarded) after its FIN (RFC 9112 §9.6). */
const LINGER_MS = 2000;
/** How many bytes a closing connection may still send before it is destroyed. */
const LINGER_BYTES_MAX = 1 << 20;
/** A whole request (head and body) must arrive within this many seconds, or the headers timeout if larger. */
const REQUEST_TIMEOUT_SECONDS_MIN = 300;
/** A batch of answers larger than this is written at once rather than at the end of the read. */
const FLUSH_BYTES = 256 * 1024;
/** Batches up to this size are copied into one buffer; larger ones are written as a vector. */
const COALESCE_BYTES_MAX = 64 * 1024;
/** Batch slots a connection keeps between batches (an answer is a head and maybe a body). */
const PARTS_KEPT = 8;
/** How often timeouts are checked. */
const SWEEP_INTERVAL_MS = 1000;

type Routed = Extract<Prepared, { kind: 'route' }>;

/** An answer that must wait for an earlier one (or for its handler). */
class Slot {
  reply: HttpReply | null = null;
  constructor(
    readonly kind: number,
    readonly startedAt: number,
    readonly headRequest: boolean,
    readonly keepAlive: boolean,
    /** A `100 Continue` to write when its turn comes (no final answer, not counted in flight). */
    readonly interim: boolean,
  ) {}
}

/** The request a handler sees; its header lookup reads the parsed head's bytes. */
class Request implements HttpRequest {
  constructor(
    readonly method: string,
    readonly segments: readonly string[],
    readonly params: Readonly<Record<string, string>>,
    readonly tail: readonly string[],
    readonly body: Buffer | null,
    readonly remoteAddress: string,
    readonly client: ClientLiveness,
    private readonly head: RequestHead,
  ) {}

  header(lowerName: string): string | undefined {
    return this.head.header(lowerName);
  }

  queryString(): string | null {
    return splitTarget(this.head.target).query;
  }
}

class HttpConnection implements ParserHandler, ClientLiveness {
  readonly parser: RequestParser;
  readonly remoteAddress: string;
  /** Answers that wait for an earlier one, in request order. */
  private readonly queue: Slot[] = [];
  /** The batch: answer heads (latin1 strings) and bodies, written together. */
  /** parts[0, partsCount): the batch. The array is kept (no array per batch); written slots are cleared. */
  private readonly parts: (string | Buffer | null)[] = new Array<string | Buffer | null>(PARTS_KEPT).fill(null);
  private partsCount = 0;
  private partsBytes = 0;
  inFlight = 0;
  /** Nothing read from now on is served; the answers due are still written. */
  closing = false;
  /** The staged close has begun (FIN sent; reading only to discard). */
  lingering = false;
  closed = false;
  /** The client's FIN arrived. */
  private peerEnded = false;
  /** Inside the handling of a read: the batch is written when it ends. */
  private reading = false;
  private flushQueued = false;
  /** Reading is held back: `pipelineMax` requests in flight. */
  private heldByCap = false;
  /** Reading is held back: the socket has more queued for writing than the kernel took. */
  private heldByWrite = false;
  /** The head read last announced a body that has not all arrived (counted in activeRequests). */
  private bodyPending = false;
  /** The routing of an `Expect: 100-continue` request, decided at its head. */
  private expecting: Prepared | null = null;
  /** When the request being read began (Date.now()), 0 between requests. */
  since = 0;
  private doneAtSince = 0;
  /** The server's sweep tick of the last read or write (idle timeout). */
  lastTick: number;
  /** When the current read arrived (performance.now(), taken at its first request); 0: not yet. */
  private readAt = 0;
  private discarded = 0;
  /** The client's FIN came while reading was held back: read it once the held requests are in. */
  private endPending = false;
  private goneListeners: (() => void)[] | null = null;
  /** Reads land in the server's shared buffer (src/runtime/shared-reads.ts) rather than in chunks of their own. */
  sharedReads = false;

  constructor(
    private readonly server: RestServer,
    readonly socket: Socket,
  ) {
    this.remoteAddress = socket.remoteAddress ?? '';
    this.lastTick = server.tick;
    this.parser = new RequestParser({ headBytesMax: server.limits.headerBytesMax, headerCountMax: HEADER_COUNT_MAX, bodyBytesMax: server.limits.bodyBytesMax }, this);
  }

  // ---- reading

  /** `borrowed`: the chunk is the server's shared read buffer, reused once this returns. */
  onData(chunk: Buffer, borrowed = false): void {
    this.lastTick = this.server.tick;
    this.readAt = 0;
    if (this.lingering) {
      this.discarded += chunk.length;
      if (this.discarded > LINGER_BYTES_MAX) this.socket.destroy();
      return;
    }
    this.reading = true;
    try {
      this.parser.push(chunk, borrowed);
    } finally {
      this.reading = false;
    }
    this.trackRequestStart();
    this.flush();
  }

  /** The client half-closed: a request cut short is answered 400; the answers due are still written. */
  onEnd(): void {
    this.peerEnded = true;
    // A client that sent its FIN is gone for waiting polls: an item is never handed to a poll whose
    // client may not read it (it stays queued). Other answers due are still written.
    this.notifyGone();
    if (this.lingering) return;
    // Requests still unread behind a hold are served first; the end is read after them.
    if (this.held) {
      this.endPending = true;
      return;
    }
    this.reading = true;
    try {
      this.parser.end();
    } finally {
      this.reading = false;
    }
    this.closing = true;
    this.flush();
  }

  private trackRequestStart(): void {
    const parser = this.parser;
    if (!parser.midRequest) this.since = 0;
    else if (this.since === 0 || parser.requestsDone !== this.doneAtSince) this.since = Date.now();
    this.doneAtSince = parser.requestsDone;
  }

  onHead(head: RequestHead): void {
    if (this.closing) {
      this.parser.pause();
      return;
    }
    if (head.contentLength === 0 && !head.chunked) return;
    // A request whose body is still to come counts as in flight from its head: a graceful stop waits
    // for it (bounded), as for a request being handled.
    this.bodyPending = true;
    this.server.activeRequests++;
    if (!head.expectContinue) return;
    // Decide before the body is sent: a request that will be refused gets its final answer now,
    // without a 100, and the connection closes (the body that may still come is discarded).
    const prepared = this.server.prepare(head.method, head.target);
    if (prepared.kind === 'reply') {
      this.beginRequest();
      this.answer(this.arrival(), KIND.OTHER, head.method === 'HEAD', false, { ...prepared.reply, close: true });
      return;
    }
    this.expecting = prepared;
    if (this.queue.length === 0) this.append(CONTINUE_HEAD, null);
    else this.queue.push(new Slot(KIND.OTHER, 0, false, true, true));
  }

  onRequest(parsed: ParsedRequest): void {
    if (this.closing) {
      this.parser.pause();
      return;
    }
    const startedAt = this.arrival();
    const head = parsed.head;
    this.beginRequest();
    const server = this.server;
    const keepAlive = head.keepAlive && !server.stopping;
    const headRequest = head.method === 'HEAD';
    const prepared = this.expecting ?? server.prepare(head.method, head.target);
    this.expecting = null;
    if (prepared.kind === 'reply') {
      this.answer(startedAt, KIND.OTHER, headRequest, keepAlive, prepared.reply);
    } else {
      const kind = resolveKind(prepared.route.kind, prepared.tail);
      const request = new Request(head.method, prepared.segments, prepared.params, prepared.tail, parsed.body, this.remoteAddress, this, head);
      const out = server.dispatcher.run(prepared as Routed, request);
      if (out instanceof Promise) {
        // The handler keeps the request past this read: its head's bytes may be in the shared read
        // buffer, which the next read overwrites (its body is a copy already).
        if (this.sharedReads) head.detach();
        const slot = new Slot(kind, startedAt, headRequest, keepAlive, false);
        this.queue.push(slot);
        void out.then((reply) => this.complete(slot, reply));
      } else {
        this.answer(startedAt, kind, headRequest, keepAlive, out);
      }
    }
    if (!keepAlive) this.decideClose();
    if (this.inFlight >= server.limits.pipelineMax && !this.closing) {
      this.heldByCap = true;
      this.holdReading();
    }
  }

  onError(error: ParseError): void {
    if (this.closing) return;
    const server = this.server;
    server.counters.httpClientErrors++;
    server.log.fine('client error', { code: error.code, status: error.status, remote: this.remoteAddress });
    const e = new GridError(error.code, error.message);
    // An error in a request whose line was read (its fields, its body) is answered like that
    // request would be (a data path: empty body and Grid-Error); an error before, with JSON.
    const request = error.request;
    const reply = request === null ? jsonError(e) : server.dispatcher.requestError(request.method, request.target, e);
    this.expecting = null;
    this.beginRequest();
    this.answer(this.arrival(), KIND.OTHER, false, false, { ...reply, close: true });
  }

  /** The headers or body did not arrive in time: 408, then close. */
  timeout(): void {
    if (this.closing) return;
    this.server.counters.httpClientErrors++;
    const e = new GridError('ERR_HTTP_TIMEOUT', 'request timed out');
    const request = this.parser.currentRequest;
    const reply = request === null ? jsonError(e) : this.server.dispatcher.requestError(request.method, request.target, e);
    this.beginRequest();
    this.answer(performance.now(), KIND.OTHER, false, false, { ...reply, close: true });
    this.flush();
  }

  /** When the requests of the current read arrived (one clock read per read, not per request). */
  private arrival(): number {
    return this.readAt !== 0 ? this.readAt : (this.readAt = performance.now());
  }

  private beginRequest(): void {
    this.server.counters.requests++;
    this.inFlight++;
    // A request counted in flight from its head (its body was to come) stays counted: a graceful
    // stop waiting for it must not see it drop to 0 on the way.
    if (this.bodyPending) this.bodyPending = false;
    else this.server.activeRequests++;
  }

  // ---- answering

  /** An answer ready now: into the batch when nothing earlier waits, else behind the earlier ones. */
  private answer(startedAt: number, kind: number, headRequest: boolean, keepAlive: boolean, reply: HttpReply): void {
    if (this.queue.length === 0) {
      this.writeReply(startedAt, kind, headRequest, keepAlive, reply);
      return;
    }
    const slot = new Slot(kind, startedAt, headRequest, keepAlive, false);
    slot.reply = reply;
    this.queue.push(slot);
    if (reply.close === true) this.decideClose();
  }

  /** A handler's promise settled. */
  private complete(slot: Slot, reply: HttpReply): void {
    if (this.closed) return;
    slot.reply = reply;
    const queue = this.queue;
    while (queue.length > 0) {
      const first = queue[0] as Slot;
      if (first.interim) this.append(CONTINUE_HEAD, null);
      else if (first.reply === null) break;
      else this.writeReply(first.startedAt, first.kind, first.headRequest, first.keepAlive, first.reply);
      queue.shift();
    }
    if (this.reading || this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  private writeReply(startedAt: number, kind: number, headRequest: boolean, keepAlive: boolean, reply: HttpReply): void {
    const server = this.server;
    const status = reply.status;
    const counters = server.counters;
    if (status < 300) counters.status2xx++;
    else if (status < 500) counters.status4xx++;
    else counters.status5xx++;
    server.requestStats.record(kind, status, (server.batchClock() - startedAt) / 1000);
    const close = reply.close === true || !keepAlive || server.stopping;
    const raw = reply.body;
    const body = raw === undefined ? null : typeof raw === 'string' ? (raw.length === 0 ? null : Buffer.from(raw, 'utf8')) : raw.length === 0 ? null : raw;
    this.append(server.head(reply, body === null ? 0 : body.length, close), headRequest ? null : body);
    this.inFlight--;
    if (--server.activeRequests === 0) server.answered();
    if (close) this.decideClose();
  }

  private append(head: string, body: Buffer | null): void {
    this.addPart(head);
    this.partsBytes += head.length;
    if (body !== null) {
      this.addPart(body);
      this.partsBytes += body.length;
    }
    if (this.partsBytes >= FLUSH_BYTES) this.flush();
  }

  /** Nothing read after this point is served. */
  private decideClose(): void {
    if (this.closing) return;
    this.closing = true;
    this.parser.pause();
    // What the client sends meanwhile stays in the kernel; the staged close reads and discards it.
    if (!this.lingering) this.socket.pause();
  }

  /** Writes the batch; then releases held reading, or closes in stages once the last answer is out. */
  flush(): void {
    if (this.closed) return;
    this.writeBatch();
    if (this.closing) {
      if (this.inFlight === 0 && this.queue.length === 0) this.stagedClose();
      return;
    }
    if (this.heldByCap && this.inFlight < this.server.limits.pipelineMax) {
      this.heldByCap = false;
      this.releaseReading();
    }
  }

  private addPart(part: string | Buffer): void {
    const n = this.partsCount++;
    if (n < this.parts.length) this.parts[n] = part;
    else this.parts.push(part);
  }

  /** Writes the answers batched so far (one write), if any. */
  private writeBatch(): void {
    const parts = this.parts;
    const count = this.partsCount;
    if (count > 0) {
      const bytes = this.partsBytes;
      this.partsCount = 0;
      this.partsBytes = 0;
      this.lastTick = this.server.tick;
      this.server.batchEnded();
      const socket = this.socket;
      let writable: boolean;
      if (count === 1) {
        // One answer without a body (a write's 200): the repeated head goes out as bytes made once.
        const only = parts[0] as string;
        writable = socket.write(this.server.headBytes(only));
      } else if (bytes <= COALESCE_BYTES_MAX) {
        const out = Buffer.allocUnsafe(bytes);
        const server = this.server;
        let at = 0;
        for (let i = 0; i < count; i++) {
          const p = parts[i] as string | Buffer;
          // TypedArray set copies without the native call of write() and copy(): the repeated head
          // goes in as its bytes made once, a body as it is.
          const b = typeof p === 'string' ? server.cachedBytesOf(p) : p;
          if (b === null) {
            at += out.write(p as string, at, 'latin1');
          } else {
            out.set(b, at);
            at += b.length;
          }
        }
        writable = socket.write(out);
      } else {
        // Large bodies are not copied: the parts go out as one vector write.
        socket.cork();
        writable = true;
        for (let i = 0; i < count; i++) {
          const p = parts[i] as string | Buffer;
          writable = typeof p === 'string' ? socket.write(p, 'latin1') : socket.write(p);
        }
        socket.uncork();
      }
      // Written: the batch holds no reference to the bodies any more (a long pipelined batch grew
      // the array; it shrinks back).
      for (let i = 0; i < count; i++) parts[i] = null;
      if (parts.length > PARTS_KEPT) parts.length = PARTS_KEPT;
      if (!writable && !this.heldByWrite) {
        this.heldByWrite = true;
        this.holdReading();
      }
    }
  }

  /** The socket took what was queued for writing. */
  onDrain(): void {
    if (!this.heldByWrite) return;
    this.heldByWrite = false;
    this.releaseReading();
  }

  private holdReading(): void {
    this.parser.pause();
    this.socket.pause();
  }

  private releaseReading(): void {
    if (this.heldByCap || this.heldByWrite || this.closing || this.closed) return;
    this.socket.resume();
    // The rest of the last read: its requests are reported now (answers batch up as in a read).
    this.reading = true;
    try {
      this.parser.resume();
    } finally {
      this.reading = false;
    }
    this.since = 0;
    this.readAt = 0;
    this.trackRequestStart();
    if (this.endPending && !this.held) {
      this.endPending = false;
      this.onEnd();
      return;
    }
    this.flush();
  }

  /** Whether reading is held back (timeouts do not run then). */
  get held(): boolean {
    return this.heldByCap || this.heldByWrite;
  }

  /**
   * RFC 9112 §9.6: half-close once the answers due are written, keep reading and discarding what the
   * client still sends (bounded in time and bytes), then destroy.
   */
  stagedClose(): void {
    if (this.lingering || this.closed) return;
    this.lingering = true;
    this.closing = true;
    // Answers batched but not written yet (a flush still queued) go out before the FIN.
    this.writeBatch();
    const socket = this.socket;
    socket.end();
    if (this.peerEnded) return;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once('close', () => clearTimeout(timer));
    socket.resume();
  }

  onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.closing = true;
    if (this.bodyPending) {
      this.bodyPending = false;
      this.server.activeRequests--;
    }
    this.server.activeRequests -= this.inFlight;
    this.inFlight = 0;
    this.queue.length = 0;
    this.parts.fill(null);
    this.partsCount = 0;
    this.notifyGone();
  }

  private notifyGone(): void {
    const listeners = this.goneListeners;
    this.goneListeners = null;
    if (listeners !== null) for (const l of listeners) l();
  }

  // ---- ClientLiveness (for waiting polls)

  isGone(): boolean {
    return this.closed || this.peerEnded || this.socket.destroyed;
  }

  onGone(callback: () => void): () => void {
    if (this.isGone()) {
      queueMicrotask(callback);
      return () => {};
    }
    const listeners = (this.goneListeners ??= []);
    listeners.push(callback);
    return () => {
      const i = listeners.indexOf(callback);
      if (i >= 0) listeners.splice(i, 1);
    };
  }
}

export class RestServer {
  private readonly connections = new Set<HttpConnection>();
  /**
   * Plain TCP connections read into this one buffer (src/runtime/shared-reads.ts): a read is handled
   * whole before the next one lands, and the parser copies out what it keeps.
   */
  private readonly readBuffer = Buffer.allocUnsafeSlow(SHARED_READ_BYTES);
  stopping = false;
  activeRequests = 0;
  private idleWaiters: (() => void)[] = [];
  private sweepTimer: NodeJS.Timeout | null = null;
  readonly keepAliveTail: string;
  /** Seconds counted by the sweep: connections note it when they read or write (idle timeout). */
  tick = 0;
  /** performance.now() for the answers of the batch being built; 0: not read yet. */
  private batchNow = 0;
  // The last answer head without extra fields, and what it was made from (most answers repeat it).
  private cachedStatus = 0;
  private cachedType: string | undefined = undefined;
  private cachedLength = -1;
  private cachedHead = '';
  private cachedHeadBytes: Buffer | null = null;
  /** Replies by status class, for metrics. */
  readonly counters = { requests: 0, status2xx: 0, status4xx: 0, status5xx: 0, httpClientErrors: 0 };
  /** Answers and latency per endpoint kind. */
  readonly requestStats = new RequestStats();

  constructor(
    readonly dispatcher: Dispatcher,
    readonly limits: HttpLimits,
    readonly log: ComponentLogger,
  ) {
    this.keepAliveTail = keepAliveTail(limits.idleTimeoutSeconds);
  }

  /** Takes over a sniffed connection; `head` holds the bytes already read from it. */
  accept(socket: Socket, head: Buffer): void {
    const connection = new HttpConnection(this, socket);
    this.connections.add(connection);
    // The answers due after the client's FIN are still written (a client may half-close after its
    // last request).
    socket.allowHalfOpen = true;
    socket.on('end', () => connection.onEnd());
    socket.on('drain', () => connection.onDrain());
    socket.once('close', () => this.onClose(connection));
    this.startSweep();
    if (head.length > 0) connection.onData(head);
    // Bytes the socket buffered after the sniff (none, in practice: it hands over at once) come first.
    while (socket.readableLength > 0) {
      const more = socket.read() as Buffer | null;
      if (more === null) break;
      connection.onData(more);
    }
    connection.sharedReads = this.limits.sharedReadBuffer !== false && readIntoSharedBuffer(socket, this.readBuffer, (chunk) => connection.onData(chunk, true));
    if (!connection.sharedReads) socket.on('data', (chunk: Buffer) => connection.onData(chunk));
    if (!connection.held && !connection.lingering) socket.resume();
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** The clock for the answers being written now (one read per batch). */
  batchClock(): number {
    return this.batchNow !== 0 ? this.batchNow : (this.batchNow = performance.now());
  }

  batchEnded(): void {
    this.batchNow = 0;
  }

  /** The bytes of `head`: those of the repeated head are made once. */
  headBytes(head: string): Buffer {
    return this.cachedBytesOf(head) ?? Buffer.from(head, 'latin1');
  }

  /** The bytes of the repeated head when `head` is it, else null. */
  cachedBytesOf(head: string): Buffer | null {
    if (head !== this.cachedHead) return null;
    return (this.cachedHeadBytes ??= Buffer.from(head, 'latin1'));
  }

  /** The head of an answer: kept-alive answers without extra fields repeat, and are made once. */
  head(reply: HttpReply, bodyBytes: number, close: boolean): string {
    if (close || reply.headers !== undefined) return responseHead(reply, bodyBytes, close ? CLOSE_TAIL : this.keepAliveTail);
    if (reply.status === this.cachedStatus && reply.contentType === this.cachedType && bodyBytes === this.cachedLength) return this.cachedHead;
    const head = responseHead(reply, bodyBytes, this.keepAliveTail);
    this.cachedStatus = reply.status;
    this.cachedType = reply.contentType;
    this.cachedLength = bodyBytes;
    this.cachedHead = head;
    this.cachedHeadBytes = null;
    return head;
  }

  prepare(method: string, target: string): Prepared {
    try {
      return this.dispatcher.prepare(method, target);
    } catch (e) {
      return { kind: 'reply', reply: this.dispatcher.errorReply(false, e, method, target) };
    }
  }

  private onClose(connection: HttpConnection): void {
    this.connections.delete(connection);
    connection.onClose();
    if (this.connections.size === 0) this.stopSweep();
    if (this.activeRequests === 0) this.notifyIdle();
  }

  private startSweep(): void {
    if (this.sweepTimer !== null) return;
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  private stopSweep(): void {
    if (this.sweepTimer === null) return;
    clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  /** Headers, body and idle timeouts. */
  private sweep(): void {
    this.tick++;
    const now = Date.now();
    const headersMs = this.limits.headersTimeoutSeconds * 1000;
    const requestMs = Math.max(this.limits.headersTimeoutSeconds, REQUEST_TIMEOUT_SECONDS_MIN) * 1000;
    const idleMs = this.limits.idleTimeoutSeconds * 1000;
    for (const c of this.connections) {
      if (c.closing || c.held) continue;
      if (c.since !== 0) {
        if (now - c.since >= (c.parser.readingHead ? headersMs : requestMs)) c.timeout();
      } else if (c.inFlight === 0 && (this.tick - c.lastTick - 1) * SWEEP_INTERVAL_MS >= idleMs) {
        c.closing = true;
        c.stagedClose();
      }
    }
  }

  /** Stops taking new requests on kept-alive connections and waits (bounded) for in-flight ones. */
  async drain(deadlineMs: number): Promise<void> {
    this.stopping = true;
    for (const c of this.connections) {
      // Idle connections close now (after any answer still batched); busy ones close after their
      // last answer, which says `Connection: close`.
      if (c.inFlight === 0 && c.since === 0) {
        c.closing = true;
        c.stagedClose();
      }
    }
    if (this.activeRequests > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    // Answers still batched (their flush is queued behind this) go out before the sockets close.
    for (const c of this.connections) c.flush();
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const c of this.connections) c.socket.destroy();
    this.stopSweep();
  }

  /** Called by connections when an answer is written: a graceful stop may be waiting for the last one. */
  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /** A connection wrote its last answer in flight. */
  answered(): void {
    if (this.activeRequests === 0 && this.idleWaiters.length > 0) this.notifyIdle();
  }
}
