// One member, standing alone: the MemberApi over this process's map and queue services. It owns the
// node and cluster states, credentials checks and the run-time tcp-ip member list. Time comes from
// the injected clock; timers for waiting polls come from the injected timer service, so the member
// can be driven by a simulated clock in tests.
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import type { Config, EndpointGroup, LogLevel } from '../config/types.js';
import { resolveMapConfig, resolveQueueConfig } from '../config/match.js';
import type { Clock } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import { SeededRandom } from '../util/prng.js';
import { MapService } from '../data/map-service.js';
import { QueueService, type PollWaiter, type QueueItem } from '../data/queue-service.js';
import { keyHash, partitionIdOf } from '../partition/partition-id.js';
import type { Logger, ComponentLogger } from '../util/logger.js';
import type {
  Awaitable,
  ClientLiveness,
  ClusterInfo,
  ClusterState,
  Credentials,
  HealthInfo,
  MemberApi,
  NodeState,
  StoredValue,
} from './member-api.js';
import { MEMBER_VERSION, CLUSTER_VERSION, PRODUCT_NAME } from './version.js';

const KEY_SCRATCH_BYTES = 64 * 1024;

export interface MemberEnvironment {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Counts of open connections, from the runtime. */
  readonly connections: () => { http: number; member: number };
  /** Extra counters from the runtime for the metrics call. */
  readonly runtimeMetrics: () => Readonly<Record<string, number>>;
  /** Asks the process to stop gracefully (the runtime owns signals and exit). */
  readonly requestStop: (reason: string) => void;
  readonly seed: number;
}

export class LocalMember implements MemberApi {
  readonly uuid = randomUUID();
  private host = '127.0.0.1';
  private port = 0;
  private state: NodeState = 'STARTING';
  private cluster: ClusterState = 'ACTIVE';
  private tcpIpMembers: string[] | null;
  private readonly maps: MapService;
  private readonly queues: QueueService;
  private readonly audit: ComponentLogger;
  private readonly log: ComponentLogger;
  private readonly pollTimers = new Set<NodeJS.Timeout>();
  /** Keys are encoded here, not into a fresh ArrayBuffer per call: the store copies what it keeps. */
  private readonly keyScratch = Buffer.allocUnsafe(KEY_SCRATCH_BYTES);

  constructor(
    private readonly config: Config,
    private readonly env: MemberEnvironment,
  ) {
    const props = config.properties;
    this.maps = new MapService({
      partitionCount: props.partitionCount,
      resolveConfig: (name) => resolveMapConfig(config.maps, name),
      random: new SeededRandom(env.seed),
    });
    this.queues = new QueueService({ resolveConfig: (name) => resolveQueueConfig(config.queues, name), waitersMax: props.queueWaitersMax });
    const tcp = config.network.join.tcpIp;
    this.tcpIpMembers = tcp.enabled ? [...tcp.members] : null;
    this.audit = env.logger.component('audit');
    this.log = env.logger.component('member');
  }

  // ── life cycle (called by the runtime) ──────────────────────────────────────────────────────────

  setAddress(host: string, port: number): void {
    this.host = host;
    this.port = port;
  }

  /** The runtime is listening: a member alone is its own cluster, so it is joined and active. */
  markActive(): void {
    this.state = this.cluster === 'PASSIVE' ? 'PASSIVE' : 'ACTIVE';
  }

  /** Stop taking new waits; answer every waiting poll with "no item". */
  beginShutdown(): void {
    this.state = 'SHUTTING_DOWN';
    for (const waiter of this.queues.cancelAllWaiters()) (waiter as TimedWaiter).expire();
    for (const t of this.pollTimers) clearTimeout(t);
    this.pollTimers.clear();
  }

  markShutDown(): void {
    this.state = 'SHUT_DOWN';
  }

  /** Expired-entry sweep, called periodically by the runtime. */
  sweep(budgetRecords: number): number {
    return this.maps.sweepExpired(this.env.clock.nowMs(), budgetRecords);
  }

  membersLine(): string {
    return `Members {size:1, ver:1} [\n\tMember [${this.host}]:${this.port} - ${this.uuid} this\n]`;
  }

  // ── data ─────────────────────────────────────────────────────────────────────────────────────────

  /** The key's UTF-8 bytes (valid until the next call) and its partition. */
  private keyOf(key: string): { bytes: Uint8Array; partitionId: number } {
    // A UTF-16 code unit never needs more than 3 UTF-8 bytes.
    const bytes = key.length * 3 <= KEY_SCRATCH_BYTES ? this.keyScratch.subarray(0, this.keyScratch.write(key, 0, 'utf8')) : Buffer.from(key, 'utf8');
    return { bytes, partitionId: partitionIdOf(keyHash(bytes), this.config.properties.partitionCount) };
  }

