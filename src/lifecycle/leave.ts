// The graceful leave (cluster.md "Graceful shutdown"). The leaving member asks its master, every
// second until the deadline, to move every replica it holds to others; the master's migration
// service drains it and says so (`shutdownAllowed`). The drained member stays in the member list,
// forwarding the calls its clients still send it, until it says `departing` (its clients hold a
// table without it by then), or at the latest DEPART_WAIT_MS after it was drained: removed at once,
// its clients would close their connections with calls on them, and a call the Node client was
// waiting to retry would still be sent after the caller's later writes.
import { message, type Message, type MessageKind } from '../cluster/messages.js';
import type { MemberContext, MemberService } from '../cluster/service.js';
import type { Peer } from '../cluster/transport.js';
import type { RequestableClusterState } from '../cluster/cluster-state.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

/**
 * The longest a master keeps a drained leaving member in the list waiting for its `departing`. The
 * member waits for its clients at most half of this (member-runtime), so the timer only removes a
 * member whose message was lost or that hangs.
 */
export const DEPART_WAIT_MS = 10_000;
/** A leaving member asks its master again this often. */
const ASK_AGAIN_MS = 1000;

/** What the leave needs of the member (the composition root passes it in). */
export interface LeaveHost extends MemberContext {
  readonly liteMember: boolean;
  /** Data members of the list other than this one. */
  otherDataMembers(): number;
  state(): RequestableClusterState;
  /** A clusterShutdown is under way (members are expected to go; nothing is handed off). */
  clusterStopping(): boolean;
  /** Master: drain a member (the migration service moves its replicas off, then calls onMemberDrained). */
  requestLeave(uuid: string): void;
  /** Master: remove a departed member from the list. */
  memberDeparted(uuid: string): void;
  /** Master leaving: hand mastership over and leave the list. */
  handOverAndLeave(): void;
}

export class Leave implements MemberService {
  readonly name = 'leave';
  readonly kinds: readonly MessageKind[] = ['shutdownRequest', 'shutdownAllowed', 'departing'];
  private leave: { resolve: () => void; timer: TimerHandle | null; deadlineMs: number } | null = null;
  /** This leaving member's replicas are all handed off: depart() takes it out of the member list. */
  private handedOff = false;
  /** Master: drained members it waits to hear `departing` from, each removed at the latest by its timer. */
  private readonly departing = new Map<string, TimerHandle>();

  constructor(
    private readonly host: LeaveHost,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {}

  handle(from: Peer, m: Message): void {
    const h = this.host;
    switch (m.kind) {
      case 'shutdownRequest':
        if (h.isMaster() && h.isMember(m.body.uuid)) h.requestLeave(m.body.uuid);
        return;
      case 'shutdownAllowed':
        if (m.body.uuid === h.selfUuid && this.leave !== null) {
          this.log.info('every replica handed off');
          this.handedOff = true;
          this.finish();
        }
        return;
      case 'departing':
        if (m.body.uuid === from.uuid && h.isMaster() && h.isMember(from.uuid)) this.removeDeparted(from.uuid);
        return;
      default:
        return;
    }
  }

  /** Moves every replica this member holds to others (through the master), bounded by maxWaitMs. */
  leaveGracefully(maxWaitMs: number): Promise<void> {
    const h = this.host;
    if (!h.joined() || h.otherDataMembers() === 0 || h.liteMember || h.clusterStopping()) return Promise.resolve();
    const forbidden = this.handOffForbidden();
    if (forbidden !== null) {
      this.log.warning(`${forbidden}: leaving without handing replicas off`);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.leave = { resolve, timer: null, deadlineMs: this.clock.monotonicMs() + maxWaitMs };
      const ask = (): void => {
        const l = this.leave;
        if (l === null) return;
        if (this.clock.monotonicMs() >= l.deadlineMs) {
          this.log.warning(`graceful shutdown: replicas not handed off within ${maxWaitMs} ms; leaving anyway`);
          this.finish();
          return;
        }
        const master = h.masterUuid();
        if (master !== null) {
          if (master === h.selfUuid) h.requestLeave(h.selfUuid);
          else h.send(master, message('shutdownRequest', { uuid: h.selfUuid }));
        }
        l.timer = this.timers.setTimeout(ask, ASK_AGAIN_MS);
      };
      ask();
    });
  }

  /**
   * Why a leaving member cannot hand its replicas off now (the cluster state forbids migrations), or
   * null. Its partitions then go to their backups (NO_MIGRATION) or stay assigned to it and are
   * unavailable until the state allows promotions again (FROZEN, PASSIVE), as the reference does.
   */
  handOffForbidden(): string | null {
    const h = this.host;
    if (!h.joined() || h.liteMember) return null;
    const state = h.state();
    if (state === 'ACTIVE') return null;
    const after = state === 'NO_MIGRATION' ? 'its partitions go to their backups, which get no new backups until the cluster is ACTIVE' : 'its partitions stay assigned to it and are unavailable until the cluster is ACTIVE or NO_MIGRATION';
    return `the cluster state ${state} forbids migrations; ${after}`;
  }

  /**
   * The migration service drained a member. This one: the leave is done. Another (this member is its
   * master): it is told, and stays listed until it departs or DEPART_WAIT_MS is over.
   */
  onMemberDrained(uuid: string): void {
    if (uuid === this.host.selfUuid) {
      if (this.leave === null) return;
      this.log.info('every replica handed off');
      this.handedOff = true;
      this.finish();
      return;
    }
    this.host.send(uuid, message('shutdownAllowed', { uuid }));
    if (this.departing.has(uuid)) return;
    this.departing.set(
      uuid,
      this.timers.setTimeout(() => {
        this.departing.delete(uuid);
        if (!this.host.isMaster() || !this.host.isMember(uuid)) return;
        this.log.info(`member ${uuid} handed its replicas off and did not depart within ${DEPART_WAIT_MS} ms: removing it`);
        this.removeDeparted(uuid);
      }, DEPART_WAIT_MS),
    );
  }

  /**
   * The leaving member, its replicas handed off and its clients gone elsewhere, leaves the member
   * list: the master removes it (`departing`), or, as the master, it hands mastership over. Nothing
   * when the hand-off did not finish (the member stops, and the others notice it is gone).
   */
  depart(): void {
    if (!this.handedOff) return;
    this.handedOff = false;
    const h = this.host;
    if (!h.joined()) return;
    if (h.isMaster()) {
      this.log.info('handing mastership over');
      h.handOverAndLeave();
      return;
    }
    const master = h.masterUuid();
    if (master !== null) h.send(master, message('departing', { uuid: h.selfUuid }));
  }

  /** Whether this leaving member handed every replica off (depart() is next). */
  get replicasHandedOff(): boolean {
    return this.handedOff;
  }

  stop(): void {
    for (const timer of this.departing.values()) this.timers.clearTimeout(timer);
    this.departing.clear();
  }

  private finish(): void {
    const l = this.leave;
    if (l === null) return;
    this.leave = null;
    if (l.timer !== null) this.timers.clearTimeout(l.timer);
    l.resolve();
  }

  private removeDeparted(uuid: string): void {
    const timer = this.departing.get(uuid);
    if (timer !== undefined) this.timers.clearTimeout(timer);
    this.departing.delete(uuid);
    this.host.memberDeparted(uuid);
  }
}
