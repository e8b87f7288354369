// The Raft core's vocabulary: log entries, the state a member must persist, the messages members of
// a group exchange, the work a ready batch asks of the shell, and the options with their limits.
// Nothing here does I/O. Members of a group are named by their CP member UUID (a string).

/** A log entry. `config` entries carry the group's member list, in effect as soon as appended. */
export interface Entry {
  readonly index: number;
  readonly term: number;
  readonly kind: 'data' | 'noop' | 'config';
  /** The state machine's command (empty for noop and config entries). */
  readonly data: Uint8Array;
  /** The member list a `config` entry sets; null for the others. */
  readonly members: readonly string[] | null;
}

/** What must be on disk before any message claiming it is sent: term, vote, and the commit index. */
export interface HardState {
  readonly term: number;
  readonly vote: string | null;
  readonly commit: number;
}

/** A snapshot: the state machine at `index` (whose entry had `term`) and the member list then. */
export interface Snapshot {
  readonly index: number;
  readonly term: number;
  readonly members: readonly string[];
  readonly data: Uint8Array;
}

interface Base {
  readonly from: string;
  readonly to: string;
  /** The sender's term (for a pre-vote: the term it would campaign in). */
  readonly term: number;
}

export type RaftMessage =
  | (Base & { readonly type: 'preVote'; readonly lastIndex: number; readonly lastTerm: number })
  | (Base & { readonly type: 'preVoteAnswer'; readonly granted: boolean })
  | (Base & { readonly type: 'vote'; readonly lastIndex: number; readonly lastTerm: number; readonly transfer: boolean })
  | (Base & { readonly type: 'voteAnswer'; readonly granted: boolean })
  | (Base & {
      readonly type: 'append';
      readonly prevIndex: number;
      readonly prevTerm: number;
      readonly entries: readonly Entry[];
      readonly commit: number;
      /** The leader's read round when it sent this: an answer proves its leadership at that round. */
      readonly round: number;
    })
  | (Base & {
      readonly type: 'appendAnswer';
      readonly success: boolean;
      /** Success: the last index the follower holds matching the leader. Refusal: the prevIndex refused. */
      readonly index: number;
      /** Refusal: the last index worth trying, and the follower's term there (0 if none), so the leader skips a whole term. */
      readonly hintIndex: number;
      readonly hintTerm: number;
      readonly round: number;
    })
  | (Base & {
      readonly type: 'snapshot';
      readonly index: number;
      readonly snapshotTerm: number;
      readonly members: readonly string[];
      readonly offset: number;
      readonly totalBytes: number;
      readonly chunk: Uint8Array;
    })
  | (Base & {
      readonly type: 'snapshotAnswer';
      readonly index: number;
      /** The byte the follower expects next; `totalBytes` once installed. */
      readonly nextOffset: number;
      /** Installed (or already covered): the follower's last index matching the leader. */
      readonly matchIndex: number;
    })
  | (Base & { readonly type: 'timeoutNow' });

export type RaftMessageType = RaftMessage['type'];

export type Role = 'follower' | 'preCandidate' | 'candidate' | 'leader';

/** A linearizable read the leader confirmed: answer it once the state machine applied `index`. */
export interface ReadState {
  readonly ctx: number;
  readonly index: number;
}

/**
 * The work one batch asks of the shell, in this order: persist `hardState`, `snapshot` and
 * `entries` (an entry replaces any persisted one at its index or after); send `messages`;
 * install `snapshot` into the state machine; apply `committed` in order; answer `reads` once
 * applied. Then call advance(). Nothing in `messages` may leave before the persistence is done.
 */
export interface Ready {
  readonly hardState: HardState | null;
  readonly snapshot: Snapshot | null;
  readonly entries: readonly Entry[];
  readonly messages: readonly RaftMessage[];
  readonly committed: readonly Entry[];
  readonly reads: readonly ReadState[];
  /** Set when role, term or leader changed since the last batch (a leader that lost its role fails its pending calls). */
  readonly status: { readonly role: Role; readonly term: number; readonly leader: string | null } | null;
}