  private refuseWriteWhenPassive(operation: string): void {
    if (this.cluster === 'PASSIVE') {
      throw new GridError('ERR_DATA_CLUSTER_PASSIVE', `cluster is PASSIVE: ${operation} is not allowed`, { retryAfterSeconds: 5 });
    }
  }

  mapGet(mapName: string, key: string): StoredValue | null {
    const { bytes, partitionId } = this.keyOf(key);
    // The record view carries value and contentType: it is a StoredValue already.
    return this.maps.get(mapName, bytes, partitionId, this.env.clock.nowMs());
  }

  mapPut(mapName: string, key: string, value: Buffer, contentType: string | null): void {
    this.refuseWriteWhenPassive('map put');
    const { bytes, partitionId } = this.keyOf(key);
    this.maps.put(mapName, bytes, partitionId, value, contentType, this.env.clock.nowMs());
  }

  mapRemove(mapName: string, key: string): void {
    this.refuseWriteWhenPassive('map remove');
    const { bytes, partitionId } = this.keyOf(key);
    this.maps.remove(mapName, bytes, partitionId, this.env.clock.nowMs());
  }

  mapClear(mapName: string): void {
    this.refuseWriteWhenPassive('map clear');
    this.maps.clear(mapName);
  }

  queueOffer(queueName: string, value: Buffer, contentType: string | null): boolean {
    this.refuseWriteWhenPassive('queue offer');
    return this.queues.offer(queueName, value, contentType);
  }

  queuePoll(queueName: string, timeoutSeconds: number, client: ClientLiveness): Awaitable<StoredValue | null> {
    this.refuseWriteWhenPassive('queue poll');
    const now = this.queues.poll(queueName);
    if (now !== null || timeoutSeconds === 0 || this.state === 'SHUTTING_DOWN' || client.isGone()) return toStored(now);
    return new Promise((resolve) => {
      const waiter = new TimedWaiter(client, resolve);
      const item = this.queues.pollOrWait(queueName, waiter);
      if (item !== null) {
        resolve(toStored(item));
        return;
      }
      const timer = setTimeout(() => {
        this.pollTimers.delete(timer);
        if (this.queues.cancelWaiter(queueName, waiter)) waiter.expire();
      }, timeoutSeconds * 1000);
      this.pollTimers.add(timer);
      const unsubscribe = client.onGone(() => {
        if (this.queues.cancelWaiter(queueName, waiter)) waiter.expire();
      });
      waiter.onSettled = () => {
        clearTimeout(timer);
        this.pollTimers.delete(timer);
        unsubscribe();
      };
    });
  }

  queueSize(queueName: string): number {
    return this.queues.size(queueName);
  }

  // ── information ──────────────────────────────────────────────────────────────────────────────────

  clusterInfo(): ClusterInfo {
    const c = this.env.connections();
    return {
      members: [{ host: this.host, port: this.port, uuid: this.uuid, liteMember: this.config.liteMember, localMember: true, memberVersion: MEMBER_VERSION }],
      connectionCount: c.http,
      allConnectionCount: c.http + c.member,
    };
  }

