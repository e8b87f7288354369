// Checks the queue calls of the REST interface (docs/rest.md "Queues") against real member processes:
// offer and poll in FIFO order, inline offers, size, polls that time out (204), a full queue (503 with
// Grid-Error and Retry-After), the 400s, the poll timeout cap, waiting polls served by later offers
// in arrival order, a poll whose client went away taking no item, 10,000 polls waiting at once over
// 200 keep-alive connections with pipelining while the member keeps answering, and `name@key`.
// How: raw sockets; "a poll is waiting" is observed through /grid/rest/metrics (`waitingPolls`),
// polled with a deadline, never by sleeping.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request, type RawResponse } from '../harness/raw-http.js';
import { Connection, httpRequest, metrics, waitFor } from '../harness/connection.js';

const XML = `<grid>
  <network>
    <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api>
  </network>
  <queue name="bounded*"><max-size>2</max-size></queue>
</grid>`;

const Q = '/grid/rest/queues';

let member: MemberProcess;
let port: number;

function assertEmpty(r: RawResponse, statusLine: string): void {
  assert.equal(r.statusLine, statusLine);
  assert.equal(r.headers['content-length'], '0');
  assert.equal(r.body.length, 0);
}

async function offer(queue: string, body: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return request(port, 'POST', `${Q}/${queue}`, { body, headers });
}

async function waitingPolls(): Promise<number> {
  return (await metrics(port)).waitingPolls ?? -1;
}

/** Opens a connection and starts a poll on it; resolves once the member counts `expectWaiting` waiting polls. */
async function startPoll(queue: string, seconds: number, expectWaiting: number, method = 'DELETE'): Promise<Connection> {
  const conn = await Connection.open(port);
  conn.send(method, `${Q}/${queue}/${seconds}`);
  await waitFor(async () => (await waitingPolls()) === expectWaiting, `${expectWaiting} waiting polls`);
  return conn;
}

before(async () => {
  member = await startMember({ xml: XML });
  port = member.port;
});

after(async () => {
  assert.equal(await member.stop(), 0);
});

