// The member that receives a CP call (REST or client, CP member or not) routes it to the group's
// leader and absorbs leader changes itself: NOT_LEADER and the like never reach the caller
// (spec/cp.md "Raft"). No I/O: the host sends requests and runs timers.
//
// - Where: the leader this member last heard of for the group (from its own replica, or from an
//   answer's hint), else a member of the group in turn.
// - Refused (nothing appended): try the hinted leader at once, or after a back-off when there is
//   no leader or the group pushes back.
// - Lost (its entry was overwritten): try again. Indeterminate (the leader went away after
//   appending it): try again with the same invocation UUID, which the state machine applies at
//   most once; with fail-on-indeterminate-operation-state, give the caller the indeterminate error.
// - No answer within the attempt timeout (the target crashed or is cut off): try another member,
//   with the same UUID. No outcome within the call timeout: the caller gets 'timeout' (REST 503
//   with Retry-After, client error 90): never a stale value.
import type { CallFailure } from './group-replica.js';

export type RouteFailure = 'timeout' | 'indeterminate' | 'no-group';

export interface RouteOutcome<T> {
  readonly ok: boolean;
  readonly value?: T;
  readonly index?: number;
  readonly failure?: RouteFailure;
}

/** One attempt's answer from the member that tried it. */
export type AttemptAnswer<T> = { readonly ok: true; readonly value: T; readonly index: number } | { readonly ok: false; readonly failure: CallFailure; readonly leader: string | null };

export interface RouterHost<C, T> {
  /** The group's members (addresses), or null when the group does not exist. */
  groupMembers(group: string): readonly string[] | null;
  /** The leader this member's own replica of the group knows (an address), if it holds one. */
  localLeader(group: string): string | null;
  /** Sends one attempt to `address`; `answer` is called at most once (never, if the attempt is lost). */
  attempt(address: string, group: string, call: C, answer: (a: AttemptAnswer<T>) => void): void;
  schedule(fn: () => void, ms: number): { cancel(): void };
  monotonicMs(): number;
  random(): number;
}

export interface RouterOptions {
  readonly callTimeoutMs: number;
  readonly attemptTimeoutMs: number;
  readonly backoffMs: number;
  readonly failOnIndeterminate: boolean;
}

export interface RouterCounters {
  calls: number;
  attempts: number;
  retries: number;
  timeouts: number;
  indeterminate: number;
}

/**
 * A call that waits at the leader (a lock, an acquire, an await) is attempted again, with its
 * invocation, at least this often: the retry re-attaches to the wait in the state machine, and an
 * answer lost on the way (a partition, a crashed member) is found within this bound.
 */
export const WAIT_REATTACH_MS = 30_000;

export class CpRouter<C, T> {
  readonly counters: RouterCounters = { calls: 0, attempts: 0, retries: 0, timeouts: 0, indeterminate: 0 };
  private readonly leaders = new Map<string, string>();

  constructor(
    private readonly opts: RouterOptions,
    private readonly host: RouterHost<C, T>,
  ) {}

  /**
   * Routes `call` to `group`'s leader; `done` is called once. `idempotent`: safe to retry after an
   * indeterminate outcome. `waitMs`: how long the call may block at the leader (a lock, an acquire,
   * an await; Infinity for ever): its deadline gets that much longer, its attempts up to
   * WAIT_REATTACH_MS longer. `timeoutMs`: this call's own time limit.
   */
  route(group: string, call: C, idempotent: boolean, done: (o: RouteOutcome<T>) => void, o: { readonly waitMs?: number; readonly timeoutMs?: number } = {}): void {
    this.counters.calls++;
    if (this.host.groupMembers(group) === null) return done({ ok: false, failure: 'no-group' });
    const waitMs = o.waitMs ?? 0;
    const deadline = this.host.monotonicMs() + (o.timeoutMs ?? this.opts.callTimeoutMs) + waitMs;
    let turn = Math.floor(this.host.random() * 1000);
    const go = (): void => {
      if (this.host.monotonicMs() >= deadline) {
        this.counters.timeouts++;
        return done({ ok: false, failure: 'timeout' });
      }
      const members = this.host.groupMembers(group);
      if (members === null || members.length === 0) return done({ ok: false, failure: 'no-group' });
      const target = this.host.localLeader(group) ?? this.leaders.get(group) ?? (members[turn++ % members.length] as string);
      this.counters.attempts++;
      let settled = false;
      const timer = this.host.schedule(() => {
        if (settled) return;
        settled = true;
        // No answer: the target is gone or cut off. Forget it as leader and try another member.
        if (this.leaders.get(group) === target) this.leaders.delete(group);
        retry(0);
      }, Math.min(this.opts.attemptTimeoutMs + Math.min(waitMs, WAIT_REATTACH_MS), Math.max(1, deadline - this.host.monotonicMs())));
      this.host.attempt(target, group, call, (a) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        if (a.ok) {
          this.leaders.set(group, target);
          return done({ ok: true, value: a.value, index: a.index });
        }
        if (a.leader !== null && a.leader !== target) this.leaders.set(group, a.leader);
        else this.leaders.delete(group);
        if (a.failure === 'indeterminate') {
          this.counters.indeterminate++;
          if (!idempotent && this.opts.failOnIndeterminate) return done({ ok: false, failure: 'indeterminate' });
        }
        const hinted = a.failure === 'not-leader' && a.leader !== null && a.leader !== target;
        retry(hinted ? 0 : this.opts.backoffMs);
      });
    };
    const retry = (ms: number): void => {
      this.counters.retries++;
      // Through a timer even at 0 ms: answers may come synchronously (a local replica), and a
      // chain of hints must not grow the stack.
      this.host.schedule(go, ms);
    };
    go();
  }

  /** A leader learned elsewhere (a membership event, an answer to another call). */
  noteLeader(group: string, address: string | null): void {
    if (address === null) this.leaders.delete(group);
    else this.leaders.set(group, address);
  }

  /** A member left the cluster: it leads nothing any more. */
  memberGone(address: string): void {
    for (const [g, a] of [...this.leaders]) if (a === address) this.leaders.delete(g);
  }
}
