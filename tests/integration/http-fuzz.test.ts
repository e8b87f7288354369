// Seeded fuzzing of the real member process's port: hundreds of mutated raw HTTP requests
// (flipped and inserted bytes, truncations, bogus lengths and chunk sizes, odd methods and escapes,
// oversized lines, member-protocol preambles followed by random bytes, a half-closed or abruptly
// reset connection) each on its own connection. Afterwards
// the process must still be running, answer health, and hold every entry stored before, byte for
// byte. The seed is FUZZ_SEED (printed on failure); FUZZ_ITERATIONS sets the number of requests.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';
import { SeededRandom } from '../../src/util/prng.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 424242);
const ITERATIONS = Number(process.env['FUZZ_ITERATIONS'] ?? 400);
const PARALLEL = 16;

const TEMPLATES = [
  'GET /grid/rest/maps/fuzz/k1 HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /grid/rest/maps/fuzz/k9 HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello',
  'POST /grid/rest/queues/fq HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
  'DELETE /grid/rest/queues/fq/0 HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /grid/rest/management/cluster/state HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\ndev&',
  'GET /grid/health HTTP/1.0\r\n\r\n',
  'PUT /grid/rest/maps/fuzz/%41%2F%40 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc',
];
const JUNK = ['%', '%zz', '%C3%28', '\0', '\r', '\n', ' ', ':', '/', '?', '#', '\xff', 'Content-Length: 99999999999\r\n', 'Transfer-Encoding: chunked\r\n', 'ffffffffffff\r\n', '\r\n\r\n'];

function mutate(rnd: SeededRandom): Buffer {
  if (rnd.nextInt(10) === 0) {
    // The member protocol shares the port: its preamble followed by random bytes.
    const junk = Buffer.from(Array.from({ length: rnd.nextInt(2000) }, () => rnd.nextInt(256)));
    return Buffer.concat([Buffer.from('GRD\x01', 'latin1'), junk]);
  }
  let text = TEMPLATES[rnd.nextInt(TEMPLATES.length)] as string;
  const edits = 1 + rnd.nextInt(4);
  for (let i = 0; i < edits; i++) {
    const at = rnd.nextInt(text.length + 1);
    switch (rnd.nextInt(6)) {
      case 0: // flip a character
        text = text.slice(0, at) + String.fromCharCode(rnd.nextInt(256)) + text.slice(at + 1);
        break;
      case 1: // insert junk
        text = text.slice(0, at) + (JUNK[rnd.nextInt(JUNK.length)] as string) + text.slice(at);
        break;
      case 2: // truncate
        text = text.slice(0, at);
        break;
      case 3: // duplicate a slice (repeated headers, pipelined copies)
        text = text.slice(0, at) + text.slice(rnd.nextInt(text.length + 1));
        break;
      case 4: // a long run of one character (long lines and headers)
        text = text.slice(0, at) + 'a'.repeat(1 + rnd.nextInt(20_000)) + text.slice(at);
        break;
      default: // a second request behind the first
        text += TEMPLATES[rnd.nextInt(TEMPLATES.length)] as string;
    }
  }
  return Buffer.from(text, 'latin1');
}

/** Sends the bytes, then half-closes or resets; resolves when the connection is gone (bounded). */
function fire(port: number, bytes: Buffer, reset: boolean): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, 2_000);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('data', () => {});
    socket.on('connect', () => {
      socket.write(bytes);
      if (reset) socket.resetAndDestroy();
      else socket.end();
    });
  });
}

let member: MemberProcess;
const stored = new Map<string, Buffer>();

before(async () => {
  member = await startMember({ args: ['--rest', '--rest-groups', 'DATA,CLUSTER_WRITE'] });
  const rnd = new SeededRandom(SEED ^ 0x5eed);
  for (let i = 0; i < 50; i++) {
    const value = Buffer.from(Array.from({ length: 1 + rnd.nextInt(300) }, () => rnd.nextInt(256)));
    const key = `keep-${i}`;
    const r = await request(member.port, 'POST', `/grid/rest/maps/kept/${key}`, { body: value, headers: { 'Content-Type': 'application/octet-stream' } });
    assert.equal(r.status, 200);
    stored.set(key, value);
  }
});

after(async () => {
  assert.equal(await member.stop(), 0, 'the member stops cleanly after the fuzzing');
});

test(`mutated raw requests neither crash the member nor touch stored data (seed=${SEED})`, async () => {
  const rnd = new SeededRandom(SEED);
  try {
    for (let i = 0; i < ITERATIONS; i += PARALLEL) {
      const batch: Promise<void>[] = [];
      for (let j = i; j < Math.min(ITERATIONS, i + PARALLEL); j++) batch.push(fire(member.port, mutate(rnd), rnd.nextInt(8) === 0));
      await Promise.all(batch);
      assert.equal(member.child.exitCode, null, `the member exited after request ${i}`);
    }
    assert.equal((await request(member.port, 'GET', '/grid/health/ready')).status, 200);
    const counters = (await request(member.port, 'GET', '/grid/rest/metrics')).json() as Record<string, number>;
    assert.ok((counters.connectionsAccepted ?? 0) >= ITERATIONS, `the member saw the fuzz connections: ${JSON.stringify(counters)}`);
    assert.ok((counters.httpClientErrors ?? 0) > 0 && (counters.status4xx ?? 0) > 0, 'malformed and refused requests were among them');
    for (const [key, value] of stored) {
      const r = await request(member.port, 'GET', `/grid/rest/maps/kept/${key}`);
      assert.equal(r.status, 200, key);
      assert.ok(r.body.equals(value), `${key} changed`);
      assert.equal(r.headers['content-type'], 'application/octet-stream');
    }
    assert.doesNotMatch(member.stderr(), /Error|at /, 'nothing was thrown to stderr');
    assert.doesNotMatch(member.stdout(), /SEVERE/, 'no unexpected failure was logged');
  } catch (e) {
    console.error(`HTTP FUZZ FAILURE: rerun with FUZZ_SEED=${SEED}`);
    throw e;
  }
});
