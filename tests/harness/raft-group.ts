// Raft groups in one process, for unit tests and the seeded simulation: RaftCore members with a
// simulated disk (what each ready batch asked to persist, and nothing else), a state machine that
// records the commands applied, and a network the caller drives: `deliver` moves messages now,
// and the simulation (tests/harness/raft-sim.ts) delays, loses, duplicates and reorders them.
//
// Every ready batch goes through the same checks the simulation relies on: an entry at an index
// and term is the same everywhere and follows the same previous term (log matching, checked as
// entries are persisted), at most one leader per term, a new leader holds every committed entry
// (leader completeness), every member applies the same command at an index (state-machine
// safety), and commit and applied indexes never go back within a member's life or across a
// restart on its disk.
import { RaftCore } from '../../src/cp/raft/core.js';
import type { RaftCounters, RaftRestored } from '../../src/cp/raft/core.js';
import { RAFT_DEFAULTS } from '../../src/cp/raft/types.js';
import type { Entry, HardState, RaftMessage, RaftOptions, ReadState, Snapshot } from '../../src/cp/raft/types.js';
import { SeededRandom } from '../../src/util/prng.js';

export class InvariantError extends Error {
  override name = 'InvariantError';
}

/** What a member has on its (simulated) disk. */
export interface Disk {
  hard: HardState;
  snapshot: Snapshot;
  entries: Entry[];
}

export interface GroupMember {
  readonly id: string;
  core: RaftCore;
  disk: Disk;
  /** Applied commands, by index (the state machine: a list of what was applied). */
  applied: Map<number, string>;
  lastApplied: number;
  reads: ReadState[];
  up: boolean;
}

const text = new TextDecoder();
const bytes = new TextEncoder();

/** The state machine's snapshot: the applied commands as `index=command` lines. */
function encodeState(applied: Map<number, string>, upTo: number): Uint8Array {
  const lines: string[] = [];
  for (const [i, c] of applied) if (i <= upTo) lines.push(`${i}=${c}`);
  return bytes.encode(lines.join('\n'));
}

function decodeState(data: Uint8Array): Map<number, string> {
  const m = new Map<number, string>();
  const s = text.decode(data);
  if (s.length === 0) return m;
  for (const line of s.split('\n')) {
    const eq = line.indexOf('=');
    m.set(Number(line.slice(0, eq)), line.slice(eq + 1));
  }
  return m;
}

export interface GroupOptions {
  readonly raft?: Partial<RaftOptions>;
  readonly seed?: number;
  /** Take a snapshot after this many applied entries (0 = never). */
  readonly snapshotEvery?: number;
}

export class RaftGroup {
  readonly members = new Map<string, GroupMember>();
  readonly opts: RaftOptions;
  /** Messages sent and not delivered yet, in order. */
  inbox: RaftMessage[] = [];
  /** from→to pairs whose messages are dropped. */
  readonly cut = new Set<string>();
  private readonly random: SeededRandom;
  private readonly snapshotEvery: number;
  // Checker state.
  private readonly entryAt = new Map<string, { data: string; kind: string; prevTerm: number | undefined }>();
  private readonly leaders = new Map<number, string>();
  /** Committed entries as far as anyone knows: index → term. */
  readonly committed = new Map<number, number>();
  private maxCommitted = 0;
  readonly appliedAt = new Map<number, string>();
  private readonly commitFloor = new Map<string, number>();
  /** Counters of the cores that crashed (a restart starts a core with zeros). */
  readonly retired: RaftCounters = { electionsStarted: 0, leaderships: 0, appendBatches: 0, appendEntries: 0, refusedProposals: 0, snapshotsSent: 0, snapshotsInstalled: 0 };
  /** Every message delivered, by type (for tests that count). */
  readonly sentCount = new Map<string, number>();

  constructor(ids: readonly string[], o: GroupOptions = {}) {
    this.opts = { ...RAFT_DEFAULTS, ...o.raft };
    this.random = new SeededRandom(o.seed ?? 1);
    this.snapshotEvery = o.snapshotEvery ?? 0;
    for (const id of ids) this.add(id, ids);
  }

  /** A member with an empty disk: `members` is the list it starts with (empty for one joining a running group). */
  add(id: string, members: readonly string[]): GroupMember {
    const disk: Disk = { hard: { term: 0, vote: null, commit: 0 }, snapshot: { index: 0, term: 0, members: [...members], data: new Uint8Array(0) }, entries: [] };
    const m: GroupMember = { id, core: this.boot(id, disk), disk, applied: new Map(), lastApplied: 0, reads: [], up: true };
    this.members.set(id, m);
    return m;
  }

