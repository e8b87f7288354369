// The owner's side of data calls on its own (src/operations/owner-ops.ts), on a real ReplicaStore
// with hand-made views of the partition table and the replicator: the fast path answers at once, a
// call for a partition owned elsewhere answers "retry", a held partition runs its calls when it is
// released, and a waiting poll answers with an item, with nothing when its time is up, "retry" when
// the partition moves away, and nothing when the member stops.
import test from 'node:test';
import assert from 'node:assert/strict';
import { OwnerOps } from '../../src/operations/owner-ops.js';
import { ClusterNode } from '../../src/member/cluster-node.js';
import { OP } from '../../src/data/replica-store.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { GridError } from '../../src/util/errors.js';
import { FakeTime } from '../harness/fake-time.js';
import { testStore } from '../harness/store.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const NO_HOOK = (): void => {};

function setup() {
  const time = new FakeTime();
  const store = testStore({ partitionCount: 4 });
  const owners: (string | null)[] = ['me', 'me', 'me', 'me'];
  const held = new Map<number, (() => void)[]>();
  const ops = new OwnerOps({
    selfUuid: 'me',
    store,
    membership: { joined: true },
    partitions: {
      table: { owner: (p) => owners[p] ?? null },
      isHeld: (p) => held.has(p),
      whenReleased: (p, run) => held.get(p)?.push(run),
    },
    replicator: { isReceiving: () => false, hasTargets: () => false, replicate: () => true },
    wan: { publishing: false, checkWrite: () => {} },
    recovery: { active: false },
    persistence: null,
    transport: { send: () => true, disconnect: () => {}, connectionCount: () => 0 },
    clock: { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs },
    timers: time,
    recoveringError: () => new GridError('ERR_DATA_RECOVERING', 'recovery in progress'),
    stopped: () => false,
  });
  const release = (p: number): void => {
    const runs = held.get(p) ?? [];
    held.delete(p);
    for (const r of runs) r();
  };
  return { time, store, owners, held, ops, release };
}

test('the fast path answers at once; a partition owned elsewhere answers retry', () => {
  const { ops, owners } = setup();
  assert.equal(ops.isFastLocal(1), true);
  const put = ops.runLocalNow(1, ClusterNode.op(OP.MAP_PUT, 'm', utf8('k'), utf8('v'), 'text/plain'), () => assert.fail('no deferral on the fast path'), NO_HOOK);
  assert.equal(put?.kind, 'ok');
  const got = ops.runLocalNow(1, ClusterNode.op(OP.MAP_GET, 'm', utf8('k')), () => assert.fail('no deferral'), NO_HOOK);
  assert.equal(got?.kind === 'ok' && got.outcome.kind === 'value' ? got.outcome.value?.toString() : null, 'v');
  owners[1] = 'other';
  assert.equal(ops.isFastLocal(1), false);
  assert.equal(ops.runLocalNow(1, ClusterNode.op(OP.MAP_GET, 'm', utf8('k')), () => assert.fail(), NO_HOOK)?.kind, 'retry');
});

test('a call for a held partition waits for the release, and answers retry if the partition left meanwhile', () => {
  const { ops, held, owners, release } = setup();
  held.set(2, []);
  const answers: LocalResult[] = [];
  ops.runLocal(2, ClusterNode.op(OP.MAP_PUT, 'm', utf8('a'), utf8('1'), 'text/plain'), (r) => answers.push(r), NO_HOOK);
  assert.equal(answers.length, 0, 'held');
  release(2);
  assert.equal(answers[0]?.kind, 'ok');
  held.set(2, []);
  ops.runLocal(2, ClusterNode.op(OP.MAP_PUT, 'm', utf8('b'), utf8('2'), 'text/plain'), (r) => answers.push(r), NO_HOOK);
  owners[2] = 'other';
  release(2);
  assert.equal(answers[1]?.kind, 'retry');
});

test('a waiting poll answers with the next item, with nothing when its time is up, retry when the partition moves, nothing at a stop', () => {
  const { ops, store, time, owners } = setup();
  const q = 'jobs';
  const p = store.queuePartition(q);
  const poll = (timeoutMs: number): { r: LocalResult | null } => {
    const box: { r: LocalResult | null } = { r: null };
    const now = ops.runLocalNow(p, ClusterNode.op(OP.QUEUE_POLL, q, undefined, undefined, null, timeoutMs), () => (r) => (box.r = r), NO_HOOK);
    if (now !== null) box.r = now;
    return box;
  };
  const valueOf = (r: LocalResult | null): string | null | undefined => (r?.kind === 'ok' && r.outcome.kind === 'value' ? (r.outcome.value?.toString() ?? null) : undefined);
  const first = poll(5000);
  assert.equal(first.r, null, 'waits on an empty queue');
  ops.runLocalNow(p, ClusterNode.op(OP.QUEUE_OFFER, q, undefined, utf8('job-1'), 'text/plain'), () => assert.fail(), NO_HOOK);
  assert.equal(valueOf(first.r), 'job-1', 'the offer went to the waiting poll');
  const second = poll(1000);
  time.advance(1001);
  assert.equal(valueOf(second.r), null, 'nothing when the time is up');
  const third = poll(5000);
  owners[p] = 'other';
  ops.onTableApplied([p]);
  assert.equal(third.r?.kind, 'retry', 'the partition moved: ask the new owner');
  owners[p] = 'me';
  const fourth = poll(5000);
  ops.stop();
  assert.equal(valueOf(fourth.r), null, 'a stopping member answers nothing');
});
