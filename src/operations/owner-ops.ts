// The owner's side of a data call (cluster.md "Invocation"): a map or queue operation runs here when
// this member owns its partition, whether it came from a local REST or client call or from another
// member (`invoke`, answered `invokeResult`). The answer waits for the backups the structure's
// backup-count asks for and, with persistence, for the operation's records on disk. A partition
// that is being handed over holds its calls until the hand-over is decided; a member that does not
// own the partition (any more) answers "retry" and the caller asks the table again.
//
// Fast path: when the partition is owned here, not held, not receiving, and no backup must ack,
// runLocalNow returns the answer synchronously (no promise, no closure).
//
// Waiting polls (a queue poll with a timeout on an empty queue) wait here, on the owner; they answer
// "retry" when the partition leaves this member, and "nothing" when their time is up.
import { message, type Message, type MessageKind, type MessageOf, type BackupOpWire, type OpWire } from '../cluster/messages.js';
import type { MemberService } from '../cluster/service.js';
import type { Peer, Transport } from '../cluster/transport.js';
import { OP, type ReplicaStore } from '../data/replica-store.js';
import type { PollWaiter, QueueItem } from '../data/queue-service.js';
import { resultToWire, type LocalResult } from '../invocation/invoker.js';
import type { NodePersistence } from '../persistence/node-persistence.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import { GridError, isGridError } from '../util/errors.js';

/** The answer 'not the owner here (any more): ask again', shared (it carries nothing). */
const RETRY: LocalResult = Object.freeze({ kind: 'retry' });

/** Map writes a WAN publisher with a throwing queue-full behaviour refuses (clears never are). */
function isMapWrite(code: number): boolean {
  return code === OP.MAP_PUT || code === OP.MAP_PUT_IF_ABSENT || code === OP.MAP_REMOVE || code === OP.MAP_MERGE || code === OP.MAP_GET_AND_PUT || code === OP.MAP_GET_AND_REMOVE || code === OP.MAP_PUT_IF_ABSENT_GET || code === OP.MAP_REPLACE_GET || code === OP.MAP_REPLACE_IF_SAME || code === OP.MAP_REMOVE_IF_SAME || code === OP.MAP_PUT_EXPIRY;
}

/** What the owner side reads of the member: each a narrow view the composition root passes in. */
export interface OwnerOpsParts {
  readonly selfUuid: string;
  readonly store: ReplicaStore;
  readonly membership: { readonly joined: boolean };
  readonly partitions: {
    readonly table: { owner(partitionId: number): string | null };
    isHeld(partitionId: number): boolean;
    whenReleased(partitionId: number, run: () => void): void;
  };
  readonly replicator: {
    isReceiving(partitionId: number): boolean;
    hasTargets(partitionId: number): boolean;
    replicate(partitionId: number, version: number, op: BackupOpWire, kind: 'map' | 'queue', name: string, done: () => void): boolean;
  };
  /** WAN publishing: a full queue with a throwing behaviour refuses map writes. */
  readonly wan: { readonly publishing: boolean; checkWrite(mapName: string): void };
  readonly recovery: { readonly active: boolean };
  readonly persistence: NodePersistence | null;
  readonly transport: Transport;
  readonly clock: Clock;
  readonly timers: Timers;
  /** The answer while a whole-cluster recovery runs. */
  readonly recoveringError: () => GridError;
  /** The member is stopping: a poll no longer waits. */
  readonly stopped: () => boolean;
}

/** A waiting poll on the owner, for a local REST client or a remote caller. */
class OwnerPoll implements PollWaiter {
  done = false;
  timer: TimerHandle | null = null;
  constructor(
    readonly partitionId: number,
    readonly queue: string,
    /** Answers the caller; runs once (settle guards it). */
    readonly answer: (r: LocalResult) => void,
    private readonly settle: (poll: OwnerPoll, r: LocalResult) => void,
  ) {}
  deliver(item: QueueItem): boolean {
    if (this.done) return false;
    this.settle(this, { kind: 'ok', outcome: { kind: 'value', value: item.value, contentType: item.contentType } });
    return true;
  }
}

