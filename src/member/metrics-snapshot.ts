// What the metrics call reads from a member at one moment: every scalar figure by its JSON key
// (the flat object `GET /grid/rest/metrics` has always answered), plus the figures that come per map,
// per queue, per request kind and per GC kind. The HTTP layer turns one snapshot into JSON or into
// the Prometheus text format (src/http/metrics-catalog.ts); nothing here does I/O.
import type { ClusterState, NodeState } from './states.js';
import type { CpGroupFigures } from '../cp/cp-service.js';
import type { CpCallFigures } from '../cp/call-stats.js';

export type { CpGroupFigures } from '../cp/cp-service.js';
export type { CpCallFigures } from '../cp/call-stats.js';

export interface MapFigures {
  readonly name: string;
  /** Entries in partitions this member owns. */
  readonly owned: number;
  /** Entries in partitions held here but owned by another member (backups, copies not yet dropped). */
  readonly backup: number;
}

export interface QueueFigures {
  readonly name: string;
  /** Items held here when this member owns the queue's partition, else 0. */
  readonly owned: number;
  /** Items held here when another member owns the queue's partition, else 0. */
  readonly backup: number;
  /** Polls waiting on this member's copy (only an owner has any). */
  readonly waitingPolls: number;
}

/** Requests of one endpoint kind (src/http/request-stats.ts). */
export interface RequestKindFigures {
  readonly kind: string;
  /** Answers per status class, in the order of `statusClasses` of the snapshot. */
  readonly byStatusClass: readonly number[];
  /** Cumulative counts per latency bound of the snapshot, then one for +Inf (equal to `count`). */
  readonly cumulativeBuckets: readonly number[];
  readonly count: number;
  readonly sumSeconds: number;
}

export interface GcFigures {
  /** major, minor, incremental, weakcb. */
  readonly kind: string;
  readonly count: number;
  readonly pauseSeconds: number;
}

/** What the runtime adds: HTTP, connections, the member-protocol transport, the process. */
export interface RuntimeFigures {
  /** Scalar figures by JSON key. */
  readonly flat: Readonly<Record<string, number>>;
  readonly statusClasses: readonly string[];
  readonly latencyBoundsSeconds: readonly number[];
  readonly requestKinds: readonly RequestKindFigures[];
  readonly gc: readonly GcFigures[];
}

export interface MetricsSnapshot {
  /** This member's address, `[host]:port`, as in /grid/rest/cluster. */
  readonly member: string;
  readonly nodeState: NodeState;
  readonly clusterState: ClusterState;
  /** Every scalar figure by its JSON key; `mapEntries` counts owned entries only. */
  readonly flat: Readonly<Record<string, number>>;
  readonly maps: readonly MapFigures[];
  readonly queues: readonly QueueFigures[];
  /** WAN publishers on this member (wan.md "Events and queues"). */
  readonly wan: readonly WanFigures[];
  /** The CP groups this member holds a replica of (spec/cp.md "Metrics"). */
  readonly cp: readonly CpGroupFigures[];
  /** CP calls routed through this member, by structure and outcome. */
  readonly cpCalls: readonly CpCallFigures[];
  readonly runtime: RuntimeFigures;
}

/** One WAN publisher's figures on this member. */
export interface WanFigures {
  readonly replication: string;
  readonly publisher: string;
  readonly state: 'REPLICATING' | 'PAUSED' | 'STOPPED';
  /** Write events queued in partitions this member owns. */
  readonly queued: number;
  readonly backupQueued: number;
  readonly sent: number;
  readonly acked: number;
  readonly dropped: number;
  readonly resent: number;
  /** Age of the oldest event queued here (ms), 0 when none. */
  readonly lagMs: number;
  readonly syncsRunning: number;
  /** Frame bytes sent to / received from the target cluster on this publisher's connections. */
  readonly bytesSent: number;
  readonly bytesReceived: number;
}

/** A runtime that reports nothing (tests, simulations). */
export const NO_RUNTIME_FIGURES: RuntimeFigures = { flat: {}, statusClasses: [], latencyBoundsSeconds: [], requestKinds: [], gc: [] };
