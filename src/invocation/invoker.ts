// Invocations: a data call for a partition runs on the partition's owner. The caller looks the owner
// up in its table; a local owner runs the call at once, a remote one gets it over the member
// protocol and answers with invokeResult. Calls are retried (fresh table lookup each time) while the
// owner answers "retry" (it is not the owner any more, or the partition is being received) or the
// member is not joined yet, until the call's deadline (grid.operation.call.timeout.millis); then the
// caller gets 503 ERR_CLUSTER_UNAVAILABLE with Retry-After.
//
// Idempotent calls (map get/put/remove/clear, queue size) are also re-sent when their target leaves
// or stays silent; a queue offer or poll is not (it could run twice): when its target leaves before
// answering, or no answer comes before the deadline, the caller gets 503 ERR_CLUSTER_INDETERMINATE.
import type { Message, MessageKind, MessageOf, OpWire } from '../cluster/messages.js';
import type { MemberService } from '../cluster/service.js';
import { message } from '../cluster/messages.js';
import type { Peer, Transport } from '../cluster/transport.js';
import { OP, type OpOutcome } from '../data/replica-store.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import { ERROR_CODES, GridError, type ErrorCode } from '../util/errors.js';

export const STATUS = { OK: 0, RETRY: 1, ERROR: 2 } as const;

export type LocalResult = { readonly kind: 'ok'; readonly outcome: OpOutcome } | { readonly kind: 'retry' } | { readonly kind: 'error'; readonly error: GridError };

export interface InvokerHost {
  readonly selfUuid: string;
  /** The owner of a partition per the local table, or null (unassigned / not joined). */
  ownerOf(partitionId: number): string | null;
  addressOf(uuid: string): string | null;
  /** An error that ends a call for this partition at once (its owner is unreachable for a known reason), or null. */
  refusal?(partitionId: number, owner: string): GridError | null;
  /** Runs the call here as the owner. */
  runLocal(partitionId: number, op: OpWire, callback: (r: LocalResult) => void, cancelHook: (cancel: () => void) => void): void;
}

export interface InvokerOptions {
  /** An idempotent remote call with no answer this long is sent again. */
  readonly attemptTimeoutMs: number;
  readonly retryDelayMinMs: number;
  readonly retryDelayMaxMs: number;
}

interface Call {
  readonly partitionId: number;
  op: OpWire;
  readonly idempotent: boolean;
  readonly deadlineMs: number;
  /** Absolute end of a waiting poll (monotonic), or 0. */
  readonly pollEndMs: number;
  readonly callback: (r: LocalResult) => void;
  target: string | null;
  callId: number;
  timer: TimerHandle | null;
  retries: number;
  cancelLocal: (() => void) | null;
  done: boolean;
}

export class Invoker implements MemberService {
  readonly name = 'invocation';
  /** The message kinds the caller side owns (cluster/service.ts); the owner side's are operations/owner-ops.ts's. */
  readonly kinds: readonly MessageKind[] = ['invokeResult'];

  private nextCallId = 1;
  private readonly remote = new Map<number, Call>();
  /** Calls waiting out a retry delay (not in flight): a member removal wakes those aimed at it. */
  private readonly backingOff = new Set<Call>();
  readonly counters = { forwarded: 0, retries: 0, timeouts: 0, indeterminate: 0 };

  constructor(
    private readonly opts: InvokerOptions,
    private readonly host: InvokerHost,
    private readonly transport: Transport,
    private readonly clock: Clock,
    private readonly timers: Timers,
  ) {}

  get pendingCount(): number {
    return this.remote.size;
  }

  /**
   * Runs `op` on the partition's owner. Returns a handle whose cancel() stops a waiting poll (the
   * client went away): the call then ends with a null value.
   */
  invoke(partitionId: number, op: OpWire, timeoutMs: number, callback: (r: LocalResult) => void): { cancel(): void } {
    const now = this.clock.monotonicMs();
    const waits = op.code === OP.QUEUE_POLL && op.timeoutMs > 0;
    const call: Call = {
      partitionId,
      op,
      idempotent: op.code !== OP.QUEUE_OFFER && op.code !== OP.QUEUE_POLL,
      deadlineMs: now + timeoutMs + (waits ? op.timeoutMs : 0),
      pollEndMs: waits ? now + op.timeoutMs : 0,
      callback,
      target: null,
      callId: 0,
      timer: null,
      retries: 0,
      cancelLocal: null,
      done: false,
    };
    this.attempt(call);
    return { cancel: () => this.cancel(call) };
  }

