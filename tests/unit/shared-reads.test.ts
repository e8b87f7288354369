// Reading plain TCP connections into one shared buffer (src/runtime/shared-reads.ts) on real loopback
// sockets: this Node takes the fast path (a Node whose internals differ would silently fall back to
// 'data' events and only be slower: this test says so); pause() stops the reads and resume() starts
// them; the end of the stream still arrives; TLS sockets and sockets with an `onread` of their own
// are left alone. Then the HTTP shell on it: a handler whose answer waits reads its request's header
// after other connections' reads have overwritten the shared buffer, and reads it right.
import test from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import type { Dispatcher, Prepared } from '../../src/http/dispatch.js';
import type { HttpReply } from '../../src/http/reply.js';
import type { HttpRequest } from '../../src/http/request.js';
import { RestServer } from '../../src/runtime/http-server.js';
import { readIntoSharedBuffer, SHARED_READ_BYTES } from '../../src/runtime/shared-reads.js';
import { Logger } from '../../src/util/logger.js';
import { Connection, httpRequest } from '../harness/connection.js';

/** A loopback server whose accepted sockets go to `onSocket`; resolves with it listening. */
async function listen(onSocket: (socket: net.Socket) => void): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer({ pauseOnConnect: true }, onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(typeof address === 'object' && address !== null);
  return { server, port: address.port };
}

function until(condition: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = (): void => {
      if (condition()) resolve();
      else if (Date.now() - started > deadlineMs) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(check, 5);
    };
    check();
  });
}

test('an accepted socket reads into the shared buffer; pause and resume hold; the end arrives', async () => {
  const shared = Buffer.allocUnsafeSlow(SHARED_READ_BYTES);
  const got: string[] = [];
  let sameMemory = true;
  let accepted: net.Socket | null = null;
  let ended = false;
  let fast = false;
  const { server, port } = await listen((socket) => {
    accepted = socket;
    fast = readIntoSharedBuffer(socket, shared, (chunk) => {
      if (chunk.buffer !== shared.buffer) sameMemory = false;
      got.push(chunk.toString('latin1'));
    });
    socket.on('end', () => (ended = true));
    socket.resume();
  });
  const client = net.connect({ port, host: '127.0.0.1' });
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  try {
    await until(() => accepted !== null, 'the connection');
    assert.equal(fast, true, 'this Node takes the shared-buffer path (otherwise the member falls back to data events)');
    client.write('abc');
    await until(() => got.join('') === 'abc', 'the first bytes');
    assert.equal(sameMemory, true, 'the bytes are a view of the shared buffer');
    (accepted as net.Socket | null)?.pause();
    client.write('def');
    // Bounded wait for bytes that must not come while paused.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(got.join(''), 'abc', 'nothing is read while paused');
    (accepted as net.Socket | null)?.resume();
    await until(() => got.join('') === 'abcdef', 'the bytes held back by the pause');
    client.end();
    await until(() => ended, "the client's end");
  } finally {
    client.destroy();
    server.close();
  }
});

test('TLS sockets and sockets with an onread of their own are left to read as before', () => {
  const shared = Buffer.allocUnsafeSlow(SHARED_READ_BYTES);
  const secure = new tls.TLSSocket(new net.Socket());
  assert.equal(readIntoSharedBuffer(secure, shared, () => {}), false);
  secure.destroy();
  const own = new net.Socket({ onread: { buffer: Buffer.alloc(16), callback: () => true } } as unknown as net.SocketConstructorOpts);
  assert.equal(readIntoSharedBuffer(own, shared, () => {}), false);
  own.destroy();
  const unopened = new net.Socket();
  assert.equal(readIntoSharedBuffer(unopened, shared, () => {}), false, 'no handle yet');
  unopened.destroy();
});

