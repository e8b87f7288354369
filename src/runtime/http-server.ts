// node:http underneath, our own routing on top. Connections arrive from the unified listener (or a
// dedicated REST listener) already sniffed as HTTP. This file owns the HTTP limits: header bytes
// (431), body bytes (413, then close), headers timeout and idle keep-alive timeout, requests in
// flight per connection (back-pressure), request framing (Transfer-Encoding), `Expect:
// 100-continue`, staged closes and graceful stop.
//
// Invariants:
// - Responses always carry Content-Length; node:http writes pipelined responses in request order.
// - Handlers of one connection START in request order: a request waits until every earlier request
//   of its connection has its whole body and has been handed to its handler (RFC 9112 §9.3.2 allows
//   parallel processing of safe methods only). A waiting poll does not hold later requests back
//   from starting, only their answers (which must come in order anyway).
// - `activeRequests` counts requests not yet answered on live connections; a connection's close
//   releases all of its requests, answered or not, so a graceful stop never waits for a request
//   whose connection is gone.
// - Every request that is read gets an answer or its connection closes; no malformed request is met
//   with silence. A connection that must close (an answer marked close, a parse error, `Connection:
//   close`) is `closing` from that moment: nothing read after that point is served, and once the
//   answers due are written it closes in stages (RFC 9112 §9.6): FIN first, then what the client
//   still sends is read and discarded for at most LINGER_MS / LINGER_BYTES_MAX, then destroy. A
//   close with unread bytes would otherwise make the kernel send a reset that can throw away the
//   final answer before the client reads it.
// - A connection with `pipelineMax` requests in flight is not read from until answers drain (the
//   same `_paused` protocol node:http uses for its own write back-pressure), so a client may pipeline
//   any number of requests and gets every answer in order. Requests already read in the same socket
//   read are still served; `pipelineMax + PIPELINE_READ_SLACK` is a hard backstop (503, then close).
// - The hot path (a GET answered synchronously) allocates no promise and no closure per request;
//   its metrics are two numbers on the response object and a few typed-array writes (request-stats.ts).
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Dispatcher, Prepared } from '../http/dispatch.js';
import { transferCodingError } from '../http/framing.js';
import { KIND, RequestStats, resolveKind } from '../http/request-stats.js';
import { dataError, fail, type HttpReply } from '../http/reply.js';
import type { HttpRequest } from '../http/request.js';
import type { ClientLiveness } from '../member/member-api.js';
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';

export interface HttpLimits {
  readonly headerBytesMax: number;
  readonly bodyBytesMax: number;
  readonly pipelineMax: number;
  readonly headersTimeoutSeconds: number;
  readonly idleTimeoutSeconds: number;
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
};

/** How long a closing connection is still read (and discarded) after its FIN (RFC 9112 §9.6). */
const LINGER_MS = 2000;
/** How many bytes a closing connection may still send before it is destroyed. */
const LINGER_BYTES_MAX = 1 << 20;
/**
 * Requests one socket read can carry beyond `pipelineMax` before the pause takes effect: node:http
 * parses a whole read (64 KiB; a pipelined GET can be as short as about 26 bytes, so about 2,500)
 * before it stops. Measured: pipelineMax 100 behind a waiting poll peaks at about 1,340 in flight
 * with 47-byte GETs. Beyond `pipelineMax` + this, the member refuses (503, then close) rather than
 * grow without bound.
 */
const PIPELINE_READ_SLACK = 4096;

/**
 * The parts of node:http's socket state this file steers: `_paused` is node's own "stop reading
 * this connection" flag (node re-checks it before it resumes a socket, and pauses its parser after
 * the current read when it is set); `parser` is the connection's HTTP parser while node owns it.
 */
type NodeHttpSocket = Socket & { _paused?: boolean; parser?: { pause(): void; resume(): void } | null };

type Routed = Extract<Prepared, { kind: 'route' }>;

