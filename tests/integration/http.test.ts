// Checks the HTTP transport and the unified port of a real member process (docs/rest.md "Transport",
// "Limits", "Enabling and groups"): 404, 405 + Allow, 403 for REST off and for a disabled group,
// 400 for bad escapes and malformed requests, 431 / 413 limits, keep-alive, pipelining in order,
// `Connection: close`, HTTP/1.0, HEAD, back-pressure at the per-connection in-flight limit, `Expect: 100-continue` on
// refused requests, header / idle / sniff timeouts, and what the port does with TLS, garbage and the
// member protocol (handshake refusals, oversize and malformed frames). It ends by reading back data
// stored at the start: no bad input lost or corrupted anything.
// How: exact bytes over raw sockets; limits are made small through `grid.rest.*` properties so they
// are cheap to cross; closes are observed on the socket, with deadlines.
import { after, before, describe, test } from 'node:test';
import { firstFrame, sampleHandshake } from '../harness/handshake-fixture.js';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { SeededRandom } from '../../src/util/prng.js';
import { request, send, type RawResponse } from '../harness/raw-http.js';
import { Connection, exchangeRaw, httpRequest, metrics, waitFor } from '../harness/connection.js';
import { encodeFrame, PREAMBLE, FLAG_RESPONSE, PROTOCOL_VERSION } from '../../src/cluster/protocol/frame.js';
import { FrameReader } from '../../src/cluster/protocol/frame-reader.js';
import { decodeHandshakeResponse, encodeHandshakeRequest, type HandshakeRequest, type HandshakeResponse } from '../../src/cluster/protocol/handshake.js';
import { HANDSHAKE_REQUEST, HANDSHAKE_RESPONSE } from '../../src/cluster/protocol/message-types.js';

const HEADER_MAX = 2048;
const BODY_MAX = 1024;
const PIPELINE_MAX = 8;

const XML = `<grid>
  <properties>
    <property name="grid.rest.header.bytes.max">${HEADER_MAX}</property>
    <property name="grid.rest.body.bytes.max">${BODY_MAX}</property>
    <property name="grid.rest.pipeline.max">${PIPELINE_MAX}</property>
    <!-- Bounds the stop of this member: see the REST-disabled suite for the stop itself. -->
    <property name="grid.shutdown.inflight.wait.seconds">2</property>
  </properties>
  <network>
    <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api>
  </network>
</grid>`;

let member: MemberProcess;
let port: number;

const BINARY = Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i));
const INTACT: [string, Buffer, string | undefined][] = [
  ['/grid/rest/maps/intact/text', Buffer.from('still here'), 'text/plain'],
  ['/grid/rest/maps/intact/binary', BINARY, 'application/octet-stream'],
  ['/grid/rest/maps/intact/a/b%2Fc', Buffer.from('slashes'), undefined],
];

function assertEmpty(r: RawResponse, statusLine: string): void {
  assert.equal(r.statusLine, statusLine);
  assert.equal(r.headers['content-length'], '0');
  assert.equal(r.body.length, 0);
}

/** RFC 9110 renamed 413 "Payload Too Large" to "Content Too Large"; both are standard reasons. */
const STATUS_413 = /^HTTP\/1\.1 413 (Content|Payload) Too Large$/;

function assertFail(r: RawResponse, statusLine: string | RegExp, message?: string | RegExp): void {
  if (typeof statusLine === 'string') assert.equal(r.statusLine, statusLine);
  else assert.match(r.statusLine, statusLine);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['content-length'], String(r.body.length));
  const body = r.json() as { status: string; message: string };
  assert.equal(body.status, 'fail');
  assert.equal(Object.keys(body).join(','), 'status,message');
  if (typeof message === 'string') assert.equal(body.message, message);
  else if (message !== undefined) assert.match(body.message, message);
}

/** Sends bytes and waits for the server to close; returns what came back. */
function sendUntilClose(bytes: string | Buffer | (string | Buffer)[], p = port, deadlineMs = 10_000): ReturnType<typeof send> {
  return send(p, bytes, { untilClose: true, deadlineMs });
}

before(async () => {
  member = await startMember({ xml: XML });
  port = member.port;
  for (const [path, value, type] of INTACT) {
    const r = await request(port, 'POST', path, { body: value, headers: type === undefined ? {} : { 'Content-Type': type } });
    assert.equal(r.status, 200);
  }
  for (const item of ['q1', 'q2', 'q3']) assert.equal((await request(port, 'POST', '/grid/rest/queues/intact', { body: item })).status, 200);
});