  private attempt(call: Call): void {
    if (call.done) return;
    const now = this.clock.monotonicMs();
    if (now >= call.deadlineMs) {
      this.counters.timeouts++;
      this.finish(call, { kind: 'error', error: new GridError('ERR_CLUSTER_UNAVAILABLE', 'the partition owner could not be reached in time', { retryAfterSeconds: 1, failureKind: 'timeout' }) });
      return;
    }
    // The remaining wait goes on the wire as a u32 of whole ms; the monotonic clock is fractional.
    if (call.pollEndMs > 0) call.op = { ...call.op, timeoutMs: Math.max(0, Math.ceil(call.pollEndMs - now)) };
    const owner = this.host.ownerOf(call.partitionId);
    if (owner === null) {
      this.retryLater(call);
      return;
    }
    call.target = owner;
    if (owner === this.host.selfUuid) {
      this.host.runLocal(
        call.partitionId,
        call.op,
        (r) => {
          call.cancelLocal = null;
          if (r.kind === 'retry') this.retryLater(call);
          else this.finish(call, r);
        },
        (cancel) => {
          call.cancelLocal = cancel;
        },
      );
      return;
    }
    const address = this.host.addressOf(owner);
    if (address === null) {
      const refusal = this.host.refusal?.(call.partitionId, owner) ?? null;
      if (refusal !== null) this.finish(call, { kind: 'error', error: refusal });
      else this.retryLater(call);
      return;
    }
    call.callId = this.nextCallId++;
    this.remote.set(call.callId, call);
    this.counters.forwarded++;
    this.transport.send(address, message('invoke', { partitionId: call.partitionId, op: call.op }, call.callId));
    if (call.idempotent) {
      call.timer = this.timers.setTimeout(() => {
        call.timer = null;
        this.remote.delete(call.callId);
        this.retryLater(call);
      }, this.opts.attemptTimeoutMs);
    } else {
      // Not safe to send again: when no answer comes by the deadline (it was lost, or the owner
      // hangs), the caller learns the outcome is unknown rather than waiting for ever.
      call.timer = this.timers.setTimeout(() => {
        call.timer = null;
        this.counters.indeterminate++;
        this.finish(call, { kind: 'error', error: new GridError('ERR_CLUSTER_INDETERMINATE', 'no answer from the member running this queue call in time; it may or may not have taken effect', { retryAfterSeconds: 1, failureKind: 'timeout' }) });
      }, Math.max(1, call.deadlineMs - now));
    }
  }

  private retryLater(call: Call): void {
    if (call.done) return;
    this.counters.retries++;
    call.retries++;
    const delay = Math.min(this.opts.retryDelayMaxMs, this.opts.retryDelayMinMs * 2 ** Math.min(call.retries - 1, 10));
    if (call.timer !== null) this.timers.clearTimeout(call.timer);
    this.backingOff.add(call);
    call.timer = this.timers.setTimeout(() => {
      call.timer = null;
      this.backingOff.delete(call);
      this.attempt(call);
    }, delay);
  }

  /** Runs a call again soon with its backoff reset: its target left, so the next owner is a new one. */
  private retrySoon(call: Call): void {
    call.retries = 0;
    this.retryLater(call);
  }

  private finish(call: Call, r: LocalResult): void {
    if (call.done) return;
    call.done = true;
    this.backingOff.delete(call);
    if (call.timer !== null) this.timers.clearTimeout(call.timer);
    if (call.callId !== 0) this.remote.delete(call.callId);
    call.callback(r);
  }

  private cancel(call: Call): void {
    if (call.done) return;
    if (call.cancelLocal !== null) {
      call.cancelLocal();
      return;
    }
    if (call.callId !== 0 && this.remote.has(call.callId) && call.target !== null) {
      const address = this.host.addressOf(call.target);
      if (address !== null) this.transport.send(address, message('pollCancel', { callId: call.callId }));
      return;
    }
    this.finish(call, { kind: 'ok', outcome: { kind: 'value', value: null, contentType: null } });
  }

  handle(from: Peer, m: Message): void {
    if (m.kind === 'invokeResult') this.onResult(from, m);
  }

  onResult(from: Peer, m: MessageOf<'invokeResult'>): void {
    const call = this.remote.get(m.callId);
    if (call === undefined || call.target !== from.uuid) return;
    this.remote.delete(m.callId);
    if (call.timer !== null) this.timers.clearTimeout(call.timer);
    call.timer = null;
    const b = m.body;
    if (b.status === STATUS.RETRY) {
      this.retryLater(call);
      return;
    }
    if (b.status === STATUS.ERROR) {
      const code = (b.errorCode in ERROR_CODES ? b.errorCode : 'ERR_INTERNAL') as ErrorCode;
      this.finish(call, { kind: 'error', error: new GridError(code, b.message, b.retryAfterSeconds > 0 ? { retryAfterSeconds: b.retryAfterSeconds } : {}) });
      return;
    }
    this.finish(call, { kind: 'ok', outcome: outcomeFromWire(call.op.code, b) });
  }

