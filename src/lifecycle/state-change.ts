// The cluster state of this member and its two-phase change (cluster.md "Cluster states"): the
// member a change is asked of locks every member of its list (each checks that its member list and
// partition table are the ones the change was decided on, and that nothing migrates), then commits
// on all of them, or rolls every lock back and answers 409. A lock lasts at most its lease: a
// member whose initiator vanished is not stuck IN_TRANSITION.
//
// Members that are not the master take the state their master's views carry (viewFromMaster),
// unless a change holds their lock.
import { message, type Message, type MessageKind, type MessageOf } from '../cluster/messages.js';
import type { MemberContext, MemberService } from '../cluster/service.js';
import type { Peer } from '../cluster/transport.js';
import { STATE_BY_CODE, STATE_CODES, type ClusterState, type RequestableClusterState } from '../cluster/cluster-state.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';

/** A change waits this long for every member's answer to its lock. */
const LOCK_ANSWER_WAIT_MS = 10_000;

/** What the state change needs of the member (the composition root passes it in). */
export interface StateChangeHost extends MemberContext {
  membersVersion(): number;
  tableVersion(): number;
  activeMigrations(): number;
  /** After every change of the state (a committed change, the master's view, a recovery's end). */
  onChanged(state: RequestableClusterState): void;
}

export class StateChange implements MemberService {
  readonly name = 'cluster-state';
  readonly kinds: readonly MessageKind[] = ['stateLock', 'stateLockAnswer', 'stateCommit', 'stateRollback'];
  private current: RequestableClusterState = 'ACTIVE';
  private lock: { txId: string; expiresMs: number } | null = null;
  /** Who asked for the change this member is committing (for its log line), or null. */
  private requester: string | null = null;
  private readonly tx = new Map<string, { waiting: Set<string>; failures: string[]; done: (failures: string[]) => void; timer: TimerHandle }>();
  private nextTx = 1;
  /** The state before the last change to PASSIVE (resumed after a clusterShutdown's restart). */
  private beforePassive: RequestableClusterState = 'ACTIVE';

  constructor(
    private readonly host: StateChangeHost,
    private readonly leaseMs: number,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {}

  /** The state this member is in (IN_TRANSITION is not one: see `reported`). */
  get state(): RequestableClusterState {
    return this.current;
  }

  /** The state as the REST calls report it: IN_TRANSITION while a change holds the lock. */
  get reported(): ClusterState {
    return this.isLocked() ? 'IN_TRANSITION' : this.current;
  }

  /** The state before the last change to PASSIVE. */
  get stateBeforePassive(): RequestableClusterState {
    return this.beforePassive;
  }

  isLocked(): boolean {
    if (this.lock !== null && this.clock.monotonicMs() > this.lock.expiresMs) this.lock = null;
    return this.lock !== null;
  }

  /** Sets the state without a change's log line or reactions (a recovery holds the cluster PASSIVE). */
  restore(s: RequestableClusterState): void {
    this.current = s;
  }

  /** Takes a state (logged with who made the change); reacting members see onChanged. */
  set(s: RequestableClusterState, by = 'a cluster-wide change'): void {
    if (s === this.current) return;
    this.log.info(`cluster state changed from ${this.current} to ${s} (${by})`);
    if (s === 'PASSIVE') this.beforePassive = this.current;
    this.current = s;
    this.host.onChanged(s);
  }

  /** A member (not the master) adopted its master's view: its state applies unless a change holds the lock. */
  viewFromMaster(view: MessageOf<'membersView'>['body']): void {
    const s = STATE_BY_CODE[view.clusterState];
    if (s !== undefined && s !== this.current && this.lock === null) this.set(s);
  }

  /** Changes the cluster state on every member: lock all, then commit all (or roll back → 409). `by` names who asked, for the log. */
  change(target: RequestableClusterState, by: string | null = null): Promise<'changed' | 'unchanged'> {
    if (target === this.current && !this.isLocked()) return Promise.resolve('unchanged');
    this.requester = by;
    if (!this.host.joined()) return Promise.reject(new GridError('ERR_CLUSTER_STATE_CONFLICT', 'this member has not joined a cluster yet'));
    const members = this.host.memberUuids();
    const self = this.host.selfUuid;
    const txId = `${self}/${this.nextTx++}`;
    return new Promise((resolve, reject) => {
      const finish = (failures: string[]): void => {
        const tx = this.tx.get(txId);
        if (tx === undefined) return;
        this.timers.clearTimeout(tx.timer);
        this.tx.delete(txId);
        if (failures.length === 0) {
          for (const u of members) if (u !== self) this.host.send(u, message('stateCommit', { txId, state: STATE_CODES[target] }));
          // This member commits at once, so the caller sees the new state when the promise resolves.
          this.handle({ uuid: self, address: '' }, message('stateCommit', { txId, state: STATE_CODES[target] }));
          resolve('changed');
        } else {
          for (const u of members) this.host.send(u, message('stateRollback', { txId }));
          reject(new GridError('ERR_CLUSTER_STATE_CONFLICT', `cluster state not changed: ${failures.join('; ')}`));
        }
      };
      const timer = this.timers.setTimeout(() => {
        const tx = this.tx.get(txId);
        if (tx !== undefined) finish([...tx.failures, ...[...tx.waiting].map((u) => `${u} did not answer the lock`)]);
      }, LOCK_ANSWER_WAIT_MS);
      this.tx.set(txId, { waiting: new Set(members), failures: [], done: finish, timer });
      const lock = message('stateLock', { txId, state: STATE_CODES[target], membersVersion: this.host.membersVersion(), tableVersion: this.host.tableVersion(), leaseMs: this.leaseMs });
      for (const u of members) this.host.send(u, lock);
    });
  }

  handle(from: Peer, m: Message): void {
    switch (m.kind) {
      case 'stateLock':
        this.onLock(from, m);
        return;
      case 'stateLockAnswer': {
        const tx = this.tx.get(m.body.txId);
        if (tx === undefined || !tx.waiting.delete(from.uuid)) return;
        if (!m.body.ok) tx.failures.push(`${from.address}: ${m.body.message}`);
        if (tx.waiting.size === 0) tx.done(tx.failures);
        return;
      }
      case 'stateCommit':
        if (this.lock?.txId === m.body.txId || this.lock === null) {
          this.lock = null;
          const self = from.uuid === this.host.selfUuid;
          this.set(STATE_BY_CODE[m.body.state] ?? this.current, self ? `requested on this member${this.requester === null ? '' : ` by ${this.requester}`}` : `a change made through ${from.address}`);
        }
        return;
      case 'stateRollback':
        if (this.lock?.txId === m.body.txId) this.lock = null;
        return;
      default:
        return;
    }
  }

  private onLock(from: Peer, m: MessageOf<'stateLock'>): void {
    const b = m.body;
    const answer = (ok: boolean, text: string): void => this.host.send(from.uuid, message('stateLockAnswer', { txId: b.txId, ok, message: text }));
    if (this.isLocked() && this.lock?.txId !== b.txId) return answer(false, 'another cluster-state change holds the lock');
    if (b.membersVersion !== this.host.membersVersion()) return answer(false, `member list version ${this.host.membersVersion()} differs from ${b.membersVersion}`);
    if (b.tableVersion !== this.host.tableVersion()) return answer(false, `partition table version ${this.host.tableVersion()} differs from ${b.tableVersion}`);
    if (this.host.activeMigrations() > 0) return answer(false, 'migrations are running');
    this.lock = { txId: b.txId, expiresMs: this.clock.monotonicMs() + b.leaseMs };
    answer(true, '');
  }
}
