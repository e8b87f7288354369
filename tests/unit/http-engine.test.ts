// The connection shell of the member's HTTP engine (src/runtime/http-server.ts) on a fake socket:
// pipelined answers leave in order with one write per read; an answer that waits (a promise) holds
// the later ones back but not their handlers; the in-flight cap and write back-pressure stop reading
// and resume it; Connection: close, HTTP/1.0 and parse errors close in stages after the answers due;
// HEAD answers carry Content-Length without a body; Expect: 100-continue gets its interim answer in
// order, or none when the request is refused; a client's FIN makes it gone for waiting polls.
import test from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import type { Dispatcher, Prepared } from '../../src/http/dispatch.js';
import type { HttpReply } from '../../src/http/reply.js';
import type { HttpRequest } from '../../src/http/request.js';
import { RestServer } from '../../src/runtime/http-server.js';
import { Logger } from '../../src/util/logger.js';
import type { GridError } from '../../src/util/errors.js';
import { parseResponses } from '../harness/raw-http.js';

class FakeSocket extends EventEmitter {
  remoteAddress = '127.0.0.1';
  allowHalfOpen = false;
  destroyed = false;
  writableLength = 0;
  writableHighWaterMark = 16384;
  readonly writes: Buffer[] = [];
  paused = false;
  ended = false;
  /** What write() answers (false: the kernel took less than asked). */
  accept = true;
  write(data: string | Buffer, encoding?: BufferEncoding): boolean {
    this.writes.push(typeof data === 'string' ? Buffer.from(data, encoding ?? 'utf8') : Buffer.from(data));
    return this.accept;
  }
  cork(): void {}
  uncork(): void {}
  pause(): this {
    this.paused = true;
    return this;
  }
  resume(): this {
    this.paused = false;
    return this;
  }
  end(): this {
    this.ended = true;
    return this;
  }
  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      this.emit('close');
    }
    return this;
  }
  text(): string {
    return Buffer.concat(this.writes).toString('latin1');
  }
  send(text: string): void {
    this.emit('data', Buffer.from(text, 'latin1'));
  }
}

/** Routes by the first path segment: /sync/x answers x, /wait/x waits for release(x), anything else 404. */
class StubDispatcher {
  readonly started: string[] = [];
  private readonly waiting = new Map<string, (reply: HttpReply) => void>();
  prepare(method: string, target: string): Prepared {
    if (target.startsWith('/refuse')) return { kind: 'reply', reply: { status: 403, body: 'no' } };
    return { kind: 'route', route: { kind: 0, dataCall: false } as never, segments: target.slice(1).split('/'), params: {}, tail: [], group: null };
  }
  run(routed: Extract<Prepared, { kind: 'route' }>, request: HttpRequest): HttpReply | Promise<HttpReply> {
    const [kind, name = ''] = routed.segments;
    this.started.push(`${request.method} ${name}`);
    const body = request.body === null ? name : `${name}:${request.body.toString('latin1')}`;
    if (kind === 'wait') return new Promise((resolve) => this.waiting.set(name, () => resolve({ status: 200, contentType: 'text/plain', body })));
    if (kind === 'poll') {
      return new Promise((resolve) => {
        request.client.onGone(() => resolve({ status: 204 }));
      });
    }
    if (kind === 'sync') return { status: 200, contentType: 'text/plain', body };
    return { status: 404 };
  }
  release(name: string): void {
    const r = this.waiting.get(name);
    assert.ok(r !== undefined, `${name} is not waiting`);
    this.waiting.delete(name);
    r({ status: 200 });
  }
  requestError(_method: string, _target: string, e: GridError): HttpReply {
    return { status: e.status, body: e.code };
  }
  errorReply(): HttpReply {
    return { status: 500 };
  }
}

const LIMITS = { headerBytesMax: 16 * 1024, bodyBytesMax: 1024, pipelineMax: 3, headersTimeoutSeconds: 60, idleTimeoutSeconds: 300 };

function setup(limits = LIMITS): { server: RestServer; socket: FakeSocket; dispatcher: StubDispatcher } {
  const dispatcher = new StubDispatcher();
  const server = new RestServer(dispatcher as unknown as Dispatcher, limits, new Logger('OFF', 'text', { write: () => {} }).component('http'));
  const socket = new FakeSocket();
  return { server, socket, dispatcher };
}

function accept(server: RestServer, socket: FakeSocket, first: string): void {
  server.accept(socket as unknown as Socket, Buffer.from(first, 'latin1'));
}

const get = (path: string, extra = ''): string => `GET ${path} HTTP/1.1\r\nHost: h\r\n${extra}\r\n`;

