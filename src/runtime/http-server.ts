// node:http underneath, our own routing on top. Connections arrive from the unified listener (or a
// dedicated REST listener) already sniffed as HTTP. This file owns the HTTP limits: header bytes
// (431), body bytes (413, then close), headers timeout and idle keep-alive timeout, requests in
// flight per connection, `Expect: 100-continue`, and graceful close. Responses always carry
// Content-Length; node:http keeps pipelined responses in request order.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Dispatcher, Prepared } from '../http/dispatch.js';
import { dataError, fail, type HttpReply } from '../http/reply.js';
import { GridError } from '../util/errors.js';
import type { HttpRequest } from '../http/request.js';
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
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
};

const inFlight = Symbol('gridInFlight');
type CountedSocket = Socket & { [inFlight]?: number };

export class RestServer {
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();
  private stopping = false;
  private activeRequests = 0;
  private idleWaiters: (() => void)[] = [];
  /** Replies by status class, for metrics. */
  readonly counters = { requests: 0, status2xx: 0, status4xx: 0, status5xx: 0, clientErrors: 0 };

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
      // node's own per-connection check interval; 1 s is plenty for timeouts counted in seconds.
      connectionsCheckingInterval: 1000,
    });
    this.server.on('request', (req, res) => this.onRequest(req, res, false));
    this.server.on('checkContinue', (req, res) => this.onRequest(req, res, true));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.onClientError(err, socket));
  }

  /** Hands a sniffed connection to node:http; `head` holds the bytes already read from it. */
  accept(socket: Socket, head: Buffer): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    // Put the sniffed bytes back first, then let node:http adopt the socket and read on.
    socket.unshift(head);
    this.server.emit('connection', socket);
    socket.resume();
  }

  get connectionCount(): number {
    return this.sockets.size;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void {
    this.counters.requests++;
    this.activeRequests++;
    const socket = req.socket as CountedSocket;
    const pending = (socket[inFlight] ?? 0) + 1;
    socket[inFlight] = pending;
    res.once('close', () => {
      socket[inFlight] = (socket[inFlight] ?? 1) - 1;
      this.activeRequests--;
      if (this.activeRequests === 0) this.notifyIdle();
    });
    if (pending > this.limits.pipelineMax) {
      this.write(res, { status: 503, headers: { 'retry-after': '1', 'content-type': 'application/json' }, body: '{"status":"fail","message":"too many requests in flight on this connection"}', close: true });
      return;
    }
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    let prepared: Prepared;
    try {
      prepared = this.dispatcher.prepare(method, target);
    } catch (e) {
      this.write(res, this.dispatcher.errorReply(false, e, method, target));
      return;
    }
    if (prepared.kind === 'reply') {
      // Answering before the body is read: the unread body would be taken as the next request.
      // Small declared bodies are drained by node:http after the reply; anything else closes.
      const declaredNow = declaredLength(req);
      const closeAfter = expectsContinue || (hasBody(req) && (declaredNow === null || declaredNow > this.limits.bodyBytesMax));
      this.write(res, closeAfter ? { ...prepared.reply, close: true } : prepared.reply);
      return;
    }
    const declared = declaredLength(req);
    if (declared !== null && declared > this.limits.bodyBytesMax) {
      this.write(res, tooLarge(this.limits.bodyBytesMax, prepared.route.dataCall));
      return;
    }
    if (expectsContinue) res.writeContinue();
    const routed = prepared;
    this.readBody(req, declared)
      .then((body) => {
        if (body === TOO_LARGE) {
          this.write(res, tooLarge(this.limits.bodyBytesMax, routed.route.dataCall));
          return;
        }
        const request = this.toRequest(req, res, routed, body);
        return this.dispatcher.run(routed, request).then((reply) => this.write(res, reply));
      })
      .catch((e: unknown) => {
        // A body stream error means the client went away mid-request; nothing to answer.
        this.log.fine('request aborted', { error: String(e) });
        res.destroy();
      });
  }

  private toRequest(req: IncomingMessage, res: ServerResponse, prepared: Extract<Prepared, { kind: 'route' }>, body: Buffer | null): HttpRequest {
    const socket = req.socket;
    return {
      method: req.method ?? 'GET',
      segments: prepared.segments,
      params: prepared.params,
      tail: prepared.tail,
      headers: req.headers,
      body,
      remoteAddress: socket.remoteAddress ?? '',
      client: {
        isGone: () => socket.destroyed || res.destroyed || res.writableEnded,
        onGone: (callback) => {
          socket.once('close', callback);
          res.once('close', callback);
        },
      },
    };
  }

  private readBody(req: IncomingMessage, declared: number | null): Promise<Buffer | null | typeof TOO_LARGE> {
    if (!hasBody(req)) {
      req.resume();
      return Promise.resolve(null);
    }
    const limit = this.limits.bodyBytesMax;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let total = 0;
      let over = false;
      req.on('data', (chunk: Buffer) => {
        if (over) return;
        total += chunk.length;
        if (total > limit) {
          over = true;
          chunks.length = 0;
          resolve(TOO_LARGE);
          return;
        }
        chunks.push(chunk);
      });
      req.once('end', () => {
        if (over) return;
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, declared ?? total));
      });
      req.once('error', reject);
      req.once('aborted', () => reject(new Error('request aborted')));
    });
  }

  private write(res: ServerResponse, reply: HttpReply): void {
    if (res.writableEnded || res.destroyed) return;
    const status = reply.status;
    if (status < 300) this.counters.status2xx++;
    else if (status < 500) this.counters.status4xx++;
    else this.counters.status5xx++;
    const body = reply.body ?? '';
    const headers: Record<string, string | number> = { ...reply.headers, 'content-length': Buffer.byteLength(body) };
    if (reply.close === true || this.stopping) {
      headers.connection = 'close';
      res.shouldKeepAlive = false;
    }
    res.sendDate = false;
    res.writeHead(status, headers);
    res.end(body);
    if (reply.close === true) {
      // Make sure nothing more is read from this connection (for example the rest of a refused body).
      res.once('finish', () => res.socket?.destroySoon());
    }
  }

  private onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    this.counters.clientErrors++;
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message =
      status === 431 ? `request line and headers exceed ${this.limits.headerBytesMax} bytes` : status === 408 ? 'request timed out' : `malformed request (${err.code ?? 'parse error'})`;
    const body = JSON.stringify({ status: 'fail', message });
    this.log.fine('client error', { code: err.code ?? null, remote: socket.remoteAddress ?? null });
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
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
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

const TOO_LARGE = Symbol('tooLarge');

function hasBody(req: IncomingMessage): boolean {
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) return true;
  const cl = req.headers['content-length'];
  return cl !== undefined;
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
