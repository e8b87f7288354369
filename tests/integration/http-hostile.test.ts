// Regression tests for what a hostile or careless client found in the HTTP layer of a real member
// process (docs/rest.md "Transport", "Limits"):
// - Transfer-Encoding other than a final `chunked` is 400 and close (RFC 9112 §6.3); `gzip, chunked`
//   is 501 and close (RFC 9112 §6.1); before, the member never answered and kept the connection open.
// - A broken chunked body (bad chunk size, overflow, negative, missing CRLF) is 400 and close at once,
//   after the answers to earlier requests and without running its handler; before, the 400 waited for
//   the broken request's own answer, which waited for a body that never came.
// - 3,000 pipelined requests read by the client 1 s later are all answered in order (the member stops
//   reading at grid.rest.pipeline.max in flight and resumes as answers drain); before, 227 answers and
//   a TCP reset.
// - A connection closed with unread request bytes (413, a parse error) closes in stages: the client
//   sees the final answer and a FIN, not a reset.
// - HEAD /grid/rest/maps with the DATA group off answers what GET answers (404).
// - Every malformed head gets its status and a close within a deadline, never silence.
// How: exact bytes over raw sockets; a reset is seen as ECONNRESET on the client socket; deadlines
// bound every wait and assert nothing about speed beyond "an answer came".
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { parseResponses, request, send, type RawResponse } from '../harness/raw-http.js';
import { Connection, httpRequest } from '../harness/connection.js';

const BODY_MAX = 1024;

const XML = `<grid>
  <properties>
    <property name="grid.rest.body.bytes.max">${BODY_MAX}</property>
    <property name="grid.shutdown.inflight.wait.seconds">2</property>
  </properties>
  <network>
    <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api>
  </network>
</grid>`;

/** What came back on one connection, and how it ended. */
interface Outcome {
  readonly responses: RawResponse[];
  /** The server sent FIN (or the socket closed) before the deadline. */
  readonly closed: boolean;
  /** The client saw ECONNRESET: the server closed with unread bytes. */
  readonly reset: boolean;
  readonly raw: Buffer;
}

/**
 * Connects, writes `parts` (a function is called to write more once connected), reads nothing for
 * `readDelayMs`, then collects until `expect` responses and a close arrived, or the deadline passed.
 */
function converse(
  port: number,
  parts: (string | Buffer)[] | ((socket: net.Socket) => void),
  options: { expect?: number; untilClose?: boolean; readDelayMs?: number; deadlineMs?: number; head?: boolean[] } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let reset = false;
    let closed = false;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks);
      resolve({ responses: parseResponses(raw, options.head ?? []).responses, closed, reset, raw });
    };
    const timer = setTimeout(finish, options.deadlineMs ?? 10_000);
    // With untilClose, wait for the socket's 'close': a reset that follows the FIN is seen then.
    const check = (): void => {
      if (options.untilClose === true) return;
      const enough = parseResponses(Buffer.concat(chunks), options.head ?? []).responses.length >= (options.expect ?? 1);
      if (closed || enough) finish();
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      check();
    });
    socket.on('end', () => {
      closed = true;
      check();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET') reset = true;
      closed = true;
      if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_WRITE_AFTER_END') finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    if ((options.readDelayMs ?? 0) > 0) {
      socket.pause();
      setTimeout(() => socket.resume(), options.readDelayMs);
    }
    socket.on('connect', () => {
      if (typeof parts === 'function') parts(socket);
      else for (const p of parts) socket.write(p);
    });
  });
}

function assertFailJson(r: RawResponse | undefined, status: number, message?: RegExp): void {
  assert.ok(r !== undefined, 'an answer came');
  assert.equal(r.status, status, `${r.statusLine} ${r.text()}`);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers.connection, 'close');
  const body = r.json() as { status: string; message: string };
  assert.equal(body.status, 'fail');
  if (message !== undefined) assert.match(body.message, message);
}

