// One member, standing alone: the MemberApi over this process's map and queue services. It owns the
// node and cluster states, credentials checks and the run-time tcp-ip member list. Time comes from
// the injected clock; timers for waiting polls come from the injected timer service, so the member
// can be driven by a simulated clock in tests.
import type { EventDetails, EventKind } from '../util/timeline.js';
import { ClusterViews } from '../console/cluster-views.js';
import { storeCounters } from '../console/structures.js';
import { randomUUID } from 'node:crypto';
import type { Config, EndpointGroup, LogLevel } from '../config/types.js';
import type { Clock } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import { SeededRandom } from '../util/prng.js';
import { keyHash, partitionIdOf } from '../partition/partition-id.js';
import { ClusterNode, type ClusterNodeOptions, type ClusterTimings } from './cluster-node.js';
import type { CpApi } from '../cp/cp-api.js';
import type { Transport } from '../cluster/transport.js';
import type { Message } from '../cluster/messages.js';
import { expandJoinAddresses } from '../cluster/join-addresses.js';
import { formatMembersLine } from '../cluster/membership.js';
import { parseMemberAddress } from '../config/values.js';
import { ENTRIES_ANSWER, ENTRIES_READ, IF_SAME_PAYLOAD, OP, PUT_EXPIRY_PAYLOAD, PUT_MODE, QUEUE_ITEMS_ANSWER, type OpOutcome } from '../data/replica-store.js';
import { normalizedExpiryMs } from '../data/expiry.js';
import { decodeWith, encodeWith } from '../cluster/protocol/schema-codec.js';
import type { LocalResult } from '../invocation/invoker.js';
import type { Timers } from '../util/clock.js';
import type { Logger, ComponentLogger } from '../util/logger.js';
import { describeActor, then } from './member-api.js';
import type { Actor, Awaitable, ClientLiveness, WanControl, ClusterInfo, ClientView, ClusterState, Credentials, HealthInfo, MapEntryRead, MemberApi, NodeState, StoredValue } from './member-api.js';
import { MEMBER_VERSION, CLUSTER_VERSION, PRODUCT_NAME } from './version.js';
import { credentialsAccepted } from './credentials.js';
import { buildMetricsSnapshot } from './node-figures.js';
import type { MetricsSnapshot, RuntimeFigures } from './metrics-snapshot.js';
import type { ConsoleAccess } from '../console/access.js';
import { consoleAccessOf } from './console-access.js';

const KEY_SCRATCH_BYTES = 64 * 1024;
/** A local call that is never cancelled from outside. */
const NO_CANCEL_HOOK = (): void => {};
const NO_RESULT = (): void => {};
const TO_UNDEFINED = (): undefined => undefined;
/** A waiting offer tries again after this pause, doubling up to the maximum. */
const OFFER_PAUSE_MS_MIN = 5;
const OFFER_PAUSE_MS_MAX = 100;

/** Keys up to this many characters are copied by a loop when they are ASCII (cheaper than Buffer.write). */
const ASCII_LOOP_CHARS_MAX = 64;

/**
 * Writes `key` into `scratch` as UTF-8 and returns the byte count: a plain loop for ASCII (the
 * common key), Buffer.write as soon as a character is not.
 */
function writeAscii(scratch: Buffer, key: string): number {
  const n = key.length;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return scratch.write(key, 0, 'utf8');
    scratch[i] = c;
  }
  return n;
}

/** Keys up to this many UTF-8 bytes are seen through a view of the scratch buffer made once. */
const KEY_VIEWS = 256;
/** Entries of a tcp-ip member list taken from another member at most. */
const MEMBER_LIST_MAX = 10_000;
/** clusterShutdown waits at most this long for the other members to acknowledge before it stops this one. */
export const CLUSTER_SHUTDOWN_ACK_WAIT_MS = 10_000;

export interface MemberEnvironment {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Counts of open connections, from the runtime. */
  readonly connections: () => { http: number; member: number };
  /** The runtime's figures for the metrics call (HTTP, connections, transport, process). */
  readonly runtimeMetrics: () => RuntimeFigures;
  /** Asks the process to stop gracefully (the runtime owns signals and exit). */
  readonly requestStop: (reason: string) => void;
  /**
   * Asks the runtime to start this member over as a new one: wiped persisted data, a new UUID, the
   * same ports (persistence: forceStart, stale data). Absent: the member stops instead.
   */
  readonly requestRestart?: (reason: string) => void;
  /** Asks the process to stop with this exit status (persistence: stale data kept, exit 3). */
  readonly requestExit?: (code: number, reason: string) => void;
  readonly seed: number;
  /** The member-protocol transport; none: a cluster of one that never dials. */
  readonly transport?: Transport;
  readonly timers?: Timers;
  /** Member identity (tests and simulations pin it). */
  readonly uuid?: string;
  readonly timings?: Partial<ClusterTimings>;
  /** Connections to other clusters for WAN publishers (runtime: MemberPort.openWanTransport). */
  readonly openWanTransport?: ClusterNodeOptions['openWanTransport'];
  /** `<persistence enabled="true">`: the member's directory, chosen and locked (runtime). */
  readonly persistence?: ClusterNodeOptions['persistence'];
  /** CP persistence's disk and base-dir (runtime). */
  readonly cpPersistence?: ClusterNodeOptions['cpPersistence'];
}