describe('offer and poll', () => {
  test('items come out in FIFO order with their Content-Type, by DELETE and GET polls', async () => {
    assertEmpty(await offer('fifo', 'one', { 'Content-Type': 'Text/Plain' }), 'HTTP/1.1 200 OK');
    assertEmpty(await offer('fifo', '{"n":2}', { 'Content-Type': 'application/json' }), 'HTTP/1.1 200 OK');
    assertEmpty(await offer('fifo', 'three'), 'HTTP/1.1 200 OK');
    const a = await request(port, 'DELETE', `${Q}/fifo/0`);
    assert.equal(a.statusLine, 'HTTP/1.1 200 OK');
    assert.equal(a.text(), 'one');
    assert.equal(a.headers['content-type'], 'text/plain');
    assert.equal(a.headers['content-length'], '3');
    const b = await request(port, 'GET', `${Q}/fifo/0`);
    assert.equal(b.text(), '{"n":2}');
    assert.equal(b.headers['content-type'], 'application/json');
    const c = await request(port, 'DELETE', `${Q}/fifo/5`);
    assert.equal(c.text(), 'three');
    assert.equal(c.headers['content-type'], undefined, 'an item offered without a type has none');
    assertEmpty(await request(port, 'DELETE', `${Q}/fifo/0`), 'HTTP/1.1 204 No Content');
  });

  test('an offer with an empty body is an item with an empty value (200, not 204)', async () => {
    assertEmpty(await offer('emptyitem', ''), 'HTTP/1.1 200 OK');
    assertEmpty(await request(port, 'DELETE', `${Q}/emptyitem/0`), 'HTTP/1.1 200 OK');
    assertEmpty(await request(port, 'DELETE', `${Q}/emptyitem/0`), 'HTTP/1.1 204 No Content');
  });

  test('POST /queues/{q}/{value} offers the decoded segment as text/plain and ignores the body', async () => {
    assertEmpty(await request(port, 'POST', `${Q}/inline/hello%20w%C3%B6rld+%2F`, { body: 'ignored', headers: { 'Content-Type': 'application/json' } }), 'HTTP/1.1 200 OK');
    assertEmpty(await request(port, 'POST', `${Q}/inline/second/`), 'HTTP/1.1 200 OK');
    const r = await request(port, 'DELETE', `${Q}/inline/0`);
    assert.equal(r.text(), 'hello wörld+/');
    assert.equal(r.headers['content-type'], 'text/plain');
    assert.equal((await request(port, 'DELETE', `${Q}/inline/0`)).text(), 'second');
  });

  test('size is text/plain decimal, any case of `size`, 0 for an unknown queue', async () => {
    for (let i = 0; i < 3; i++) await offer('sized', `i${i}`);
    const r = await request(port, 'GET', `${Q}/sized/size`);
    assert.equal(r.statusLine, 'HTTP/1.1 200 OK');
    assert.equal(r.headers['content-type'], 'text/plain');
    assert.equal(r.text(), '3');
    assert.equal(r.headers['content-length'], '1');
    assert.equal((await request(port, 'GET', `${Q}/sized/SIZE`)).text(), '3');
    assert.equal((await request(port, 'GET', `${Q}/never-used/size`)).text(), '0');
    await request(port, 'DELETE', `${Q}/sized/0`);
    assert.equal((await request(port, 'GET', `${Q}/sized/Size`)).text(), '2');
  });

  test('a poll on an empty queue answers 204 once its timeout passed, not before', async () => {
    const start = Date.now();
    const r = await request(port, 'DELETE', `${Q}/empty-wait/1`);
    const elapsed = Date.now() - start;
    assertEmpty(r, 'HTTP/1.1 204 No Content');
    assert.ok(elapsed >= 900 && elapsed < 5000, `answered after ${elapsed} ms`);
    assert.equal(await waitingPolls(), 0);
  });

  test('a full queue (max-size 2) refuses an offer: 503, Grid-Error, Retry-After, empty body', async () => {
    assertEmpty(await offer('bounded-a', '1'), 'HTTP/1.1 200 OK');
    assertEmpty(await offer('bounded-a', '2'), 'HTTP/1.1 200 OK');
    const full = await offer('bounded-a', '3');
    assertEmpty(full, 'HTTP/1.1 503 Service Unavailable');
    assert.equal(full.headers['grid-error'], 'queue is full');
    assert.equal(full.headers['retry-after'], '1');
    const inline = await request(port, 'POST', `${Q}/bounded-a/4`);
    assert.equal(inline.status, 503, 'an inline offer is refused too');
    assert.equal((await request(port, 'GET', `${Q}/bounded-a/size`)).text(), '2');
    assert.equal((await request(port, 'DELETE', `${Q}/bounded-a/0`)).text(), '1');
    assertEmpty(await offer('bounded-a', '5'), 'HTTP/1.1 200 OK');
    assert.equal((await request(port, 'DELETE', `${Q}/bounded-a/0`)).text(), '2');
    assert.equal((await request(port, 'DELETE', `${Q}/bounded-a/0`)).text(), '5', 'the refused items were not stored');
  });

  test('400s: no queue name, no timeout, negative / non-integer / non-numeric timeout; no item is taken', async () => {
    await offer('bad', 'keep');
    const cases: [string, string, string][] = [
      ['POST', `${Q}/`, 'missing queue name'],
      ['DELETE', `${Q}/bad`, ''],
      ['DELETE', `${Q}/bad/`, ''],
      ['DELETE', `${Q}/bad/-1`, ''],
      ['DELETE', `${Q}/bad/1.5`, ''],
      ['DELETE', `${Q}/bad/x`, ''],
      ['DELETE', `${Q}/bad/1e2`, ''],
      ['DELETE', `${Q}/bad/%201`, ''],
      ['GET', `${Q}/bad/-1`, ''],
      ['GET', `${Q}/bad/1.5`, ''],
      ['GET', `${Q}/bad`, ''],
      ['DELETE', `${Q}/bad/1/2`, ''],
      ['POST', `${Q}/bad/a/b`, ''],
    ];
    for (const [method, path, reason] of cases) {
      const r = await request(port, method, path, method === 'POST' ? { body: 'x' } : {});
      assert.equal(r.statusLine, 'HTTP/1.1 400 Bad Request', `${method} ${path}`);
      assert.equal(r.headers['content-length'], '0', `${method} ${path}`);
      assert.ok((r.headers['grid-error'] ?? '') !== '', `${method} ${path} names a reason`);
      if (reason !== '') assert.equal(r.headers['grid-error'], reason);
    }
    assert.equal((await request(port, 'GET', `${Q}/bad/size`)).text(), '1', 'no 400 took the item');
    assert.equal((await request(port, 'DELETE', `${Q}/bad/0`)).text(), 'keep');
  });

  test('name@key: configured by name (max-size of bounded*), separate queues per full name', async () => {
    assertEmpty(await offer('bounded@k1', 'a'), 'HTTP/1.1 200 OK');
    assertEmpty(await offer('bounded@k1', 'b'), 'HTTP/1.1 200 OK');
    assert.equal((await offer('bounded@k1', 'c')).status, 503, 'bounded@k1 takes max-size 2 from <queue name="bounded*">');
    assertEmpty(await offer('bounded@k2', 'z'), 'HTTP/1.1 200 OK');
    assert.equal((await request(port, 'GET', `${Q}/bounded@k1/size`)).text(), '2');
    assert.equal((await request(port, 'GET', `${Q}/bounded%40k2/size`)).text(), '1', '%40 is @');
    assert.equal((await request(port, 'DELETE', `${Q}/bounded@k1/0`)).text(), 'a');
    assert.equal((await request(port, 'DELETE', `${Q}/bounded%40k2/0`)).text(), 'z');
    // Plain names are unbounded by the default config.
    for (let i = 0; i < 5; i++) assertEmpty(await offer('unbounded@k1', String(i)), 'HTTP/1.1 200 OK');
  });
});