function assertFailData(r: RawResponse | undefined, status: number): void {
  assert.ok(r !== undefined, 'an answer came');
  assert.equal(r.status, status, `${r.statusLine} ${r.headers['grid-error'] ?? ''}`);
  assert.equal(r.headers['content-length'], '0');
  assert.equal(r.body.length, 0);
  assert.ok((r.headers['grid-error'] ?? '').length > 0, 'a data call names the reason in Grid-Error');
  assert.equal(r.headers.connection, 'close');
}

let member: MemberProcess;
let port: number;

before(async () => {
  member = await startMember({ xml: XML });
  port = member.port;
});

after(async () => {
  assert.equal(await member.stop(), 0);
});

describe('Transfer-Encoding framing (RFC 9112 §6)', () => {
  const head = (path: string, te: string): string => `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ${te}\r\n\r\n`;

  test('a coding other than a final chunked is 400, then close: JSON for a management call', async () => {
    for (const te of ['gzip', 'identity', 'xchunked', 'gzip, identity', 'chunked, gzip']) {
      const ex = await converse(port, [head('/grid/rest/management/cluster/state', te) + 'dev&'], { untilClose: true, deadlineMs: 5000 });
      assert.equal(ex.responses.length, 1, `${te}: ${ex.raw.toString('latin1').slice(0, 200)}`);
      assertFailJson(ex.responses[0], 400);
      assert.equal(ex.closed, true, `${te}: the connection closes`);
    }
  });

  test('on a data call: 400 with an empty body and Grid-Error, then close; nothing is stored', async () => {
    for (const te of ['gzip', 'identity', 'xchunked', 'gzip, identity']) {
      const ex = await converse(port, [head('/grid/rest/maps/te/k', te) + '5\r\nhello\r\n0\r\n\r\n'], { untilClose: true, deadlineMs: 5000 });
      assert.equal(ex.responses.length, 1, te);
      assertFailData(ex.responses[0], 400);
      assert.equal(ex.closed, true, te);
    }
    assert.equal((await request(port, 'GET', '/grid/rest/maps/te/k')).status, 204);
  });

  test('a GET with a bad Transfer-Encoding is 400 too, and the same on a repeated header line', async () => {
    const get = await converse(port, ['GET /grid/health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n'], { untilClose: true, deadlineMs: 5000 });
    assertFailJson(get.responses[0], 400);
    assert.equal(get.closed, true);
    const twoLines = await converse(port, ['POST /grid/rest/management/cluster/state HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n'], { untilClose: true, deadlineMs: 5000 });
    assertFailJson(twoLines.responses[0], 400);
    assert.equal(twoLines.closed, true);
  });

  test('gzip before chunked (valid framing, a coding the member does not decode) is 501, then close', async () => {
    const body = '4\r\ndev&\r\n0\r\n\r\n';
    const mgmt = await converse(port, [head('/grid/rest/management/cluster/state', 'gzip, chunked') + body], { untilClose: true, deadlineMs: 5000 });
    assertFailJson(mgmt.responses[0], 501, /gzip/);
    assert.equal(mgmt.closed, true);
    const data = await converse(port, [head('/grid/rest/maps/te/gz', 'gzip, chunked') + '5\r\nhello\r\n0\r\n\r\n'], { untilClose: true, deadlineMs: 5000 });
    assertFailData(data.responses[0], 501);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/te/gz')).status, 204, 'nothing stored');
    // chunked alone, in any case, stays fine.
    const ok = await converse(port, [head('/grid/rest/maps/te/ok', 'Chunked') + '5\r\nhello\r\n0\r\n\r\n']);
    assert.equal(ok.responses[0]?.status, 200);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/te/ok')).text(), 'hello');
  });
});