after(async () => {
  assert.equal(await member.stop(), 0);
});

describe('routing answers', () => {
  test('an unknown path is 404 with an empty body', async () => {
    for (const path of ['/grid/rest/nope', '/nothing', '/grid', '/grid/rest', '/grid/rest/clusterXYZ', '/grid/rest/cluster/extra']) {
      const r = await request(port, 'GET', path);
      assertEmpty(r, 'HTTP/1.1 404 Not Found');
      assert.equal(r.headers['content-type'], undefined, path);
    }
  });

  test('a known path with the wrong method is 405 with Allow and an empty body', async () => {
    const a = await request(port, 'PUT', '/grid/rest/cluster', { body: 'x' });
    assertEmpty(a, 'HTTP/1.1 405 Method Not Allowed');
    assert.deepEqual(a.headers.allow?.split(/,\s*/).sort(), ['GET', 'HEAD']);
    const b = await request(port, 'DELETE', '/grid/health');
    assertEmpty(b, 'HTTP/1.1 405 Method Not Allowed');
    assert.deepEqual(b.headers.allow?.split(/,\s*/).sort(), ['GET', 'HEAD']);
    const c = await request(port, 'PATCH', '/grid/rest/maps/m/k', { body: 'x' });
    assertEmpty(c, 'HTTP/1.1 405 Method Not Allowed');
    assert.deepEqual(c.headers.allow?.split(/,\s*/).sort(), ['DELETE', 'GET', 'HEAD', 'POST', 'PUT']);
  });

  test('a disabled group is 403 naming the group; the connection stays usable', async () => {
    const conn = await Connection.open(port);
    conn.send('POST', '/grid/rest/management/cluster/changeState', { body: 'dev&&frozen' });
    conn.send('GET', '/grid/rest/wan/sync/progress/abc');
    conn.send('GET', '/grid/rest/cp-subsystem/members');
    conn.send('POST', '/grid/rest/management/cluster/forceStart', { body: 'dev&' });
    conn.send('POST', '/grid/rest/log-level', { body: 'dev&&FINE' });
    conn.send('GET', '/grid/health');
    const rs = await conn.responses(6);
    const groups = ['CLUSTER_WRITE', 'WAN', 'CP', 'PERSISTENCE', 'CLUSTER_WRITE'];
    groups.forEach((g, i) => assertFail(rs[i]!, 'HTTP/1.1 403 Forbidden', `REST endpoint group ${g} is not enabled`));
    assert.equal(rs[5]!.status, 200);
    assert.equal(conn.closed, false);
    conn.destroy();
    // The state did not change behind the 403.
    assert.equal(((await request(port, 'GET', '/grid/health')).json() as { clusterState: string }).clusterState, 'ACTIVE');
  });

  test('a malformed escape is 400: JSON for a non-data path, Grid-Error for a data path', async () => {
    assertFail(await request(port, 'GET', '/grid/rest/%zz'), 'HTTP/1.1 400 Bad Request');
    assertFail(await request(port, 'GET', '/grid/health/%E0%80%AF'), 'HTTP/1.1 400 Bad Request');
    const data = await request(port, 'GET', '/grid/rest/maps/m/%zz');
    assertEmpty(data, 'HTTP/1.1 400 Bad Request');
    assert.ok((data.headers['grid-error'] ?? '').length > 0);
  });
});

