// What a member does with its own replica of a group: its options from the configuration, a
// routed call run on it (a write, a linearizable read, a membership change or a leadership
// hand-over), and its figures for the metrics call. No I/O; the service marks the replica for
// processing afterwards.
import type { AttemptAnswer } from './router.js';
import type { GroupReplica, WriteOutcome } from './group-replica.js';
import { runQuery } from './call-wire.js';
import type { CallPayload } from './call-wire.js';
import type { ReplicaOptions } from './group-replica.js';
import { RAFT_DEFAULTS } from './raft/types.js';
import type { CpSubsystemConfig } from '../config/types.js';

/** A group replica's options from `<cp-subsystem>` (spec/cp.md "Configuration"). */
export function replicaOptionsOf(c: CpSubsystemConfig, tickMs: number, valueBytesMax: number, dedupeMs: number): ReplicaOptions {
  const ra = c.raftAlgorithm;
  return {
    raft: {
      ...RAFT_DEFAULTS,
      tickMs,
      electionTimeoutMs: ra.leaderElectionTimeoutInMillis,
      heartbeatPeriodMs: ra.leaderHeartbeatPeriodInMillis,
      missedHeartbeatsMax: ra.maxMissedLeaderHeartbeatCount,
      appendEntriesMax: ra.appendRequestMaxEntryCount,
      uncommittedEntriesMax: ra.uncommittedEntryCountToRejectNewAppends,
      appendBackoffMs: ra.appendRequestBackoffTimeoutInMillis,
    },
    valueBytesMax,
    dedupeMs,
    snapshotEveryEntries: ra.commitIndexAdvanceCountToSnapshot,
    sessionTimes: { ttlMs: c.sessionTimeToLiveSeconds * 1000, heartbeatMs: c.sessionHeartbeatIntervalSeconds * 1000 },
    blocking: {
      lockAcquireLimit: (name) => c.locks.find((l) => l.name === name)?.lockAcquireLimit ?? 0,
      semaphore: (name) => c.semaphores.find((s) => s.name === name) ?? { jdkCompatible: false, initialPermits: 0 },
    },
  };
}

/** One CP group's replica on this member, for the metrics call (spec/cp.md "Metrics"). */
export interface CpGroupFigures {
  readonly group: string;
  readonly role: 'leader' | 'follower' | 'candidate';
  readonly term: number;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  readonly logEntries: number;
  readonly logBytes: number;
  readonly snapshotIndex: number;
  readonly leaderChanges: number;
  readonly electionsStarted: number;
  readonly appendBatches: number;
  readonly appendEntries: number;
  readonly refusedWrites: number;
  readonly sessions: number;
  readonly waitingCalls: number;
}

/** Runs one attempt of a routed call on this member's replica; `answer` is called once (or never, if it is lost). */
export function runOnReplica(r: GroupReplica, payload: CallPayload, invocation: string, answer: (a: AttemptAnswer<unknown>) => void): void {
  const fromWrite = (o: WriteOutcome): void => answer(o.ok ? { ok: true, value: o.result, index: o.index } : { ok: false, failure: o.failure, leader: o.leader });
  switch (payload.kind) {
    case 'write':
      r.write(invocation, payload.command, fromWrite);
      return;
    case 'read':
      r.read(
        (s) => {
          const st = r.core.status();
          return runQuery(payload.query, s, { term: st.term, commit: st.commit, leader: st.leader, members: st.members });
        },
        (o) => answer(o.ok ? { ok: true, value: o.value, index: o.index } : { ok: false, failure: o.failure, leader: o.leader }),
      );
      return;
    case 'change':
      if ('lead' in payload.change) {
        const o = r.transferLeadership(payload.change.lead);
        answer(o.ok ? { ok: true, value: { members: [...r.core.status().members] }, index: 0 } : { ok: false, failure: o.failure, leader: o.leader });
        return;
      }
      r.changeMembers(payload.change, (o) => answer(o.ok ? { ok: true, value: { members: [...r.core.status().members] }, index: o.index } : { ok: false, failure: o.failure, leader: o.leader }));
      return;
  }
}

export function replicaFigures(group: string, replica: GroupReplica, leaderChanges: number): CpGroupFigures {
  const core = replica.core;
  const st = core.status();
  let logBytes = 0;
  for (let i = st.firstIndex; i <= st.lastIndex; i++) logBytes += core.entryAt(i)?.data.length ?? 0;
  const s = replica.structures;
  return {
    group,
    role: st.role === 'leader' ? 'leader' : st.role === 'follower' ? 'follower' : 'candidate',
    term: st.term,
    commitIndex: st.commit,
    appliedIndex: st.applied,
    logEntries: Math.max(0, st.lastIndex - st.firstIndex + 1),
    logBytes,
    snapshotIndex: st.snapshotIndex,
    leaderChanges,
    electionsStarted: core.counters.electionsStarted,
    appendBatches: core.counters.appendBatches,
    appendEntries: core.counters.appendEntries,
    refusedWrites: core.counters.refusedProposals,
    sessions: s.sessions.list().length,
    waitingCalls: s.counts().waiters,
  };
}

/** How long a write may block at the leader (a latch await, a lock or an acquire with a timeout). */
export function waitOf(p: CallPayload & { kind: 'write' }): number {
  const c = p.command;
  if (c.kind === 'latch' && c.op === 'await') return c.timeoutMs;
  if ((c.kind === 'lock' && c.op === 'lock') || (c.kind === 'semaphore' && c.op === 'acquire')) return c.timeoutMs < 0 ? 0x7fff_ffff : c.timeoutMs;
  return 0;
}

/**
 * A group leader's session duty (spec/cp.md "Sessions"): expire the sessions whose time passed
 * (`wallMs`, the leader's clock), else every `inactiveCheckMs` close the idle ones. One write at a
 * time. True when it wrote (the replica has a batch to process).
 */
export function sessionDuty(h: { readonly replica: GroupReplica; expiring: boolean; lastInactiveCheckMs: number }, wallMs: number, now: number, inactiveCheckMs: number): boolean {
  if (h.expiring) return false;
  const expired = h.replica.structures.sessions.expired(wallMs);
  if (expired.length > 0) {
    h.expiring = true;
    h.replica.write('', { kind: 'session', op: 'expire', sessions: expired }, () => (h.expiring = false));
    return true;
  }
  if (now - h.lastInactiveCheckMs < inactiveCheckMs) return false;
  h.lastInactiveCheckMs = now;
  h.expiring = true;
  h.replica.write('', { kind: 'session', op: 'closeInactive' }, () => (h.expiring = false));
  return true;
}
