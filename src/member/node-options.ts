// What a member's cluster machinery (cluster-node.ts) is given: its configuration, identity, the
// world (transport, clock, timers, randomness, logger), the runtime's callbacks, and its timings:
// the defaults a real member runs with, and the knobs the deterministic simulation (tests/sim/)
// turns down to run whole clusters in virtual time.
import type { Config, WanBatchPublisherConfig } from '../config/types.js';
import { FAULT_SPACING_SHARE } from '../cluster/connection-monitor.js';
import type { Transport, TransportHandler } from '../cluster/transport.js';
import type { PersistenceSetup } from '../persistence/node-persistence.js';
import type { Clock, Random, Timers } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

export interface ClusterNodeOptions {
  readonly config: Config;
  readonly uuid: string;
  readonly memberVersion: string;
  readonly transport: Transport;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly random: Random;
  readonly logger: Logger;
  readonly newUuid: () => string;
  /**
   * Runs `fn` on a later turn of the event loop as soon as possible (the runtime: setImmediate,
   * which a zero-delay timer is not: Node clamps it to 1 ms). Absent: a zero-delay timer.
   */
  readonly defer?: (fn: () => void) => void;
  /** Faster timings for simulations (join batching, claims, migration ticks). */
  readonly timings?: Partial<ClusterTimings>;
  /** clusterShutdown reached this member: stop the process. */
  readonly onShutdownRequested: (reason: string) => void;
  /** Another member took a new tcp-ip member list (POST config/tcp-ip/member-list): take it too. */
  readonly onMemberListSet?: (members: readonly string[], from: string) => void;
  /** A connection to another cluster for a WAN publisher; absent: WAN publishers cannot send. */
  readonly openWanTransport?: (publisher: WanBatchPublisherConfig, handler: TransportHandler) => Transport;
  /** `<persistence enabled="true">`: this member's directory (runtime: member-dir.ts). */
  readonly persistence?: PersistenceSetup;
  /** `<cp-subsystem><persistence-enabled>`: the disk and the resolved base-dir of CP persistence. */
  readonly cpPersistence?: { readonly disk: import('../persistence/disk.js').Disk; readonly baseDir: string };
  /** The member's metrics as its runtime states them (process memory, event-loop delay, node state), for the console's cluster view. */
  readonly memberFigures?: () => import('../console/member-part.js').MemberFigures;
  /** Persistence: start over as a new member (wiped data, new UUID): forceStart, stale data. */
  readonly onStartOver?: (reason: string) => void;
  /** Persistence: stale data that must not be removed (auto-remove-stale-data false): exit status 3. */
  readonly onStaleStop?: (reason: string) => void;
}

export interface ClusterTimings {
  readonly joinBatchQuietMs: number;
  readonly joinBatchMaxMs: number;
  readonly claimAfterMs: number;
  readonly claimTimeoutMs: number;
  readonly publishIntervalMs: number;
  readonly backupTimeoutMs: number;
  readonly antiEntropyIntervalMs: number;
  readonly migrationTickMs: number;
  readonly migrationTimeoutMs: number;
  readonly holdTimeoutMs: number;
  readonly transferAckTimeoutMs: number;
  readonly attemptTimeoutMs: number;
  readonly stateLeaseMs: number;
  readonly mergeProbeIntervalMs: number;
  /**
   * Share of grid.connection.monitor.interval two counted refusals are apart at least: 0.75 (a
   * timer can fire a fraction of a millisecond early). The simulation replays the seeds found
   * before that rule with 1, the schedule that found them.
   */
  readonly refusalSpacingShare: number;
}

export const DEFAULT_TIMINGS: ClusterTimings = {
  joinBatchQuietMs: 1000,
  joinBatchMaxMs: 5000,
  claimAfterMs: 3000,
  claimTimeoutMs: 5000,
  publishIntervalMs: 30_000,
  backupTimeoutMs: 5000,
  antiEntropyIntervalMs: 30_000,
  migrationTickMs: 250,
  migrationTimeoutMs: 120_000,
  holdTimeoutMs: 20_000,
  transferAckTimeoutMs: 30_000,
  attemptTimeoutMs: 10_000,
  stateLeaseMs: 20_000,
  mergeProbeIntervalMs: 5000,
  refusalSpacingShare: FAULT_SPACING_SHARE,
};