describe('malformed requests and limits', () => {
  test('a malformed request line or header is 400 (JSON, or Grid-Error on a data path), then the connection closes', async () => {
    for (const bad of [
      'GET /grid/health HTTX/1.1\r\nHost: x\r\n\r\n',
      'GET /grid/health HTTP/1.1\r\nBad Header Line\r\n\r\n',
      'GET /grid/health HTTP/1.1\r\nContent-Length: abc\r\n\r\n',
      'GET /grid/health HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      // Both framings at once: the classic request-smuggling shape.
      'POST /grid/rest/maps/smuggle/k HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ]) {
      const ex = await sendUntilClose(bad);
      assert.equal(ex.closed, true, JSON.stringify(bad));
      assert.equal(ex.responses.length, 1, JSON.stringify(bad));
      // Once the request line is read, the error is answered like that path's other errors.
      if (bad.includes('/maps/')) {
        assertEmpty(ex.responses[0]!, 'HTTP/1.1 400 Bad Request');
        assert.match(ex.responses[0]!.headers['grid-error'] ?? '', /Transfer-Encoding and Content-Length/);
      } else assertFail(ex.responses[0]!, 'HTTP/1.1 400 Bad Request');
      assert.equal(ex.responses[0]!.headers.connection, 'close');
    }
    assert.equal((await request(port, 'GET', '/grid/rest/maps/smuggle/k')).status, 204, 'the ambiguous request stored nothing');
  });

  test('request line + headers beyond grid.rest.header.bytes.max is 431, then close; under it is served', async () => {
    const head = (total: number): string => {
      const start = 'GET /grid/health HTTP/1.1\r\nHost: x\r\nX-Pad: ';
      return start + 'a'.repeat(total - start.length - 4) + '\r\n\r\n';
    };
    const ok = await request(port, 'GET', '/grid/health', { headers: { 'X-Pad': 'a'.repeat(HEADER_MAX - 200) } });
    assert.equal(ok.status, 200);
    for (const total of [HEADER_MAX + 32, HEADER_MAX * 4]) {
      const ex = await sendUntilClose(head(total));
      assert.equal(ex.closed, true);
      assert.equal(ex.responses.length, 1);
      assertFail(ex.responses[0]!, 'HTTP/1.1 431 Request Header Fields Too Large');
    }
    const longUrl = await sendUntilClose(`GET /grid/rest/maps/m/${'k'.repeat(HEADER_MAX + 32)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(longUrl.responses[0]?.status, 431, 'the request line counts');
  });

  test('a declared body beyond grid.rest.body.bytes.max is 413 before the body is sent, then close', async () => {
    const data = await sendUntilClose(`POST /grid/rest/maps/limits/big HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY_MAX + 1}\r\n\r\n`);
    assert.equal(data.closed, true);
    assert.equal(data.responses.length, 1);
    assert.match(data.responses[0]!.statusLine, STATUS_413);
    assert.equal(data.responses[0]!.headers['content-length'], '0');
    assert.equal(data.responses[0]!.body.length, 0);
    assert.ok((data.responses[0]!.headers['grid-error'] ?? '').length > 0, 'a data call names the reason in Grid-Error');
    const mgmt = await sendUntilClose(`POST /grid/rest/management/cluster/state HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY_MAX * 10}\r\n\r\n`);
    assert.equal(mgmt.closed, true);
    assertFail(mgmt.responses[0]!, STATUS_413);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/limits/big')).status, 204, 'nothing was stored');
    // Exactly at the limit is accepted.
    const exact = await request(port, 'POST', '/grid/rest/maps/limits/exact', { body: Buffer.alloc(BODY_MAX, 0x61) });
    assert.equal(exact.status, 200);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/limits/exact')).body.length, BODY_MAX);
  });

  test('a chunked body beyond the limit is 413, then close; nothing is stored', async () => {
    const chunk = 'b'.repeat(400);
    const body = `190\r\n${chunk}\r\n`.repeat(3) + '0\r\n\r\n';
    const ex = await sendUntilClose(`POST /grid/rest/maps/limits/chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}GET /grid/health HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.equal(ex.closed, true);
    assert.equal(ex.responses.length, 1, 'the pipelined request after the refused body is not served');
    assert.match(ex.responses[0]!.statusLine, STATUS_413);
    assert.equal(ex.responses[0]!.body.length, 0);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/limits/chunked')).status, 204);
  });

  test('Expect: 100-continue on a refused request: the final answer at once, no 100, then close', async () => {
    const refused = await sendUntilClose('POST /grid/rest/management/cluster/changeState HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n');
    assert.equal(refused.closed, true);
    assert.equal(refused.responses.length, 1);
    assertFail(refused.responses[0]!, 'HTTP/1.1 403 Forbidden', 'REST endpoint group CLUSTER_WRITE is not enabled');
    const tooBig = await sendUntilClose(`POST /grid/rest/maps/limits/expect HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY_MAX + 1}\r\nExpect: 100-continue\r\n\r\n`);
    assert.equal(tooBig.closed, true);
    assert.equal(tooBig.responses[0]?.status, 413);
    // The raw bytes hold no interim answer.
    const raw = await exchangeRaw(port, 'POST /grid/rest/management/cluster/changeState HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n');
    assert.equal(raw.closed, true);
    assert.match(raw.data.toString('latin1'), /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.doesNotMatch(raw.data.toString('latin1'), /100 Continue/);
    const rawBig = await exchangeRaw(port, `POST /grid/rest/maps/limits/expect HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY_MAX + 1}\r\nExpect: 100-continue\r\n\r\n`);
    assert.match(rawBig.data.toString('latin1'), /^HTTP\/1\.1 413 (Content|Payload) Too Large\r\n/);
    assert.doesNotMatch(rawBig.data.toString('latin1'), /100 Continue/);
  });
});

