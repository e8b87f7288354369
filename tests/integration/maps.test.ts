// Checks the map calls of the REST interface (docs/rest.md "Maps") against one real member process
// with the DATA group on: POST/PUT/GET/DELETE/HEAD, stored and returned Content-Type, empty answers,
// key decoding (raw `/`, `%2F`, `%40`, `+`, trailing `/`), missing keys, clearing a map, chunked and
// `Expect: 100-continue` bodies, binary and large entries, TTL and max-idle expiry, and eviction.
// How: a raw-socket client sends exact bytes and parses exact bytes, so absent headers and
// `Content-Length: 0` are really seen. Expiry is observed by polling until 204 with a deadline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request, type RawResponse } from '../harness/raw-http.js';
import { Connection, metrics, waitFor } from '../harness/connection.js';

const XML = `<grid>
  <network>
    <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/></rest-api>
  </network>
  <map name="ttl-*"><time-to-live-seconds>1</time-to-live-seconds></map>
  <map name="idle-*"><max-idle-seconds>1</max-idle-seconds></map>
  <map name="lru-*"><eviction eviction-policy="LRU" max-size-policy="PER_NODE" size="10"/></map>
  <map name="lfu-*"><eviction eviction-policy="LFU" max-size-policy="PER_NODE" size="10"/></map>
  <map name="random-*"><eviction eviction-policy="RANDOM" max-size-policy="PER_NODE" size="10"/></map>
  <map name="none-*"><eviction eviction-policy="NONE" max-size-policy="PER_NODE" size="5"/></map>
</grid>`;

let member: MemberProcess;
let port: number;

const M = '/grid/rest/maps';

function assertEmpty(r: RawResponse, status: number, statusLine: string): void {
  assert.equal(r.statusLine, statusLine);
  assert.equal(r.status, status);
  assert.equal(r.headers['content-length'], '0', `${statusLine} carries Content-Length: 0`);
  assert.equal(r.body.length, 0);
}