  private boot(id: string, disk: Disk): RaftCore {
    const restored: RaftRestored = { hardState: disk.hard, snapshot: disk.snapshot, entries: [...disk.entries] };
    return new RaftCore(id, this.opts, new SeededRandom(this.random.nextInt(2 ** 31)), restored);
  }

  get(id: string): GroupMember {
    const m = this.members.get(id);
    if (m === undefined) throw new Error(`no member ${id}`);
    return m;
  }

  /** Runs every ready batch of every member that is up, until none has one. */
  process(): void {
    for (let guard = 0; guard < 10_000; guard++) {
      let any = false;
      for (const m of this.members.values()) {
        if (!m.up || !m.core.hasReady()) continue;
        any = true;
        this.handleReady(m);
      }
      if (!any) return;
    }
    throw new Error('ready batches did not settle');
  }

  private handleReady(m: GroupMember): void {
    const r = m.core.ready();
    // Persist.
    if (r.hardState !== null) {
      if (r.hardState.term < m.disk.hard.term) throw new InvariantError(`${m.id}: term went back from ${m.disk.hard.term} to ${r.hardState.term}`);
      m.disk.hard = r.hardState;
    }
    if (r.snapshot !== null) {
      m.disk.snapshot = r.snapshot;
      m.disk.entries = [];
    }
    for (const e of r.entries) {
      this.checkEntry(m, e);
      const at = m.disk.entries.findIndex((x) => x.index >= e.index);
      if (at >= 0) m.disk.entries.length = at;
      m.disk.entries.push(e);
    }
    // Send.
    for (const msg of r.messages) this.inbox.push(msg);
    // Install and apply.
    if (r.snapshot !== null) {
      m.applied = decodeState(r.snapshot.data);
      m.lastApplied = r.snapshot.index;
    }
    for (const e of r.committed) this.apply(m, e);
    for (const read of r.reads) m.reads.push(read);
    if (r.status !== null && r.status.role === 'leader') this.checkLeader(m, r.status.term);
    const st = m.core.status();
    const floor = this.commitFloor.get(m.id) ?? 0;
    if (st.commit < floor) throw new InvariantError(`${m.id}: commit index went back from ${floor} to ${st.commit}`);
    this.commitFloor.set(m.id, st.commit);
    for (let i = Math.max(st.firstIndex, this.maxCommitted + 1); i <= st.commit; i++) this.committed.set(i, m.core.termAt(i) as number);
    if (st.commit > this.maxCommitted) this.maxCommitted = st.commit;
    m.core.advance();
    if (this.snapshotEvery > 0 && m.lastApplied - m.core.status().snapshotIndex >= this.snapshotEvery) {
      m.core.compact(m.lastApplied, encodeState(m.applied, m.lastApplied));
      const s = m.core.status();
      m.disk.snapshot = { index: m.lastApplied, term: m.core.termAt(m.lastApplied) as number, members: [...s.members], data: encodeState(m.applied, m.lastApplied) };
      m.disk.entries = m.disk.entries.filter((e) => e.index > m.lastApplied);
    }
  }

  private checkEntry(m: GroupMember, e: Entry): void {
    const key = `${e.index}/${e.term}`;
    const data = e.kind === 'config' ? `config:${(e.members ?? []).join(',')}` : text.decode(e.data);
    const prevTerm = m.core.termAt(e.index - 1);
    const seen = this.entryAt.get(key);
    if (seen === undefined) {
      this.entryAt.set(key, { data, kind: e.kind, prevTerm });
      return;
    }
    if (seen.data !== data || seen.kind !== e.kind) throw new InvariantError(`log matching: ${m.id} holds another entry at index ${e.index} term ${e.term}`);
    if (prevTerm !== undefined && seen.prevTerm !== undefined && prevTerm !== seen.prevTerm) throw new InvariantError(`log matching: ${m.id} holds entry ${e.index}/${e.term} after term ${prevTerm}, another member after term ${seen.prevTerm}`);
  }

