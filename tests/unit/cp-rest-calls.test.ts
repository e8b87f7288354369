// The CP data-structure REST calls as plans (src/cp/rest-calls.ts), carried out against the group
// state machine directly: AtomicLong set/add/CAS with 64-bit values as JSON number text,
// AtomicReference with content types, 204 for null, If-Match by version (412 for another), latches
// with await's 200/204, name@group parsing, and 400/404/405 for malformed calls.
import test from 'node:test';
import assert from 'node:assert/strict';
import { etag, ifMatchIndex, parseLong, planCpRest, resolveIfMatch } from '../../src/cp/rest-calls.js';
import type { CpRestAnswer, CpRestRequest } from '../../src/cp/rest-calls.js';
import { CpStructures } from '../../src/cp/structures.js';
import { decodeQuery, encodeQuery, packJson, runQuery, unpackJson } from '../../src/cp/call-wire.js';
import type { QueryAnswer } from '../../src/cp/call-wire.js';

const BLOCKING = {
  lockAcquireLimit: (name: string) => (name === 'once' ? 1 : 0),
  semaphore: (name: string) => ({ jdkCompatible: name === 'jdk', initialPermits: name === 'jdk' ? 2 : 0 }),
};

function harness(): (r: Partial<CpRestRequest> & Pick<CpRestRequest, 'method' | 'structure' | 'name'>) => CpRestAnswer & { group?: string } {
  const sm = new CpStructures(300_000, { ttlMs: 300_000, heartbeatMs: 5000 }, BLOCKING);
  let index = 100;
  return (partial) => {
    const plan = planCpRest({ op: null, arg: null, body: new Uint8Array(0), contentType: null, ifMatch: null, endpoint: '10.0.0.9', jdkCompatible: (n) => BLOCKING.semaphore(n).jdkCompatible, ...partial });
    if (plan.kind === 'bad') return { status: plan.status, body: plan.message, contentType: null, etagIndex: null };
    if (plan.kind === 'read') {
      // Through the wire both ways, as a call routed to another member's leader goes.
      const q = decodeQuery(encodeQuery(plan.query));
      const a = unpackJson(packJson(runQuery(q, sm, { term: 1, commit: index, leader: 'a', members: ['a'] }))) as QueryAnswer;
      return { ...plan.render(a), group: plan.group };
    }
    const resolved = resolveIfMatch(plan, 1, 7);
    if ('status' in resolved) return resolved;
    const i = ++index;
    return { ...resolved.render(sm.apply(i, { invocation: '', nowMs: 1, command: resolved.command }).result, i), group: resolved.group };
  };
}

const body = (s: string): Uint8Array => Buffer.from(s);

test('AtomicLong over REST: set, the operations, compareAndSet, 64-bit values as number text', () => {
  const call = harness();
  assert.equal(call({ method: 'GET', structure: 'atomiclongs', name: 'n' }).body, '{"value":0}');
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', body: body('9223372036854775807') }).body, '{"value":9223372036854775807}');
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'incrementAndGet' }).body, '{"value":-9223372036854775808}', 'wraps');
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'getAndAdd', body: body('5') }).body, '{"value":-9223372036854775808}');
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'getAndSet', body: body('3') }).body, '{"value":-9223372036854775803}');
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'compareAndSet', body: body('1&2') }).body, '{"result":false,"value":3}');
  const cas = call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'compareAndSet', body: body('3&4') });
  assert.deepEqual([cas.status, cas.body, cas.etagIndex], [200, '{"result":true,"value":4}', 106]);
  assert.equal(call({ method: 'GET', structure: 'atomiclongs', name: 'n' }).etagIndex, 106, 'a GET carries the index of the last write');
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'decrementAndGet' }).body, '{"value":3}');
});

test('AtomicLong over REST: malformed numbers and calls are 400, 404, 405', () => {
  const call = harness();
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', body: body('1.5') }).status, 400);
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', body: body('9223372036854775808') }).status, 400);
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'compareAndSet', body: body('1') }).status, 400);
  assert.equal(call({ method: 'POST', structure: 'atomiclongs', name: 'n', op: 'alter' }).status, 404);
  assert.equal(call({ method: 'DELETE', structure: 'atomiclongs', name: 'n' }).status, 405);
  assert.equal(call({ method: 'GET', structure: 'atomiclongs', name: 'n@METADATA' }).status, 400);
  assert.equal(call({ method: 'GET', structure: 'atomiclongs', name: 'n@orders' }).group, 'orders');
  assert.equal(parseLong('+7', 'x'), 7n);
});

