// A member that stood still (a long GC pause, SIGSTOP, a starved host) and runs again: its timers
// fire late, before it has read what the others sent meanwhile (docs/cluster.md, "Why an
// acknowledged write survives": a member's own stall is not the others' silence).
// - A master paused past the heartbeat timeout while writes go on through the others: they remove
//   it and promote its backups; when it wakes it must not remove them in turn (that split the
//   cluster in two and its half promoted and dropped data of its own), and every acknowledged write
//   is on its partition's replicas once the cluster has settled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScenarioCluster, scenarioConfig, type ScenarioMember } from '../harness/sim-cluster.js';
import { SimWorld } from '../harness/sim-world.js';

test('a master paused past the heartbeat timeout wakes without removing the members that replaced it, and no acknowledged write is lost', () => {
  const world = new SimWorld(27, { delayMsMin: 1, delayMsMax: 3 });
  const cfg = scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '13' });
  const cluster = new ScenarioCluster(world, cfg, ['10.0.0.1:5701', '10.0.0.2:5701', '10.0.0.3:5701', '10.0.0.4:5701'], 'master stall');
  cluster.until('four members form one cluster', () => cluster.settled(cluster.members));
  const [a, b, c, d] = cluster.members as [ScenarioMember, ScenarioMember, ScenarioMember, ScenarioMember];
  assert.ok(a.node.membership.isMaster);
  const puts: { key: string; box: ReturnType<ScenarioCluster['startPut']> }[] = [];
  let n = 0;
  const writeThrough = (via: ScenarioMember[], count: number): void => {
    for (let i = 0; i < count; i++) {
      const key = `k${n++}`;
      puts.push({ key, box: cluster.startPut(via[i % via.length] as ScenarioMember, 'm', key, `v-${key}`) });
    }
  };
  writeThrough([a, b, c, d], 40);
  world.runFor(500);
  world.pause(a.address, a.address);
  // While the master stands still: writes through the others, some for partitions it owns.
  for (let t = 0; t < 17_000; t += 500) world.after(t, 'writes', () => writeThrough([b, c, d], 4));
  world.runFor(17_000);
  assert.ok(!b.node.membership.isMember(a.node.uuid), 'the others removed the paused master');
  const removedBefore = a.node.membership.counters.membersRemoved;
  world.resume(a.address);
  // Writes through the old master too, from the moment it runs again.
  writeThrough([a, b, c, d], 20);
  world.runFor(1000);
  assert.equal(a.node.membership.counters.membersRemoved, removedBefore, 'the woken master removed nobody for a silence of its own making');
  assert.ok(a.node.membership.counters.stalls >= 1, 'the woken master noticed its stall');
  cluster.until('the four settle again', () => cluster.settled(cluster.members), 90_000);
  world.runFor(25_000);
  cluster.until('the four settle again', () => cluster.settled(cluster.members), 30_000);
  const acknowledged = puts.filter((p) => p.box.result?.kind === 'ok');
  assert.ok(acknowledged.length >= 100, `${acknowledged.length} writes acknowledged`);
  const master = cluster.members.find((m) => m.node.membership.isMaster) as ScenarioMember;
  for (const { key } of acknowledged) {
    const values = cluster.valuesOnReplicas(master, 'm', key);
    assert.deepEqual(values, values.map(() => `v-${key}`), `acknowledged ${key} on every replica`);
  }
  cluster.stop();
});
