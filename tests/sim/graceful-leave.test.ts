// A graceful leave in the simulation (docs/cluster.md "Graceful shutdown"):
// - The leaving member's backups have had no write since it took their partitions over (it jumped
//   their versions then), so each is behind the source when asked to confirm the move: it resyncs
//   from the source, which holds writes, and confirms once the copy is in. No move fails. (Each
//   failed once before, and the move was planned again a round later: 17 s to leave a cluster of
//   two with 135 empty partitions instead of 0.6 s.)
// - A drained member stays in the member list until it departs (its clients move meanwhile), and
//   the master removes it at once when it does; one that never says so is removed by the master
//   after DEPART_WAIT_MS. Every acknowledged write is on the member that stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScenarioCluster, scenarioConfig, type ScenarioMember } from '../harness/sim-cluster.js';
import { SimWorld } from '../harness/sim-world.js';
import { DEPART_WAIT_MS } from '../../src/member/cluster-node.js';

function twoMembers(seed: number): { world: SimWorld; cluster: ScenarioCluster; a: ScenarioMember; b: ScenarioMember } {
  const world = new SimWorld(seed, { delayMsMin: 1, delayMsMax: 3 });
  const cfg = scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '31' });
  const cluster = new ScenarioCluster(world, cfg, ['10.0.0.1:5701', '10.0.0.2:5701'], 'graceful leave');
  cluster.until('two members form one cluster', () => cluster.settled(cluster.members));
  const [a, b] = cluster.members as [ScenarioMember, ScenarioMember];
  return { world, cluster, a, b };
}

test('a member leaving a cluster of two hands off every partition without a failed move, and departs when it says so', () => {
  const { world, cluster, a, b } = twoMembers(5);
  assert.ok(a.node.membership.isMaster);
  // Writes to some partitions only: the others' backups stay behind the owner's jumped version.
  for (let i = 0; i < 6; i++) cluster.put(a, 'm', `k${i}`, `v${i}`);
  const failedBefore = a.node.partitions.counters.migrationsFailed;
  void b.node.leave.leaveGracefully(60_000);
  cluster.until('the leaving member handed everything off', () => b.node.leave.replicasHandedOff, 30_000);
  assert.equal(a.node.partitions.counters.migrationsFailed - failedBefore, 0, 'no move failed');
  world.runFor(DEPART_WAIT_MS / 2);
  assert.ok(a.node.membership.isMember(b.node.uuid), 'still listed until it departs');
  b.node.leave.depart();
  cluster.until('the master removed it', () => !a.node.membership.isMember(b.node.uuid), 1000);
  for (let i = 0; i < 6; i++) assert.deepEqual(cluster.valuesOnReplicas(a, 'm', `k${i}`), [`v${i}`]);
  cluster.stop();
});

test('a drained member that never departs is removed by the master after DEPART_WAIT_MS', () => {
  const { world, cluster, a, b } = twoMembers(6);
  void b.node.leave.leaveGracefully(60_000);
  cluster.until('the leaving member handed everything off', () => b.node.leave.replicasHandedOff, 30_000);
  world.runFor(DEPART_WAIT_MS - 1000);
  assert.ok(a.node.membership.isMember(b.node.uuid));
  cluster.until('the master removed it', () => !a.node.membership.isMember(b.node.uuid), 2000);
  cluster.stop();
});