/** A transport for a member that never talks to others. */
const NO_TRANSPORT: Transport = { send: () => false, disconnect: () => {}, connectionCount: () => 0 };

const processTimers: Timers = {
  setTimeout: (fn, delayMs) => {
    const t = setTimeout(fn, delayMs);
    // Periodic cluster timers must not keep a stopping process alive; immediate hand-offs must run.
    if (delayMs > 0) t.unref();
    return t as unknown as { id: number };
  },
  clearTimeout: (handle) => clearTimeout(handle as unknown as NodeJS.Timeout),
};

export class LocalMember implements MemberApi {
  readonly uuid: string;
  readonly node: ClusterNode;
  private host = '127.0.0.1';
  private port = 0;
  readonly clusterViews: ClusterViews;
  readonly console: ConsoleAccess;
  /** The member's own life cycle; the reported node state also follows the cluster (nodeState()). */
  private phase: 'starting' | 'running' | 'stopping' | 'stopped' = 'starting';
  private tcpIpMembers: string[] | null;
  private readonly audit: ComponentLogger;
  private readonly log: ComponentLogger;
  /** Keys are encoded here, not into a fresh ArrayBuffer per call: the store copies what it keeps. */
  private readonly keyScratch = Buffer.allocUnsafe(KEY_SCRATCH_BYTES);
  /** keyViews[n]: the first n bytes of keyScratch. */
  private readonly keyViews: readonly Buffer[] = Array.from({ length: KEY_VIEWS }, (_, n) => this.keyScratch.subarray(0, n));
  /** The partition of the key keyOf() read last. */
  private keyPartition = 0;

  constructor(
    private readonly config: Config,
    private readonly env: MemberEnvironment,
  ) {
    this.uuid = env.uuid ?? randomUUID();
    this.node = new ClusterNode({
      config,
      uuid: this.uuid,
      memberVersion: MEMBER_VERSION,
      transport: env.transport ?? NO_TRANSPORT,
      clock: env.clock,
      timers: env.timers ?? processTimers,
      ...(env.timers === undefined ? { defer: (fn: () => void) => void setImmediate(fn) } : {}),
      random: new SeededRandom(env.seed),
      logger: env.logger,
      newUuid: () => randomUUID(),
      ...(env.timings === undefined ? {} : { timings: env.timings }),
      onShutdownRequested: (reason) => env.requestStop(`clusterShutdown from another member: ${reason}`),
      onStartOver: (reason) => (env.requestRestart === undefined ? env.requestStop(`${reason} (this member cannot start over)`) : env.requestRestart(reason)),
      onStaleStop: (reason) => env.requestExit?.(3, reason) ?? env.requestStop(reason),
      onMemberListSet: (members, from) => this.takeMemberList(members, from),
      ...(env.openWanTransport === undefined ? {} : { openWanTransport: env.openWanTransport }),
      ...(env.persistence === undefined ? {} : { persistence: env.persistence }),
      ...(env.cpPersistence === undefined ? {} : { cpPersistence: env.cpPersistence }),
      memberFigures: () => this.metricsSnapshot(),
    });
    const tcp = config.network.join.tcpIp;
    this.tcpIpMembers = tcp.enabled ? [...tcp.members] : null;
    this.clusterViews = new ClusterViews(this.node.views, this.uuid, config.clusterName, () => this.metricsSnapshot(), storeCounters(this.node.store));
    this.audit = env.logger.component('audit');
    this.log = env.logger.component('member');
    this.console = consoleAccessOf(config, { uuid: this.uuid, address: () => `${this.host}:${this.port}`, authenticate: (c, e, r) => this.authenticate(c, e, r), recordEvent: (k, m, d) => this.recordEvent(k, m, d) }, this.audit);
  }

  // ── life cycle (called by the runtime) ──────────────────────────────────────────────────────────

  setAddress(host: string, port: number): void {
    this.host = host;
    this.port = port;
  }

  /**
   * The runtime is listening: read the persisted data (if any), then start joining (a member
   * without join addresses is its own cluster). While the log is read the member answers (node
   * state STARTING, data calls 503 recovery in progress); a log that cannot be read rejects, naming
   * the file.
   */
  async markActive(): Promise<void> {
    if (this.node.persistence !== null) {
      const timers = this.env.timers ?? processTimers;
      await this.node.recovery.loadAsync(`member ${this.uuid} at ${this.host}:${this.port}`, () => new Promise<void>((resolve) => void timers.setTimeout(resolve, 0)));
    }
    const tcp = this.config.network.join.tcpIp;
    const joinAddresses = tcp.enabled ? expandJoinAddresses(this.tcpIpMembers ?? [], this.config.network.port.port) : [];
    this.node.start(this.host, this.port, joinAddresses);
    this.phase = 'running';
  }

