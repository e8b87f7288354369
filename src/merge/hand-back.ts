// The hand-back after a split (cluster.md "Handing data back"). A member cut off from its cluster
// (removed by its master, or merging into a larger cluster) keeps what it must hand back, then holds
// nothing and joins again as a new member would. Once it has joined, the hand-back goes through the
// normal call path under each structure's merge policy, a bounded window at a time, and a call that
// fails transiently goes again: what is handed back may be the only copy of acknowledged writes.
//
// Everything the member holds a replica of goes back, not only what it owned: the other side may
// have lost every other copy of a partition (its owner crashed, or was cut off with this member) and
// restarted it empty. A backup's copy may be behind its owner's: it goes back only where the
// cluster has no entry (merge-replay.ts), the owner's under the structure's merge policy.
import type { BackupOpWire, MessageKind, OpWire } from '../cluster/messages.js';
import type { MemberContext, MemberService } from '../cluster/service.js';
import type { Config } from '../config/types.js';
import { resolveMapConfig, resolveQueueConfig } from '../config/match.js';
import { queueConfigName } from '../data/queue-service.js';
import type { ReplicaStore } from '../data/replica-store.js';
import type { LocalResult } from '../invocation/invoker.js';
import type { Clock, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';
import { collectReplay, ReplayBacklog, replayLogLine, replayOutcome, type ReplayPolicies } from './merge-replay.js';

/** Replay calls in flight at once after rejoining, and their bytes. */
const REPLAY_WINDOW = 64;
const REPLAY_BYTES_IN_FLIGHT_MAX = 8 * 1024 * 1024;
/** A hand-back call that failed transiently (owner unreachable, 503) goes again after this long. */
const REPLAY_RETRY_DELAY_MS = 1000;
/** Bytes of one MAP_MERGE batch (also at most half a member-protocol frame). */
const MERGE_BATCH_BYTES_MAX = 1024 * 1024;

/** What the hand-back needs of the member (the composition root passes it in). */
export interface HandBackHost extends MemberContext {
  readonly config: Config;
  readonly store: ReplicaStore;
  /** The replicas of the table this member held when it was cut off. */
  replicas(): readonly (readonly (string | null)[])[];
  /** The owner's backup writes no backup confirmed (the replicator starts over). */
  takeUnconfirmed(): { partitionId: number; op: BackupOpWire }[];
  /** Forget the table and every migration, and answer waiting polls "retry": nothing is owned here now. */
  dropOwnership(): void;
  tableAssigned(): boolean;
  stopped(): boolean;
  invoke(partitionId: number, op: OpWire, timeoutMs: number, cb: (r: LocalResult) => void): void;
}

export class HandBack implements MemberService {
  readonly name = 'hand-back';
  readonly kinds: readonly MessageKind[] = [];
  /** Data to hand back to the cluster after this member was cut off. */
  readonly backlog = new ReplayBacklog(REPLAY_WINDOW, REPLAY_BYTES_IN_FLIGHT_MAX);
  private pumping = false;
  /** Per entry, item or poll handed back; stored/kept say what the merge policy decided on the owner. */
  readonly counters = { replayed: 0, replayFailed: 0, replaySkipped: 0, replayStored: 0, replayKept: 0, replayDiscarded: 0, replayRetried: 0 };

  constructor(
    private readonly host: HandBackHost,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {}

  /** Whether something is still to hand back or in flight: stopping now would lose it. */
  get busy(): boolean {
    return this.backlog.pending > 0 || this.backlog.inFlight > 0;
  }

  /** Cut off: keep what must be handed back, then drop every copy. */
  leftCluster(reason: string): void {
    const h = this.host;
    const replicas = h.replicas();
    const owned: number[] = [];
    const backedUp: number[] = [];
    for (let p = 0; p < replicas.length; p++) {
      const r = replicas[p] ?? [];
      if (r[0] === h.selfUuid) owned.push(p);
      else if (r.includes(h.selfUuid)) backedUp.push(p);
    }
    const unconfirmed = h.takeUnconfirmed();
    const c = h.config;
    const policies: ReplayPolicies = {
      map: (name) => resolveMapConfig(c.maps, name).mergePolicy,
      queue: (name) => resolveQueueConfig(c.queues, queueConfigName(name)).mergePolicy,
    };
    const batchBytesMax = Math.min(MERGE_BATCH_BYTES_MAX, Math.floor(c.properties.memberFrameBytesMax / 2));
    const plan = collectReplay(h.store, unconfirmed, owned, this.clock.nowMs(), policies, batchBytesMax, backedUp);
    h.dropOwnership();
    // The hand-back is queued before the copies go, so at no moment is it in neither place.
    this.backlog.add(plan.calls);
    for (let p = 0; p < h.store.partitionCount; p++) h.store.dropPartition(p);
    this.counters.replaySkipped += plan.skipped;
    this.counters.replayDiscarded += plan.discarded;
    const line = replayLogLine(reason, plan);
    if (line !== null) this.log.warning(line);
  }

  /** After every view: once joined, the backlog goes out. */
  membersChanged(): void {
    this.pump();
  }

  /** Sends the backlog through the normal call path, a bounded window at a time, once joined. */
  pump(): void {
    const h = this.host;
    // A call answered at once (local owner) must not recurse: the loop below goes on instead.
    if (this.pumping || h.stopped() || !h.joined() || !h.tableAssigned()) return;
    this.pumping = true;
    try {
      for (let call = this.backlog.take(); call !== null; call = this.backlog.take()) {
        const r = call;
        h.invoke(r.partitionId, r.op, h.config.properties.operationCallTimeoutMs, (res) => {
          if (res.kind !== 'ok' && h.joined() && !h.stopped() && (res.kind === 'retry' || res.error.status === 503)) {
            // The owner could not be reached in time, or the cluster cannot take it now: what is
            // handed back is the only copy of some acknowledged writes, so it is never given up on
            // a transient failure. It stays in flight (the window holds) and goes again shortly.
            this.counters.replayRetried += r.entries;
            this.timers.setTimeout(() => {
              this.backlog.finish(r, true);
              this.pump();
            }, REPLAY_RETRY_DELAY_MS);
            return;
          }
          const again = res.kind !== 'ok' && !h.joined(); // cut off again meanwhile: keep it for the next join
          this.backlog.finish(r, again);
          const m = this.counters;
          if (res.kind === 'ok') {
            const { stored, kept } = replayOutcome(r, res.outcome);
            m.replayed += r.entries;
            m.replayStored += stored;
            m.replayKept += kept;
          } else if (!again) {
            m.replayFailed += r.entries;
            this.log.warning(`handing back ${r.entries} entr(ies)/item(s) after a split failed: ${res.kind === 'error' ? res.error.message : 'retry'}`);
          }
          if (this.backlog.pending === 0 && this.backlog.inFlight === 0) {
            this.log.info(`handed back ${m.replayed} entr(ies)/item(s) after the split: the merge policies stored ${m.replayStored} and kept the cluster's own for ${m.replayKept}; ${m.replayFailed} failed`);
          }
          this.pump();
        });
      }
    } finally {
      this.pumping = false;
    }
  }
}
