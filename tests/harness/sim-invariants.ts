// Invariants of the whole-cluster simulation checked after every simulated step (docs/cluster.md,
// "Why an acknowledged write survives"), so a broken one names the step that broke it, not the end
// of the run 70-100 s of virtual time later:
//   1. Every acknowledged map write is held (the keys are written once, so "at a version at least
//      its own" is: the key with its value) by at least one live member that accounts for its
//      partition: a member listed as a replica of it in its own table or in its master's table, or
//      a member that left its cluster and has the partition in its hand-back (merge replay) still to
//      do. A copy held only by members the tables no longer list is a copy about to be dropped.
//   2. Every acknowledged queue item not yet delivered is held likewise, except as many as polls are
//      in flight or in doubt (a poll removes the item on the owner before its caller hears of it).
//   3. A joined member drops a partition's data (not listed for it any more) only when another
//      member that accounts for the partition holds each acknowledged write the dropped copy held.
//   4. The partition table's version only grows on every member, for as long as it stays in one
//      cluster (a member that leaves starts again with the table of the cluster it joins).
// Checking is incremental: a partition is checked after a step that dropped, imported or removed
// data on any member, changed a table, crashed a member, finished a hand-back or acknowledged a write.
import type { ClusterNode } from '../../src/member/cluster-node.js';
import type { ReplayBacklog, ReplayCall } from '../../src/merge/merge-replay.js';
import { OP, type Mutation } from '../../src/data/replica-store.js';
import { decodeMapMerge } from '../../src/data/merge-batch.js';

export interface CheckedMember {
  readonly address: string;
  readonly uuid: string;
  readonly node: ClusterNode;
  readonly alive: boolean;
}

interface Watermark {
  tableVersion: number;
  leftCluster: number;
  clusterId: string;
  replicas: readonly (readonly (string | null)[])[];
  replay: number;
}

export class SimInvariants {
  /** Acknowledged map writes per partition: key → value. */
  private readonly writes = new Map<number, Map<string, string>>();
  /** Acknowledged queue items not delivered yet, per queue. */
  private readonly items = new Map<string, Set<string>>();
  private readonly queuePartitions = new Map<string, number>();
  private readonly dirty = new Set<number>();
  private readonly marks = new Map<string, Watermark>();
  private readonly watched = new Set<string>();
  private allDirty = false;
  /** Polls sent and not answered yet, and polls answered with an error (in doubt). */
  pollsInFlight = 0;
  pollsInDoubt = 0;
  checks = 0;
  /** Replays: a map key or queue item whose holders are printed after every step that changes them. */
  traceKey: string | null = null;
  private traced = '';

  constructor(
    private readonly members: () => readonly CheckedMember[],
    private readonly partitionCount: number,
    private readonly keyPartition: (key: string) => number,
    private readonly fail: (message: string) => never,
  ) {}

  /** A member started: watch its store's drops, imports and removals. */
  watch(m: CheckedMember): void {
    if (this.watched.has(m.uuid)) return;
    this.watched.add(m.uuid);
    m.node.store.setMutationListener('sim-invariants', (mu: Mutation) => {
      if (mu.kind === 'partitionDropped') this.onDrop(m, mu.partitionId);
      else if (mu.kind === 'partitionImported' || mu.kind === 'remove' || mu.kind === 'clear' || mu.kind === 'queueRemove' || mu.kind === 'queueClear') this.dirty.add(mu.partitionId);
      return 0;
    });
    this.allDirty = true;
  }

  crashed(): void {
    this.allDirty = true;
  }

  acknowledgedWrite(key: string, value: string): void {
    const p = this.keyPartition(key);
    let w = this.writes.get(p);
    if (w === undefined) this.writes.set(p, (w = new Map()));
    w.set(key, value);
    this.dirty.add(p);
  }

  acknowledgedItem(queue: string, partitionId: number, item: string): void {
    this.queuePartitions.set(queue, partitionId);
    let s = this.items.get(queue);
    if (s === undefined) this.items.set(queue, (s = new Set()));
    s.add(item);
    this.dirty.add(partitionId);
  }

