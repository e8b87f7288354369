// Whole-cluster recovery after a restart with persistence (cluster.md "Persistence"). A member that
// read a partition table from its metadata installs it as it was and holds the cluster PASSIVE:
// data calls answer 503 (recovery in progress), nothing migrates or is promoted. Every second it
// reports the table it persisted to its master; the master resumes the cluster once every member
// the table names is back with the same table (recoveryDone), or, under a PARTIAL policy, after the
// validation timeout or a partialStart, with the group of members whose table it chooses (the
// others are stale: recoveryStale). forceStart wipes every member.
import type { EventSink } from '../util/timeline.js';
import { message, type Message, type MessageKind } from '../cluster/messages.js';
import type { MemberContext, MemberService } from '../cluster/service.js';
import type { Peer } from '../cluster/transport.js';
import { STATE_BY_CODE, STATE_CODES, type RequestableClusterState } from '../cluster/cluster-state.js';
import type { Config } from '../config/types.js';
import { PartitionTable } from '../partition/table.js';
import type { NodePersistence } from '../persistence/node-persistence.js';
import type { Clock } from '../util/clock.js';
import { GridError } from '../util/errors.js';
import type { ComponentLogger } from '../util/logger.js';

/** A whole-cluster recovery that waits logs whom it waits for this often. */
const RECOVERY_WAIT_LOG_MS = 10_000;

/** A whole-cluster restart in progress on this member. */
interface Recovery {
  /** Members the persisted partition table names: all of them must be back. */
  readonly expected: ReadonlySet<string>;
  /** The cluster state to resume. */
  readonly resumeState: RequestableClusterState;
  /** The persisted table's version and stamp, reported to the master. */
  readonly tableVersion: number;
  readonly tableStamp: number;
  /** Master: what each member reported. */
  readonly reports: Map<string, { tableVersion: number; tableStamp: number }>;
  readonly startedMs: number;
  lastWaitLogMs: number;
  /** Master: partialStart was called. */
  partialRequested: boolean;
}

/** What the recovery needs of the member (the composition root passes it in). */
export interface RecoveryHost extends MemberContext {
  readonly config: Config;
  /** The cluster's timeline: a recovery's start and end (master), a forceStart. */
  readonly events?: EventSink;
  /** The table this member holds now. */
  table(): PartitionTable;
  /** Installs the persisted table as it was. */
  restoreTable(table: PartitionTable): void;
  /** The cluster state now, and a change of it logged as made `by` (or silently while recovering). */
  state(): RequestableClusterState;
  setState(s: RequestableClusterState, by: string): void;
  holdState(s: RequestableClusterState): void;
  /** Partitions of members that left while promotions were not allowed go to their backups now. */
  promoteDeparted(): void;
  /** An owner's version jumps, so its backups resync instead of taking a lost write for one they have. */
  jumpVersion(partitionId: number): void;
  saveMetadata(): void;
  stopped(): boolean;
  /** Wipe this member's store and start it over as a new member. */
  startOver(reason: string): void;
  /** Stale data that must not be removed (auto-remove-stale-data false): stop with exit status 3. */
  staleStop(reason: string): void;
}

export class ClusterRecovery implements MemberService {
  readonly name = 'recovery';
  readonly kinds: readonly MessageKind[] = ['recoveryReport', 'recoveryStale', 'forceStart', 'partialStart', 'recoveryDone'];
  private recovery: Recovery | null = null;
  /** The member's log is being read (loadAsync). */
  private loading = false;

  constructor(
    private readonly host: RecoveryHost,
    private readonly persistence: NodePersistence | null,
    private readonly clock: Clock,
    private readonly log: ComponentLogger,
  ) {}

  /** A whole-cluster recovery is under way here: data calls answer 503, nothing moves. */
  get active(): boolean {
    return this.recovery !== null;
  }

  /** A recovery, or the load of this member's log before it, is under way. */
  get recovering(): boolean {
    return this.recovery !== null || this.loading;
  }

  /** The state the recovery resumes, or null when none runs (the metadata keeps it meanwhile). */
  get resumeState(): RequestableClusterState | null {
    return this.recovery?.resumeState ?? null;
  }