test('AtomicReference over REST: stored bytes with their content type, 204 for null, If-Match by version', () => {
  const call = harness();
  assert.equal(call({ method: 'GET', structure: 'atomicrefs', name: 'r' }).status, 204);
  const set = call({ method: 'POST', structure: 'atomicrefs', name: 'r', body: body('{"a":1}'), contentType: 'application/json' });
  assert.equal(set.status, 200);
  const got = call({ method: 'GET', structure: 'atomicrefs', name: 'r' });
  assert.deepEqual([got.status, Buffer.from(got.body as Uint8Array).toString(), got.contentType, got.etagIndex], [200, '{"a":1}', 'application/json', set.etagIndex]);
  const stale = call({ method: 'POST', structure: 'atomicrefs', name: 'r', body: body('x'), ifMatch: etag(1, 7, 5) });
  assert.equal(stale.status, 412, 'another version');
  assert.equal(call({ method: 'POST', structure: 'atomicrefs', name: 'r', body: body('x'), ifMatch: etag(2, 7, set.etagIndex as number) }).status, 412, 'another group');
  const ok = call({ method: 'POST', structure: 'atomicrefs', name: 'r', body: body('x'), contentType: 'text/plain', ifMatch: etag(1, 7, set.etagIndex as number) });
  assert.equal(ok.status, 200);
  assert.equal(call({ method: 'DELETE', structure: 'atomicrefs', name: 'r', ifMatch: etag(1, 7, set.etagIndex as number) }).status, 412, 'the version moved on');
  assert.equal(call({ method: 'DELETE', structure: 'atomicrefs', name: 'r', ifMatch: '*' }).status, 200);
  assert.equal(call({ method: 'GET', structure: 'atomicrefs', name: 'r' }).status, 204);
  assert.equal(ifMatchIndex('W/"1.7.9"', 1, 7), 9);
  assert.equal(ifMatchIndex('"garbage"', 1, 7), null);
});

test('CountDownLatch over REST: trySetCount, countDown, GET, await 200 or 204', () => {
  const call = harness();
  assert.equal(call({ method: 'POST', structure: 'countdownlatches', name: 'l', body: body('2') }).body, '{"result":true}');
  assert.equal(call({ method: 'POST', structure: 'countdownlatches', name: 'l', body: body('5') }).body, '{"result":false}');
  assert.equal(call({ method: 'POST', structure: 'countdownlatches', name: 'l', body: body('0') }).status, 400);
  assert.equal(call({ method: 'GET', structure: 'countdownlatches', name: 'l', op: 'await', arg: '0' }).status, 204, 'not yet zero, no wait');
  assert.equal(call({ method: 'POST', structure: 'countdownlatches', name: 'l', op: 'countDown' }).body, '{"count":1}');
  assert.equal(call({ method: 'GET', structure: 'countdownlatches', name: 'l' }).body, '{"count":1,"round":1}');
  call({ method: 'POST', structure: 'countdownlatches', name: 'l', op: 'countDown' });
  assert.equal(call({ method: 'GET', structure: 'countdownlatches', name: 'l', op: 'await', arg: '5' }).body, '{"result":true}');
  assert.equal(call({ method: 'GET', structure: 'countdownlatches', name: 'l', op: 'await', arg: '-1' }).status, 400);
});

test('CP sessions over REST: 201 with the times, heartbeat and close 200, an unknown or closed one 404', () => {
  const call = harness();
  const made = call({ method: 'POST', structure: 'sessions', name: 'default' });
  assert.deepEqual([made.status, made.body], [201, '{"sessionId":1,"ttlMillis":300000,"heartbeatMillis":5000}']);
  assert.equal(call({ method: 'POST', structure: 'sessions', name: 'orders' }).group, 'orders', 'a session of a custom group');
  assert.equal(call({ method: 'POST', structure: 'sessions', name: 'metadata' }).status, 400, 'not on METADATA');
  assert.equal(call({ method: 'POST', structure: 'sessions', name: 'default', op: '1', arg: 'heartbeat' }).status, 200);
  assert.equal(call({ method: 'POST', structure: 'sessions', name: 'default', op: '1', arg: 'beat' }).status, 404);
  assert.equal(call({ method: 'DELETE', structure: 'sessions', name: 'default', op: '1' }).status, 200);
  assert.equal(call({ method: 'DELETE', structure: 'sessions', name: 'default', op: '1' }).status, 404, 'closed already');
  assert.equal(call({ method: 'POST', structure: 'sessions', name: 'default', op: '1', arg: 'heartbeat' }).status, 404);
  assert.equal(call({ method: 'POST', structure: 'sessions', name: 'default', op: 'x', arg: 'heartbeat' }).status, 404, 'not a session id');
});