/** Why a proposal or a read was refused. All of them are safe to retry (nothing was appended). */
export type RefusalCode = 'not-leader' | 'back-pressure' | 'transferring' | 'membership-change' | 'not-ready';

export interface Refusal {
  readonly ok: false;
  readonly code: RefusalCode;
  /** The leader this member knows of, if any (a hint for routing). */
  readonly leader: string | null;
}

export type ProposeResult = { readonly ok: true; readonly index: number; readonly term: number } | Refusal;

/** Options, in the units their names say. The defaults are spec/cp.md's. */
export interface RaftOptions {
  /** How often the shell calls tick(). */
  readonly tickMs: number;
  /** A candidate's wait for votes, and the period of a follower's leader check; randomised in [T, T + electionJitterMs). */
  readonly electionTimeoutMs: number;
  readonly electionJitterMs: number;
  /** An idle leader sends a heartbeat this often. */
  readonly heartbeatPeriodMs: number;
  /** A follower suspects a silent leader, and a leader without a majority steps down, after heartbeatPeriodMs × this. */
  readonly missedHeartbeatsMax: number;
  readonly appendEntriesMax: number;
  /** A bound on one append message's entry data (under the member protocol's frame limit). */
  readonly appendBytesMax: number;
  /** Appends in flight to one follower before waiting for answers. */
  readonly appendsInFlightMax: number;
  readonly uncommittedEntriesMax: number;
  /** Base of a follower's resend back-off (doubling up to 8 times this). */
  readonly appendBackoffMs: number;
  /** Entries kept before a snapshot's index, for followers a little behind. */
  readonly entriesKeptAfterSnapshot: number;
  readonly snapshotChunkBytes: number;
}

export const RAFT_DEFAULTS: RaftOptions = {
  tickMs: 100,
  electionTimeoutMs: 2000,
  electionJitterMs: 1000,
  heartbeatPeriodMs: 5000,
  missedHeartbeatsMax: 5,
  appendEntriesMax: 100,
  appendBytesMax: 4 * 1024 * 1024,
  appendsInFlightMax: 4,
  uncommittedEntriesMax: 100,
  appendBackoffMs: 100,
  entriesKeptAfterSnapshot: 1000,
  snapshotChunkBytes: 1024 * 1024,
};

/** Broken relations between options, as sentences (empty when the options are usable). */
export function raftOptionProblems(o: RaftOptions): string[] {
  const problems: string[] = [];
  const positive: (keyof RaftOptions)[] = ['tickMs', 'electionTimeoutMs', 'heartbeatPeriodMs', 'missedHeartbeatsMax', 'appendEntriesMax', 'appendBytesMax', 'appendsInFlightMax', 'uncommittedEntriesMax', 'appendBackoffMs', 'snapshotChunkBytes'];
  for (const k of positive) if (!Number.isSafeInteger(o[k]) || o[k] <= 0) problems.push(`${k} must be a positive integer, not ${o[k]}`);
  if (!Number.isSafeInteger(o.electionJitterMs) || o.electionJitterMs < 0) problems.push(`electionJitterMs must be an integer >= 0, not ${o.electionJitterMs}`);
  if (!Number.isSafeInteger(o.entriesKeptAfterSnapshot) || o.entriesKeptAfterSnapshot < 0) problems.push(`entriesKeptAfterSnapshot must be an integer >= 0, not ${o.entriesKeptAfterSnapshot}`);
  if (o.heartbeatPeriodMs >= o.electionTimeoutMs * o.missedHeartbeatsMax) problems.push(`the heartbeat period (${o.heartbeatPeriodMs} ms) must be shorter than the election timeout × the missed heartbeat count (${o.electionTimeoutMs * o.missedHeartbeatsMax} ms)`);
  if (o.tickMs > o.electionTimeoutMs) problems.push(`tickMs (${o.tickMs}) must not exceed the election timeout (${o.electionTimeoutMs} ms)`);
  return problems;
}

/** The smallest number of members that is a majority of `n`. */
export function quorumOf(n: number): number {
  return Math.floor(n / 2) + 1;
}
