// A call a member forwarded before it was cut off from its cluster is acknowledged only by the
// cluster it belongs to when the answer comes (found by the nemesis: a write answered 200 after its
// member had left the cluster, then missing after the heal). Three members in the simulation; the
// master stops hearing member c (one-way) and removes it. At that moment, before c hears of it, the
// owner b of the key's partition is paused and the network heals: c's next heartbeat gets "not a
// member" from the master, and c's forwarded put reaches b only after c has left.
// b then runs it and answers; c must not take that answer as the call's acknowledgement: the call is
// retried, and answered once c has joined again, by the owner of the cluster it joined, which holds
// the value with its backup. A queue offer caught the same way ends indeterminate (503), never "ok".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClusterNode } from '../../src/member/cluster-node.js';
import { OP } from '../../src/data/replica-store.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { ScenarioCluster, scenarioConfig, utf8, type ScenarioMember } from '../harness/sim-cluster.js';
import { SimWorld } from '../harness/sim-world.js';

test('a call forwarded before its member left the cluster is not acknowledged by the old cluster', () => {
  const world = new SimWorld(77, { delayMsMin: 1, delayMsMax: 3 });
  const cfg = scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '7', GRID_PROPERTY_GRID_MAX_NO_HEARTBEAT_SECONDS: '5' });
  const cluster = new ScenarioCluster(world, cfg, ['10.0.0.1:5701', '10.0.0.2:5701', '10.0.0.3:5701'], 'left-cluster');
  const members = cluster.members;
  cluster.until('the three members form one cluster', () => cluster.settled(members));
  const [a, , c] = members as [ScenarioMember, ScenarioMember, ScenarioMember];
  assert.ok(a.node.membership.isMaster, 'the first member is the master');
  // A key owned by the third member's peer that is neither the master nor c.
  const table = a.node.partitions.table;
  const owner = members.find((m) => m !== a && m !== c) as ScenarioMember;
  let key = '';
  for (let i = 0; key === ''; i++) if (table.owner(cluster.pid(`k${i}`)) === owner.node.uuid) key = `k${i}`;
  let queue = '';
  for (let i = 0; queue === ''; i++) if (table.owner(a.node.store.queuePartition(`q${i}`)) === owner.node.uuid) queue = `q${i}`;

  world.block([c.address], [a.address]); // the master stops hearing c; c hears everyone
  // The moment the master drops c, before c hears of it: pause the owner, then c forwards its calls.
  cluster.until('the master removes c', () => !a.node.membership.isMember(c.node.uuid), 30_000);
  assert.ok(c.node.membership.joined, 'c has not heard of it yet');
  world.pause(owner.address, owner.address);
  world.heal(); // c's next heartbeat reaches the master, which answers "not a member"
  const put = cluster.startPut(c, 'm', key, 'v');
  let offer: LocalResult | null = null;
  c.node.invoker.invoke(a.node.store.queuePartition(queue), ClusterNode.op(OP.QUEUE_OFFER, queue, undefined, utf8('item'), 'text/plain'), 20_000, (r) => (offer = r));
  cluster.until('c learns it was removed', () => !c.node.membership.joined, 20_000);
  world.resume(owner.address);
  world.runFor(1000);
  assert.equal(put.result, null, 'no answer from the old cluster while c is out of every cluster');
  assert.equal((offer as LocalResult | null)?.kind, 'error', 'the offer ends indeterminate');
  assert.equal((offer as LocalResult & { kind: 'error' } | null)?.error.code, 'ERR_CLUSTER_INDETERMINATE');

  cluster.until('c joins again', () => cluster.settled(members), 120_000);
  cluster.until('the put is answered', () => put.result !== null, 30_000);
  assert.equal((put.result as LocalResult | null)?.kind, 'ok');
  assert.deepEqual(cluster.valuesOnReplicas(a, 'm', key), ['v', 'v'], 'owner and backup hold the value');
  cluster.stop();
});