  /**
   * Reads this member's persisted log into its store (before the member starts). With metadata from
   * an earlier run, the persisted partition table is installed as it was and a recovery begins.
   */
  load(owner: string): void {
    const p = this.persistence;
    if (p === null) return;
    const t0 = this.clock.monotonicMs();
    this.afterLoad(p, p.load(owner), t0);
  }

  /**
   * The same as `load`, giving the event loop a turn after each segment: meanwhile the member
   * answers (node state STARTING, data calls 503 recovery in progress). The runtime's way.
   */
  async loadAsync(owner: string, yieldTurn: () => Promise<void>): Promise<void> {
    const p = this.persistence;
    if (p === null) return;
    const t0 = this.clock.monotonicMs();
    this.loading = true;
    try {
      this.afterLoad(p, await p.loadAsync(owner, yieldTurn), t0);
    } finally {
      this.loading = false;
    }
  }

  private afterLoad(p: NodePersistence, loaded: ReturnType<NodePersistence['load']>, t0: number): void {
    const { report, tally } = loaded;
    const ms = Math.round(this.clock.monotonicMs() - t0);
    const meta = p.setup.metadata;
    this.log.info(`persistence: ${p.setup.dir}: loaded ${tally.records} record(s) from ${report.segments} segment(s), ${report.bytes} bytes, in ${ms} ms${tally.entriesSkippedExpired > 0 ? `; ${tally.entriesSkippedExpired} entr(ies) had expired before the stop` : ''}${report.tornTail === null ? '' : `; a torn last write of ${report.tornTail.bytes} bytes was dropped`}`);
    if (meta === null) {
      this.host.saveMetadata();
      return;
    }
    const partitionCount = this.host.table().partitionCount;
    if (meta.partitionCount !== partitionCount) {
      throw new GridError('ERR_CONFIG_INVALID', `${p.setup.dir}: the persisted data has ${meta.partitionCount} partitions, this member is configured with ${partitionCount}`);
    }
    const table = PartitionTable.fromWire(meta.table, partitionCount);
    if (!table.isAssigned) {
      this.host.saveMetadata();
      return;
    }
    this.host.restoreTable(table);
    const resume = (['ACTIVE', 'NO_MIGRATION', 'FROZEN', 'PASSIVE'] as const).find((s) => s === meta.clusterState) ?? 'ACTIVE';
    // The cluster is PASSIVE while it recovers (only members the table names are admitted); the
    // persisted state resumes when the recovery is over.
    this.host.holdState('PASSIVE');
    const now = this.clock.monotonicMs();
    this.recovery = { expected: table.members(), resumeState: resume, tableVersion: table.version, tableStamp: table.stamp(), reports: new Map(), startedMs: now, lastWaitLogMs: now, partialRequested: false };
    this.log.info(`persistence: recovering with partition table version ${table.version}; waiting for the ${table.members().size} member(s) it names (${this.host.config.persistence.clusterDataRecoveryPolicy}); the cluster state ${resume} resumes afterwards`);
    this.host.events?.record('recovery', `persistence: this member recovers with partition table version ${table.version}, waiting for the ${table.members().size} member(s) it names`);
  }

  handle(from: Peer, m: Message): void {
    const h = this.host;
    const fromMember = h.isMember(from.uuid) || from.uuid === h.selfUuid;
    switch (m.kind) {
      case 'recoveryReport':
        if (!h.isMaster() || !fromMember) return;
        if (this.recovery !== null) this.recovery.reports.set(from.uuid, { tableVersion: m.body.tableVersion, tableStamp: m.body.tableStamp });
        else this.answerLateReport(from);
        return;
      case 'recoveryStale':
        if (this.recovery !== null && from.uuid === h.masterUuid()) this.onStale(m.body.reason);
        return;
      case 'forceStart':
        if (this.recovery !== null && fromMember) this.startOver('forceStart');
        return;
      case 'partialStart':
        if (this.recovery !== null && h.isMaster()) this.recovery.partialRequested = true;
        if (this.recovery !== null && h.isMaster()) this.tick();
        return;
      case 'recoveryDone': {
        const state = STATE_BY_CODE[m.body.state];
        if (state !== undefined && (from.uuid === h.masterUuid() || from.uuid === h.selfUuid)) this.onDone(state);
        return;
      }
      default:
        return;
    }
  }