  delivered(queue: string, item: string): void {
    this.items.get(queue)?.delete(item);
  }

  /** After every step: `label` names it in a failure. */
  afterStep(label: string): void {
    const live = this.members().filter((m) => m.alive);
    if (this.traceKey !== null) this.trace(live, label, this.traceKey);
    this.noteTables(live, label);
    if (this.allDirty) {
      this.allDirty = false;
      for (let p = 0; p < this.partitionCount; p++) this.dirty.add(p);
    }
    if (this.dirty.size === 0) return;
    const ps = [...this.dirty];
    this.dirty.clear();
    for (const p of ps) this.checkPartition(p, live, label, null);
  }

  private trace(live: readonly CheckedMember[], label: string, key: string): void {
    const byUuid = new Map(live.map((m) => [m.uuid, m]));
    const parts: string[] = [];
    for (const m of live) {
      const has: string[] = [];
      for (let p = 0; p < this.partitionCount; p++) {
        if (m.node.store.maps.peek('m', Buffer.from(key), p, 0) !== null) has.push(`map p${p}${this.accounts(m, p, byUuid) ? '' : ' (unlisted)'}`);
      }
      for (const [q, p] of this.queuePartitions) {
        if ((m.node.store.queues.exportQueue(q)?.items ?? []).some((i) => i.value.toString() === key)) has.push(`${q} p${p}${this.accounts(m, p, byUuid) ? '' : ' (unlisted)'}`);
      }
      for (const c of replayOf(m.node).outstanding) if (Buffer.from(c.op.value).includes(key)) has.push(`hand-back p${c.partitionId}`);
      if (has.length > 0) parts.push(`${m.address}${m.node.membership.isMaster ? '*' : ''}: ${has.join(', ')}`);
    }
    const line = parts.join('; ') || 'nobody';
    if (line === this.traced) return;
    this.traced = line;
    process.stdout.write(`TRACE ${key} after "${label}": ${line}\n`);
  }

  /** Invariant 4, and which partitions a table change (or a finished hand-back) makes worth checking. */
  private noteTables(live: readonly CheckedMember[], label: string): void {
    for (const m of live) {
      const t = m.node.partitions.table;
      const ms = m.node.membership;
      const replay = replayOf(m.node);
      const inReplay = replay.pending + replay.inFlight;
      const w = this.marks.get(m.uuid);
      if (w === undefined) {
        this.marks.set(m.uuid, { tableVersion: t.version, leftCluster: ms.counters.leftCluster, clusterId: ms.id, replicas: t.replicas, replay: inReplay });
        this.allDirty = true;
        continue;
      }
      if (w.leftCluster !== ms.counters.leftCluster || w.clusterId !== ms.id) {
        w.leftCluster = ms.counters.leftCluster;
        w.clusterId = ms.id;
        w.tableVersion = t.version;
        this.allDirty = true;
      } else if (t.version < w.tableVersion) {
        this.fail(`step "${label}": ${m.address} (${m.uuid}) partition table went back from v${w.tableVersion} to v${t.version} in cluster ${ms.id}`);
      }
      w.tableVersion = t.version;
      if (w.replicas !== t.replicas) {
        for (let p = 0; p < this.partitionCount; p++) if (!sameReplicas(w.replicas[p], t.replicas[p])) this.dirty.add(p);
        w.replicas = t.replicas;
      }
      if (inReplay !== w.replay) {
        if (inReplay < w.replay) this.allDirty = true;
        w.replay = inReplay;
      }
    }
  }

  /** Whether member `m` accounts for partition `p` (listed by its own or its master's table, or handing it back). */
  private accounts(m: CheckedMember, p: number, byUuid: ReadonlyMap<string, CheckedMember>): boolean {
    const ms = m.node.membership;
    if (ms.joined) {
      if ((m.node.partitions.table.replicas[p] ?? []).includes(m.uuid)) return true;
      const master = ms.master;
      const mm = master === null ? undefined : byUuid.get(master.uuid);
      if (mm !== undefined && mm.node.membership.joined && (mm.node.partitions.table.replicas[p] ?? []).includes(m.uuid)) return true;
    }
    return replayHolds(replayOf(m.node), p);
  }