function bodies(socket: FakeSocket, heads: readonly boolean[] = []): string[] {
  return parseResponses(Buffer.concat(socket.writes), heads).responses.map((r) => `${r.status} ${r.body.toString('latin1')}`);
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('pipelined requests in one read: answers in order, one write', () => {
  const { server, socket } = setup();
  accept(server, socket, get('/sync/a') + get('/sync/b') + `POST /sync/c HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nhi` + get('/x'));
  assert.equal(socket.writes.length, 1, 'one write for the read');
  assert.deepEqual(bodies(socket), ['200 a', '200 b', '200 c:hi', '404 ']);
  assert.match(socket.text(), /content-length: 1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=300\r\n\r\na/);
});

test('an answer that waits holds the later ones back, not their handlers; order is kept', async () => {
  const { server, socket, dispatcher } = setup();
  accept(server, socket, get('/wait/a') + get('/sync/b'));
  assert.deepEqual(dispatcher.started, ['GET a', 'GET b'], 'both handlers started');
  assert.equal(socket.writes.length, 0, 'b waits behind a');
  dispatcher.release('a');
  await tick();
  assert.deepEqual(bodies(socket), ['200 a', '200 b']);
  assert.equal(socket.writes.length, 1, 'both answers in one write');
});

test('pipelineMax requests in flight stop reading; answers resume it and the held requests are served', async () => {
  const { server, socket, dispatcher } = setup();
  accept(server, socket, get('/wait/1') + get('/wait/2') + get('/wait/3') + get('/sync/4') + get('/sync/5'));
  assert.deepEqual(dispatcher.started, ['GET 1', 'GET 2', 'GET 3'], 'the 4th waits in the parser');
  assert.equal(socket.paused, true);
  dispatcher.release('1');
  await tick();
  // 4 is answered at once but its answer waits behind 2 and 3: three in flight again, 5 waits.
  assert.deepEqual(dispatcher.started, ['GET 1', 'GET 2', 'GET 3', 'GET 4']);
  assert.equal(socket.paused, true);
  dispatcher.release('2');
  await tick();
  // 3, 4 (behind 3) and now 5 (behind them) are in flight: held again.
  assert.deepEqual(dispatcher.started, ['GET 1', 'GET 2', 'GET 3', 'GET 4', 'GET 5']);
  assert.equal(socket.paused, true);
  dispatcher.release('3');
  await tick();
  assert.equal(socket.paused, false, 'everything answered: reading again');
  assert.deepEqual(bodies(socket), ['200 1', '200 2', '200 3', '200 4', '200 5']);
});

test('a socket that takes less than written stops reading until drain', () => {
  const { server, socket, dispatcher } = setup();
  socket.accept = false;
  accept(server, socket, get('/sync/a'));
  assert.equal(socket.paused, true);
  socket.accept = true;
  socket.send(get('/sync/b'));
  assert.deepEqual(dispatcher.started, ['GET a'], 'b stays unread while the socket is full');
  socket.emit('drain');
  assert.deepEqual(dispatcher.started, ['GET a', 'GET b']);
  assert.equal(socket.paused, false);
});

test('Connection: close and HTTP/1.0: the answer says close, later requests are not served, the connection ends', () => {
  for (const first of [get('/sync/a', 'Connection: close\r\n'), 'GET /sync/a HTTP/1.0\r\n\r\n']) {
    const { server, socket, dispatcher } = setup();
    accept(server, socket, first + get('/sync/b'));
    assert.deepEqual(dispatcher.started, ['GET a']);
    assert.deepEqual(bodies(socket), ['200 a']);
    assert.match(socket.text(), /Connection: close\r\n/);
    assert.equal(socket.ended, true, 'FIN after the answer');
    assert.equal(socket.destroyed, false, 'not destroyed at once: the staged close reads what is left');
    socket.destroy();
  }
});

test('a parse error after a waiting answer is written after it, then the connection closes', async () => {
  const { server, socket, dispatcher } = setup();
  accept(server, socket, get('/wait/a') + 'GET /b HTTP/1.1\r\nBad Line\r\n\r\n');
  assert.equal(socket.writes.length, 0);
  dispatcher.release('a');
  await tick();
  assert.deepEqual(bodies(socket), ['200 a', '400 ERR_HTTP_BAD_REQUEST']);
  assert.equal(socket.ended, true);
  socket.destroy();
});

test('HEAD: Content-Length of the body, no body', () => {
  const { server, socket } = setup();
  accept(server, socket, 'HEAD /sync/abc HTTP/1.1\r\nHost: h\r\n\r\n' + get('/sync/d'));
  assert.match(socket.text(), /^HTTP\/1\.1 200 OK\r\ncontent-type: text\/plain\r\ncontent-length: 3\r\n[^]*?\r\n\r\nHTTP\/1\.1 200 OK/);
  assert.deepEqual(bodies(socket, [true]), ['200 ', '200 d']);
});

test('Expect: 100-continue: the interim answer before the body; a refused request gets its answer at once, no 100, then close', () => {
  const ok = setup();
  accept(ok.server, ok.socket, 'POST /sync/e HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
  assert.equal(ok.socket.text(), 'HTTP/1.1 100 Continue\r\n\r\n');
  ok.socket.send('yo');
  assert.deepEqual(bodies(ok.socket), ['200 e:yo']);
  const refused = setup();
  accept(refused.server, refused.socket, 'POST /refuse HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
  assert.doesNotMatch(refused.socket.text(), /100 Continue/);
  assert.deepEqual(bodies(refused.socket), ['403 no']);
  assert.equal(refused.socket.ended, true);
  refused.socket.destroy();
});

test("a client's FIN: waiting polls learn it is gone; the answers due are still written", async () => {
  const { server, socket } = setup();
  accept(server, socket, get('/poll/p'));
  assert.equal(socket.writes.length, 0);
  socket.emit('end');
  await tick();
  assert.deepEqual(bodies(socket), ['204 ']);
  assert.equal(socket.ended, true, 'our FIN after the last answer');
});

test('a body larger than the limit is 413 and close; requests counted and in flight drop to 0 when the socket closes', async () => {
  const { server, socket } = setup();
  accept(server, socket, `POST /sync/big HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n`);
  assert.deepEqual(bodies(socket), ['413 ERR_HTTP_BODY_TOO_LARGE']);
  assert.equal(socket.ended, true);
  accept(server, new FakeSocket(), get('/wait/w'));
  assert.equal(server.activeRequests, 1);
  assert.equal(server.connectionCount, 2);
  for (const s of [socket]) s.destroy();
  assert.equal(server.connectionCount, 1);
  assert.equal(server.counters.requests, 2);
});