  /** After every view: a recovery reports again and the master decides. */
  membersChanged(): void {
    if (this.recovery !== null) this.tick();
  }

  /** Every second while recovering: report to the master; the master decides; waiting is logged. */
  tick(): void {
    const r = this.recovery;
    const h = this.host;
    if (r === null || !h.joined()) return;
    const master = h.masterUuid();
    if (master !== null) h.send(master, message('recoveryReport', { tableVersion: r.tableVersion, tableStamp: r.tableStamp }));
    if (!h.isMaster()) return;
    const missing = [...r.expected].filter((u) => !h.isMember(u) || !r.reports.has(u));
    const now = this.clock.monotonicMs();
    if (missing.length === 0) {
      const differing = [...r.expected].filter((u) => r.reports.get(u)?.tableVersion !== r.tableVersion || r.reports.get(u)?.tableStamp !== r.tableStamp);
      if (differing.length === 0) {
        this.log.info(`persistence: every member of partition table version ${r.tableVersion} is back with it; recovery is over after ${Math.round(now - r.startedMs)} ms`);
        h.events?.record('recovery', `persistence: every member of partition table version ${r.tableVersion} is back; recovery is over after ${Math.round(now - r.startedMs)} ms`);
        for (const u of h.memberUuids()) h.send(u, message('recoveryDone', { state: STATE_CODES[r.resumeState] }));
        return;
      }
      if (now - r.lastWaitLogMs >= RECOVERY_WAIT_LOG_MS) {
        r.lastWaitLogMs = now;
        this.log.warning(`persistence: recovery waits: ${differing.join(', ')} persisted another partition table than version ${r.tableVersion} (stamp ${r.tableStamp}); forceStart starts the cluster empty`);
      }
      return;
    }
    const policy = h.config.persistence.clusterDataRecoveryPolicy;
    if (policy !== 'FULL_RECOVERY_ONLY' && (r.partialRequested || now - r.startedMs >= h.config.persistence.validationTimeoutSeconds * 1000)) {
      this.startPartially(r, policy);
      return;
    }
    if (now - r.lastWaitLogMs >= RECOVERY_WAIT_LOG_MS) {
      r.lastWaitLogMs = now;
      this.log.warning(`persistence: recovery waits for ${missing.length} member(s) of the persisted partition table: ${missing.join(', ')} (${policy}, ${Math.round((now - r.startedMs) / 1000)} s so far)`);
    }
  }

  /** `forceStart` through this member: every member starts over empty. False: no recovery waits. */
  forceStart(): boolean {
    if (this.recovery === null) return false;
    const members = this.host.memberUuids();
    this.log.warning(`persistence: forceStart: ${members.length} member(s) wipe their stores and start over as new members`);
    this.host.events?.record('recovery', `persistence: forceStart: ${members.length} member(s) wipe their stores and start over as new members`);
    for (const u of members) this.host.send(u, message('forceStart', {}));
    return true;
  }

  /** `partialStart` through this member (PARTIAL policies only; the handler checks). False: no recovery waits. */
  partialStart(): boolean {
    if (this.recovery === null) return false;
    const master = this.host.joined() ? this.host.masterUuid() : this.host.selfUuid;
    if (master !== null) this.host.send(master, message('partialStart', {}));
    return true;
  }

