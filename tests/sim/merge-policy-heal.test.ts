// A split-brain heal under each map merge policy, in the deterministic simulation (SimWorld, the real
// ClusterNode): three members, the network splits one member off until each side runs as a cluster
// of its own, both sides write the same keys at different times, the network heals and the lone
// member (the smaller side) merges into the other two. Checks, per policy, which value each key has
// afterwards on its owner and on its backup:
//   k1: written on the larger side, then later on the smaller side;
//   k2: written on the smaller side, then later on the larger side;
//   k3: written on the smaller side only;
//   k0: written before the split and not touched since.
// LatestUpdate keeps the newer value of k1 and k2, PutIfAbsent the larger side's, PassThrough the
// smaller side's, Discard drops k3; and the merging member's counters say what was stored, kept and
// dropped. The seed is fixed: this is a scenario test, not a search (tests/sim/cluster-sim.ts is).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MergePolicyName } from '../../src/config/types.js';
import { ScenarioCluster, scenarioConfig, type ScenarioMember } from '../harness/sim-cluster.js';
import { SimWorld } from '../harness/sim-world.js';

function healScenario(policy: MergePolicyName): { values: Record<string, (string | null)[]>; counters: Record<string, number> } {
  const world = new SimWorld(4242, { delayMsMin: 1, delayMsMax: 3 });
  const cfg = scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '7', GRID_MAP_M_MERGEPOLICY: policy, GRID_MAP_M_MERGEPOLICY_BATCHSIZE: '2' });
  const cluster = new ScenarioCluster(world, cfg, ['10.0.0.1:5701', '10.0.0.2:5701', '10.0.0.3:5701'], policy);
  const members = cluster.members;
  const [a, b, c] = members as [ScenarioMember, ScenarioMember, ScenarioMember];
  const until = (what: string, predicate: () => boolean, ms?: number): void => cluster.until(what, predicate, ms);
  const put = (via: ScenarioMember, key: string, value: string): void => cluster.put(via, 'm', key, value);

  until('the three members form one cluster', () => cluster.settled(members));
  put(a, 'k0', 'before');
  world.partition([[c.address]]);
  until('both sides run as clusters of their own', () => cluster.settled([a, b]) && cluster.settled([c]), 90_000);
  world.runFor(1000);
  put(a, 'k1', 'larger');
  world.runFor(1000);
  put(c, 'k1', 'smaller');
  put(c, 'k2', 'smaller');
  world.runFor(1000);
  put(b, 'k2', 'larger');
  put(c, 'k3', 'smaller');
  world.runFor(1000);
  world.heal();
  until('the split heals into one cluster', () => cluster.settled(members), 120_000);
  const counters = c.node.metrics();
  const handedBack = (): number => counters['mergeReplayed'] ?? 0;
  until('the merging member handed its data back', () => {
    Object.assign(counters, c.node.metrics());
    return handedBack() + (counters['mergeReplayFailed'] ?? 0) + (counters['mergeReplayDiscarded'] ?? 0) >= 4;
  });
  world.runFor(10_000); // backups ack, anti-entropy runs
  until('the cluster is safe again', () => cluster.settled(members));
  Object.assign(counters, c.node.metrics());

  const values: Record<string, (string | null)[]> = {};
  for (const key of ['k0', 'k1', 'k2', 'k3']) values[key] = cluster.valuesOnReplicas(a, 'm', key);
  cluster.stop();
  return { values, counters };
}

const EXPECTED: [MergePolicyName, Record<string, string | null>, { stored: number; kept: number; discarded: number }][] = [
  // k0 is the same record on both sides (the lone member held a replica of it): a tie, so stored again.
  ['LatestUpdateMergePolicy', { k0: 'before', k1: 'smaller', k2: 'larger', k3: 'smaller' }, { stored: 3, kept: 1, discarded: 0 }],
  ['PutIfAbsentMergePolicy', { k0: 'before', k1: 'larger', k2: 'larger', k3: 'smaller' }, { stored: 1, kept: 3, discarded: 0 }],
  ['PassThroughMergePolicy', { k0: 'before', k1: 'smaller', k2: 'smaller', k3: 'smaller' }, { stored: 4, kept: 0, discarded: 0 }],
  ['DiscardMergePolicy', { k0: 'before', k1: 'larger', k2: 'larger', k3: null }, { stored: 0, kept: 0, discarded: 4 }],
];

for (const [policy, expected, counts] of EXPECTED) {
  test(`split-brain heal with ${policy}: owners and backups hold the value the policy chose`, () => {
    const { values, counters } = healScenario(policy);
    for (const [key, want] of Object.entries(expected)) {
      const got = values[key] ?? [];
      assert.equal(got.length, 2, `${key} has an owner and a backup`);
      assert.deepEqual(got, [want, want], `${policy}: ${key} on owner and backup`);
    }
    assert.deepEqual(
      { stored: counters['mergeReplayStored'], kept: counters['mergeReplayKept'], discarded: counters['mergeReplayDiscarded'], failed: counters['mergeReplayFailed'] },
      { ...counts, failed: 0 },
      `${policy}: the merging member's counters`,
    );
  });
}