describe('connections', () => {
  test('keep-alive: several requests one after another on one connection', async () => {
    const conn = await Connection.open(port);
    for (let i = 0; i < 5; i++) {
      conn.send('POST', `/grid/rest/maps/ka/k${i}`, { body: `v${i}` });
      const r = await conn.next(2 * i);
      assert.equal(r.status, 200);
      assert.equal(r.headers.connection?.toLowerCase(), 'keep-alive');
      conn.send('GET', `/grid/rest/maps/ka/k${i}`);
      assert.equal((await conn.next(2 * i + 1)).text(), `v${i}`);
    }
    assert.equal(conn.closed, false);
    conn.destroy();
  });

  test('pipelining: answers come in request order', async () => {
    const conn = await Connection.open(port);
    const parts = [
      httpRequest('PUT', '/grid/rest/maps/pipe/a', { body: '1' }),
      httpRequest('GET', '/grid/rest/maps/pipe/a'),
      httpRequest('DELETE', '/grid/rest/maps/pipe/a'),
      httpRequest('GET', '/grid/rest/maps/pipe/a'),
      httpRequest('HEAD', '/grid/rest/maps/pipe/a'),
      httpRequest('GET', '/grid/rest/nope'),
      httpRequest('GET', '/grid/health'),
    ];
    conn.headFlags.push(false, false, false, false, true, false, false);
    conn.write(Buffer.concat(parts));
    const rs = await conn.responses(7);
    assert.deepEqual(rs.map((r) => r.status), [200, 200, 200, 204, 200, 404, 200]);
    assert.equal(rs[1]!.text(), '1');
    assert.equal((rs[6]!.json() as { nodeState: string }).nodeState, 'ACTIVE');
    conn.destroy();
  });

  test('many connections writing in small interleaved pieces (their reads share one buffer): every write stored with its own value and type', async () => {
    // Each connection's requests arrive cut at seeded points, alternating with the other connections'
    // pieces, so a head, a body or an unread remainder of one connection is overwritten by the next
    // read of another unless it was copied out. More than pipeline.max requests are written without
    // waiting, so reading is also held back with bytes kept.
    const rnd = new SeededRandom(1407);
    const CONNECTIONS = 12;
    const WRITES = 3 * PIPELINE_MAX;
    const conns = await Promise.all(Array.from({ length: CONNECTIONS }, () => Connection.open(port)));
    // Each connection's bytes as the pieces it writes, one piece per round: a request is either cut at
    // seeded points or split exactly after its head (a head read whole, its body in a later read).
    const values: string[][] = [];
    const pieces = conns.map((conn, c) => {
      const out: Buffer[] = [];
      values.push([]);
      for (let i = 0; i < WRITES; i++) {
        const value = `c${c}-i${i}-`.padEnd(20 + rnd.nextInt(200), String.fromCharCode(0x61 + ((c + i) % 26)));
        (values[c] as string[]).push(value);
        const bytes = httpRequest('POST', `/grid/rest/maps/shared-reads/c${c}-${i}`, { body: value, headers: { 'Content-Type': `text/x-c${c}-i${i}` } });
        conn.headFlags.push(false);
        if (rnd.nextInt(2) === 0) {
          const headEnd = bytes.indexOf('\r\n\r\n') + 4;
          out.push(bytes.subarray(0, headEnd), bytes.subarray(headEnd));
          continue;
        }
        for (let at = 0; at < bytes.length; ) {
          const len = 1 + rnd.nextInt(Math.min(rnd.nextInt(3) === 0 ? 400 : 40, bytes.length - at));
          out.push(bytes.subarray(at, at + len));
          at += len;
        }
      }
      return out;
    });
    for (let round = 0; pieces.some((p) => round < p.length); round++) {
      for (let c = 0; c < CONNECTIONS; c++) {
        const piece = (pieces[c] as Buffer[])[round];
        if (piece !== undefined) (conns[c] as Connection).write(piece);
      }
      // Let the member read between rounds, so the connections' reads interleave.
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const conn of conns) assert.deepEqual((await conn.responses(WRITES)).map((r) => r.status), new Array<number>(WRITES).fill(200));
    for (const conn of conns) conn.destroy();
    for (let c = 0; c < CONNECTIONS; c++) {
      for (let i = 0; i < WRITES; i++) {
        const r = await request(port, 'GET', `/grid/rest/maps/shared-reads/c${c}-${i}`);
        assert.equal(r.text(), values[c]?.[i], `c${c}-${i}`);
        assert.equal(r.headers['content-type'], `text/x-c${c}-i${i}`, `c${c}-${i}`);
      }
    }
  });

  test('pipelining: a slow poll ahead of a fast GET still answers first', async () => {
    const conn = await Connection.open(port);
    const start = Date.now();
    conn.write(Buffer.concat([httpRequest('DELETE', '/grid/rest/queues/slow-pipe/1'), httpRequest('GET', '/grid/rest/maps/intact/text')]));
    const rs = await conn.responses(2);
    assert.ok(Date.now() - start >= 900, 'the GET waited for the poll before it');
    assert.equal(rs[0]!.status, 204);
    assert.equal(rs[1]!.status, 200);
    assert.equal(rs[1]!.text(), 'still here');
    conn.destroy();
  });

  test('Connection: close is honoured: one answer marked close, then the server closes', async () => {
    // Both requests in one write, so they reach the member in one read (the case that matters).
    const ex = await sendUntilClose(Buffer.concat([
      httpRequest('GET', '/grid/health', { headers: { Connection: 'close' } }),
      httpRequest('GET', '/grid/health'),
    ]));
    assert.equal(ex.closed, true);
    assert.equal(ex.responses.length, 1, 'the request after Connection: close is not served');
    assert.equal(ex.responses[0]!.status, 200, `the answer to the first request, got ${ex.responses[0]?.text()}`);
    assert.equal(ex.responses[0]!.headers.connection?.toLowerCase(), 'close');
    const separate = await sendUntilClose(httpRequest('GET', '/grid/health', { headers: { Connection: 'close' } }));
    assert.equal(separate.closed, true);
    assert.equal(separate.responses[0]?.status, 200);
  });

  test('HTTP/1.0 without keep-alive: the first of two pipelined requests is answered, then close', async () => {
    const ex = await sendUntilClose('GET /grid/rest/maps/intact/text HTTP/1.0\r\n\r\nGET /grid/health HTTP/1.0\r\n\r\n');
    assert.equal(ex.closed, true);
    assert.equal(ex.responses.length, 1);
    assert.equal(ex.responses[0]!.status, 200, `the answer to the first request, got ${ex.responses[0]?.text()}`);
    assert.equal(ex.responses[0]!.text(), 'still here');
  });

  test('a malformed request pipelined behind a good one: the good one is answered first, then 400, then close', async () => {
    const ex = await sendUntilClose(Buffer.concat([
      httpRequest('GET', '/grid/rest/maps/intact/text'),
      Buffer.from('GET /grid/health HTTX/1.1\r\nHost: x\r\n\r\n'),
    ]));
    assert.equal(ex.closed, true);
    assert.deepEqual(ex.responses.map((r) => r.status), [200, 400], ex.responses.map((r) => r.statusLine + ' ' + r.text()).join(' | '));
    assert.equal(ex.responses[0]!.text(), 'still here');
  });

  test('HTTP/1.0 is answered and closed; with keep-alive it stays open', async () => {
    const ex = await sendUntilClose('GET /grid/health HTTP/1.0\r\n\r\n');
    assert.equal(ex.closed, true);
    assert.equal(ex.responses.length, 1);
    assert.match(ex.responses[0]!.statusLine, /^HTTP\/1\.[01] 200 OK$/);
    assert.equal((ex.responses[0]!.json() as { clusterSize: number }).clusterSize, 1);
    const conn = await Connection.open(port);
    conn.send('GET', '/grid/rest/maps/intact/text', { version: 'HTTP/1.0', headers: { Connection: 'keep-alive' } });
    assert.equal((await conn.next(0)).text(), 'still here');
    conn.send('GET', '/grid/health', { version: 'HTTP/1.0', headers: { Connection: 'keep-alive' } });
    assert.equal((await conn.next(1)).status, 200);
    assert.equal(conn.closed, false);
    conn.destroy();
  });

  test('an absolute-form request target is accepted (RFC 9112 §3.2.2: a server MUST accept it)', async () => {
    const r = await request(port, 'GET', `http://127.0.0.1:${port}/grid/rest/maps/intact/text`);
    assert.equal(r.statusLine, 'HTTP/1.1 200 OK', r.text());
    assert.equal(r.text(), 'still here');
  });

  test('HEAD answers the headers of GET without a body', async () => {
    const conn = await Connection.open(port);
    conn.send('HEAD', '/grid/rest/cluster');
    conn.send('GET', '/grid/rest/instance');
    conn.send('HEAD', '/grid/rest/maps/intact/text');
    conn.send('GET', '/grid/rest/maps/intact/text');
    const rs = await conn.responses(4);
    assert.equal(rs[0]!.status, 200);
    assert.equal(rs[0]!.headers['content-type'], 'application/json');
    assert.ok(Number(rs[0]!.headers['content-length']) > 0);
    assert.equal(rs[0]!.body.length, 0);
    assert.ok('name' in (rs[1]!.json() as object), 'the next answer parses, so HEAD sent no body bytes');
    assertEmpty(rs[2]!, 'HTTP/1.1 200 OK');
    assert.equal(rs[3]!.text(), 'still here');
    conn.destroy();
  });

  test(`more than grid.rest.pipeline.max (${PIPELINE_MAX}) requests in flight: the member stops reading until answers drain; every answer comes, in order`, async () => {
    const polls = Array.from({ length: PIPELINE_MAX }, () => httpRequest('DELETE', '/grid/rest/queues/inflight/1'));
    const conn = await Connection.open(port);
    conn.write(Buffer.concat([...polls, httpRequest('GET', '/grid/health'), httpRequest('GET', '/grid/rest/maps/intact/text')]));
    const rs = await conn.responses(PIPELINE_MAX + 2);
    for (let i = 0; i < PIPELINE_MAX; i++) assert.equal(rs[i]!.status, 204, `poll ${i}`);
    assert.equal(rs[PIPELINE_MAX]!.status, 200);
    assert.equal(rs[PIPELINE_MAX + 1]!.text(), 'still here');
    assert.equal(conn.closed, false, 'the connection stays open');
    conn.destroy();
  });
});