async function put(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<void> {
  const r = await request(port, 'POST', `${M}/${path}`, { body, headers });
  assertEmpty(r, 200, 'HTTP/1.1 200 OK');
}

async function get(path: string): Promise<RawResponse> {
  return request(port, 'GET', `${M}/${path}`);
}

async function getText(path: string): Promise<string | null> {
  const r = await get(path);
  if (r.status === 204) return null;
  assert.equal(r.status, 200, `GET ${path}: ${r.statusLine}`);
  return r.text();
}

before(async () => {
  member = await startMember({ xml: XML });
  port = member.port;
});

after(async () => {
  assert.equal(await member.stop(), 0);
});

describe('put, get, delete', () => {
  test('POST stores, GET returns body, lower-cased Content-Type and Content-Length', async () => {
    const post = await request(port, 'POST', `${M}/basic/k1`, { body: 'hello', headers: { 'Content-Type': 'Text/Plain; Charset=UTF-8' } });
    assertEmpty(post, 200, 'HTTP/1.1 200 OK');
    assert.equal(post.headers['grid-error'], undefined);
    assert.equal(post.headers['content-type'], undefined, 'an empty 200 carries no Content-Type');
    const r = await get('basic/k1');
    assert.equal(r.statusLine, 'HTTP/1.1 200 OK');
    assert.equal(r.text(), 'hello');
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(r.headers['content-length'], '5');
  });

  test('a value stored without Content-Type comes back without the header', async () => {
    await put('basic/untyped', 'raw');
    const r = await get('basic/untyped');
    assert.equal(r.status, 200);
    assert.equal(r.text(), 'raw');
    assert.equal(r.headers['content-type'], undefined);
    assert.ok(!r.headerNames.includes('content-type'));
  });

  test('PUT behaves like POST and overwrites silently, replacing the Content-Type', async () => {
    await put('basic/over', 'first', { 'Content-Type': 'application/json' });
    const r = await request(port, 'PUT', `${M}/basic/over`, { body: 'second' });
    assertEmpty(r, 200, 'HTTP/1.1 200 OK');
    const g = await get('basic/over');
    assert.equal(g.text(), 'second');
    assert.equal(g.headers['content-type'], undefined, 'the overwrite stored no type');
  });

  test('GET of an absent key is 204 with Content-Length: 0; so is an absent map', async () => {
    assertEmpty(await get('basic/absent'), 204, 'HTTP/1.1 204 No Content');
    assertEmpty(await get('never-written-map/k'), 204, 'HTTP/1.1 204 No Content');
  });

  test('an empty body stores an empty value: 200 with Content-Length: 0, not 204', async () => {
    await put('basic/empty', '');
    const r = await get('basic/empty');
    assertEmpty(r, 200, 'HTTP/1.1 200 OK');
    const noBody = await request(port, 'POST', `${M}/basic/nobody`);
    assertEmpty(noBody, 200, 'HTTP/1.1 200 OK');
    assertEmpty(await get('basic/nobody'), 200, 'HTTP/1.1 200 OK');
  });

  test('DELETE removes a key and answers 200 empty whether or not it existed', async () => {
    await put('basic/del', 'x');
    assertEmpty(await request(port, 'DELETE', `${M}/basic/del`), 200, 'HTTP/1.1 200 OK');
    assertEmpty(await get('basic/del'), 204, 'HTTP/1.1 204 No Content');
    assertEmpty(await request(port, 'DELETE', `${M}/basic/del`), 200, 'HTTP/1.1 200 OK');
    assertEmpty(await request(port, 'DELETE', `${M}/no-such-map/k`), 200, 'HTTP/1.1 200 OK');
  });

  test('HEAD on any map path is 200 empty without an existence check', async () => {
    await put('basic/head', 'abc');
    for (const path of ['basic/head', 'basic/absent-head', 'basic', 'x/y/z']) {
      const r = await request(port, 'HEAD', `${M}/${path}`);
      assertEmpty(r, 200, 'HTTP/1.1 200 OK');
      assert.equal(r.headers['content-type'], undefined);
    }
  });

  test('DELETE without a key clears every entry of that map only', async () => {
    await put('clear-me/a', '1');
    await put('clear-me/b', '2');
    await put('clear-me/c/d', '3');
    await put('keep-me/a', 'kept');
    assertEmpty(await request(port, 'DELETE', `${M}/clear-me`), 200, 'HTTP/1.1 200 OK');
    for (const k of ['a', 'b', 'c/d']) assert.equal(await getText(`clear-me/${k}`), null, k);
    assert.equal(await getText('keep-me/a'), 'kept');
    await put('clear-me/e', '5');
    assertEmpty(await request(port, 'DELETE', `${M}/clear-me/`), 200, 'HTTP/1.1 200 OK');
    assert.equal(await getText('clear-me/e'), null, 'DELETE /maps/m/ clears too');
  });

  test('a query string is not part of the key', async () => {
    await put('query/k?x=1&y=2', 'q');
    assert.equal(await getText('query/k'), 'q');
    assert.equal(await getText('query/k?other'), 'q');
  });
});

describe('keys and names', () => {
  test('one trailing slash is stripped on POST, GET and DELETE', async () => {
    await put('slash/k/', 'v');
    assert.equal(await getText('slash/k'), 'v');
    assert.equal(await getText('slash/k/'), 'v');
    await put('slash/j', 'w');
    assert.equal(await getText('slash/j/'), 'w');
    assertEmpty(await request(port, 'DELETE', `${M}/slash/j/`), 200, 'HTTP/1.1 200 OK');
    assert.equal(await getText('slash/j'), null);
    // Only one: `k//` is the key `k/`.
    await put('slash/k//', 'double');
    assert.equal(await getText('slash/k/'), 'v', '`k/` is read as `k`');
    assert.equal(await getText('slash/k//'), 'double');
    assert.equal(await getText('slash/k'), 'v');
  });

  test('a key may contain raw `/`, and `%2F` in a key names the same key', async () => {
    await put('paths/a/b/c', 'abc');
    assert.equal(await getText('paths/a/b/c'), 'abc');
    assert.equal(await getText('paths/a%2Fb%2Fc'), 'abc');
    assert.equal(await getText('paths/a/b'), null);
    assert.equal(await getText('paths/a'), null);
    await put('paths/x%2Fy', 'xy');
    assert.equal(await getText('paths/x/y'), 'xy');
  });

  test('`%2F` in a map name stays inside the name', async () => {
    await put('ns%2Fmap/k', 'in ns/map');
    await put('ns/map/k', 'in ns, key map/k');
    assert.equal(await getText('ns%2Fmap/k'), 'in ns/map');
    assert.equal(await getText('ns/map/k'), 'in ns, key map/k');
    assert.equal(await getText('ns%2Fmap/map/k'), null);
  });

  test('`%40` is `@` and `+` is a literal plus', async () => {
    await put('enc/user%40host', 'at');
    assert.equal(await getText('enc/user@host'), 'at');
    await put('enc/a+b', 'plus');
    assert.equal(await getText('enc/a%2Bb'), 'plus');
    assert.equal(await getText('enc/a%20b'), null, '`+` is not a space');
    await put('enc/caf%C3%A9', 'utf8');
    assert.equal(await getText('enc/caf%c3%a9'), 'utf8', 'lower-case escapes decode the same');
  });

  test('the empty map name is a map of its own', async () => {
    await put('/k', 'empty-name');
    assert.equal(await getText('/k'), 'empty-name');
    assert.equal(await getText('k/k'), null);
  });

  test('missing key: POST/PUT/GET answer 400 with Grid-Error and an empty body', async () => {
    for (const [method, path] of [['POST', 'nokey'], ['POST', 'nokey/'], ['PUT', 'nokey'], ['GET', 'nokey'], ['GET', 'nokey/']] as const) {
      const r = await request(port, method, `${M}/${path}`, method === 'GET' ? {} : { body: 'v' });
      assertEmpty(r, 400, 'HTTP/1.1 400 Bad Request');
      assert.equal(r.headers['grid-error'], 'missing key', `${method} ${path}`);
      assert.equal(r.headers['content-type'], undefined, 'data errors carry no JSON');
    }
  });

  test('a malformed escape or invalid UTF-8 in a key is 400 with Grid-Error', async () => {
    for (const path of ['bad/%zz', 'bad/%C3%28', 'bad/%', 'bad/%E0%80%80']) {
      const r = await request(port, 'POST', `${M}/${path}`, { body: 'v' });
      assertEmpty(r, 400, 'HTTP/1.1 400 Bad Request');
      assert.ok((r.headers['grid-error'] ?? '').length > 0, `${path} names a reason`);
    }
  });
});

describe('bodies', () => {
  test('a chunked request body is stored whole', async () => {
    const conn = await Connection.open(port);
    conn.write(
      `POST ${M}/bodies/chunked HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n` +
        '5\r\nhello\r\n1\r\n \r\nA\r\nchunked!!!\r\n0\r\n\r\n',
    );
    conn.headFlags.push(false);
    const [r] = await conn.responses(1);
    assertEmpty(r!, 200, 'HTTP/1.1 200 OK');
    conn.destroy();
    assert.equal(await getText('bodies/chunked'), 'hello chunked!!!');
  });

  test('Expect: 100-continue gets `100 Continue` before the body is sent, then the final answer', async () => {
    const conn = await Connection.open(port);
    conn.headFlags.push(false);
    conn.write(`POST ${M}/bodies/continue HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\nExpect: 100-continue\r\n\r\n`);
    await conn.waitForText('\r\n\r\n');
    assert.match(conn.raw().toString('latin1'), /^HTTP\/1\.1 100 Continue\r\n/);
    assert.equal(conn.parsed().length, 0, 'no final answer before the body');
    conn.write('continue');
    const [r] = await conn.responses(1);
    assertEmpty(r!, 200, 'HTTP/1.1 200 OK');
    conn.destroy();
    assert.equal(await getText('bodies/continue'), 'continue');
  });

  test('binary values with all 256 byte values round-trip exactly', async () => {
    const value = Buffer.alloc(512);
    for (let i = 0; i < 512; i++) value[i] = (i * 7 + 3) % 256;
    for (let b = 0; b < 256; b++) assert.ok(value.includes(b));
    await put('bodies/binary', value, { 'Content-Type': 'application/octet-stream' });
    const r = await get('bodies/binary');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/octet-stream');
    assert.equal(r.headers['content-length'], '512');
    assert.ok(r.body.equals(value), 'the bytes come back unchanged');
  });

  test('a 5,000-character key and a 1 MiB value round-trip', async () => {
    const key = Array.from({ length: 5000 }, (_, i) => 'abcdefghij'[i % 10]).join('');
    const value = randomBytes(1024 * 1024);
    await put(`bodies/${key}`, value, { 'Content-Type': 'application/octet-stream' });
    const r = await get(`bodies/${key}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-length'], String(1024 * 1024));
    assert.ok(r.body.equals(value));
    assert.equal(await getText(`bodies/${key.slice(0, 4999)}`), null, 'a shorter key is another key');
  });
});

describe('expiry and eviction', () => {
  test('time-to-live-seconds 1: the entry reads 200 at once, then 204 once it expired', async () => {
    const start = Date.now();
    await put('ttl-a/k', 'short-lived');
    assert.equal(await getText('ttl-a/k'), 'short-lived');
    await waitFor(async () => (await get('ttl-a/k')).status === 204, 'the TTL entry to expire', 6_000, 50);
    assert.ok(Date.now() - start >= 900, `expired after ${Date.now() - start} ms, not before its TTL`);
    // A default map is not affected.
    await put('plain-ttl-check/k', 'stays');
    assert.equal(await getText('plain-ttl-check/k'), 'stays');
  });

  test('max-idle-seconds 1: reads keep the entry alive, idleness expires it', async () => {
    const entriesBefore = (await metrics(port)).mapEntries ?? -1;
    await put('idle-a/k', 'touched');
    assert.equal((await metrics(port)).mapEntries, entriesBefore + 1);
    // Read it every 250 ms for 1.75 s: each read is an access, so it never sits idle for 1 s.
    const until = Date.now() + 1750;
    // Measured from when the last read was sent (its access time is no earlier), not from the end
    // of the loop's last sleep: on a loaded machine that sleep runs long, and the entry is then
    // swept less than 0.8 s after the loop ends although it sat idle for its full second.
    let stoppedReading = Date.now();
    while (Date.now() < until) {
      stoppedReading = Date.now();
      assert.equal(await getText('idle-a/k'), 'touched', 'still alive while being read');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Reading would count as access, so watch the entry count (the expiry sweep removes it) instead.
    await waitFor(async () => (await metrics(port)).mapEntries === entriesBefore, 'the idle entry to be swept', 6_000, 50);
    assert.ok(Date.now() - stoppedReading >= 800, 'not before max-idle after the last read');
    assert.equal(await getText('idle-a/k'), null);
  });

  test('eviction LRU size 10 keeps the map at 10 entries and evicts the least recently used', async () => {
    for (let i = 0; i < 10; i++) await put(`lru-a/k${i}`, `v${i}`);
    // Touch k0 so it is the most recently used of the ten; access times must differ by at least 1 ms.
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(await getText('lru-a/k0'), 'v0');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await put('lru-a/k10', 'v10');
    const missing: number[] = [];
    for (let i = 0; i <= 10; i++) if ((await getText(`lru-a/k${i}`)) === null) missing.push(i);
    assert.equal(missing.length, 1, `exactly one entry was evicted: ${missing.join(',')}`);
    assert.notEqual(missing[0], 0, 'the recently read entry survives');
    assert.notEqual(missing[0], 10, 'the entry just written is never evicted');
    for (let i = 11; i < 40; i++) await put(`lru-a/k${i}`, `v${i}`);
    let live = 0;
    for (let i = 0; i < 40; i++) if ((await getText(`lru-a/k${i}`)) !== null) live++;
    assert.equal(live, 10, `${live} entries live, the limit is 10`);
    assert.equal(await getText('lru-a/k39'), 'v39');
  });

  test('eviction LFU and RANDOM keep the map under its size too', async () => {
    for (const policy of ['lfu', 'random']) {
      for (let i = 0; i < 30; i++) await put(`${policy}-a/k${i}`, 'x');
      let live = 0;
      for (let i = 0; i < 30; i++) if ((await getText(`${policy}-a/k${i}`)) !== null) live++;
      assert.equal(live, 10, `${policy}: ${live} entries live`);
    }
  });

  test('eviction-policy NONE ignores size', async () => {
    for (let i = 0; i < 12; i++) await put(`none-a/k${i}`, 'x');
    for (let i = 0; i < 12; i++) assert.equal(await getText(`none-a/k${i}`), 'x', `k${i}`);
  });

  test('metrics count the live entries of the maps', async () => {
    const before = (await metrics(port)).mapEntries ?? -1;
    await put('metrics-map/a', '1');
    await put('metrics-map/b', '2');
    assert.equal((await metrics(port)).mapEntries, before + 2);
  });
});