  /**
   * STARTING until the member has joined a cluster for the first time; then ACTIVE, or PASSIVE
   * while the cluster state is PASSIVE (on every member: the state is cluster-wide); SHUTTING_DOWN
   * from the start of a stop; SHUT_DOWN once stopped.
   */
  private nodeState(): NodeState {
    switch (this.phase) {
      case 'stopped':
        return 'SHUT_DOWN';
      case 'stopping':
        return 'SHUTTING_DOWN';
      case 'starting':
        return 'STARTING';
      case 'running':
        if (!this.node.hasJoined || this.node.recovery.recovering) return 'STARTING';
        return this.node.stateChange.state === 'PASSIVE' ? 'PASSIVE' : 'ACTIVE';
    }
  }

  /** The transport hands inbound messages to the cluster node. */
  onMessage(from: { uuid: string; address: string }, m: Message): void {
    this.node.onMessage(from, m);
  }

  /**
   * Stop taking new waits; hand every replica off (bounded); once they are handed off, wait for
   * `clientsGone` (the runtime's clients route elsewhere) before leaving the member list; then
   * answer waiting polls with "no item".
   */
  async beginShutdown(clientsGone: () => Promise<void> = () => Promise.resolve()): Promise<void> {
    this.phase = 'stopping';
    await this.node.leave.leaveGracefully(this.config.properties.gracefulShutdownMaxWaitSeconds * 1000);
    if (this.node.leave.replicasHandedOff) await clientsGone();
    this.node.leave.depart();
    this.node.stop();
  }

  markShutDown(): void {
    this.phase = 'stopped';
  }

  /** Expired-entry sweep, called periodically by the runtime. */
  sweep(budgetRecords: number): number {
    return this.node.store.maps.sweepExpired(this.env.clock.nowMs(), budgetRecords);
  }

  membersLine(): string {
    return this.node.membership.joined ? this.node.membership.membersLine() : formatMembersLine(0, [{ host: this.host, port: this.port, uuid: this.uuid, self: true, lite: this.config.liteMember }]);
  }

  // ── data ─────────────────────────────────────────────────────────────────────────────────────────

  /**
   * The key's UTF-8 bytes (valid until the next call); its partition is left in `keyPartition`. Short
   * keys are written into the scratch buffer and seen through a view made once per length (no object
   * per call: this runs for every data call).
   */
  private keyOf(key: string): Uint8Array {
    let bytes: Uint8Array;
    // A UTF-16 code unit never needs more than 3 UTF-8 bytes.
    if (key.length * 3 <= KEY_SCRATCH_BYTES) {
      const n = key.length <= ASCII_LOOP_CHARS_MAX ? writeAscii(this.keyScratch, key) : this.keyScratch.write(key, 0, 'utf8');
      bytes = n < KEY_VIEWS ? (this.keyViews[n] as Buffer) : this.keyScratch.subarray(0, n);
    } else {
      bytes = Buffer.from(key, 'utf8');
    }
    this.keyPartition = partitionIdOf(keyHash(bytes), this.config.properties.partitionCount);
    return bytes;
  }

  /**
   * Until it has joined a cluster, a member serves no data (cluster.md "Join and membership"): a
   * data call answers 503 at once rather than waiting for the join (it may never come, and the
   * caller can try another member). Calls already under way keep retrying in the invoker.
   */
  private refuseWhenNotJoined(): void {
    if (this.node.recovery.recovering) throw new GridError('ERR_DATA_RECOVERING', 'recovery in progress', { retryAfterSeconds: 5 });
    if (!this.node.membership.joined) {
      throw new GridError('ERR_CLUSTER_UNAVAILABLE', 'cluster not ready: this member has not joined a cluster yet', { retryAfterSeconds: 1 });
    }
  }

  private refuseWriteWhenPassive(operation: string): void {
    if (this.node.stateChange.reported === 'PASSIVE') {
      throw new GridError('ERR_DATA_CLUSTER_PASSIVE', `cluster is PASSIVE: ${operation} is not allowed`, { retryAfterSeconds: 5 });
    }
  }

  /**
   * Runs an operation on its partition's owner: synchronously when this member owns it and no
   * backup must ack, else through the invoker (forwarded, retried) as a promise.
   */
  /** `timeoutMs`: the op's number field (a poll's wait, a drain's maximum). */
  private run(partitionId: number, code: number, name: string, key: Uint8Array, value: Uint8Array, contentType: string | null, timeoutMs = 0): Awaitable<OpOutcome> {
    if (this.node.ops.isFastLocal(partitionId)) {
      const now = this.node.ops.runLocalNow(partitionId, ClusterNode.op(code, name, key, value, contentType, timeoutMs), this.defer, NO_CANCEL_HOOK);
      if (now !== null) return unwrap(now) ?? this.remote(partitionId, code, name, key, value, contentType, timeoutMs);
      const later = this.deferred as Promise<LocalResult>;
      this.deferred = null;
      // The key may live in the scratch buffer, which the next call overwrites.
      const keyKept = Buffer.from(key);
      return later.then((r) => unwrap(r) ?? this.remote(partitionId, code, name, keyKept, value, contentType, timeoutMs));
    }
    return this.remote(partitionId, code, name, key, value, contentType, timeoutMs);
  }

