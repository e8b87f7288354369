// Scenario tests in the simulation: a few real ClusterNodes on one SimWorld with a fixed seed, the
// configuration from environment-style overrides, and the waits such tests need. (The seeded
// search over whole clusters is tests/sim/cluster-sim.ts; this is for hand-written scenarios.)
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { ClusterNode, type ClusterTimings } from '../../src/member/cluster-node.js';
import { OP } from '../../src/data/replica-store.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { Logger } from '../../src/util/logger.js';
import { SimWorld, wireNode } from './sim-world.js';

export const SCENARIO_TIMINGS: Partial<ClusterTimings> = { joinBatchQuietMs: 300, joinBatchMaxMs: 1500, claimAfterMs: 1500, claimTimeoutMs: 2000, migrationTickMs: 100, attemptTimeoutMs: 3000, mergeProbeIntervalMs: 2000 };

export interface ScenarioMember {
  readonly address: string;
  readonly node: ClusterNode;
}

export const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** A member configuration from GRID_* variables (no file). */
export function scenarioConfig(env: Record<string, string>): Config {
  const r = loadConfig({
    argv: [],
    env,
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

export class ScenarioCluster {
  readonly members: ScenarioMember[];
  private uuids = 0;

  constructor(
    readonly world: SimWorld,
    readonly config: Config,
    readonly addresses: readonly string[],
    readonly label: string,
  ) {
    const newUuid = (): string => `00000000-0000-4000-8000-${(++this.uuids).toString(16).padStart(12, '0')}`;
    const logger = new Logger('OFF', 'text', { write: () => {} });
    this.members = addresses.map((address, i) => {
      const uuid = newUuid();
      const transport = world.transportFor(address, uuid, { clusterName: 'dev' });
      const node = new ClusterNode({
        config,
        uuid,
        memberVersion: '0.1.0',
        transport,
        clock: world.clock,
        timers: world.timersFor(address),
        random: world.randomFor(`member-${i}`),
        logger,
        newUuid,
        timings: SCENARIO_TIMINGS,
        onShutdownRequested: () => {},
      });
      wireNode(transport, node);
      return { address, node };
    });
    this.members.forEach((m, i) => world.after(i * 200, `start ${i}`, () => m.node.start(m.address.split(':')[0] as string, 5701, addresses)));
  }

  pid(key: string): number {
    return partitionIdOfKey(utf8(key), this.config.properties.partitionCount);
  }

  /** Every member of `group` is joined in a cluster of exactly `group`, with one table, nothing moving. */
  settled(group: readonly ScenarioMember[]): boolean {
    return group.every(
      (m) =>
        m.node.membership.joined &&
        m.node.membership.list.length === group.length &&
        group.every((o) => m.node.membership.isMember(o.node.uuid)) &&
        m.node.partitions.table.version === (group[0] as ScenarioMember).node.partitions.table.version &&
        m.node.isSafe(),
    );
  }

  until(what: string, predicate: () => boolean, ms = 60_000): void {
    assert.ok(this.world.runUntil(predicate, this.world.timeMs + ms), `${this.label}: ${what} (t=${this.world.timeMs} ms)`);
  }

  /** Starts a put through `via`; the returned box fills when the call is answered. */
  startPut(via: ScenarioMember, map: string, key: string, value: string): { result: LocalResult | null } {
    const box: { result: LocalResult | null } = { result: null };
    via.node.invoker.invoke(this.pid(key), ClusterNode.op(OP.MAP_PUT, map, utf8(key), utf8(value), 'text/plain'), 20_000, (x) => (box.result = x));
    return box;
  }

  put(via: ScenarioMember, map: string, key: string, value: string): void {
    const box = this.startPut(via, map, key, value);
    this.until(`put ${key}=${value} via ${via.address} answered`, () => box.result !== null, 25_000);
    assert.equal(box.result?.kind, 'ok', `${this.label}: put ${key}=${value}`);
  }

  /** The values the partition's replicas (owner first, per `tableOf`'s table) hold for a key. */
  valuesOnReplicas(tableOf: ScenarioMember, map: string, key: string): (string | null)[] {
    const byUuid = new Map(this.members.map((m) => [m.node.uuid, m]));
    const p = this.pid(key);
    const replicas = (tableOf.node.partitions.table.replicas[p] ?? []).filter((u): u is string => u !== null);
    return replicas.map((u) => byUuid.get(u)?.node.store.maps.peek(map, utf8(key), p, this.world.clock.nowMs())?.value.toString() ?? null);
  }

  stop(): void {
    for (const m of this.members) m.node.stop();
  }
}
