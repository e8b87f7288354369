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
import { loadConfig } from '../../src/config/load.js';
import type { Config, MergePolicyName } from '../../src/config/types.js';
import { ClusterNode, type ClusterTimings } from '../../src/member/cluster-node.js';
import { OP } from '../../src/data/replica-store.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { Logger } from '../../src/util/logger.js';
import { SimWorld } from '../harness/sim-world.js';

const PARTITIONS = 7;
const TIMINGS: Partial<ClusterTimings> = { joinBatchQuietMs: 300, joinBatchMaxMs: 1500, claimAfterMs: 1500, claimTimeoutMs: 2000, migrationTickMs: 100, attemptTimeoutMs: 3000, mergeProbeIntervalMs: 2000 };

function config(policy: MergePolicyName): Config {
  const r = loadConfig({
    argv: [],
    env: { GRID_PROPERTY_GRID_PARTITION_COUNT: String(PARTITIONS), GRID_MAP_M_MERGEPOLICY: policy, GRID_MAP_M_MERGEPOLICY_BATCHSIZE: '2' },
    cwd: '/',
    readFile: () => {
      throw new Error('no file');
    },
    fileExists: () => false,
    randomHex: () => 'abcd',
    version: '0.1.0',
  });
  if (r.kind !== 'run') throw new Error(r.stderr);
  return r.config;
}

interface Member {
  readonly address: string;
  readonly node: ClusterNode;
}

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const pid = (key: string): number => partitionIdOfKey(utf8(key), PARTITIONS);

function healScenario(policy: MergePolicyName): { values: Record<string, (string | null)[]>; counters: Record<string, number> } {
  const world = new SimWorld(4242, { delayMsMin: 1, delayMsMax: 3 });
  const cfg = config(policy);
  const addresses = ['10.0.0.1:5701', '10.0.0.2:5701', '10.0.0.3:5701'];
  let uuids = 0;
  const newUuid = (): string => `00000000-0000-4000-8000-${(++uuids).toString(16).padStart(12, '0')}`;
  const logger = new Logger('OFF', 'text', { write: () => {} });
  const members: Member[] = addresses.map((address, i) => {
    const uuid = newUuid();
    const transport = world.transportFor(address, uuid, { clusterName: 'dev' });
    const node = new ClusterNode({
      config: cfg,
      uuid,
      memberVersion: '0.1.0',
      transport,
      clock: world.clock,
      timers: world.timersFor(address),
      random: world.randomFor(`member-${i}`),
      logger,
      newUuid,
      timings: TIMINGS,
      onShutdownRequested: () => {},
    });
    transport.setHandler({ onMessage: (from, m) => node.onMessage(from, m), onRefused: (a) => node.onRefused(a) });
    return { address, node };
  });
  const [a, b, c] = members as [Member, Member, Member];
  members.forEach((m, i) => world.after(i * 200, `start ${i}`, () => m.node.start(m.address.split(':')[0] as string, 5701, addresses)));

  /** Every member of `group` is joined in a cluster of exactly `group`, with one table, nothing moving. */
  const settled = (group: Member[]): boolean =>
    group.every(
      (m) =>
        m.node.membership.joined &&
        m.node.membership.list.length === group.length &&
        group.every((o) => m.node.membership.isMember(o.node.uuid)) &&
        m.node.partitions.table.version === (group[0] as Member).node.partitions.table.version &&
        m.node.isSafe(),
    );
  const until = (what: string, predicate: () => boolean, ms = 60_000): void => {
    assert.ok(world.runUntil(predicate, world.timeMs + ms), `${policy}: ${what} (t=${world.timeMs} ms)`);
  };
  const put = (via: Member, key: string, value: string): void => {
    let r: LocalResult | null = null;
    via.node.invoker.invoke(pid(key), ClusterNode.op(OP.MAP_PUT, 'm', utf8(key), utf8(value), 'text/plain'), 20_000, (x) => (r = x));
    until(`put ${key}=${value} via ${via.address} answered`, () => r !== null, 25_000);
    assert.equal((r as LocalResult | null)?.kind, 'ok', `${policy}: put ${key}=${value}`);
  };

  until('the three members form one cluster', () => settled(members));
  put(a, 'k0', 'before');
  world.partition([[c.address]]);
  until('both sides run as clusters of their own', () => settled([a, b]) && settled([c]), 90_000);
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
  until('the split heals into one cluster', () => settled(members), 120_000);
  const counters = c.node.metrics();
  const handedBack = (): number => counters['mergeReplayed'] ?? 0;
  until('the merging member handed its data back', () => {
    Object.assign(counters, c.node.metrics());
    return handedBack() + (counters['mergeReplayFailed'] ?? 0) + (counters['mergeReplayDiscarded'] ?? 0) >= 4;
  });
  world.runFor(10_000); // backups ack, anti-entropy runs
  until('the cluster is safe again', () => settled(members));
  Object.assign(counters, c.node.metrics());

  const table = a.node.partitions.table;
  const byUuid = new Map(members.map((m) => [m.node.uuid, m]));
  const values: Record<string, (string | null)[]> = {};
  for (const key of ['k0', 'k1', 'k2', 'k3']) {
    const replicas = (table.replicas[pid(key)] ?? []).filter((u): u is string => u !== null);
    values[key] = replicas.map((u) => byUuid.get(u)?.node.store.maps.peek('m', utf8(key), pid(key), world.clock.nowMs())?.value.toString() ?? null);
  }
  for (const m of members) m.node.stop();
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