  health(): HealthInfo {
    const stopping = this.state === 'SHUTTING_DOWN' || this.state === 'SHUT_DOWN';
    return {
      nodeState: this.state,
      clusterState: this.cluster,
      // Alone, every replica this member holds is the only one, and nothing migrates.
      clusterSafe: !stopping && this.state !== 'STARTING',
      migrationQueueSize: 0,
      clusterSize: 1,
      ready: this.state === 'ACTIVE' || this.state === 'PASSIVE',
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
    return `[Member [${this.host}]:${this.port} - ${this.uuid} this]\n${PRODUCT_NAME} ${MEMBER_VERSION}\nNode.js ${process.versions.node}`;
  }

  metrics(): Readonly<Record<string, number>> {
    const c = this.env.connections();
    return {
      mapEntries: this.maps.totalEntries(),
      maps: this.maps.mapNames().length,
      queues: this.queues.queueNames().length,
      waitingPolls: this.queues.waitingPolls(),
      httpConnections: c.http,
      memberConnections: c.member,
      ...this.env.runtimeMetrics(),
    };
  }

  // ── security and groups ──────────────────────────────────────────────────────────────────────────

  restEnabled(): boolean {
    const advanced = this.config.advancedNetwork;
    // A declared REST endpoint enables REST, but only while advanced networking is on (the loader warns otherwise).
    return advanced.enabled ? advanced.restEndpoint !== null : this.config.network.restApi.enabled;
  }

  groupEnabled(group: EndpointGroup): boolean {
    const endpoint = this.config.advancedNetwork.enabled ? this.config.advancedNetwork.restEndpoint : null;
    return endpoint !== null ? endpoint.groups[group] : this.config.network.restApi.groups[group];
  }

  securityEnabled(): boolean {
    return this.config.security.enabled;
  }

  authenticate(credentials: Credentials, endpoint: string, remoteAddress: string): boolean {
    const ok = this.checkCredentials(credentials);
    if (this.config.security.enabled) {
      this.audit.info(`REST authentication ${ok ? 'succeeded' : 'failed'}`, { user: credentials.user, endpoint, source: remoteAddress, outcome: ok ? 'success' : 'failure' });
    } else if (!ok) {
      this.log.fine('REST call with a wrong cluster name refused', { endpoint, source: remoteAddress });
    }
    return ok;
  }

  private checkCredentials(credentials: Credentials): boolean {
    const security = this.config.security;
    if (!security.enabled) return credentials.user === this.config.clusterName;
    const realm = security.realms.find((r) => r.name === security.memberAuthenticationRealm);
    if (realm === undefined) return false;
    let ok = false;
    // Compare every user so the time taken does not depend on which user name matched.
    for (const user of realm.users) {
      const match = constantTimeEqual(user.username, credentials.user) && constantTimeEqual(user.password, credentials.password);
      ok = ok || match;
    }
    return ok;
  }

  // ── management ───────────────────────────────────────────────────────────────────────────────────

  async changeClusterState(target: ClusterState): Promise<'changed' | 'unchanged'> {
    if (target === this.cluster) return 'unchanged';
    // A cluster of one: the lock and commit phases touch only this member, happen in one step and
    // cannot conflict, so IN_TRANSITION is never observable here.
    const previous = this.cluster;
    this.cluster = target;
    if (this.state === 'ACTIVE' || this.state === 'PASSIVE') this.state = target === 'PASSIVE' ? 'PASSIVE' : 'ACTIVE';
    this.log.info(`cluster state changed from ${previous} to ${target}`);
    return 'changed';
  }

  supportsClusterVersion(version: string): boolean {
    return version === CLUSTER_VERSION;
  }

  shutdownMember(): void {
    this.env.requestStop('memberShutdown requested over REST');
  }

  shutdownCluster(): void {
    this.cluster = 'PASSIVE';
    this.env.requestStop('clusterShutdown requested over REST');
  }

  tcpIpMemberList(): readonly string[] | null {
    return this.tcpIpMembers;
  }

  setTcpIpMemberList(members: readonly string[]): readonly string[] | null {
    if (this.tcpIpMembers === null) return null;
    this.tcpIpMembers = [...members];
    this.log.info(`tcp-ip member list set to ${members.join(', ')}`);
    return this.tcpIpMembers;
  }

  runtimeLogLevel(): LogLevel | null {
    return this.env.logger.runtimeLevel;
  }
  setLogLevel(level: LogLevel): void {
    this.env.logger.setRuntimeLevel(level);
  }
  resetLogLevel(): void {
    this.env.logger.resetLevel();
  }
  cpMemberCount(): number {
    return this.config.cpSubsystem.cpMemberCount;
  }
  persistenceEnabled(): boolean {
    return this.config.persistence.enabled;
  }
  wanReplicationNames(): readonly string[] {
    return this.config.wanReplications.map((w) => w.name);
  }
  pollTimeoutSecondsMax(): number {
    return this.config.properties.queuePollTimeoutSecondsMax;
  }
}

function toStored(item: QueueItem | null): StoredValue | null {
  return item === null ? null : { value: item.value, contentType: item.contentType };
}

/** A waiting poll: takes an item only while its client is still connected. */
class TimedWaiter implements PollWaiter {
  private settled = false;
  onSettled: () => void = () => {};

  constructor(
    private readonly client: ClientLiveness,
    private readonly resolve: (value: StoredValue | null) => void,
  ) {}

  deliver(item: QueueItem): boolean {
    if (this.settled || this.client.isGone()) return false;
    this.settle(toStored(item));
    return true;
  }

  expire(): void {
    if (!this.settled) this.settle(null);
  }

  private settle(value: StoredValue | null): void {
    this.settled = true;
    this.onSettled();
    this.resolve(value);
  }
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash both sides so the comparison length never depends on the secret's length.
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