  /** For runLocalNow: an answer that comes later settles the promise left in `deferred` (made only then). */
  private deferred: Promise<LocalResult> | null = null;
  private readonly defer = (): ((r: LocalResult) => void) => {
    let settle: (r: LocalResult) => void = NO_RESULT;
    this.deferred = new Promise<LocalResult>((resolve) => (settle = resolve));
    return settle;
  };

  private remote(partitionId: number, code: number, name: string, key: Uint8Array, value: Uint8Array, contentType: string | null, timeoutMs = 0): Promise<OpOutcome> {
    // The key may live in the scratch buffer: copy it before the call leaves this tick.
    return this.node.call(partitionId, ClusterNode.op(code, name, Buffer.from(key), value, contentType, timeoutMs)).then((r) => r.outcome);
  }

  mapGet(mapName: string, key: string): Awaitable<StoredValue | null> {
    this.refuseWhenNotJoined();
    const bytes = this.keyOf(key);
    const partitionId = this.keyPartition;
    if (this.node.ops.isFastLocal(partitionId)) {
      return this.node.store.maps.getStored(mapName, bytes, partitionId, this.env.clock.nowMs());
    }
    return then(this.remote(partitionId, OP.MAP_GET, mapName, bytes, EMPTY, null), toStoredValue);
  }

  mapPut(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<void> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive('map put');
    const bytes = this.keyOf(key);
    const partitionId = this.keyPartition;
    return then(this.run(partitionId, OP.MAP_PUT, mapName, bytes, value, contentType), TO_UNDEFINED);
  }

  mapGetAndPut(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<StoredValue | null> {
    return this.mapWriteAnswering(OP.MAP_GET_AND_PUT, 'map put', mapName, key, value, contentType);
  }

  mapGetAndRemove(mapName: string, key: string): Awaitable<StoredValue | null> {
    return this.mapWriteAnswering(OP.MAP_GET_AND_REMOVE, 'map remove', mapName, key, EMPTY, null);
  }

  mapPutIfAbsent(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<StoredValue | null> {
    return this.mapWriteAnswering(OP.MAP_PUT_IF_ABSENT_GET, 'map putIfAbsent', mapName, key, value, contentType);
  }

  /** A map write whose answer is a value (the old one), run like every other data call. */
  private mapWriteAnswering(code: number, operation: string, mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<StoredValue | null>;
  private mapWriteAnswering(code: number, operation: string, mapName: string, key: string, value: Buffer, contentType: string | null, raw: true): Awaitable<OpOutcome>;
  private mapWriteAnswering(code: number, operation: string, mapName: string, key: string, value: Buffer, contentType: string | null, raw = false): Awaitable<StoredValue | null | OpOutcome> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive(operation);
    const bytes = this.keyOf(key);
    const r = this.run(this.keyPartition, code, mapName, bytes, value, contentType);
    return raw ? r : then(r, toStoredValue);
  }

  mapRemove(mapName: string, key: string): Awaitable<void> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive('map remove');
    const bytes = this.keyOf(key);
    const partitionId = this.keyPartition;
    return then(this.run(partitionId, OP.MAP_REMOVE, mapName, bytes, EMPTY, null), TO_UNDEFINED);
  }

  mapClear(mapName: string): Awaitable<void> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive('map clear');
    return then(this.runOnEveryPartition(OP.MAP_CLEAR_PARTITION, mapName, EMPTY), TO_UNDEFINED);
  }

  /**
   * One operation on every partition's owner, in parallel; the outcomes in partition order, now when
   * every partition answered at once. A partition that fails at once does not stop the others, and
   * its failure is observed together with theirs (a forwarded call still running is never left
   * with nobody to take its rejection).
   */
  private runOnEveryPartition(code: number, name: string, value: Uint8Array): Awaitable<OpOutcome[]> {
    const count = this.config.properties.partitionCount;
    const outcomes = new Array<Awaitable<OpOutcome>>(count);
    let later = false;
    for (let p = 0; p < count; p++) {
      let r: Awaitable<OpOutcome>;
      try {
        r = this.run(p, code, name, EMPTY, value, null);
      } catch (e) {
        r = Promise.reject(e);
      }
      if (r instanceof Promise) later = true;
      outcomes[p] = r;
    }
    return later ? Promise.all(outcomes) : (outcomes as OpOutcome[]);
  }