test('the HTTP shell: an answer that waits reads its header after other reads overwrote the shared buffer', async () => {
  const waiting: (() => void)[] = [];
  const dispatcher = {
    prepare(_method: string, target: string): Prepared {
      return { kind: 'route', route: { kind: 0, dataCall: false } as never, segments: target.slice(1).split('/'), params: {}, tail: [], group: null };
    },
    run(routed: Extract<Prepared, { kind: 'route' }>, request: HttpRequest): HttpReply | Promise<HttpReply> {
      const answer = (): HttpReply => ({ status: 200, contentType: 'text/plain', body: `${request.header('x-id') ?? '-'}:${request.header('content-type') ?? '-'}:${request.body?.toString('latin1') ?? '-'}` });
      if (routed.segments[0] === 'wait') return new Promise((resolve) => waiting.push(() => resolve(answer())));
      return answer();
    },
    requestError: (): HttpReply => ({ status: 400 }),
    errorReply: (): HttpReply => ({ status: 500 }),
  };
  const limits = { headerBytesMax: 16 * 1024, bodyBytesMax: 1024, pipelineMax: 8, headersTimeoutSeconds: 60, idleTimeoutSeconds: 300 };
  const rest = new RestServer(dispatcher as unknown as Dispatcher, limits, new Logger('OFF', 'text', { write: () => {} }).component('http'));
  const { server, port } = await listen((socket) => rest.accept(socket, Buffer.alloc(0)));
  const slow = await Connection.open(port);
  const fast = await Connection.open(port);
  try {
    slow.send('POST', '/wait/1', { body: 'slow-body', headers: { 'X-Id': 'slow-one', 'Content-Type': 'text/x-slow' } });
    await until(() => waiting.length === 1, 'the waiting request');
    // Another connection's reads land in the same buffer, over the waiting request's bytes.
    for (let i = 0; i < 5; i++) {
      fast.write(httpRequest('POST', '/now', { body: `fast-${i}-`.padEnd(300, 'z'), headers: { 'X-Id': `fast-${i}`.padEnd(200, 'q'), 'Content-Type': 'text/x-fast' } }));
      const r = await fast.next(i);
      assert.equal(r.text(), `${`fast-${i}`.padEnd(200, 'q')}:text/x-fast:${`fast-${i}-`.padEnd(300, 'z')}`);
    }
    for (const w of waiting.splice(0)) w();
    const r = await slow.next(0);
    assert.equal(r.text(), 'slow-one:text/x-slow:slow-body');
  } finally {
    slow.destroy();
    fast.destroy();
    await rest.drain(1000);
    server.close();
  }
});

test('grid.rest.read.buffer.shared=false: the shell reads through data events and serves as before', async () => {
  const dispatcher = {
    prepare(_method: string, target: string): Prepared {
      return { kind: 'route', route: { kind: 0, dataCall: false } as never, segments: target.slice(1).split('/'), params: {}, tail: [], group: null };
    },
    run: (_routed: Extract<Prepared, { kind: 'route' }>, request: HttpRequest): HttpReply => ({ status: 200, contentType: 'text/plain', body: request.body?.toString('latin1') ?? '-' }),
    requestError: (): HttpReply => ({ status: 400 }),
    errorReply: (): HttpReply => ({ status: 500 }),
  };
  for (const shared of [false, true]) {
    const limits = { headerBytesMax: 16 * 1024, bodyBytesMax: 1024, pipelineMax: 8, headersTimeoutSeconds: 60, idleTimeoutSeconds: 300, sharedReadBuffer: shared };
    const rest = new RestServer(dispatcher as unknown as Dispatcher, limits, new Logger('OFF', 'text', { write: () => {} }).component('http'));
    let accepted: net.Socket | null = null;
    const { server, port } = await listen((socket) => {
      accepted = socket;
      rest.accept(socket, Buffer.alloc(0));
    });
    const conn = await Connection.open(port);
    try {
      conn.send('POST', '/x', { body: 'hello' });
      assert.equal((await conn.next(0)).text(), 'hello');
      const socket = accepted as net.Socket | null;
      assert.ok(socket !== null);
      const field = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kBuffer');
      assert.ok(field !== undefined);
      assert.equal((socket as unknown as Record<symbol, unknown>)[field] !== null, shared, `shared=${shared}: the socket's own read buffer field`);
    } finally {
      conn.destroy();
      await rest.drain(1000);
      server.close();
    }
  }
});