describe('what the unified port refuses', () => {
  test('a TLS ClientHello gets the connection closed with no answer; the member keeps serving', async () => {
    const refusedBefore = (await metrics(port)).connectionsRefused ?? -1;
    const hello = Buffer.from('16030100a5010000a10303' + '00'.repeat(32) + '000020c02bc02fc02cc030cca9cca8c013c014009c009d002f0035000a0100005800000018', 'hex');
    const ex = await exchangeRaw(port, hello);
    assert.equal(ex.closed, true);
    assert.equal(ex.data.length, 0, 'no bytes come back');
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200);
    assert.equal((await metrics(port)).connectionsRefused, refusedBefore + 1);
  });

  test('garbage bytes get the connection closed with no answer; the member keeps serving', async () => {
    const garbage = [
      Buffer.from([0x00, 0xff, 0x13, 0x37, 0x80, 0x7f]),
      Buffer.from('hello there\r\n\r\n'),
      Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ /x HTTP/1.1\r\n\r\n'),
      Buffer.from(' GET / HTTP/1.1\r\n\r\n'),
      Buffer.from([0x16, 0x01, 0x02]),
      Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256)),
    ];
    for (const g of garbage) {
      const ex = await exchangeRaw(port, g);
      assert.equal(ex.closed, true, g.subarray(0, 16).toString('hex'));
      assert.equal(ex.data.length, 0, `no bytes back for ${g.subarray(0, 16).toString('hex')}`);
    }
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200);
  });

  const handshake = sampleHandshake;

  async function exchangeHandshake(req: HandshakeRequest, callId: number): Promise<{ response: HandshakeResponse; flags: number; messageType: number; callId: number; closed: boolean }> {
    const frame = encodeFrame({ messageType: HANDSHAKE_REQUEST, callId }, encodeHandshakeRequest(req));
    const ex = await exchangeRaw(port, [PREAMBLE, frame]);
    const bytes = ex.data;
    assert.ok(bytes.subarray(0, 4).equals(PREAMBLE), 'the answer starts with the GRD preamble');
    const reader = new FrameReader({ frameBytesMax: 1 << 20 });
    reader.append(bytes);
    const answer = reader.next();
    assert.ok(answer !== null, 'a whole frame came back');
    assert.equal(reader.next(), null, 'exactly one frame');
    return { response: decodeHandshakeResponse(answer.payload), flags: answer.flags, messageType: answer.messageType, callId: answer.callId, closed: ex.closed };
  }

  test('a compatible member handshake is accepted, as a response to its call id, and the connection stays open', async () => {
    const uuid = ((await request(port, 'GET', '/grid/rest/cluster')).json() as { members: { uuid: string }[] }).members[0]!.uuid;
    const frame = await firstFrame(port, [PREAMBLE, encodeFrame({ messageType: HANDSHAKE_REQUEST, callId: 4242 }, encodeHandshakeRequest(handshake()))]);
    assert.equal(frame.messageType, HANDSHAKE_RESPONSE);
    assert.equal(frame.flags & FLAG_RESPONSE, FLAG_RESPONSE);
    assert.equal(frame.callId, 4242);
    const response = decodeHandshakeResponse(frame.payload);
    assert.deepEqual(response, { kind: 'accepted', memberUuid: uuid, memberVersion: '0.1.0', protocolVersion: PROTOCOL_VERSION });
  });

  test('a wrong cluster name is refused CLUSTER_NAME_MISMATCH without echoing our cluster name', async () => {
    const a = await exchangeHandshake(handshake({ clusterName: 'someone-else' }), 7);
    assert.equal(a.response.kind === 'refused' ? a.response.reason : 'accepted', 'CLUSTER_NAME_MISMATCH');
    assert.doesNotMatch(a.response.kind === 'refused' ? a.response.message : '', /\bdev\b/);
  });

  test('version and partition-count mismatches are refused with their reasons', async () => {
    const v = await exchangeHandshake(handshake({ memberVersion: '9.9.0' }), 8);
    assert.equal(v.response.kind === 'refused' ? v.response.reason : 'accepted', 'VERSION_MISMATCH');
    const p = await exchangeHandshake(handshake({ partitionCount: 7 }), 9);
    assert.equal(p.response.kind === 'refused' ? p.response.reason : 'accepted', 'PARTITION_COUNT_MISMATCH');
    const r = await exchangeHandshake(handshake({ protocolVersionMin: PROTOCOL_VERSION + 1, protocolVersionMax: PROTOCOL_VERSION + 2 }), 10);
    assert.equal(r.response.kind === 'refused' ? r.response.reason : 'accepted', 'VERSION_MISMATCH');
  });

  test('an oversize frame length, a short frame, a bad preamble or a non-handshake first frame closes the connection', async () => {
    const rejectedBefore = (await metrics(port)).memberFramesRejected ?? -1;
    const start = Date.now();
    const cases = [
      Buffer.concat([PREAMBLE, Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 0, 0, 1])]),
      // 64 KiB is far under the configured frame limit, but no handshake is that large: refused at once.
      Buffer.concat([PREAMBLE, Buffer.from([0x00, 0x01, 0x00, 0x00, 1, 0, 0, 1])]),
      Buffer.concat([PREAMBLE, Buffer.from([0x00, 0x00, 0x00, 0x0a]), Buffer.alloc(16)]),
      Buffer.concat([PREAMBLE, encodeFrame({ messageType: HANDSHAKE_RESPONSE, callId: 1 }, Buffer.alloc(4))]),
      Buffer.concat([PREAMBLE, encodeFrame({ messageType: HANDSHAKE_REQUEST, callId: 1 }, Buffer.from('not a handshake'))]),
    ];
    for (const bytes of cases) {
      const ex = await exchangeRaw(port, bytes);
      assert.equal(ex.closed, true);
      assert.equal(ex.data.length, 0, `no answer to ${bytes.subarray(0, 12).toString('hex')}`);
    }
    assert.ok(Date.now() - start < 5000, 'closed at once, not after a timeout');
    assert.equal((await metrics(port)).memberFramesRejected, rejectedBefore + cases.length);
    const badPreamble = await exchangeRaw(port, Buffer.from('GRD\x09\x00\x00\x00\x14', 'latin1'));
    assert.equal(badPreamble.closed, true);
    assert.equal(badPreamble.data.length, 0);
  });

  test('after all the bad input, the data stored at the start is intact', async () => {
    for (const [path, value, type] of INTACT) {
      const r = await request(port, 'GET', path);
      assert.equal(r.status, 200, path);
      assert.ok(r.body.equals(value), `${path} unchanged`);
      assert.equal(r.headers['content-type'], type, path);
    }
    assert.equal((await request(port, 'GET', '/grid/rest/queues/intact/size')).text(), '3');
    for (const item of ['q1', 'q2', 'q3']) assert.equal((await request(port, 'DELETE', '/grid/rest/queues/intact/0')).text(), item);
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200);
  });
});

