// One Membership core on a FakeTime and a recording transport, for unit tests of its rules.
import { Membership } from '../../src/cluster/membership.js';
import type { MembershipHost } from '../../src/cluster/membership.js';
import type { MemberWire, Message } from '../../src/cluster/messages.js';
import type { Transport } from '../../src/cluster/transport.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from './fake-time.js';

export const TEST_PROBE_INTERVAL_MS = 2000;

export interface TestMembership {
  readonly m: Membership;
  /** Everything sent, in order, with its address. */
  readonly sent: { to: string; m: Message }[];
  readonly time: FakeTime;
}

export function member(host: string, uuid: string): MemberWire {
  return { uuid, host, port: 5701, lite: false, version: '1.0.0' };
}

/** A started Membership for `self`; with no join addresses it founds a cluster of one at once.
 * `hooks` replace parts of the host (its table, what it does on leaving). */
export function testMembership(self: MemberWire, joinAddresses: readonly string[] = [], hooks: Partial<MembershipHost> = {}): TestMembership {
  const time = new FakeTime();
  const sent: { to: string; m: Message }[] = [];
  const transport: Transport = { send: (to, m) => (sent.push({ to, m }), true), disconnect: () => {}, connectionCount: () => 0 };
  const host: MembershipHost = {
    tableWire: () => ({ version: 0, width: 0, uuids: [], slots: Buffer.alloc(0), partitionVersions: Buffer.alloc(0) }),
    migrationQueue: () => 0,
    clusterStateCode: () => 0,
    joinRefusal: () => null,
    onView: () => {},
    onMembersRemoved: () => {},
    onClaimed: () => {},
    onLeftCluster: () => {},
    onFoundedCluster: () => {},
    ...hooks,
  };
  const m = new Membership(
    {
      self,
      joinAddresses,
      heartbeatIntervalMs: 1000,
      maxNoHeartbeatMs: 5000,
      connectionMonitorIntervalMs: 1000,
      connectionMonitorMaxFaults: 3,
      joinBatchQuietMs: 300,
      joinBatchMaxMs: 1500,
      claimAfterMs: 1500,
      claimTimeoutMs: 2000,
      publishIntervalMs: 5000,
      mergeProbeIntervalMs: TEST_PROBE_INTERVAL_MS,
      newClusterId: () => `cluster-of-${self.uuid}`,
    },
    host,
    transport,
    { nowMs: () => 1_700_000_000_000 + time.nowMs, monotonicMs: () => time.nowMs },
    time,
    new Logger('OFF', 'text', { write: () => {} }).component('cluster'),
  );
  m.start();
  return { m, sent, time };
}