describe('broken chunked bodies', () => {
  const chunked = (path: string, body: string): string => `POST ${path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
  const BROKEN = ['zz\r\n', 'ffffffffffffffffff\r\n', '-5\r\n', '4\r\nabcdXX\r\n0\r\n\r\n'];

  test('an invalid chunk size or a missing CRLF is 400 at once, then close; the handler never runs', async () => {
    for (const body of BROKEN) {
      const ex = await converse(port, [chunked('/grid/rest/maps/chunks/k', body)], { untilClose: true, deadlineMs: 5000 });
      assert.equal(ex.responses.length, 1, `${JSON.stringify(body)}: ${ex.raw.toString('latin1').slice(0, 200)}`);
      assertFailData(ex.responses[0], 400);
      assert.equal(ex.closed, true, JSON.stringify(body));
      const mgmt = await converse(port, [chunked('/grid/rest/management/cluster/state', body)], { untilClose: true, deadlineMs: 5000 });
      assertFailJson(mgmt.responses[0], 400);
      assert.equal(mgmt.closed, true);
    }
    assert.equal((await request(port, 'GET', '/grid/rest/maps/chunks/k')).status, 204, 'nothing was stored');
  });

  test('pipelined behind complete requests: their answers first, in order, then 400 and close', async () => {
    const ex = await converse(
      port,
      [
        Buffer.concat([
          httpRequest('POST', '/grid/rest/maps/chunks/first', { body: 'one' }),
          httpRequest('GET', '/grid/rest/maps/chunks/first'),
          Buffer.from(chunked('/grid/rest/maps/chunks/broken', '3\r\nabc\r\nzz\r\n')),
        ]),
      ],
      { untilClose: true, deadlineMs: 5000 },
    );
    assert.deepEqual(ex.responses.map((r) => r.status), [200, 200, 400], ex.raw.toString('latin1').slice(0, 400));
    assert.equal(ex.responses[1]!.text(), 'one');
    assertFailData(ex.responses[2], 400);
    assert.equal(ex.closed, true);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/chunks/broken')).status, 204, 'the broken request stored nothing');
  });

  test('behind a waiting poll: the poll is answered when it ends, then 400, then close', async () => {
    const ex = await converse(
      port,
      [Buffer.concat([httpRequest('DELETE', '/grid/rest/queues/chunks-poll/1'), Buffer.from(chunked('/grid/rest/queues/chunks-poll', 'zz\r\n'))])],
      { untilClose: true, deadlineMs: 8000 },
    );
    assert.deepEqual(ex.responses.map((r) => r.status), [204, 400]);
    assert.equal(ex.closed, true);
    assert.equal((await request(port, 'GET', '/grid/rest/queues/chunks-poll/size')).text(), '0', 'nothing was offered');
  });

  test('the broken request may be waiting for an earlier body to finish: still 400 once, then close', async () => {
    // Two chunked bodies in one write: the second breaks while the first may still be delivering.
    const ex = await converse(
      port,
      [chunked('/grid/rest/maps/chunks/a', '3\r\nabc\r\n0\r\n\r\n') + chunked('/grid/rest/maps/chunks/b', '2\r\nxy\r\n-1\r\n')],
      { untilClose: true, deadlineMs: 5000 },
    );
    assert.deepEqual(ex.responses.map((r) => r.status), [200, 400]);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/chunks/a')).text(), 'abc');
    assert.equal((await request(port, 'GET', '/grid/rest/maps/chunks/b')).status, 204);
  });
});

describe('pipelining beyond grid.rest.pipeline.max (1000 by default)', () => {
  test('3,000 pipelined requests, read 1 s later: all 3,000 answered in order, no reset, connection kept', async () => {
    const count = 3000;
    const one = httpRequest('GET', '/grid/health/node-state');
    const ex = await converse(port, [Buffer.concat(Array.from({ length: count }, () => one))], { expect: count, readDelayMs: 1000, deadlineMs: 30_000 });
    assert.equal(ex.reset, false, 'no TCP reset');
    assert.equal(ex.responses.length, count, `answers: ${ex.responses.length}`);
    for (const r of ex.responses) assert.equal(r.text(), '"ACTIVE"');
    assert.equal(ex.closed, false, 'the connection stays open');
  });

  test('behind a waiting poll the member stops reading instead of refusing; every answer comes, in order', async () => {
    const count = 2500;
    const parts = [httpRequest('DELETE', '/grid/rest/queues/pipe-hold/1'), ...Array.from({ length: count }, (_, i) => httpRequest('GET', `/grid/rest/maps/pipe-hold/k${i % 7}`))];
    const ex = await converse(port, [Buffer.concat(parts)], { expect: count + 1, deadlineMs: 30_000 });
    assert.equal(ex.reset, false);
    assert.equal(ex.responses.length, count + 1);
    assert.equal(ex.responses[0]!.status, 204);
    assert.ok(ex.responses.slice(1).every((r) => r.status === 204), 'every GET answered (no such keys)');
    assert.equal(ex.closed, false);
  });
});

describe('the request at the pipeline limit still gets its body read', () => {
  let one: MemberProcess;
  before(async () => {
    one = await startMember({ args: ['--rest-groups', 'DATA'], xml: '<grid><properties><property name="grid.rest.pipeline.max">1</property></properties></grid>' });
  });
  after(async () => {
    await one.stop('SIGKILL');
  });

  /** Writes `head`, then (after the 100 Continue, or after a pause) `body`; resolves with everything read until `expect` answers. */
  const twoStep = (head: string, body: string, waitFor100: boolean): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: one.port });
      let data = '';
      let sent = false;
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer in 10 s; got ${JSON.stringify(data)}`));
      }, 10_000);
      const sendBody = (): void => {
        if (sent) return;
        sent = true;
        socket.write(body);
      };
      socket.on('data', (chunk: Buffer) => {
        data += chunk.toString('latin1');
        if (waitFor100 && data.includes('100 Continue')) sendBody();
        if (/HTTP\/1\.1 200 [^\r]*\r\n[\s\S]*\r\n\r\n/.test(data.replace(/HTTP\/1\.1 100 Continue\r\n\r\n/, ''))) {
          clearTimeout(timer);
          socket.destroy();
          resolve(data);
        }
      });
      socket.on('error', reject);
      socket.on('connect', () => {
        socket.write(head);
        if (!waitFor100) setTimeout(sendBody, 300);
      });
    });

  test('grid.rest.pipeline.max=1: a POST whose body comes later, and one behind Expect: 100-continue, are answered 200', async () => {
    const later = await twoStep('POST /grid/rest/maps/m/late HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n', 'hello', false);
    assert.match(later, /^HTTP\/1\.1 200 /);
    const cont = await twoStep('POST /grid/rest/maps/m/cont HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n', 'world', true);
    assert.match(cont, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    const r = await request(one.port, 'GET', '/grid/rest/maps/m/cont');
    assert.equal(r.text(), 'world');
  });
});