  /**
   * Master, PARTIAL policies: start with the members that are back, grouped by the table they
   * persisted: the group with the most recent table (MOST_RECENT) or the largest group
   * (MOST_COMPLETE). The others are stale. A master outside the chosen group starts over itself
   * (a member of the group then becomes master and decides again).
   */
  private startPartially(r: Recovery, policy: string): void {
    const h = this.host;
    const groups = new Map<string, { version: number; members: string[] }>();
    for (const [u, rep] of r.reports) {
      if (!h.isMember(u) && u !== h.selfUuid) continue;
      const key = `${rep.tableVersion}/${rep.tableStamp}`;
      let g = groups.get(key);
      if (g === undefined) groups.set(key, (g = { version: rep.tableVersion, members: [] }));
      g.members.push(u);
    }
    const ranked = [...groups.entries()].sort(([, a], [, b]) =>
      policy === 'PARTIAL_RECOVERY_MOST_COMPLETE' ? b.members.length - a.members.length || b.version - a.version : b.version - a.version || b.members.length - a.members.length,
    );
    const chosen = ranked[0];
    if (chosen === undefined) return;
    const [key, group] = chosen;
    if (key !== `${r.tableVersion}/${r.tableStamp}`) {
      this.log.warning(`persistence: partial start (${policy}): the members with partition table version ${group.version} go on; this member's table (version ${r.tableVersion}) is stale`);
      this.startOver('partial start: this member persisted an older or smaller partition table');
      return;
    }
    const inGroup = new Set(group.members);
    const missing = [...r.expected].filter((u) => !inGroup.has(u));
    this.log.warning(`persistence: partial start (${policy}${r.partialRequested ? ', partialStart' : `, after ${h.config.persistence.validationTimeoutSeconds} s`}) with ${group.members.length} member(s) of partition table version ${group.version}; ${missing.length} member(s) of it are not back: ${missing.join(', ') || 'none'}`);
    h.events?.record('recovery', `persistence: partial start (${policy}) with ${group.members.length} member(s) of partition table version ${group.version}; ${missing.length} not back`);
    for (const [u] of r.reports) if (!inGroup.has(u) && h.isMember(u)) h.send(u, message('recoveryStale', { reason: `the cluster started partially with partition table version ${group.version}` }));
    for (const u of group.members) h.send(u, message('recoveryDone', { state: STATE_CODES[r.resumeState] }));
  }

  /** Master of a running cluster: a member reports a recovery (it restarted with persisted data). */
  private answerLateReport(from: Peer): void {
    if (this.host.table().members().has(from.uuid)) {
      // Still expected (its partitions stayed assigned, e.g. a rolling restart in FROZEN): it resumes.
      this.host.send(from.uuid, message('recoveryDone', { state: STATE_CODES[this.host.state()] }));
      return;
    }
    this.host.send(from.uuid, message('recoveryStale', { reason: 'the cluster went on without this member: its persisted data is stale' }));
  }

  /** The master says this member's persisted data is stale. */
  private onStale(reason: string): void {
    if (this.host.config.persistence.autoRemoveStaleData) {
      this.startOver(`stale data (${reason})`);
      return;
    }
    this.log.severe(`persistence: ${reason}; auto-remove-stale-data is false, so the data stays in ${this.persistence?.setup.dir ?? 'its directory'} and this member stops (exit status 3): remove the directory, or start the member with another base-dir`);
    this.recovery = null;
    this.host.staleStop(reason);
  }

  private startOver(reason: string): void {
    if (this.host.stopped()) return;
    this.host.startOver(reason);
  }

  private onDone(state: RequestableClusterState): void {
    if (this.recovery === null) return;
    this.recovery = null;
    // A backup's log may hold a write its owner's log lost (the owner stopped between sending the
    // backup and writing its own record): owners jump their versions, so each backup resyncs from
    // its owner on the next write instead of taking that write for one it has.
    const h = this.host;
    const t = h.table();
    for (let p = 0; p < t.partitionCount; p++) if (t.owner(p) === h.selfUuid) h.jumpVersion(p);
    this.log.info(`persistence: recovery is over; the cluster state is ${state}`);
    if (state !== h.state()) h.setState(state, 'the state persisted before the restart');
    else h.promoteDeparted();
    h.saveMetadata();
  }
}

/** The answer to data calls while a whole-cluster recovery runs (cluster.md "Persistence"). */
export function recoveringError(): GridError {
  return new GridError('ERR_DATA_RECOVERING', 'recovery in progress', { retryAfterSeconds: 5 });
}