  mapSize(mapName: string): Awaitable<number> {
    this.refuseWhenNotJoined();
    return then(this.runOnEveryPartition(OP.MAP_SIZE_PARTITION, mapName, EMPTY), (rs) => rs.reduce((sum, r) => sum + countOf(r), 0));
  }

  queuePeek(queueName: string): Awaitable<StoredValue | null> {
    this.refuseWhenNotJoined();
    const p = this.node.store.queuePartition(queueName);
    return then(this.run(p, OP.QUEUE_PEEK, queueName, EMPTY, EMPTY, null), toStoredValue);
  }

  mapPutWithExpiry(mapName: string, key: string, value: Buffer, contentType: string | null, ttlMs: number, maxIdleMs: number, mode: 'set' | 'put' | 'putIfAbsent'): Awaitable<StoredValue | null> {
    const payload = encodeWith(
      PUT_EXPIRY_PAYLOAD,
      { mode: mode === 'set' ? PUT_MODE.SET : mode === 'put' ? PUT_MODE.PUT : PUT_MODE.PUT_IF_ABSENT, ttlMs: normalizedExpiryMs(ttlMs), maxIdleMs: normalizedExpiryMs(maxIdleMs), value },
      64 + value.length,
    );
    return this.mapWriteAnswering(OP.MAP_PUT_EXPIRY, mode === 'putIfAbsent' ? 'map putIfAbsent' : 'map put', mapName, key, payload, contentType);
  }

  mapReplace(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<StoredValue | null> {
    return this.mapWriteAnswering(OP.MAP_REPLACE_GET, 'map replace', mapName, key, value, contentType);
  }

  mapReplaceIfSame(mapName: string, key: string, expected: StoredValue, value: Buffer, contentType: string | null): Awaitable<boolean> {
    const payload = encodeWith(IF_SAME_PAYLOAD, { expected: expected.value, expectedType: expected.contentType, value }, 64 + expected.value.length + value.length);
    return then(this.mapWriteAnswering(OP.MAP_REPLACE_IF_SAME, 'map replace', mapName, key, payload, contentType, true), isTrue);
  }

  mapRemoveIfSame(mapName: string, key: string, expected: StoredValue): Awaitable<boolean> {
    return then(this.mapWriteAnswering(OP.MAP_REMOVE_IF_SAME, 'map remove', mapName, key, expected.value, expected.contentType, true), isTrue);
  }

  mapEntries(mapName: string, select: 'keys' | 'values' | 'entries', bytesMax: number): Awaitable<MapEntryRead[]> {
    this.refuseWhenNotJoined();
    const what = Buffer.of(select === 'keys' ? ENTRIES_READ.KEYS : select === 'values' ? ENTRIES_READ.VALUES : ENTRIES_READ.ENTRIES);
    const collect = (outcomes: readonly OpOutcome[]): MapEntryRead[] => {
      const out: MapEntryRead[] = [];
      let bytes = 0;
      for (const o of outcomes) {
        if (o.kind !== 'value' || o.value === null) continue;
        for (const e of decodeWith(ENTRIES_ANSWER, o.value, 'map entries answer', { views: true }).entries) {
          bytes += e.key.length + e.value.length;
          if (bytes > bytesMax) {
            throw new GridError('ERR_DATA_ANSWER_TOO_LARGE', `map '${mapName}' holds more than ${bytesMax} bytes of ${select}: too much for one answer (read it by keys instead)`);
          }
          out.push({ key: Buffer.from(e.key), value: select === 'keys' ? null : { value: Buffer.from(e.value), contentType: e.contentType } });
        }
      }
      return out;
    };
    return then(this.runOnEveryPartition(OP.MAP_ENTRIES_PARTITION, mapName, what), collect);
  }

  queueOfferWaiting(queueName: string, value: Buffer, contentType: string | null, timeoutMs: number, client: ClientLiveness): Awaitable<boolean> {
    const first = this.queueOffer(queueName, value, contentType);
    if (timeoutMs <= 0) return first;
    const timers = this.env.timers ?? processTimers;
    const deadline = this.env.clock.monotonicMs() + timeoutMs;
    // The queue's owner may be another member, so the wait is on this side: offer again after a
    // pause that grows from 5 to 100 ms, until room, the deadline, the client gone or the member stopping.
    const again = (full: boolean, pauseMs: number): Awaitable<boolean> => {
      if (full || client.isGone() || this.phase === 'stopping' || this.phase === 'stopped') return full;
      const left = deadline - this.env.clock.monotonicMs();
      if (left <= 0) return false;
      return new Promise<void>((resolve) => void timers.setTimeout(resolve, Math.min(pauseMs, left))).then(() =>
        client.isGone() ? false : then(this.queueOffer(queueName, value, contentType), (ok) => again(ok, Math.min(pauseMs * 2, OFFER_PAUSE_MS_MAX))),
      );
    };
    return then(first, (ok) => again(ok, OFFER_PAUSE_MS_MIN));
  }

  queueDrain(queueName: string, max: number): Awaitable<StoredValue[]> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive('queue drain');
    const p = this.node.store.queuePartition(queueName);
    return then(this.run(p, OP.QUEUE_DRAIN, queueName, EMPTY, EMPTY, null, max), (o) => {
      if (o.kind !== 'value' || o.value === null) return [];
      return decodeWith(QUEUE_ITEMS_ANSWER, o.value, 'queue drain answer', { views: true }).items.map((i) => ({ value: Buffer.from(i.value), contentType: i.contentType }));
    });
  }