  /**
   * A member left: calls in flight to it are retried (idempotent) or end indeterminate, and calls
   * waiting to retry it go again; both at once (the shortest retry delay), without waiting for their
   * attempt timeouts or a grown backoff: the table that removed it names the promoted owner.
   */
  memberRemoved(uuid: string): void {
    this.dropRemote((call) => call.target === uuid);
    for (const call of [...this.backingOff]) {
      if (call.target !== uuid) continue;
      this.backingOff.delete(call);
      if (call.timer !== null) this.timers.clearTimeout(call.timer);
      call.timer = null;
      this.retrySoon(call);
    }
  }

  /**
   * This member left its cluster (removed, or merging into another): every call in flight to any
   * member is retried once it has joined again (idempotent) or ends indeterminate. An answer that
   * comes later from a member of the old cluster is ignored: that member's write may be handed back
   * or dropped by a merge, so only the new cluster's owner may acknowledge the call.
   */
  leftCluster(): void {
    this.dropRemote(() => true);
  }

  private dropRemote(which: (call: Call) => boolean): void {
    for (const [callId, call] of [...this.remote]) {
      if (!which(call)) continue;
      this.remote.delete(callId);
      if (call.timer !== null) this.timers.clearTimeout(call.timer);
      call.timer = null;
      if (call.idempotent) this.retrySoon(call);
      else {
        this.counters.indeterminate++;
        this.finish(call, { kind: 'error', error: new GridError('ERR_CLUSTER_INDETERMINATE', 'the member running this queue call left before answering; it may or may not have taken effect', { retryAfterSeconds: 1 }) });
      }
    }
  }

  /**
   * Stop: every pending call ends. One that may be sent again safely (idempotent, or not sent yet:
   * waiting to be retried) ends unavailable with failure kind 'stopping' (a client retries it on
   * another member); a queue call in flight ends indeterminate, since its owner may have run it.
   */
  failAll(): void {
    for (const call of [...this.remote.values()]) {
      if (call.idempotent) continue;
      this.counters.indeterminate++;
      this.finish(call, { kind: 'error', error: new GridError('ERR_CLUSTER_INDETERMINATE', 'this member is shutting down while the queue call it forwarded is unanswered; it may or may not have taken effect', { retryAfterSeconds: 1 }) });
    }
    for (const call of [...this.remote.values(), ...this.backingOff]) {
      this.finish(call, { kind: 'error', error: new GridError('ERR_CLUSTER_UNAVAILABLE', 'this member is shutting down: send the call to another member', { retryAfterSeconds: 1, failureKind: 'stopping' }) });
    }
  }
}

/** The invokeResult body for a local result. */
export function resultToWire(r: LocalResult): MessageOf<'invokeResult'>['body'] {
  const base = { status: STATUS.OK as number, found: false, value: EMPTY, contentType: null as string | null, count: 0, errorCode: '', message: '', retryAfterSeconds: 0 };
  if (r.kind === 'retry') return { ...base, status: STATUS.RETRY };
  if (r.kind === 'error') return { ...base, status: STATUS.ERROR, errorCode: r.error.code, message: r.error.message, retryAfterSeconds: r.error.retryAfterSeconds ?? 0 };
  const o = r.outcome;
  switch (o.kind) {
    case 'value':
      return { ...base, found: o.value !== null, value: o.value ?? EMPTY, contentType: o.contentType };
    case 'flag':
      return { ...base, found: o.flag };
    case 'count':
      return { ...base, count: o.count };
    case 'done':
      return base;
  }
}

const EMPTY = Buffer.alloc(0);

function outcomeFromWire(code: number, b: MessageOf<'invokeResult'>['body']): OpOutcome {
  switch (code) {
    case OP.MAP_GET:
    case OP.MAP_GET_AND_PUT:
    case OP.MAP_GET_AND_REMOVE:
    case OP.MAP_PUT_IF_ABSENT_GET:
    case OP.MAP_REPLACE_GET:
    case OP.MAP_PUT_EXPIRY:
    case OP.MAP_ENTRIES_PARTITION:
    case OP.QUEUE_DRAIN:
    case OP.QUEUE_PEEK:
    case OP.QUEUE_POLL:
    case OP.WAN_MERKLE_NODES:
    case OP.WAN_LEAF_DIGESTS:
      return { kind: 'value', value: b.found ? Buffer.from(b.value) : null, contentType: b.contentType };
    case OP.MAP_PUT:
    case OP.MAP_PUT_IF_ABSENT:
    case OP.MAP_REPLACE_IF_SAME:
    case OP.MAP_REMOVE_IF_SAME:
    case OP.QUEUE_OFFER:
      return { kind: 'flag', flag: b.found };
    case OP.QUEUE_SIZE:
    case OP.QUEUE_CLEAR:
    case OP.MAP_SIZE_PARTITION:
    case OP.MAP_MERGE:
    case OP.WAN_MAP_MERGE:
      return { kind: 'count', count: b.count };
    default:
      return { kind: 'done' };
  }
}