describe('staged close (RFC 9112 §9.6)', () => {
  // The client goes on sending after the member decided to close, and reads nothing for a while, as
  // a slow client would. A member that destroys the connection while bytes are still arriving makes
  // its kernel answer them with a reset, and the reset throws away the answer still waiting in the
  // client's receive buffer.
  const slowReader = { untilClose: true, readDelayMs: 500, deadlineMs: 8000 };

  /** Writes `first`, then 16 KiB of `fill` every 20 ms (about 400 KiB in all) while the socket takes it. */
  function trickle(first: string, fill: number): (socket: net.Socket) => void {
    return (socket) => {
      socket.write(first);
      let left = 25;
      const timer = setInterval(() => {
        if (left-- <= 0 || !socket.writable) {
          clearInterval(timer);
          return;
        }
        socket.write(Buffer.alloc(16 * 1024, fill));
      }, 20);
      socket.once('close', () => clearInterval(timer));
    };
  }

  test('a 413 on a declared length, with the body sent anyway: the client reads the answer and a FIN, not a reset', async () => {
    const ex = await converse(port, trickle(`POST /grid/rest/maps/staged/k HTTP/1.1\r\nHost: x\r\nContent-Length: ${1 << 20}\r\n\r\n`, 0x61), slowReader);
    assert.equal(ex.reset, false, 'no TCP reset');
    assert.equal(ex.responses[0]?.status, 413, ex.raw.toString('latin1').slice(0, 200));
    assert.equal(ex.closed, true);
  });

  test('a parse error with more bytes behind it: 400 and a FIN, not a reset', async () => {
    const ex = await converse(port, trickle('GET /grid/health HTTX/1.1\r\nHost: x\r\n\r\n', 0x7a), slowReader);
    assert.equal(ex.reset, false, 'no TCP reset');
    assertFailJson(ex.responses[0], 400);
    assert.equal(ex.closed, true);
  });

  test('Connection: close with more bytes behind it: one answer, a FIN, no reset', async () => {
    const ex = await converse(port, trickle('GET /grid/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 0x20), slowReader);
    assert.equal(ex.reset, false, 'no TCP reset');
    assert.equal(ex.responses.length, 1);
    assert.equal(ex.responses[0]!.status, 200);
    assert.equal(ex.closed, true);
  });
});

describe('malformed requests are never met with silence', () => {
  test('each malformed head gets its status and a close within the deadline', async () => {
    const cases: [string, number][] = [
      ['POST /grid/rest/maps/m/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n', 400],
      ['POST /grid/rest/management/cluster/state HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n', 400],
      ['POST /grid/rest/maps/m/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
      ['POST /grid/rest/maps/m/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n', 400],
      ['GET /grid/health HTTX/1.1\r\nHost: x\r\n\r\n', 400],
      ['GET /grid/health HTTP/1.1\r\nBad Header Line\r\n\r\n', 400],
      ['GET /grid/health HTTP/1.1\r\nContent-Length: -1\r\n\r\n', 400],
      ['GET /grid/health HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n', 400],
      ['POST /grid/rest/maps/m/k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', 501],
    ];
    for (const [bytes, status] of cases) {
      const ex = await converse(port, [bytes], { untilClose: true, deadlineMs: 3000 });
      assert.equal(ex.responses[0]?.status, status, `${JSON.stringify(bytes)}: ${ex.raw.toString('latin1').slice(0, 200)}`);
      assert.equal(ex.closed, true, `${JSON.stringify(bytes)}: closed within the deadline`);
    }
    assert.equal((await request(port, 'GET', '/grid/rest/maps/m/k')).status, 204, 'none of them stored anything');
  });
});

describe('HEAD is classified and routed like GET', () => {
  let dataOff: MemberProcess;
  before(async () => {
    dataOff = await startMember({ args: ['--rest'] });
  });
  after(async () => {
    assert.equal(await dataOff.stop(), 0);
  });

  test('with DATA off: HEAD answers what GET answers on every edge of the data paths', async () => {
    const paths = ['/grid/rest/maps', '/grid/rest/queues', '/grid/rest/maps/', '/grid/rest/queues/', '/grid/rest/maps/m', '/grid/rest/maps/m/k', '/grid/rest/maps?x=1', '/grid/rest/mapsX', '/grid/rest/wan', '/grid/rest/cp-subsystem'];
    for (const path of paths) {
      const conn = await Connection.open(dataOff.port);
      conn.send('GET', path);
      conn.send('HEAD', path);
      const [get, head] = await conn.responses(2);
      conn.destroy();
      assert.equal(head!.status, get!.status, `HEAD ${path} answered ${head!.statusLine}, GET ${get!.statusLine}`);
      assert.equal(head!.body.length, 0);
    }
    const bare = await send(dataOff.port, 'HEAD /grid/rest/maps HTTP/1.1\r\nHost: x\r\n\r\n', { head: [true] });
    assert.equal(bare.responses[0]?.status, 404, 'HEAD /grid/rest/maps is an unknown path, as docs/rest.md says');
  });
});