export class OwnerOps implements MemberService {
  readonly name = 'operations';
  readonly kinds: readonly MessageKind[] = ['invoke', 'pollCancel'];
  private readonly polls = new Map<number, Set<OwnerPoll>>();
  private readonly remotePolls = new Map<string, () => void>();

  constructor(private readonly x: OwnerOpsParts) {}

  handle(from: Peer, m: Message): void {
    if (m.kind === 'invoke') this.onInvoke(from, m);
    else if (m.kind === 'pollCancel') this.remotePolls.get(`${from.uuid}/${m.body.callId}`)?.();
  }

  /** True when a call for the partition can run here synchronously right now. */
  isFastLocal(partitionId: number): boolean {
    const x = this.x;
    return x.membership.joined && x.partitions.table.owner(partitionId) === x.selfUuid && !x.partitions.isHeld(partitionId) && !x.replicator.isReceiving(partitionId);
  }

  runLocal(partitionId: number, op: OpWire, cb: (r: LocalResult) => void, cancelHook: (cancel: () => void) => void): void {
    const r = this.runLocalNow(partitionId, op, () => cb, cancelHook);
    if (r !== null) cb(r);
  }

  /**
   * Runs an operation on this member as its partition's owner. When the answer is ready at once
   * (no backup to wait for, nothing to persist first) it is returned and `defer` is never called,
   * so the hot path of a local call makes no callback. Otherwise runLocalNow calls `defer()` once,
   * before it returns null, and answers later through the callback `defer` gave.
   */
  runLocalNow(partitionId: number, op: OpWire, defer: () => (r: LocalResult) => void, cancelHook: (cancel: () => void) => void): LocalResult | null {
    const x = this.x;
    if (x.recovery.active) return { kind: 'error', error: x.recoveringError() };
    if (!x.membership.joined || x.partitions.table.owner(partitionId) !== x.selfUuid || x.replicator.isReceiving(partitionId)) return RETRY;
    if (x.partitions.isHeld(partitionId)) {
      const cb = defer();
      x.partitions.whenReleased(partitionId, () => this.runLocal(partitionId, op, cb, cancelHook));
      return null;
    }
    let r;
    try {
      if (x.wan.publishing && isMapWrite(op.code)) x.wan.checkWrite(op.name);
      r = x.store.runOwnerOp(partitionId, op, x.clock.nowMs());
    } catch (e) {
      if (!isGridError(e)) throw e;
      return { kind: 'error', error: e };
    }
    if (op.code === OP.QUEUE_POLL && r.backup === null && op.timeoutMs > 0 && !x.stopped()) {
      this.waitForItem(partitionId, op, defer(), cancelHook);
      return null;
    }
    const ticket = x.persistence === null ? 0 : x.persistence.takeTicket();
    const outcome = r.outcome;
    if (r.backup === null || !x.replicator.hasTargets(partitionId)) {
      if (ticket === 0) return { kind: 'ok', outcome };
      this.afterTicket(ticket, defer())({ kind: 'ok', outcome });
      return null;
    }
    const cb = ticket === 0 ? defer() : this.afterTicket(ticket, defer());
    if (x.replicator.replicate(partitionId, x.store.version(partitionId), r.backup, r.kind, r.name, () => cb({ kind: 'ok', outcome }))) cb({ kind: 'ok', outcome });
    return null;
  }

  /** Partitions that changed hands: waiting polls of those this member no longer owns answer "retry". */
  onTableApplied(changed: readonly number[]): void {
    const x = this.x;
    for (const p of changed) {
      if (x.partitions.table.owner(p) === x.selfUuid) continue;
      const polls = this.polls.get(p);
      if (polls === undefined) continue;
      for (const poll of [...polls]) {
        x.store.queues.cancelWaiter(poll.queue, poll);
        this.settle(poll, { kind: 'retry' });
      }
    }
  }

