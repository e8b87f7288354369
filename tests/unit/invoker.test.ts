// Checks the invoker's forwarding on a fractional monotonic clock, as performance.now() is in a real
// member: a forwarded waiting poll that the owner answers "retry" is sent again with the remaining
// wait in whole ms, and every message the invoker sends encodes with the member-protocol codec (a
// fractional wait once crashed the member from a retry timer: `op.timeoutMs: expected an integer`).
// Also: an idempotent call re-sent after the attempt timeout, and a queue offer that gets no answer
// ending indeterminate at its deadline; calls waiting on a removed owner going to the promoted one
// at once (issue #11). Time is a fake clock and a hand-driven timer list.
import test from 'node:test';
import assert from 'node:assert/strict';
import { encodeBody, message, type Message } from '../../src/cluster/messages.js';
import type { Transport } from '../../src/cluster/transport.js';
import { OP } from '../../src/data/replica-store.js';
import { Invoker, STATUS, type LocalResult } from '../../src/invocation/invoker.js';
import { ClusterNode } from '../../src/member/cluster-node.js';
import { FakeTime } from '../harness/fake-time.js';

function setup(): { time: FakeTime; sent: Message[]; invoker: Invoker } {
  const time = new FakeTime();
  const sent: Message[] = [];
  const transport: Transport = {
    send: (_address, m) => {
      encodeBody(m); // throws exactly as the real transport's encoder would
      sent.push(m);
      return true;
    },
    disconnect: () => {},
    connectionCount: () => 1,
  };
  const invoker = new Invoker(
    { attemptTimeoutMs: 3000, retryDelayMinMs: 10.5, retryDelayMaxMs: 500 },
    { selfUuid: 'self', ownerOf: () => 'owner', addressOf: () => '10.0.0.2:5701', runLocal: () => assert.fail('not local') },
    transport,
    { nowMs: () => 1_700_000_000_000 + time.nowMs, monotonicMs: () => time.nowMs },
    time,
  );
  return { time, sent, invoker };
}

const peer = { uuid: 'owner', address: '10.0.0.2:5701' };
const okBody = { status: STATUS.OK, found: true, value: Buffer.from('item'), contentType: null, count: 0, errorCode: '', message: '', retryAfterSeconds: 0 };

test('a forwarded waiting poll answered "retry" is re-sent with a whole-ms remaining wait', () => {
  const { time, sent, invoker } = setup();
  const results: LocalResult[] = [];
  invoker.invoke(3, ClusterNode.op(OP.QUEUE_POLL, 'q', undefined, undefined, null, 10_000), 60_000, (r) => results.push(r));
  assert.equal(sent.length, 1);
  for (let i = 0; i < 5; i++) {
    const last = sent[sent.length - 1] as Extract<Message, { kind: 'invoke' }>;
    time.advance(3.3);
    invoker.onResult(peer, message('invokeResult', { ...okBody, status: STATUS.RETRY }, last.callId));
    time.advance(600);
    assert.equal(sent.length, i + 2, 'sent again after the retry delay');
  }
  for (const m of sent) {
    const op = (m as Extract<Message, { kind: 'invoke' }>).body.op;
    assert.ok(Number.isInteger(op.timeoutMs) && op.timeoutMs > 0 && op.timeoutMs <= 10_000, `timeoutMs ${op.timeoutMs}`);
  }
  const waits = sent.map((m) => (m as Extract<Message, { kind: 'invoke' }>).body.op.timeoutMs);
  assert.ok(waits.every((w, i) => i === 0 || w < (waits[i - 1] as number)), `the remaining wait shrinks: ${waits.join(',')}`);
  const last = sent[sent.length - 1] as Extract<Message, { kind: 'invoke' }>;
  invoker.onResult(peer, message('invokeResult', okBody, last.callId));
  assert.equal(results.length, 1);
  assert.equal(results[0]?.kind, 'ok');
});

test('an idempotent call with no answer is sent again after the attempt timeout', () => {
  const { time, sent, invoker } = setup();
  const results: LocalResult[] = [];
  invoker.invoke(1, ClusterNode.op(OP.MAP_GET, 'm', Buffer.from('k')), 60_000, (r) => results.push(r));
  time.advance(3000 + 600);
  assert.equal(sent.length, 2);
  assert.equal(results.length, 0);
});

test('a queue offer with no answer ends indeterminate at its deadline, sent once', () => {
  const { time, sent, invoker } = setup();
  const results: LocalResult[] = [];
  invoker.invoke(1, ClusterNode.op(OP.QUEUE_OFFER, 'q', undefined, Buffer.from('x')), 20_000.25, (r) => results.push(r));
  time.advance(20_002);
  assert.equal(sent.length, 1);
  assert.equal(results.length, 1);
  const r = results[0] as Extract<LocalResult, { kind: 'error' }>;
  assert.equal(r.error.code, 'ERR_CLUSTER_INDETERMINATE');
});