describe('REST disabled', () => {
  let off: MemberProcess;
  before(async () => {
    off = await startMember();
  });
  after(async () => {
    await off.stop('SIGKILL');
  });

  test('every HTTP request is 403 "REST API is not enabled on this member", then the connection closes', async () => {
    for (const [method, path] of [['GET', '/grid/health'], ['POST', '/grid/rest/maps/m/k'], ['GET', '/grid/rest/cluster'], ['GET', '/nothing']] as const) {
      const ex = await sendUntilClose([httpRequest(method, path, method === 'POST' ? { body: 'x' } : {}), httpRequest('GET', '/grid/health')], off.port);
      assert.equal(ex.closed, true);
      assert.equal(ex.responses.length, 1, 'the pipelined second request is not answered');
      const r = ex.responses[0]!;
      assert.equal(r.statusLine, 'HTTP/1.1 403 Forbidden');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.text(), '{"status":"fail","message":"REST API is not enabled on this member"}');
    }
  });

  test('after pipelined requests were dropped by a close, SIGTERM still stops the member at once (exit 0)', async () => {
    // The requests above each had a second, pipelined request that the close dropped unanswered.
    // Nothing is in flight any more, so the graceful stop must not wait for them
    // (grid.shutdown.inflight.wait.seconds is 20 s here).
    const start = Date.now();
    const code = await off.stop('SIGTERM', 5_000);
    assert.equal(code, 0);
    assert.ok(Date.now() - start < 5_000, `stopped after ${Date.now() - start} ms`);
  });
});