describe('waiting polls', () => {
  test('a waiting poll is served by a later offer, with the item and its Content-Type', async () => {
    const start = Date.now();
    const conn = await startPoll('later', 30, 1);
    assertEmpty(await offer('later', 'arrived', { 'Content-Type': 'text/x-later' }), 'HTTP/1.1 200 OK');
    const [r] = await conn.responses(1);
    assert.equal(r!.statusLine, 'HTTP/1.1 200 OK');
    assert.equal(r!.text(), 'arrived');
    assert.equal(r!.headers['content-type'], 'text/x-later');
    assert.ok(Date.now() - start < 10_000);
    assert.equal((await request(port, 'GET', `${Q}/later/size`)).text(), '0', 'the item went to the waiter, not the queue');
    conn.destroy();
  });

  test('waiting polls are served first come, first served (GET and DELETE polls alike)', async () => {
    const first = await startPoll('fcfs', 30, 1);
    const second = await startPoll('fcfs', 30, 2, 'GET');
    const third = await startPoll('fcfs', 30, 3);
    for (const item of ['1', '2', '3']) assertEmpty(await offer('fcfs', item), 'HTTP/1.1 200 OK');
    assert.equal((await first.responses(1))[0]!.text(), '1');
    assert.equal((await second.responses(1))[0]!.text(), '2');
    assert.equal((await third.responses(1))[0]!.text(), '3');
    for (const c of [first, second, third]) c.destroy();
    assert.equal(await waitingPolls(), 0);
  });

  test('a poll whose client disconnected takes no item: the next poll gets it', async () => {
    const gone = await startPoll('gone', 30, 1);
    gone.destroy();
    await waitFor(async () => (await waitingPolls()) === 0, 'the disconnected poll to stop waiting');
    assertEmpty(await offer('gone', 'kept'), 'HTTP/1.1 200 OK');
    assert.equal((await request(port, 'GET', `${Q}/gone/size`)).text(), '1');
    assert.equal((await request(port, 'DELETE', `${Q}/gone/0`)).text(), 'kept');
  });

  test('many waiting polls in a row on one keep-alive connection leak no listeners', async () => {
    const conn = await Connection.open(port);
    for (let i = 0; i < 15; i++) {
      conn.send('DELETE', `${Q}/reuse/30`);
      await waitFor(async () => (await waitingPolls()) === 1, `poll ${i} waiting`);
      assertEmpty(await offer('reuse', `r${i}`), 'HTTP/1.1 200 OK');
      const r = await conn.next(i);
      assert.equal(r.text(), `r${i}`);
    }
    assert.equal(conn.closed, false, 'the connection stayed open');
    conn.destroy();
    // Each served poll must release what it registered on the socket; otherwise node warns once
    // more than 10 'close' listeners pile up on one connection (and the memory is held until it closes).
    assert.doesNotMatch(member.stderr(), /MaxListenersExceededWarning/);
  });

  test('10,000 polls wait at once over 200 pipelined keep-alive connections; all are served FIFO; the member stays responsive', async () => {
    const CONNECTIONS = 200;
    const PER_CONNECTION = 50;
    const TOTAL = CONNECTIONS * PER_CONNECTION;
    const polls: Connection[] = [];
    const batch = Buffer.concat(Array.from({ length: PER_CONNECTION }, () => httpRequest('DELETE', `${Q}/many/120`)));
    for (let i = 0; i < CONNECTIONS; i++) {
      const conn = await Connection.open(port);
      conn.write(batch);
      polls.push(conn);
    }
    await waitFor(async () => (await waitingPolls()) === TOTAL, `${TOTAL} waiting polls`, 30_000, 100);

    const healthStart = Date.now();
    const health = await request(port, 'GET', '/grid/health');
    assert.equal(health.status, 200);
    assert.ok(Date.now() - healthStart < 2000, `health answered in ${Date.now() - healthStart} ms with ${TOTAL} polls waiting`);
    assert.equal((await request(port, 'GET', `${Q}/many/size`)).text(), '0');

    // Offers in a known order, pipelined in batches of 500 on one connection.
    const offers = await Connection.open(port);
    for (let start = 0; start < TOTAL; start += 500) {
      offers.write(Buffer.concat(Array.from({ length: 500 }, (_, j) => httpRequest('POST', `${Q}/many`, { body: `item-${start + j}` }))));
      const answered = await offers.responses(start + 500, 30_000);
      for (let j = start; j < start + 500; j++) assert.equal(answered[j]!.status, 200, `offer ${j}`);
    }
    offers.destroy();

    const seen = new Set<number>();
    for (const conn of polls) {
      const rs = await conn.responses(PER_CONNECTION, 30_000);
      let previous = -1;
      for (const r of rs) {
        assert.equal(r.status, 200);
        const n = Number(/^item-(\d+)$/.exec(r.text())?.[1] ?? NaN);
        assert.ok(n > previous, `polls on one connection get items in the order they waited (${previous} then ${n})`);
        previous = n;
        seen.add(n);
      }
      conn.destroy();
    }
    assert.equal(seen.size, TOTAL, 'every item went to exactly one poll');
    assert.equal(await waitingPolls(), 0);
    assert.equal((await request(port, 'GET', `${Q}/many/size`)).text(), '0');
  });
});