// Issue #11: a write waiting on a member that the master removed goes to the promoted owner as soon
// as the table that removed it is in, whatever backoff it had built up retrying the dead owner.
test('a removed owner: waiting calls go to the promoted owner at once, not after their grown backoff', () => {
  const time = new FakeTime();
  const sent: { address: string; m: Message }[] = [];
  let owner = 'dead';
  const transport: Transport = {
    send: (address, m) => {
      sent.push({ address, m });
      return true;
    },
    disconnect: () => {},
    connectionCount: () => 1,
  };
  const invoker = new Invoker(
    { attemptTimeoutMs: 3000, retryDelayMinMs: 10.5, retryDelayMaxMs: 500 },
    { selfUuid: 'self', ownerOf: () => owner, addressOf: (u) => (u === 'dead' ? '10.0.0.2:5701' : '10.0.0.3:5701'), runLocal: () => assert.fail('not local') },
    transport,
    { nowMs: () => 1_700_000_000_000 + time.nowMs, monotonicMs: () => time.nowMs },
    time,
  );
  const results: LocalResult[] = [];
  const deadPeer = { uuid: 'dead', address: '10.0.0.2:5701' };
  // Two puts: one in flight to the dead owner, one waiting out its backoff, each after six "retry" answers.
  for (const key of ['in-flight', 'backing-off']) {
    invoker.invoke(1, ClusterNode.op(OP.MAP_PUT, 'm', Buffer.from(key), Buffer.from('v')), 60_000, (r) => results.push(r));
    for (let i = 0; i < 6; i++) {
      const last = sent[sent.length - 1]?.m as Extract<Message, { kind: 'invoke' }>;
      invoker.onResult(deadPeer, message('invokeResult', { ...okBody, status: STATUS.RETRY }, last.callId));
      time.advance(600);
    }
  }
  // The second put is answered "retry" once more: it now waits 500 ms (its grown backoff).
  const last = sent[sent.length - 1]?.m as Extract<Message, { kind: 'invoke' }>;
  invoker.onResult(deadPeer, message('invokeResult', { ...okBody, status: STATUS.RETRY }, last.callId));
  const before = sent.length;
  owner = 'promoted';
  invoker.memberRemoved('dead');
  time.advance(15);
  const resent = sent.slice(before);
  assert.equal(resent.length, 2, `both puts re-sent within 15 ms of the removal, got ${resent.length}`);
  assert.ok(resent.every((s) => s.address === '10.0.0.3:5701'), 'to the promoted owner');
  assert.equal(results.length, 0);
});

// The stopping member's last word on its forwarded calls: one that may be sent again (a map put in
// flight, or any call waiting to be retried) is refused with failure kind 'stopping' (error 19 for a
// client, which retries it elsewhere); a queue offer in flight may have run, so it is indeterminate
// (a client retrying it could offer the item twice).
test('stop: an idempotent call in flight ends "stopping", a queue offer in flight indeterminate', () => {
  const { sent, invoker } = setup();
  const results = new Map<string, LocalResult>();
  invoker.invoke(1, ClusterNode.op(OP.MAP_PUT, 'm', Buffer.from('k'), Buffer.from('v')), 60_000, (r) => results.set('put', r));
  invoker.invoke(2, ClusterNode.op(OP.QUEUE_OFFER, 'q', undefined, Buffer.from('x')), 60_000, (r) => results.set('offer', r));
  invoker.invoke(3, ClusterNode.op(OP.QUEUE_OFFER, 'q', undefined, Buffer.from('y')), 60_000, (r) => results.set('retrying offer', r));
  const third = sent[2] as Extract<Message, { kind: 'invoke' }>;
  invoker.onResult(peer, message('invokeResult', { ...okBody, status: STATUS.RETRY }, third.callId));
  invoker.failAll();
  const put = results.get('put') as Extract<LocalResult, { kind: 'error' }>;
  assert.equal(put.error.code, 'ERR_CLUSTER_UNAVAILABLE');
  assert.equal(put.error.failureKind, 'stopping');
  assert.match(put.error.message, /shutting down/);
  const offer = results.get('offer') as Extract<LocalResult, { kind: 'error' }>;
  assert.equal(offer.error.code, 'ERR_CLUSTER_INDETERMINATE');
  const retrying = results.get('retrying offer') as Extract<LocalResult, { kind: 'error' }>;
  assert.equal(retrying.error.failureKind, 'stopping', 'an offer the owner answered "retry" did not run: it may go elsewhere');
  assert.equal(invoker.pendingCount, 0);
});