/** Per-connection bookkeeping. */
class Connection {
  /** Requests received and not yet answered (or released by the close). */
  inFlight = 0;
  /** An earlier request has not reached its handler yet; later ones queue behind it. */
  starting = false;
  readonly startQueue: (() => void)[] = [];
  /** A parse error that arrived while answers were pending: sent after the last one. */
  deferredError: string | null = null;
  /** A close is decided: nothing read from now on is served; the answers due are still written. */
  closing = false;
  /** The staged close has begun (FIN sent; reading only to discard). */
  lingering = false;
  /** Reading is held back because `pipelineMax` requests are in flight. */
  heldBack = false;
  /** The request at the limit still has body bytes to read: hold back once its body is in (bodyDone). */
  holdPending = false;
  /** The request read last, and its response: a parse error mid-body belongs to it. */
  lastRequest: IncomingMessage | null = null;
  lastResponse: ServerResponse | null = null;
  closed = false;
  constructor(readonly socket: Socket) {}
}

const connectionOf = Symbol('gridConnection');
/** When the request arrived (performance.now(), ms) and what it is counted as (KIND). */
const startedAt = Symbol('gridStartedAt');
const kindOf = Symbol('gridKind');
type TrackedSocket = Socket & { [connectionOf]?: Connection };
type TrackedResponse = ServerResponse & { [connectionOf]?: Connection; [startedAt]?: number; [kindOf]?: number };

/** Whether a poll's client is still there; methods on the prototype, no closures per request. */
class Liveness implements ClientLiveness {
  constructor(
    private readonly socket: Socket,
    private readonly res: ServerResponse,
  ) {}
  isGone(): boolean {
    return this.socket.destroyed || this.res.destroyed || this.res.writableEnded;
  }
  onGone(callback: () => void): () => void {
    let fired = false;
    const once = (): void => {
      if (fired) return;
      fired = true;
      unsubscribe();
      callback();
    };
    const unsubscribe = (): void => {
      this.socket.removeListener('close', once);
      this.res.removeListener('close', once);
    };
    this.socket.once('close', once);
    this.res.once('close', once);
    return unsubscribe;
  }
}