describe('poll timeout cap and waiting-poll limit', () => {
  let capped: MemberProcess;
  before(async () => {
    capped = await startMember({
      args: ['--rest-groups', 'DATA'],
      xml: `<grid><properties>
        <property name="grid.queue.poll.timeout.seconds.max">2</property>
        <property name="grid.queue.waiters.max">2</property>
      </properties></grid>`,
    });
  });
  after(async () => {
    assert.equal(await capped.stop(), 0);
  });

  test('a timeout above grid.queue.poll.timeout.seconds.max is capped at it', async () => {
    const start = Date.now();
    const r = await request(capped.port, 'DELETE', `${Q}/capped/3600`);
    const elapsed = Date.now() - start;
    assertEmpty(r, 'HTTP/1.1 204 No Content');
    assert.ok(elapsed >= 1900 && elapsed < 6000, `answered after ${elapsed} ms, the cap is 2 s`);
  });

  test('beyond grid.queue.waiters.max waiting polls a poll is 503 "too many waiting polls"; an item still goes to a waiter', async () => {
    const waiting: Connection[] = [];
    for (let i = 1; i <= 2; i++) {
      const c = await Connection.open(capped.port);
      c.send('DELETE', `${Q}/limited/2`);
      waiting.push(c);
      await waitFor(async () => (await metrics(capped.port)).waitingPolls === i, `${i} waiting polls`);
    }
    const refused = await request(capped.port, 'DELETE', `${Q}/other-queue/2`);
    assertEmpty(refused, 'HTTP/1.1 503 Service Unavailable');
    assert.equal(refused.headers['grid-error'], 'too many waiting polls');
    assert.equal(refused.headers['retry-after'], '1');
    const now = await request(capped.port, 'DELETE', `${Q}/other-queue/0`);
    assertEmpty(now, 'HTTP/1.1 204 No Content');
    assert.equal((await request(capped.port, 'POST', `${Q}/limited`, { body: 'first' })).status, 200);
    assert.equal((await waiting[0]!.responses(1))[0]!.text(), 'first');
    for (const c of waiting) c.destroy();
  });
});
