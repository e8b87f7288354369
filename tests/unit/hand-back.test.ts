// The hand-back service on its own (src/merge/hand-back.ts), on a real ReplicaStore: a member cut off
// keeps everything it holds a replica of in its backlog and drops its copies; once joined it sends
// the backlog through the normal call path; a transient failure (retry, 503) goes again a second
// later and is never given up; the member is not cluster-safe (busy) until all is handed back.
import test from 'node:test';
import assert from 'node:assert/strict';
import type { OpWire } from '../../src/cluster/messages.js';
import { HandBack } from '../../src/merge/hand-back.js';
import { ClusterNode } from '../../src/member/cluster-node.js';
import { OP } from '../../src/data/replica-store.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { GridError } from '../../src/util/errors.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from '../harness/fake-time.js';
import { testStore } from '../harness/store.js';
import { scenarioConfig } from '../harness/sim-cluster.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

test('a cut-off member hands back what it held once joined, retrying transient failures until they pass', () => {
  const time = new FakeTime();
  const store = testStore({ partitionCount: 4 });
  for (const [p, k] of [[0, 'a'], [1, 'b'], [2, 'c']] as const) store.runOwnerOp(p, ClusterNode.op(OP.MAP_PUT, 'm', utf8(k), utf8(`v-${k}`), 'text/plain'), time.nowMs);
  let joined = true;
  let dropped = 0;
  const calls: { partitionId: number; op: OpWire; cb: (r: LocalResult) => void }[] = [];
  const hb = new HandBack(
    {
      selfUuid: 'me',
      joined: () => joined,
      isMaster: () => false,
      isMember: () => true,
      masterUuid: () => 'master',
      memberUuids: () => ['master', 'me'],
      addressOf: () => null,
      send: () => {},
      config: scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '4' }),
      store,
      // Owner of 0 and 1, backup of 2, nothing of 3.
      replicas: () => [['me', 'x'], ['me', 'x'], ['x', 'me'], ['x', 'y']],
      takeUnconfirmed: () => [],
      dropOwnership: () => dropped++,
      tableAssigned: () => true,
      stopped: () => false,
      invoke: (partitionId, op, _timeoutMs, cb) => calls.push({ partitionId, op, cb }),
    },
    { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs },
    time,
    new Logger('OFF', 'text', { write: () => {} }).component('test'),
  );
  joined = false;
  hb.leftCluster('merging into the cluster of x:5701');
  assert.equal(dropped, 1, 'the table and the migrations are forgotten');
  assert.equal(hb.busy, true);
  for (const [p, k] of [[0, 'a'], [1, 'b'], [2, 'c']] as const) assert.equal(store.maps.peek('m', utf8(k), p, time.nowMs), null, 'every copy is dropped');
  hb.membersChanged();
  assert.equal(calls.length, 0, 'nothing goes out before the member has joined');
  joined = true;
  hb.membersChanged();
  assert.deepEqual([...new Set(calls.map((c) => c.partitionId))].sort(), [0, 1, 2], 'owned and backed-up partitions go back');
  const first = calls.shift();
  first?.cb({ kind: 'error', error: new GridError('ERR_CLUSTER_UNAVAILABLE', 'not now', { retryAfterSeconds: 1 }) });
  assert.equal(hb.counters.replayRetried > 0, true);
  for (const c of calls.splice(0)) c.cb({ kind: 'ok', outcome: { kind: 'done' } });
  assert.equal(hb.busy, true, 'the failed call is still in flight');
  time.advance(1001);
  assert.equal(calls.length, 1, 'it went again a second later');
  calls[0]?.cb({ kind: 'ok', outcome: { kind: 'done' } });
  assert.equal(hb.busy, false, 'all handed back');
  assert.equal(hb.counters.replayFailed, 0);
});