export class RestServer {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private stopping = false;
  private activeRequests = 0;
  private idleWaiters: (() => void)[] = [];
  /** Replies by status class, for metrics. */
  readonly counters = { requests: 0, status2xx: 0, status4xx: 0, status5xx: 0, clientErrors: 0 };
  /** Answers and latency per endpoint kind. */
  readonly requestStats = new RequestStats();

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly limits: HttpLimits,
    private readonly log: ComponentLogger,
  ) {
    this.server = http.createServer({
      maxHeaderSize: limits.headerBytesMax,
      headersTimeout: limits.headersTimeoutSeconds * 1000,
      requestTimeout: Math.max(limits.headersTimeoutSeconds, 300) * 1000,
      keepAliveTimeout: limits.idleTimeoutSeconds * 1000,
      // node's own per-connection timeout check runs this often; timeouts are counted in seconds.
      connectionsCheckingInterval: 1000,
    });
    this.server.on('request', (req, res) => this.onRequest(req, res, false));
    this.server.on('checkContinue', (req, res) => this.onRequest(req, res, true));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.onClientError(err, socket));
    // node:http starts its headers/request-timeout checks and its connection list when its server
    // listens; this server never listens itself (sockets are handed to it), so say it does.
    this.server.emit('listening');
  }

  /** Hands a sniffed connection to node:http; `head` holds the bytes already read from it. */
  accept(socket: Socket, head: Buffer): void {
    const connection = new Connection(socket);
    (socket as TrackedSocket)[connectionOf] = connection;
    this.sockets.add(socket);
    socket.once('close', () => this.onClose(connection));
    // node:http ends a connection after an answer marked close with destroySoon(): FIN, then destroy
    // as soon as the FIN is written, with the client's unread bytes still in the kernel (a reset).
    // The staged close replaces it for this socket.
    socket.destroySoon = this.stagedDestroySoon;
    // Put the sniffed bytes back first, then let node:http adopt the socket and read on.
    socket.unshift(head);
    this.server.emit('connection', socket);
    // node:http feeds its parser straight from a TLS handle, which goes on delivering the rest of a
    // decrypted record after a pause; a paused parser refuses those bytes (HPE_PAUSED) and they are
    // lost. A 'data' listener makes node:http read through the stream instead, where a pause stops
    // the bytes before the parser (holdBack). Plain TCP stops at once and keeps the faster path.
    if ((socket as Socket & { encrypted?: boolean }).encrypted === true) socket.on('data', ignoreData);
    socket.resume();
  }

  get connectionCount(): number {
    return this.sockets.size;
  }

  private onClose(connection: Connection): void {
    this.sockets.delete(connection.socket);
    connection.closed = true;
    connection.closing = true;
    this.activeRequests -= connection.inFlight;
    connection.inFlight = 0;
    connection.startQueue.length = 0;
    connection.lastRequest = null;
    connection.lastResponse = null;
    if (this.activeRequests === 0) this.notifyIdle();
  }

  /** Replaces node:http's socket.destroySoon(); `this` is the socket (one function for all sockets). */
  private readonly stagedDestroySoon = ((server: RestServer) =>
    function (this: TrackedSocket): void {
      const connection = this[connectionOf];
      if (connection === undefined) this.destroy();
      else server.stagedClose(connection);
    })(this);

  /**
   * RFC 9112 §9.6: half-close once the answers due are written, keep reading and discarding what the
   * client still sends (bounded in time and bytes), then destroy. node:http is detached from the
   * socket first, so nothing read now is parsed as a request.
   */
  private stagedClose(connection: Connection): void {
    connection.closing = true;
    if (connection.lingering) return;
    connection.lingering = true;
    const socket = connection.socket as NodeHttpSocket;
    if (socket.destroyed) return;
    if (!socket.writableEnded) socket.end();
    // Adding a 'data' listener is node:http's own signal to stop feeding its parser straight from the
    // handle; removing its listener first leaves ours as the only reader.
    socket.removeAllListeners('data');
    let discarded = 0;
    socket.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES_MAX) socket.destroy();
    });
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once('close', () => clearTimeout(timer));
    socket._paused = false;
    socket.resume();
  }

  /** Stops reading a connection that has `pipelineMax` requests in flight (node:http's own protocol). */
  private holdBack(connection: Connection): void {
    connection.heldBack = true;
    const socket = connection.socket as NodeHttpSocket;
    if (socket._paused === true) return;
    socket._paused = true;
    socket.pause();
  }

  private release(connection: Connection): void {
    connection.heldBack = false;
    const socket = connection.socket as NodeHttpSocket;
    if (socket._paused !== true || connection.lingering) return;
    socket._paused = false;
    socket.parser?.resume();
    socket.resume();
  }

  private onRequest(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void {
    // Both set first and in this order on every response, so responses keep one hidden class.
    (res as TrackedResponse)[startedAt] = performance.now();
    (res as TrackedResponse)[kindOf] = KIND.OTHER;
    this.counters.requests++;
    const connection = (req.socket as TrackedSocket)[connectionOf];
    if (connection === undefined) {
      // Not a socket we accepted (cannot happen: this server never listens itself).
      res.destroy();
      return;
    }
    // A close is decided (an answer marked close, a parse error): what was read after that point is
    // never served. The staged close detaches node:http once the answers due are written; until then
    // nothing more is parsed (or a client could queue requests without bound behind a waiting one).
    if (connection.closing) {
      this.holdBack(connection);
      return;
    }
    connection.inFlight++;
    this.activeRequests++;
    connection.lastRequest = req;
    connection.lastResponse = res;
    (res as TrackedResponse)[connectionOf] = connection;
    res.once('close', this.onResponseClose);
    if (connection.inFlight >= this.limits.pipelineMax) {
      if (connection.inFlight > this.limits.pipelineMax + PIPELINE_READ_SLACK) {
        this.write(res, { ...fail(503, 'too many requests in flight on this connection', { 'retry-after': '1' }), close: true });
        return;
      }
      // Not while this request's own body is still to come (always so after a 100 Continue): paused,
      // node:http would never read it. Its body's end holds back instead.
      if (hasBody(req) && !req.complete) connection.holdPending = true;
      else this.holdBack(connection);
    }
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    // Framing comes first: a body that cannot be delimited makes every later byte ambiguous.
    const codings = req.headers['transfer-encoding'];
    if (codings !== undefined) {
      const framing = transferCodingError(codings);
      if (framing !== null) {
        this.write(res, { ...this.dispatcher.requestError(method, target, framing), close: true });
        return;
      }
    }
    let prepared: Prepared;
    try {
      prepared = this.dispatcher.prepare(method, target);
    } catch (e) {
      this.write(res, this.dispatcher.errorReply(false, e, method, target));
      return;
    }
    if (prepared.kind === 'reply') {
      this.write(res, this.closeIfBodyUnread(req, expectsContinue, prepared.reply));
      return;
    }
    (res as TrackedResponse)[kindOf] = resolveKind(prepared.route.kind, prepared.tail);
    const declared = declaredLength(req);
    if (declared !== null && declared > this.limits.bodyBytesMax) {
      this.write(res, tooLarge(this.limits.bodyBytesMax, prepared.route.dataCall));
      return;
    }
    const routed = prepared;
    if (connection.starting) connection.startQueue.push(() => this.start(connection, req, res, routed, expectsContinue, declared));
    else this.start(connection, req, res, routed, expectsContinue, declared);
  }

  /** An answer decided before the body was read: small declared bodies are drained by node:http. */
  private closeIfBodyUnread(req: IncomingMessage, expectsContinue: boolean, reply: HttpReply): HttpReply {
    if (!expectsContinue && !hasBody(req)) return reply;
    const declared = declaredLength(req);
    const drainable = !expectsContinue && declared !== null && declared <= this.limits.bodyBytesMax;
    return drainable ? reply : { ...reply, close: true };
  }

  /** Reads the body (if any), then hands the request to its handler, then lets the next one start. */
  private start(connection: Connection, req: IncomingMessage, res: ServerResponse, routed: Routed, expectsContinue: boolean, declared: number | null): void {
    // Already answered: its body broke while it waited for its turn (a parse error); it never runs.
    if (connection.closed || res.writableEnded) return;
    if (!hasBody(req)) {
      this.execute(req, res, routed, null);
      return;
    }
    connection.starting = true;
    if (expectsContinue) res.writeContinue();
    this.readBody(req, new BodyReader(this, connection, req, res, routed, this.limits.bodyBytesMax, declared));
  }

  private startNext(connection: Connection): void {
    connection.starting = false;
    while (!connection.starting) {
      const next = connection.startQueue.shift();
      if (next === undefined) return;
      next();
    }
  }

  private execute(req: IncomingMessage, res: ServerResponse, routed: Routed, body: Buffer | null): void {
    const request: HttpRequest = {
      method: req.method ?? 'GET',
      segments: routed.segments,
      params: routed.params,
      tail: routed.tail,
      headers: req.headers,
      body,
      remoteAddress: req.socket.remoteAddress ?? '',
      client: new Liveness(req.socket, res),
    };
    const out = this.dispatcher.run(routed, request);
    if (out instanceof Promise) out.then((reply) => this.write(res, reply));
    else this.write(res, out);
  }

  /** Collects the body with shared listener functions (state on the request, no closures per request). */
  private readBody(req: IncomingMessage, reader: BodyReader): void {
    (req as ReadingRequest)[bodyOf] = reader;
    req.on('data', onBodyData);
    req.once('end', onBodyEnd);
    // The client went away mid-body ('error' with ECONNRESET): nothing to answer; later requests of
    // the connection are gone too.
    req.once('error', onBodyError);
  }

  /** Called once per body: the whole body, or TOO_LARGE, or ABORTED. */
  bodyDone(reader: BodyReader, body: Buffer | typeof TOO_LARGE | typeof ABORTED): void {
    const connection = reader.connection;
    if (connection.holdPending) {
      connection.holdPending = false;
      if (connection.inFlight >= this.limits.pipelineMax && !connection.closed) this.holdBack(connection);
    }
    if (body === TOO_LARGE) this.write(reader.res, tooLarge(this.limits.bodyBytesMax, reader.routed.route.dataCall));
    else if (body !== ABORTED) this.execute(reader.req, reader.res, reader.routed, body);
    this.startNext(reader.connection);
  }

  /** One listener for every response (no closure per request); `this` is the response. */
  private readonly onResponseClose = ((server: RestServer) =>
    function (this: TrackedResponse): void {
      const connection = this[connectionOf];
      if (connection !== undefined) server.onAnswered(connection);
    })(this);

  private onAnswered(connection: Connection): void {
    if (connection.closed) return;
    connection.inFlight--;
    this.activeRequests--;
    if (connection.heldBack && connection.inFlight < this.limits.pipelineMax && !connection.closing) this.release(connection);
    if (connection.inFlight === 0 && connection.deferredError !== null) {
      connection.socket.write(connection.deferredError);
      connection.deferredError = null;
      this.stagedClose(connection);
    }
    if (this.activeRequests === 0) this.notifyIdle();
  }

  private write(res: ServerResponse, reply: HttpReply): void {
    if (res.writableEnded || res.destroyed) return;
    const status = reply.status;
    if (status < 300) this.counters.status2xx++;
    else if (status < 500) this.counters.status4xx++;
    else this.counters.status5xx++;
    const tracked = res as TrackedResponse;
    this.requestStats.record(tracked[kindOf] ?? KIND.OTHER, status, (performance.now() - (tracked[startedAt] ?? performance.now())) / 1000);
    const body = reply.body ?? '';
    // A flat [name, value, …] list: cheaper for node:http than an object it must walk.
    const headers: string[] = reply.contentType === undefined ? [] : ['content-type', reply.contentType];
    const extra = reply.headers;
    if (extra !== undefined) for (const name in extra) headers.push(name, extra[name] as string);
    headers.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
    if (reply.close === true || this.stopping) {
      headers.push('connection', 'close');
      res.shouldKeepAlive = false;
      // Nothing read after this request is served. node:http calls destroySoon() once this answer
      // is written, which is the staged close (see accept()).
      if (reply.close === true) {
        const connection = (res as TrackedResponse)[connectionOf];
        if (connection !== undefined) connection.closing = true;
      }
    }
    res.sendDate = false;
    res.writeHead(status, headers);
    res.end(body);
  }

  private onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    const connection = (socket as TrackedSocket)[connectionOf];
    if (connection === undefined) {
      // Not a socket we accepted (cannot happen: this server never listens itself).
      socket.destroy();
      return;
    }
    // A closing connection has had its last answer; the parser's complaints about what follows
    // (including its own errors while it is paused) are noise.
    if (connection.closing) return;
    this.counters.clientErrors++;
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Bytes after a `Connection: close` request are ignored; the answers due are still sent (node:http
    // closes after the last one, in stages).
    if (err.code === 'HPE_CLOSED_CONNECTION') {
      connection.closing = true;
      if (connection.inFlight === 0) this.stagedClose(connection);
      return;
    }
    const error = clientErrorOf(err.code, this.limits.headerBytesMax);
    this.log.fine('client error', { code: error.code, parser: err.code ?? null, remote: socket.remoteAddress ?? null });
    // The parser reads one request at a time, so an error while the last request's body is still
    // arriving (a bad chunk size, a missing CRLF, a body timeout) belongs to that request: it is
    // answered through its own response, in order after the earlier ones, and its handler never runs
    // (it may still be waiting for its turn to start, or be reading its body).
    const req = connection.lastRequest;
    const res = connection.lastResponse;
    if (req !== null && res !== null && !req.complete && !res.writableEnded) {
      const reader = (req as Partial<ReadingRequest>)[bodyOf];
      this.write(res, { ...this.dispatcher.requestError(req.method ?? 'GET', req.url ?? '/', error), close: true });
      reader?.finish(ABORTED);
      return;
    }
    connection.closing = true;
    const body = JSON.stringify({ status: 'fail', message: error.message });
    const answer = `HTTP/1.1 ${error.status} ${REASONS[error.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
    // An error in a new request's head: the earlier requests of this connection are answered first;
    // the error and the close come after the last of them.
    if (connection.inFlight > 0) {
      connection.deferredError = answer;
      return;
    }
    socket.write(answer);
    this.stagedClose(connection);
  }

  /** Stops taking new requests on kept-alive connections and waits (bounded) for in-flight ones. */
  async drain(deadlineMs: number): Promise<void> {
    this.stopping = true;
    this.server.closeIdleConnections();
    if (this.activeRequests > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

/** The listener that switches node:http to reading a TLS socket through the stream (see accept()). */
function ignoreData(): void {}

const TOO_LARGE = Symbol('tooLarge');
const ABORTED = Symbol('aborted');

/** The state of one body being read. */
class BodyReader {
  first: Buffer | null = null;
  rest: Buffer[] | null = null;
  total = 0;
  finished = false;
  constructor(
    readonly server: RestServer,
    readonly connection: Connection,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly routed: Routed,
    readonly limit: number,
    readonly declared: number | null,
  ) {}

  finish(body: Buffer | typeof TOO_LARGE | typeof ABORTED): void {
    if (this.finished) return;
    this.finished = true;
    this.first = null;
    this.rest = null;
    this.server.bodyDone(this, body);
  }
}

const bodyOf = Symbol('gridBody');
type ReadingRequest = IncomingMessage & { [bodyOf]: BodyReader };

function onBodyData(this: ReadingRequest, chunk: Buffer): void {
  const reader = this[bodyOf];
  if (reader.finished) return;
  reader.total += chunk.length;
  if (reader.total > reader.limit) reader.finish(TOO_LARGE);
  else if (reader.first === null) reader.first = chunk;
  else (reader.rest ??= [reader.first]).push(chunk);
}

function onBodyEnd(this: ReadingRequest): void {
  const reader = this[bodyOf];
  if (reader.finished) return;
  const body = reader.rest !== null ? Buffer.concat(reader.rest, reader.total) : (reader.first ?? Buffer.alloc(0));
  reader.finish(body);
}

function onBodyError(this: ReadingRequest): void {
  this[bodyOf].finish(ABORTED);
}

/** What a request that node:http could not parse is answered. */
function clientErrorOf(parserCode: string | undefined, headerBytesMax: number): GridError {
  if (parserCode === 'HPE_HEADER_OVERFLOW') return new GridError('ERR_HTTP_HEADERS_TOO_LARGE', `request line and headers exceed ${headerBytesMax} bytes`);
  if (parserCode === 'ERR_HTTP_REQUEST_TIMEOUT') return new GridError('ERR_HTTP_TIMEOUT', 'request timed out');
  return new GridError('ERR_HTTP_BAD_REQUEST', `malformed request (${parserCode ?? 'parse error'})`);
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;
}

function declaredLength(req: IncomingMessage): number | null {
  const cl = req.headers['content-length'];
  if (cl === undefined || req.headers['transfer-encoding'] !== undefined) return null;
  return Number(cl);
}

function tooLarge(limit: number, dataCall: boolean): HttpReply {
  const message = `request body exceeds ${limit} bytes`;
  const reply = dataCall ? dataError(new GridError('ERR_HTTP_BODY_TOO_LARGE', message)) : fail(413, message);
  return { ...reply, close: true };
}
