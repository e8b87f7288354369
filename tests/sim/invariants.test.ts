// The step-by-step invariant checkers (tests/harness/sim-invariants.ts) fire at the step that breaks
// an invariant and name it, the member and the partition: a checker that cannot fail proves nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScenarioCluster, scenarioConfig, type ScenarioMember } from '../harness/sim-cluster.js';
import { SimInvariants, type CheckedMember } from '../harness/sim-invariants.js';
import { SimWorld } from '../harness/sim-world.js';

function checkedCluster(seed: number): { world: SimWorld; cluster: ScenarioCluster; invariants: SimInvariants; members: ScenarioMember[] } {
  const world = new SimWorld(seed, { delayMsMin: 1, delayMsMax: 3 });
  const cluster = new ScenarioCluster(world, scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '7' }), ['10.0.0.1:5701', '10.0.0.2:5701', '10.0.0.3:5701'], `invariants seed ${seed}`);
  cluster.until('three members form one cluster', () => cluster.settled(cluster.members));
  const checked: CheckedMember[] = cluster.members.map((m) => ({ address: m.address, uuid: m.node.uuid, node: m.node, alive: true }));
  const invariants = new SimInvariants(() => checked, 7, (k) => cluster.pid(k), (message) => {
    throw new Error(message);
  });
  for (const m of checked) invariants.watch(m);
  world.afterEachStep = (label) => invariants.afterStep(label);
  return { world, cluster, invariants, members: cluster.members };
}

test('an acknowledged write whose every listed copy is dropped fails at the dropping step, naming member and partition', () => {
  const { world, cluster, invariants, members } = checkedCluster(31);
  const [a, b] = members as [ScenarioMember, ScenarioMember];
  cluster.put(b, 'm', 'k1', 'v1');
  invariants.acknowledgedWrite('k1', 'v1');
  world.runFor(500);
  assert.ok(invariants.checks > 0, 'the checker ran');
  const p = cluster.pid('k1');
  const replicas = (a.node.partitions.table.replicas[p] ?? []).filter((u): u is string => u !== null);
  assert.equal(replicas.length, 2);
  // A bug of the kind the checker is for: both replicas forget the partition in one step.
  world.after(10, 'sabotage: both replicas drop the partition', () => {
    for (const m of members) if (replicas.includes(m.node.uuid)) m.node.store.dropPartition(p);
  });
  assert.throws(
    () => world.runFor(100),
    (e: Error) => /sabotage: both replicas drop the partition/.test(e.message) && new RegExp(`dropped partition ${p} and acknowledged write k1=v1 \\(partition ${p}\\)`).test(e.message),
  );
  cluster.stop();
});

test('one replica dropping its copy while another listed replica holds the write is allowed', () => {
  const { world, cluster, invariants, members } = checkedCluster(32);
  const [a, b] = members as [ScenarioMember, ScenarioMember];
  cluster.put(b, 'm', 'k2', 'v2');
  invariants.acknowledgedWrite('k2', 'v2');
  const p = cluster.pid('k2');
  const backup = a.node.partitions.table.replicas[p]?.[1];
  world.after(10, 'one backup drops its copy', () => {
    for (const m of members) if (m.node.uuid === backup) m.node.store.dropPartition(p);
  });
  world.runFor(3000);
  cluster.stop();
});

test('acknowledged queue items gone from every listed replica fail beyond the polls in flight or in doubt', () => {
  const { world, cluster, invariants, members } = checkedCluster(33);
  const [a] = members as [ScenarioMember];
  const p = a.node.store.queuePartition('q');
  invariants.acknowledgedItem('q', p, 'i1');
  invariants.acknowledgedItem('q', p, 'i2');
  invariants.pollsInDoubt = 1;
  // Neither item is stored anywhere: two missing, one poll in doubt.
  world.after(5, 'a queue partition imported empty', () => a.node.store.importPartition(p, a.node.store.version(p), [], [], 0));
  assert.throws(() => world.runFor(50), /2 acknowledged item\(s\) of q .* held by no member that accounts for it \(i1,i2\), with 0 poll\(s\) in flight and 1 in doubt/);
  cluster.stop();
});