  private checkPartition(p: number, live: readonly CheckedMember[], label: string, dropping: CheckedMember | null): void {
    this.checks++;
    const byUuid = new Map(live.map((m) => [m.uuid, m]));
    // A dropping member's copy is gone already (the store reports the drop after it); its hand-back counts.
    const holders = live.filter((m) => this.accounts(m, p, byUuid));
    const writes = this.writes.get(p);
    if (writes !== undefined) {
      for (const [key, value] of writes) {
        const keyBytes = Buffer.from(key, 'utf8');
        const held = holders.some((m) => m.node.store.maps.peek('m', keyBytes, p, 0)?.value.toString() === value || replayHoldsKey(replayOf(m.node), p, key, value));
        if (held) continue;
        const where = live
          .map((m) => `${m.address}${m.node.membership.isMaster ? '*' : ''}[${m.node.store.maps.peek('m', keyBytes, p, 0) === null ? 'no copy' : 'copy'}, ${this.accounts(m, p, byUuid) ? 'listed' : 'not listed'}, table v${m.node.partitions.table.version} ${JSON.stringify((m.node.partitions.table.replicas[p] ?? []).map((u) => byUuid.get(u ?? '')?.address ?? u))}]`)
          .join('; ');
        this.fail(`step "${label}": ${dropping === null ? '' : `${dropping.address} dropped partition ${p} and `}acknowledged write ${key}=${value} (partition ${p}) is held by no member that accounts for the partition: ${where}`);
      }
    }
    for (const [queue, pending] of this.items) {
      if (this.queuePartitions.get(queue) !== p || pending.size === 0) continue;
      // Items handed back are counted once the owner stores them; until then a hand-back covers the queue.
      if (holders.some((m) => replayHolds(replayOf(m.node), p))) continue;
      const held = new Set<string>();
      for (const m of holders) for (const i of m.node.store.queues.exportQueue(queue)?.items ?? []) held.add(i.value.toString());
      const missing = [...pending].filter((i) => !held.has(i));
      if (missing.length > this.pollsInFlight + this.pollsInDoubt) {
        this.fail(`step "${label}": ${dropping === null ? '' : `${dropping.address} dropped partition ${p} and `}${missing.length} acknowledged item(s) of ${queue} (partition ${p}) are held by no member that accounts for it (${missing.slice(0, 10).join(',')}), with ${this.pollsInFlight} poll(s) in flight and ${this.pollsInDoubt} in doubt`);
      }
    }
  }

  /** Invariant 3: at the drop itself, before anything else runs. */
  private onDrop(m: CheckedMember, p: number): void {
    // A member that leaves its cluster drops everything after collecting its hand-back: checked after the step.
    if (!m.node.membership.joined || !m.alive) {
      this.dirty.add(p);
      return;
    }
    this.checkPartition(p, this.members().filter((x) => x.alive), 'drop', m);
  }
}

function sameReplicas(a: readonly (string | null)[] | undefined, b: readonly (string | null)[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function replayOf(node: ClusterNode): ReplayBacklog {
  return node.handBack.backlog;
}

function replayHolds(r: ReplayBacklog, p: number): boolean {
  for (const c of r.outstanding) if (c.partitionId === p) return true;
  return false;
}

/** The map entries of a hand-back call ("key=value"), decoded once. */
const callEntries = new WeakMap<ReplayCall, Set<string>>();

function replayHoldsKey(r: ReplayBacklog, p: number, key: string, value: string): boolean {
  for (const c of r.outstanding) {
    if (c.partitionId !== p || c.op.code !== OP.MAP_MERGE) continue;
    let entries = callEntries.get(c);
    if (entries === undefined) {
      entries = new Set(decodeMapMerge(c.op.value).entries.map((e) => `${Buffer.from(e.key).toString()}=${Buffer.from(e.value).toString()}`));
      callEntries.set(c, entries);
    }
    if (entries.has(`${key}=${value}`)) return true;
  }
  return false;
}