  queueClear(queueName: string): Awaitable<number> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive('queue clear');
    const p = this.node.store.queuePartition(queueName);
    return then(this.run(p, OP.QUEUE_CLEAR, queueName, EMPTY, EMPTY, null), countOf);
  }

  queueOffer(queueName: string, value: Buffer, contentType: string | null): Awaitable<boolean> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive('queue offer');
    const p = this.node.store.queuePartition(queueName);
    return then(this.run(p, OP.QUEUE_OFFER, queueName, EMPTY, value, contentType), (o) => o.kind === 'flag' && o.flag);
  }

  queuePoll(queueName: string, timeoutSeconds: number, client: ClientLiveness): Awaitable<StoredValue | null> {
    this.refuseWhenNotJoined();
    this.refuseWriteWhenPassive('queue poll');
    const p = this.node.store.queuePartition(queueName);
    if (timeoutSeconds === 0 || this.phase === 'stopping' || this.phase === 'stopped' || client.isGone()) {
      return then(this.run(p, OP.QUEUE_POLL, queueName, EMPTY, EMPTY, null), toStoredValue);
    }
    let unsubscribe: () => void = () => {};
    const op = ClusterNode.op(OP.QUEUE_POLL, queueName, EMPTY, EMPTY, null, timeoutSeconds * 1000);
    const result = this.node.call(p, op, (cancel) => {
      unsubscribe = client.onGone(cancel);
    });
    return result.then(
      (r) => {
        unsubscribe();
        return toStoredValue(r.outcome);
      },
      (e: unknown) => {
        unsubscribe();
        throw e;
      },
    );
  }

  queueSize(queueName: string): Awaitable<number> {
    this.refuseWhenNotJoined();
    const p = this.node.store.queuePartition(queueName);
    return then(this.run(p, OP.QUEUE_SIZE, queueName, EMPTY, EMPTY, null), (o) => (o.kind === 'count' ? o.count : 0));
  }

  // ── information ──────────────────────────────────────────────────────────────────────────────────

  forceStart(by: Actor): boolean {
    this.log.info(`forceStart requested by ${describeActor(by)}`);
    return this.node.recovery.forceStart();
  }

  partialStart(by: Actor): boolean {
    this.log.info(`partialStart requested by ${describeActor(by)}`);
    return this.node.recovery.partialStart();
  }

  startBackup(by: Actor): Promise<{ ok: boolean; message: string }> {
    this.log.info(`backup requested by ${describeActor(by)}`);
    return this.node.hotBackup.start();
  }

  interruptBackup(by: Actor): void {
    this.log.info(`backupInterrupt requested by ${describeActor(by)}`);
    this.node.hotBackup.interrupt();
  }

  persistenceStatus(): { enabled: boolean; recovering: boolean; policy: string; backupDir: string } {
    const p = this.config.persistence;
    return { enabled: p.enabled, recovering: this.node.recovery.recovering, policy: p.clusterDataRecoveryPolicy, backupDir: p.backupDir };
  }

  clusterInfo(): ClusterInfo {
    const c = this.env.connections();
    const list = this.node.membership.joined ? this.node.membership.list : [{ host: this.host, port: this.port, uuid: this.uuid, lite: this.config.liteMember, version: MEMBER_VERSION }];
    return {
      members: list.map((m) => ({ host: m.host, port: m.port, uuid: m.uuid, liteMember: m.lite, localMember: m.uuid === this.uuid, memberVersion: m.version })),
      connectionCount: c.http,
      allConnectionCount: c.http + c.member,
    };
  }

  clientView(): ClientView {
    const membership = this.node.membership;
    const joined = membership.joined;
    const table = this.node.partitions.table;
    const count = this.config.properties.partitionCount;
    const owners = new Array<string | null>(count);
    for (let p = 0; p < count; p++) owners[p] = joined ? table.owner(p) : null;
    const list = joined ? membership.list : [];
    return {
      joined,
      memberUuid: this.uuid,
      host: this.host,
      port: this.port,
      clusterId: joined ? membership.id : '',
      partitionCount: count,
      membersVersion: joined ? membership.version : 0,
      members: list.map((m) => ({ uuid: m.uuid, host: m.host, port: m.port, lite: m.lite, version: m.version })),
      partitionsVersion: joined ? table.version : 0,
      owners,
    };
  }

  health(): HealthInfo {
    const state = this.nodeState();
    const joined = this.node.membership.joined;
    return {
      nodeState: state,
      clusterState: this.node.stateChange.reported,
      clusterSafe: (state === 'ACTIVE' || state === 'PASSIVE') && this.node.isSafe(),
      migrationQueueSize: this.node.partitions.migrationQueueSize,
      clusterSize: joined ? this.node.membership.list.length : 1,
      ready: joined && (state === 'ACTIVE' || state === 'PASSIVE'),
    };
  }

  instanceName(): string {
    return this.config.instanceName;
  }
  clusterName(): string {
    return this.config.clusterName;
  }
  clusterVersion(): string {
    return CLUSTER_VERSION;
  }
  memberVersion(): string {
    return MEMBER_VERSION;
  }

  nodesText(): string {
    const list = this.clusterInfo().members.map((m) => `Member [${m.host}]:${m.port} - ${m.uuid}${m.localMember ? ' this' : ''}`);
    return `[${list.join(', ')}]\n${PRODUCT_NAME} ${MEMBER_VERSION}\nNode.js ${process.versions.node}`;
  }

  recordEvent(kind: EventKind, message: string, details?: EventDetails): void {
    this.node.events.record(kind, message, details);
  }

  metricsSnapshot(): MetricsSnapshot {
    const health = this.health();
    return buildMetricsSnapshot(this.node, `[${this.host}]:${this.port}`, health.nodeState, health.clusterState, health.clusterSafe, this.env.connections(), this.env.runtimeMetrics());
  }

  // ── security and groups ──────────────────────────────────────────────────────────────────────────

  restEnabled(): boolean {
    const advanced = this.config.advancedNetwork;
    // A declared REST endpoint enables REST, but only while advanced networking is on (the loader warns otherwise).
    return advanced.enabled ? advanced.restEndpoint !== null : this.config.network.restApi.enabled;
  }

  healthCheckWithoutRest(): boolean {
    return this.config.properties.httpHealthcheckEnabled;
  }

  groupEnabled(group: EndpointGroup): boolean {
    if (group === 'HEALTH_CHECK' && this.config.properties.httpHealthcheckEnabled) return true;
    const endpoint = this.config.advancedNetwork.enabled ? this.config.advancedNetwork.restEndpoint : null;
    return endpoint !== null ? endpoint.groups[group] : this.config.network.restApi.groups[group];
  }

  securityEnabled(): boolean {
    return this.config.security.enabled;
  }

  authenticate(credentials: Credentials, endpoint: string, remoteAddress: string): boolean {
    if (credentials.session === true) return this.config.security.enabled; // audited at login; actions on the timeline
    const ok = credentialsAccepted(this.config, credentials);
    if (this.config.security.enabled) {
      this.audit.info(`REST authentication ${ok ? 'succeeded' : 'failed'}`, { user: credentials.user, endpoint, source: remoteAddress, outcome: ok ? 'success' : 'failure' });
    } else if (!ok) {
      this.log.fine('REST call with a wrong cluster name refused', { endpoint, source: remoteAddress });
    }
    return ok;
  }

  auditMissingCredentials(endpoint: string, remoteAddress: string): void {
    this.audit.info('REST call without credentials refused', { user: null, endpoint, source: remoteAddress, outcome: 'failure' });
  }

  // ── management ───────────────────────────────────────────────────────────────────────────────────

  async changeClusterState(target: ClusterState, by: Actor): Promise<'changed' | 'unchanged'> {
    if (target === 'IN_TRANSITION') throw new GridError('ERR_MGMT_BAD_STATE', 'IN_TRANSITION cannot be requested');
    this.log.info(`cluster state change to ${target} requested by ${describeActor(by)}`);
    return this.node.stateChange.change(target, describeActor(by));
  }

  supportsClusterVersion(version: string): boolean {
    return version === CLUSTER_VERSION;
  }

  memberShutdownNote(): string | null {
    return this.node.leave.handOffForbidden();
  }

  shutdownMember(by: Actor): void {
    this.env.requestStop(`memberShutdown requested over REST by ${describeActor(by)}`);
  }

  /**
   * PASSIVE first (no writes, no migrations), then every other member is told to stop and
   * acknowledges (bounded: CLUSTER_SHUTDOWN_ACK_WAIT_MS), then this member stops. Every member stops
   * without a hand-off (the cluster is PASSIVE), so the whole cluster is down within seconds.
   */
  shutdownCluster(by: Actor): void {
    const who = describeActor(by);
    this.log.info(`clusterShutdown requested by ${who}`);
    const stopAll = async (): Promise<void> => {
      const reason = `clusterShutdown requested through ${this.host}:${this.port} by ${who}`;
      const missing = await this.node.commands.shutdownOthers(reason, CLUSTER_SHUTDOWN_ACK_WAIT_MS);
      if (missing.length > 0) this.log.warning(`clusterShutdown: ${missing.join(', ')} did not acknowledge within ${CLUSTER_SHUTDOWN_ACK_WAIT_MS} ms; stopping anyway`);
      else this.log.info('clusterShutdown: every other member acknowledged; stopping');
      this.env.requestStop(`clusterShutdown requested over REST by ${who}`);
    };
    this.node.stateChange.change('PASSIVE', `clusterShutdown by ${who}`).then(
      () => void stopAll(),
      (e: unknown) => {
        this.log.warning(`clusterShutdown: could not switch the cluster to PASSIVE first (${e instanceof Error ? e.message : String(e)}); stopping every member anyway`);
        void stopAll();
      },
    );
  }

  tcpIpMemberList(): readonly string[] | null {
    return this.tcpIpMembers;
  }

  /** Applied here and sent to every other member of the cluster (rest.md §7: "applied on every member"). */
  setTcpIpMemberList(members: readonly string[], by: Actor): readonly string[] | null {
    if (this.tcpIpMembers === null) return null;
    this.tcpIpMembers = [...members];
    this.node.setJoinAddresses(expandJoinAddresses(members, this.config.network.port.port));
    this.node.commands.broadcastMemberList(members);
    this.log.info(`tcp-ip member list set to ${members.join(', ')} by ${describeActor(by)}; sent to every member`);
    return this.tcpIpMembers;
  }

  /** A member list set through another member. Entries are checked again: a peer's frame is input too. */
  private takeMemberList(members: readonly string[], from: string): void {
    if (this.tcpIpMembers === null) {
      this.log.warning(`tcp-ip member list from ${from} ignored: tcp-ip join is off on this member`);
      return;
    }
    const bad = members.find((m) => !parseMemberAddress(m).ok);
    if (bad !== undefined || members.length > MEMBER_LIST_MAX) {
      this.log.warning(`tcp-ip member list from ${from} refused: ${bad === undefined ? `more than ${MEMBER_LIST_MAX} entries` : `malformed entry ${JSON.stringify(bad)}`}`);
      return;
    }
    this.tcpIpMembers = [...members];
    this.node.setJoinAddresses(expandJoinAddresses(members, this.config.network.port.port));
    this.log.info(`tcp-ip member list set to ${members.join(', ')} (through ${from})`);
  }

  runtimeLogLevel(): LogLevel | null {
    return this.env.logger.runtimeLevel;
  }
  setLogLevel(level: LogLevel, by: Actor): void {
    // Logged at WARNING so the line shows whatever the level is set to (OFF aside).
    const from = this.env.logger.runtimeLevel ?? this.config.logging.level;
    this.env.logger.setRuntimeLevel(level);
    this.log.warning(`log level changed from ${from} to ${level} by ${describeActor(by)}`);
  }
  resetLogLevel(by: Actor): void {
    const from = this.env.logger.runtimeLevel;
    this.env.logger.resetLevel();
    this.log.warning(`log level reset${from === null ? '' : ` from ${from}`} to the configured ${this.config.logging.level} by ${describeActor(by)}`);
  }
  cpMemberCount(): number {
    return this.config.cpSubsystem.cpMemberCount;
  }
  cp(): CpApi {
    return this.node.cpApi;
  }
  auditCp(what: string, by: Actor): void {
    this.log.info(`CP subsystem: ${what}, asked by ${describeActor(by)}`);
  }
  persistenceEnabled(): boolean {
    return this.config.persistence.enabled;
  }
  wanReplicationNames(): readonly string[] {
    return this.node.wan.replicationNames();
  }
  wan(): WanControl {
    return this.wanControl;
  }
  private readonly wanControl: WanControl = {
    pause: (r, p) => this.node.wan.pause(r, p),
    resume: (r, p) => this.node.wan.resume(r, p),
    stop: (r, p) => this.node.wan.stopPublisher(r, p),
    clearQueues: (r, p) => void this.node.wan.clearQueues(r, p),
    sync: (r, p, map) => {
      this.refuseWhenNotJoined();
      return this.node.wan.syncs.startSync(r, p, map);
    },
    consistencyCheck: (r, p, map) => {
      this.refuseWhenNotJoined();
      return this.node.wan.syncs.startConsistencyCheck(r, p, map);
    },
    progress: (uuid) => this.node.wan.syncs.progress(uuid),
    checkResult: (uuid) => this.node.wan.syncs.checkResult(uuid),
    addConfig: (json) => this.node.wan.addConfigJson(json),
  };
  pollTimeoutSecondsMax(): number {
    return this.config.properties.queuePollTimeoutSecondsMax;
  }
}

const EMPTY = Buffer.alloc(0);

function countOf(o: OpOutcome): number {
  return o.kind === 'count' ? o.count : 0;
}

function isTrue(o: OpOutcome): boolean {
  return o.kind === 'flag' && o.flag;
}

function toStoredValue(o: OpOutcome): StoredValue | null {
  return o.kind === 'value' && o.value !== null ? { value: o.value, contentType: o.contentType } : null;
}

/** The outcome of a finished local call; null when it must be retried through the invoker. */
function unwrap(r: LocalResult): OpOutcome | null {
  if (r.kind === 'ok') return r.outcome;
  if (r.kind === 'error') throw r.error;
  return null;
}