test('FencedLock over REST: fence, re-entry, 204 at the timeout, 409 at the limit and for a non-owner, 404 without a session', () => {
  const call = harness();
  const s1 = 1;
  const s2 = 2;
  call({ method: 'POST', structure: 'sessions', name: 'default' });
  call({ method: 'POST', structure: 'sessions', name: 'default' });
  const lock = (name: string, b: string): CpRestAnswer => call({ method: 'POST', structure: 'locks', name, op: 'lock', body: body(b) });
  const first = lock('l', `${s1}`);
  assert.equal(first.status, 200);
  const fence = (JSON.parse(first.body as string) as { fence: number }).fence;
  assert.equal(fence, first.etagIndex, 'the fence is the acquiring entry');
  assert.equal(lock('l', `${s1}&5`).body, `{"fence":${fence}}`, 're-entry keeps the fence');
  assert.equal(call({ method: 'GET', structure: 'locks', name: 'l' }).body, `{"locked":true,"fence":${fence},"lockCount":2,"sessionId":1}`);
  assert.equal(lock('l', `${s2}&0`).status, 204, 'held by another: the timeout passed');
  assert.equal(call({ method: 'POST', structure: 'locks', name: 'l', op: 'unlock', body: body(`${s2}&${fence}`) }).status, 409, 'not the owner');
  assert.equal(call({ method: 'POST', structure: 'locks', name: 'l', op: 'unlock', body: body(`${s1}&${fence + 1}`) }).status, 409, 'another fence');
  assert.equal(call({ method: 'POST', structure: 'locks', name: 'l', op: 'unlock', body: body(`${s1}&${fence}`) }).body, '{"locked":true}');
  const freed = call({ method: 'POST', structure: 'locks', name: 'l', op: 'unlock', body: body(`${s1}&${fence}`) });
  assert.equal(freed.body, '{"locked":false}');
  const free = call({ method: 'GET', structure: 'locks', name: 'l' });
  assert.deepEqual([free.body, free.etagIndex], ['{"locked":false,"fence":0,"lockCount":0,"sessionId":-1}', freed.etagIndex]);
  const second = lock('l', `${s2}`);
  assert.ok((JSON.parse(second.body as string) as { fence: number }).fence > fence, 'fences rise across owners');
  assert.equal(lock('once', `${s1}`).status, 200);
  assert.equal(lock('once', `${s1}`).status, 409, 'lock-acquire-limit 1');
  assert.equal(lock('l', '77').status, 404, 'no such session');
  assert.equal(lock('l', '').status, 400);
  assert.equal(lock('l', `${s1}&x`).status, 400);
  assert.equal(lock('l', `${s1}&1&2`).status, 400);
  assert.equal(call({ method: 'POST', structure: 'locks', name: 'l', op: 'unlock', body: body(`${s1}`) }).status, 400, 'unlock names its fence');
  assert.equal(call({ method: 'POST', structure: 'locks', name: 'l', op: 'steal', body: body(`${s1}`) }).status, 404);
  assert.equal(call({ method: 'DELETE', structure: 'sessions', name: 'default', op: `${s2}` }).status, 200);
  assert.equal(call({ method: 'GET', structure: 'locks', name: 'l' }).body, '{"locked":false,"fence":0,"lockCount":0,"sessionId":-1}', 'a closed session releases');
});

test('Semaphore over REST: init once, acquire 200 or 204, release 409 beyond what is held, drain, change, jdk-compatible takes -1', () => {
  const call = harness();
  call({ method: 'POST', structure: 'sessions', name: 'default' });
  const sem = (op: string, b: string, name = 's'): CpRestAnswer => call({ method: 'POST', structure: 'semaphores', name, op, body: body(b) });
  assert.equal(sem('init', '2').body, '{"result":true}');
  assert.equal(sem('init', '3').body, '{"result":false}');
  assert.equal(sem('acquire', '1&2').body, '{"acquired":true}');
  assert.equal(sem('acquire', '1&1&0').status, 204);
  assert.equal(call({ method: 'GET', structure: 'semaphores', name: 's' }).body, '{"available":0,"jdkCompatible":false}');
  assert.equal(sem('release', '1&3').status, 409);
  assert.equal(sem('release', '1&1').body, '{"released":1}');
  assert.equal(sem('drain', '1').body, '{"drained":1}');
  assert.equal(sem('change', '1&-5').body, '{"result":true}');
  assert.equal(call({ method: 'GET', structure: 'semaphores', name: 's' }).body, '{"available":-5,"jdkCompatible":false}');
  assert.equal(sem('acquire', '1&0').status, 400, 'permits from 1');
  assert.equal(sem('acquire', '-1&1').status, 400, 'session-aware: a session is needed');
  assert.equal(sem('acquire', '9&1&0').status, 404, 'no such session');
  assert.equal(sem('change', '1&x').status, 400);
  assert.equal(call({ method: 'GET', structure: 'semaphores', name: 'jdk' }).body, '{"available":2,"jdkCompatible":true}');
  assert.equal(sem('acquire', '-1&1', 'jdk').body, '{"acquired":true}');
  assert.equal(sem('acquire', '1&1', 'jdk').status, 400, 'jdk-compatible: sessionless');
  assert.equal(sem('release', '-1&2', 'jdk').body, '{"released":2}', 'anyone releases a sessionless permit');
});
