// Membership's shapes: its options, what it asks of its host (the member's cluster node), and the
// address and log-line helpers the other rooms share.
import type { EventSink } from '../util/timeline.js';
import type { MemberWire, TableWire, ViewWire } from './messages.js';

export interface MembershipOptions {
  readonly self: MemberWire;
  readonly joinAddresses: readonly string[];
  readonly heartbeatIntervalMs: number;
  readonly maxNoHeartbeatMs: number;
  /** grid.connection.monitor.interval: ms between re-dials of a member whose connection closed, and between counted refusals. */
  readonly connectionMonitorIntervalMs: number;
  /** grid.connection.monitor.max.faults: refused reconnects that suspect a member. */
  readonly connectionMonitorMaxFaults: number;
  /** Share of the interval two counted refusals are apart at least (tests; default in connection-monitor.ts). */
  readonly connectionMonitorFaultSpacingShare?: number;
  readonly joinBatchQuietMs: number;
  readonly joinBatchMaxMs: number;
  /** How long a member without a master keeps asking before it may claim mastership. */
  readonly claimAfterMs: number;
  /** How long a claimer waits for answers. */
  readonly claimTimeoutMs: number;
  /** Master re-publishes the view this often (lost updates heal). */
  readonly publishIntervalMs: number;
  /** The master probes for other clusters (split brain) this often. */
  readonly mergeProbeIntervalMs: number;
  readonly newClusterId: () => string;
}

export interface MembershipHost {
  /** Where membership events go on the cluster's timeline (src/util/timeline.ts); none when absent. */
  readonly events?: EventSink;
  tableWire(): TableWire;
  migrationQueue(): number;
  clusterStateCode(): number;
  /** Refusal reason for a joiner (cluster state), or null to admit. */
  joinRefusal(joiner: MemberWire): string | null;
  /** A new view was applied (on every member, the master included). */
  onView(view: ViewWire, previous: readonly MemberWire[]): void;
  /** Master only: members were removed (crash, suspicion, departure); promote their replicas. */
  onMembersRemoved(removed: readonly string[]): void;
  /** Master only, after a claim: the views of the members that accepted, to rebuild the table. */
  onClaimed(views: readonly ViewWire[]): void;
  /** This member is not in the cluster any more (removed, or merging into another); it will rejoin. */
  onLeftCluster(reason: string, merging: boolean): void;
  /** This member became master of a cluster of one. */
  onFoundedCluster(): void;
}

export interface Joiner {
  readonly member: MemberWire;
  readonly address: string;
}

export function addressOf(m: { host: string; port: number }): string {
  return `${m.host}:${m.port}`;
}

export function formatMembersLine(version: number, members: readonly { host: string; port: number; uuid: string; self: boolean; lite: boolean }[]): string {
  const items = members.map((x) => `Member [${x.host}]:${x.port} - ${x.uuid}${x.self ? ' this' : ''}${x.lite ? ' lite' : ''}`);
  return `Members {size:${members.length}, ver:${version}} [ ${items.join(', ')} ]`;
}

/** Order for mastership claims among unjoined members: address, then uuid. */
export function rank(address: string, uuid: string): string {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  return `${host}:${String(port).padStart(5, '0')}/${uuid}`;
}

/** Puts each removed member on the timeline as `member-left`, with why (membership.ts: removals and take-overs). */
export function recordRemoved(events: EventSink | undefined, previous: readonly MemberWire[], removed: Iterable<string>, why: string): void {
  if (events === undefined) return;
  for (const u of removed) {
    const x = previous.find((p) => p.uuid === u);
    events.record('member-left', `${x === undefined ? u : addressOf(x)} ${why}`, { member: u });
  }
}