  private checkLeader(m: GroupMember, term: number): void {
    const other = this.leaders.get(term);
    if (other !== undefined && other !== m.id) throw new InvariantError(`two leaders in term ${term}: ${other} and ${m.id}`);
    this.leaders.set(term, m.id);
    const st = m.core.status();
    for (const [i, t] of this.committed) {
      if (i <= st.snapshotIndex) continue;
      const held = m.core.termAt(i);
      if (held !== t) throw new InvariantError(`leader completeness: ${m.id}, leader of term ${term}, holds term ${held} at committed index ${i} (term ${t})`);
    }
  }

  private apply(m: GroupMember, e: Entry): void {
    if (e.index !== m.lastApplied + 1) throw new InvariantError(`${m.id} applied ${e.index} after ${m.lastApplied}`);
    const command = e.kind === 'data' ? text.decode(e.data) : `<${e.kind}>`;
    const first = this.appliedAt.get(e.index);
    if (first === undefined) this.appliedAt.set(e.index, command);
    else if (first !== command) throw new InvariantError(`state-machine safety: ${m.id} applied ${JSON.stringify(command)} at ${e.index}, another member ${JSON.stringify(first)}`);
    m.applied.set(e.index, command);
    m.lastApplied = e.index;
  }

  /** Delivers every message in the inbox (and those they cause) until quiet, dropping cut pairs and members that are down. */
  deliver(max = 100_000): void {
    this.process();
    for (let n = 0; n < max; n++) {
      const msg = this.inbox.shift();
      if (msg === undefined) return;
      this.deliverOne(msg);
      this.process();
    }
    throw new Error('messages did not settle');
  }

  deliverOne(msg: RaftMessage): void {
    this.sentCount.set(msg.type, (this.sentCount.get(msg.type) ?? 0) + 1);
    if (this.cut.has(`${msg.from}>${msg.to}`)) return;
    const to = this.members.get(msg.to);
    if (to === undefined || !to.up) return;
    to.core.step(msg);
  }

  /** Ticks every member that is up `n` times, delivering everything after each tick. */
  tick(n = 1, ids?: readonly string[]): void {
    for (let i = 0; i < n; i++) {
      for (const m of this.members.values()) if (m.up && (ids === undefined || ids.includes(m.id))) m.core.tick();
      this.deliver();
    }
  }

  /** Ticks until `pred` holds, at most `max` ticks. */
  tickUntil(pred: () => boolean, max = 10_000): number {
    for (let i = 0; i < max; i++) {
      if (pred()) return i;
      this.tick();
    }
    if (pred()) return max;
    throw new Error(`not reached within ${max} ticks`);
  }

  leader(): GroupMember | undefined {
    let best: GroupMember | undefined;
    for (const m of this.members.values()) {
      if (!m.up) continue;
      const st = m.core.status();
      if (st.role === 'leader' && (best === undefined || st.term > best.core.status().term)) best = m;
    }
    return best;
  }

  isolate(id: string): void {
    for (const o of this.members.keys()) {
      if (o === id) continue;
      this.cut.add(`${id}>${o}`);
      this.cut.add(`${o}>${id}`);
    }
  }

  heal(): void {
    this.cut.clear();
  }

  /** A crash: the process and everything not on disk are gone. */
  crash(id: string): void {
    const m = this.get(id);
    m.up = false;
    for (const k of Object.keys(this.retired) as (keyof RaftCounters)[]) {
      this.retired[k] += m.core.counters[k];
      m.core.counters[k] = 0;
    }
    this.inbox = this.inbox.filter((x) => x.to !== id && x.from !== id);
  }

  /** A restart on the member's disk: the state machine is rebuilt from the snapshot and the log. */
  restart(id: string): void {
    const m = this.get(id);
    m.core = this.boot(id, m.disk);
    m.applied = decodeState(m.disk.snapshot.data);
    m.lastApplied = m.disk.snapshot.index;
    m.reads = [];
    m.up = true;
    const floor = this.commitFloor.get(id) ?? 0;
    if (m.disk.hard.commit < floor && m.disk.snapshot.index < floor) throw new InvariantError(`${id}: restarted with commit ${m.disk.hard.commit} below ${floor}`);
  }

  /** Proposes `command` on the current leader; returns the index, or null when refused or there is no leader. */
  propose(command: string): { index: number; term: number } | null {
    const l = this.leader();
    if (l === undefined) return null;
    const r = l.core.propose(bytes.encode(command));
    return r.ok ? { index: r.index, term: r.term } : null;
  }
}

export function encode(s: string): Uint8Array {
  return bytes.encode(s);
}