  /** This member left its cluster: every waiting poll answers "retry" (the caller asks the new table). */
  retryAll(): void {
    for (const set of this.polls.values()) for (const poll of [...set]) this.settle(poll, { kind: 'retry' });
  }

  /** The member stops: every waiting poll answers "nothing". */
  stop(): void {
    for (const set of this.polls.values()) for (const p of set) this.settle(p, { kind: 'ok', outcome: { kind: 'value', value: null, contentType: null } });
  }

  private waitForItem(partitionId: number, op: OpWire, cb: (r: LocalResult) => void, cancelHook: (cancel: () => void) => void): void {
    const x = this.x;
    const poll = new OwnerPoll(partitionId, op.name, cb, (p, r) => this.settle(p, r));
    let item: QueueItem | null;
    try {
      item = x.store.pollOrWait(op.name, poll);
    } catch (e) {
      if (!isGridError(e)) throw e;
      cb({ kind: 'error', error: e });
      return;
    }
    if (item !== null) {
      const r = x.store.polled(partitionId, op.name, item, x.clock.nowMs());
      if (x.persistence !== null) cb = this.afterPersisted(cb);
      const outcome = r.outcome;
      if (x.replicator.replicate(partitionId, x.store.version(partitionId), r.backup as NonNullable<typeof r.backup>, 'queue', op.name, () => cb({ kind: 'ok', outcome }))) cb({ kind: 'ok', outcome });
      return;
    }
    let set = this.polls.get(partitionId);
    if (set === undefined) this.polls.set(partitionId, (set = new Set()));
    set.add(poll);
    const expire = (): void => {
      if (poll.done) return;
      x.store.queues.cancelWaiter(op.name, poll);
      this.settle(poll, { kind: 'ok', outcome: { kind: 'value', value: null, contentType: null } });
    };
    poll.timer = x.timers.setTimeout(expire, op.timeoutMs);
    cancelHook(expire);
  }

  private settle(poll: OwnerPoll, r: LocalResult): void {
    if (poll.done) return;
    poll.done = true;
    if (poll.timer !== null) this.x.timers.clearTimeout(poll.timer);
    this.polls.get(poll.partitionId)?.delete(poll);
    poll.answer(r);
  }

  private onInvoke(from: Peer, m: MessageOf<'invoke'>): void {
    const { partitionId, op } = m.body;
    const reply = (r: LocalResult): void => {
      this.remotePolls.delete(`${from.uuid}/${m.callId}`);
      this.x.transport.send(from.address, message('invokeResult', resultToWire(r), m.callId));
    };
    if (partitionId < 0 || partitionId >= this.x.store.partitionCount) {
      reply({ kind: 'error', error: new GridError('ERR_PROTOCOL_MALFORMED', `partition ${partitionId} out of range`) });
      return;
    }
    this.runLocal(partitionId, op, reply, (cancel) => this.remotePolls.set(`${from.uuid}/${m.callId}`, cancel));
  }

  /** Wraps an owner's answer so it goes out only once the operation's records are persisted. */
  private afterPersisted(cb: (r: LocalResult) => void): (r: LocalResult) => void {
    const ticket = (this.x.persistence as NodePersistence).takeTicket();
    return ticket === 0 ? cb : this.afterTicket(ticket, cb);
  }

  /** `cb`, called once the records logged up to `ticket` are on disk (a write error answers as an error). */
  private afterTicket(ticket: number, cb: (r: LocalResult) => void): (r: LocalResult) => void {
    const p = this.x.persistence as NodePersistence;
    return (r) =>
      p.whenDone(ticket, (error) => {
        if (error === null || r.kind !== 'ok') return cb(r);
        cb({ kind: 'error', error: isGridError(error) ? error : new GridError('ERR_PERSISTENCE_IO', error.message) });
      });
  }
}