describe('connection limit', () => {
  let few: MemberProcess;
  before(async () => {
    few = await startMember({ args: ['--rest'], xml: '<grid><properties><property name="grid.rest.connections.max">2</property></properties></grid>' });
  });
  after(async () => {
    assert.equal(await few.stop(), 0);
  });

  test('beyond grid.rest.connections.max a new connection is closed; once one closes, a new one is served', async () => {
    const open: Connection[] = [];
    for (let i = 0; i < 2; i++) {
      const c = await Connection.open(few.port);
      c.send('GET', '/grid/health');
      await c.responses(1);
      open.push(c);
    }
    const third = await exchangeRaw(few.port, httpRequest('GET', '/grid/health'));
    assert.equal(third.closed, true);
    assert.equal(third.data.length, 0, 'the connection over the limit is closed unanswered');
    open[0]!.destroy();
    await waitFor(async () => {
      const ex = await exchangeRaw(few.port, httpRequest('GET', '/grid/health', { headers: { Connection: 'close' } }));
      return ex.data.toString('latin1').startsWith('HTTP/1.1 200 OK');
    }, 'a new connection to be served again');
    assert.equal(open[1]!.closed, false);
    open[1]!.destroy();
  });
});

describe('timeouts', () => {
  let slow: MemberProcess;
  before(async () => {
    slow = await startMember({
      args: ['--rest'],
      xml: `<grid><properties>
        <property name="grid.rest.headers.timeout.seconds">1</property>
        <property name="grid.rest.idle.timeout.seconds">1</property>
        <property name="grid.socket.sniff.timeout.millis">300</property>
        <property name="grid.shutdown.inflight.wait.seconds">2</property>
      </properties></grid>`,
    });
  });
  after(async () => {
    assert.equal(await slow.stop(), 0);
  });

  test('a connection that sends nothing is closed after the sniff timeout', async () => {
    const conn = await Connection.open(slow.port);
    const start = Date.now();
    await conn.waitClosed(5000);
    assert.ok(Date.now() - start >= 250, `closed after ${Date.now() - start} ms`);
    assert.equal(conn.raw().length, 0);
  });

  test('headers that do not arrive within the headers timeout get 408, then close', async () => {
    const conn = await Connection.open(slow.port);
    const start = Date.now();
    conn.write('GET /grid/health HTTP/1.1\r\nHost: x\r\n');
    await conn.waitClosed(6000);
    assert.ok(Date.now() - start >= 900, `closed after ${Date.now() - start} ms`);
    const [r] = conn.parsed();
    assert.ok(r !== undefined, 'an answer came before the close');
    assertFail(r, 'HTTP/1.1 408 Request Timeout');
  });

  test('an idle keep-alive connection is closed after the idle timeout', async () => {
    const conn = await Connection.open(slow.port);
    conn.send('GET', '/grid/health');
    await conn.responses(1);
    const start = Date.now();
    await conn.waitClosed(8000);
    assert.ok(Date.now() - start >= 800, `closed after ${Date.now() - start} ms`);
    assert.equal(conn.parsed().length, 1);
  });
});
