// A split-brain heal hands each queue item back once (found by the nemesis: every item the merging
// side held was delivered two or three times). Five members in the simulation split 3 | 2 so that the
// queue's owner and backup are both on the smaller side; items are offered there during the split,
// the network heals, the two members merge into the larger side and both hand the items back. The
// queue is then drained: every item offered on either side comes out exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClusterNode } from '../../src/member/cluster-node.js';
import { OP } from '../../src/data/replica-store.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { ScenarioCluster, scenarioConfig, utf8, type ScenarioMember } from '../harness/sim-cluster.js';
import { SimWorld } from '../harness/sim-world.js';

test('a queue held by both members of a merging side is handed back once per item', () => {
  const world = new SimWorld(5151, { delayMsMin: 1, delayMsMax: 3 });
  const cfg = scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '7' });
  const addresses = [1, 2, 3, 4, 5].map((i) => `10.0.0.${i}:5701`);
  const cluster = new ScenarioCluster(world, cfg, addresses, 'queue-merge-once');
  const members = cluster.members;
  cluster.until('five members form one cluster', () => cluster.settled(members));
  const master = members[0] as ScenarioMember;
  // A queue whose owner and backup are both not the master: they form the smaller side.
  const byUuid = new Map(members.map((m) => [m.node.uuid, m]));
  let queue = '';
  let smaller: ScenarioMember[] = [];
  for (let i = 0; queue === ''; i++) {
    const replicas = master.node.partitions.table.replicas[master.node.store.queuePartition(`q${i}`)] ?? [];
    if (replicas.length >= 2 && !replicas.includes(master.node.uuid)) {
      queue = `q${i}`;
      smaller = replicas.slice(0, 2).map((u) => byUuid.get(u as string) as ScenarioMember);
    }
  }
  const larger = members.filter((m) => !smaller.includes(m));
  const partitionId = master.node.store.queuePartition(queue);
  const call = (via: ScenarioMember, code: number, value = ''): LocalResult => {
    let r: LocalResult | null = null;
    via.node.invoker.invoke(partitionId, ClusterNode.op(code, queue, undefined, utf8(value), 'text/plain'), 20_000, (x) => (r = x));
    cluster.until(`queue call ${code} via ${via.address}`, () => r !== null, 25_000);
    return r as unknown as LocalResult;
  };
  const offer = (via: ScenarioMember, value: string): void => assert.equal(call(via, OP.QUEUE_OFFER, value).kind, 'ok', `offer ${value}`);

  offer(master, 'before-1');
  offer(master, 'before-2');
  world.partition([smaller.map((m) => m.address), larger.map((m) => m.address)]);
  cluster.until('both sides run as clusters of their own', () => cluster.settled(larger) && cluster.settled(smaller), 90_000);
  for (let i = 1; i <= 5; i++) offer(smaller[i % 2] as ScenarioMember, `smaller-${i}`);
  for (let i = 1; i <= 3; i++) offer(larger[i % 3] as ScenarioMember, `larger-${i}`);
  world.heal();
  cluster.until('the split heals into one cluster', () => cluster.settled(members), 180_000);
  const handedBack = (): number => smaller.reduce((n, m) => n + (m.node.metrics()['mergeReplayed'] ?? 0), 0);
  cluster.until('both merging members handed their items back', () => handedBack() >= 2 * 7, 60_000);
  world.runFor(5000);

  const drained: string[] = [];
  for (;;) {
    const r = call(members[drained.length % 5] as ScenarioMember, OP.QUEUE_POLL);
    assert.equal(r.kind, 'ok');
    const o = (r as LocalResult & { kind: 'ok' }).outcome;
    if (o.kind !== 'value' || o.value === null) break;
    drained.push(o.value.toString());
    assert.ok(drained.length <= 50, 'the queue drains');
  }
  // Both replicas were on the smaller side, so the larger side restarted the partition empty (its
  // ids start again at 1, as "larger-*" show): "before-*" come back only from the hand-back.
  assert.deepEqual(
    [...drained].sort(),
    ['before-1', 'before-2', 'larger-1', 'larger-2', 'larger-3', 'smaller-1', 'smaller-2', 'smaller-3', 'smaller-4', 'smaller-5'],
    `every item once: ${drained.join(', ')}`,
  );
  cluster.stop();
});
