// A seeded simulation of one Raft group of 3, 5 or 7 members under the fault model of the cluster
// simulation: crashes with a restart on the member's disk (quick ones too), pauses, partitions
// (a minority cut off, the leader isolated, one-way, a bridge), single-message loss, duplication
// and reordering, and membership changes (a member removed and a new one added) under load.
// Virtual time; one seed replays one run exactly.
//
// Checked after every ready batch (tests/harness/raft-group.ts): at most one leader per term,
// log matching, leader completeness, state-machine safety, commit never back. Checked along the
// way: a linearizable read's index is at least that of every write acknowledged before it was
// asked. Checked at the end, after every fault is undone: one leader, every member applied the
// same commands, and every acknowledged command is among them at its index.
import { InvariantError, RaftGroup, encode } from '../harness/raft-group.js';
import type { GroupMember } from '../harness/raft-group.js';
import type { RaftMessage } from '../../src/cp/raft/types.js';
import { SeededRandom } from '../../src/util/prng.js';
import { decodeRaftMessage, encodeRaftMessage } from '../../src/cp/raft/wire.js';

const WIRE_LIMITS = { dataBytesMax: 1024 * 1024, entriesMax: 1000 };

export interface RaftSimOptions {
  readonly seed: number;
  readonly verbose?: boolean;
  /** Virtual seconds of faults and load (then 30 s to settle). */
  readonly seconds?: number;
}

export interface RaftSimReport {
  readonly seed: number;
  readonly size: number;
  readonly acknowledged: number;
  readonly reads: number;
  readonly elections: number;
  readonly crashes: number;
  readonly pauses: number;
  readonly partitions: number;
  readonly membershipChanges: number;
  readonly snapshotsInstalled: number;
}

const TICK_MS = 100;

export class Heap {
  private readonly a: { at: number; seq: number; run: () => void }[] = [];
  private seq = 0;
  push(at: number, run: () => void): void {
    const a = this.a;
    a.push({ at, seq: this.seq++, run });
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(a[p] as never, a[i] as never)) break;
      [a[p], a[i]] = [a[i] as never, a[p] as never];
      i = p;
    }
  }
  pop(): { at: number; run: () => void } | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && less(a[l] as never, a[m] as never)) m = l;
        if (r < a.length && less(a[r] as never, a[m] as never)) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i] as never, a[m] as never];
        i = m;
      }
    }
    return top;
  }
}

function less(x: { at: number; seq: number }, y: { at: number; seq: number }): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}

export function runRaftSim(o: RaftSimOptions): RaftSimReport {
  const rnd = new SeededRandom(o.seed * 7919 + 17);
  const size = [3, 5, 7][rnd.nextInt(3)] as number;
  let nextId = 1;
  const ids = Array.from({ length: size }, () => `c${nextId++}`);
  const g = new RaftGroup(ids, {
    raft: { tickMs: TICK_MS, electionTimeoutMs: 1000, electionJitterMs: 1000, heartbeatPeriodMs: 1000, missedHeartbeatsMax: 3, appendBackoffMs: 100, uncommittedEntriesMax: 50, entriesKeptAfterSnapshot: 5, snapshotChunkBytes: 64 + rnd.nextInt(512), appendEntriesMax: 1 + rnd.nextInt(20) },
    seed: o.seed,
    snapshotEvery: 10 + rnd.nextInt(40),
  });
  const seconds = o.seconds ?? 40;
  const endMs = seconds * 1000;
  const settleMs = endMs + 30_000;
  const heap = new Heap();
  let now = 0;
  const log = (s: string): void => {
    if (o.verbose === true) console.log(`[${now}ms] ${s}`);
  };
  const fail = (s: string): never => {
    throw new InvariantError(`seed=${o.seed} t=${now}ms: ${s}`);
  };
  const counts = { acknowledged: 0, reads: 0, crashes: 0, pauses: 0, partitions: 0, membershipChanges: 0 };
  const paused = new Set<string>();
  const down = new Set<string>();
  const heldFor = new Map<string, RaftMessage[]>();
  let faultsOn = true;
  let loss = 0.01;

  // ---- Network: every batch's messages get a delay; cut pairs and members down drop them. ----
  const flush = (): void => {
    try {
      g.process();
    } catch (e) {
      fail((e as Error).message);
    }
    const out = g.inbox;
    g.inbox = [];
    for (const sent of out) {
      if (faultsOn && rnd.next() < loss) continue;
      // Every message crosses the wire codec, as between real members.
      const msg = decodeRaftMessage(encodeRaftMessage(sent), WIRE_LIMITS);
      const copies = faultsOn && rnd.next() < 0.01 ? 2 : 1;
      for (let c = 0; c < copies; c++) {
        const delay = 1 + rnd.nextInt(rnd.next() < 0.1 ? 150 : 8);
        heap.push(now + delay, () => receive(msg));
      }
    }
  };
  const receive = (msg: RaftMessage): void => {
    if (g.cut.has(`${msg.from}>${msg.to}`) || down.has(msg.to) || !g.members.has(msg.to)) return;
    if (paused.has(msg.to)) {
      const list = heldFor.get(msg.to) ?? [];
      list.push(msg);
      heldFor.set(msg.to, list);
      return;
    }
    const m = g.get(msg.to);
    m.core.step(msg);
    flush();
  };

  // ---- Ticks: each member on its own phase. ----
  const scheduleTicks = (id: string, phase: number): void => {
    const t = (): void => {
      if (!g.members.has(id)) return;
      if (!down.has(id) && !paused.has(id)) {
        g.get(id).core.tick();
        flush();
      }
      heap.push(now + TICK_MS, t);
    };
    heap.push(now + phase, t);
  };
  for (const id of ids) scheduleTicks(id, rnd.nextInt(TICK_MS));

  // ---- Clients: proposals to whoever leads, reads at the leader. ----
  const pending = new Map<string, Map<number, { term: number; command: string }>>();
  const acked: { index: number; command: string }[] = [];
  let ackedIndexMax = 0;
  let commandSeq = 0;
  const readAsk = new Map<number, { floor: number; member: string }>();
  let readSeq = 0;
  const leaderNow = (): GroupMember | undefined => {
    const l = g.leader();
    return l !== undefined && !down.has(l.id) && !paused.has(l.id) ? l : undefined;
  };
  // Any member that believes it leads takes calls, a deposed one cut off too: its entries must
  // never be acknowledged unless they commit.
  const anyLeader = (): GroupMember | undefined => {
    const ls = [...g.members.values()].filter((m) => m.up && !down.has(m.id) && !paused.has(m.id) && m.core.status().role === 'leader');
    return ls[rnd.nextInt(ls.length)];
  };
  const client = (): void => {
    if (now < endMs + 20_000) heap.push(now + 5 + rnd.nextInt(60), client);
    const l = anyLeader();
    if (l === undefined) return;
    if (rnd.next() < 0.25) {
      const ctx = ++readSeq;
      if (l.core.readIndex(ctx) === null) readAsk.set(ctx, { floor: ackedIndexMax, member: l.id });
    } else {
      const command = `w${++commandSeq}`;
      const r = l.core.propose(encode(command));
      if (r.ok) {
        const p = pending.get(l.id) ?? new Map();
        p.set(r.index, { term: r.term, command });
        pending.set(l.id, p);
      }
    }
    flush();
  };
  heap.push(500, client);

  // Acknowledgements: a proposal is acknowledged when its member applies it at its index and term.
  const checkApplied = (): void => {
    for (const [id, p] of pending) {
      const m = g.members.get(id);
      if (m === undefined || down.has(id)) {
        pending.delete(id);
        continue;
      }
      for (const [index, want] of p) {
        if (index > m.lastApplied) continue;
        p.delete(index);
        if (m.applied.get(index) === want.command && m.core.termAt(index) === want.term) {
          acked.push({ index, command: want.command });
          counts.acknowledged++;
          if (index > ackedIndexMax) ackedIndexMax = index;
        }
      }
    }
    for (const m of g.members.values()) {
      for (const r of m.reads.splice(0)) {
        const ask = readAsk.get(r.ctx);
        if (ask === undefined) continue;
        readAsk.delete(r.ctx);
        if (r.index < ask.floor) fail(`read ${r.ctx} at ${m.id} answered at index ${r.index}, below a write acknowledged before it was asked (${ask.floor})`);
        counts.reads++;
      }
    }
  };
  const watcher = (): void => {
    checkApplied();
    if (now < settleMs) heap.push(now + 10, watcher);
  };
  heap.push(10, watcher);

  // ---- Faults, one at a time, each undone before the next. ----
  const live = (): string[] => [...g.members.keys()].filter((u) => !down.has(u));
  const memberGoneAfter = (id: string, ms: number): void => {
    heap.push(now + ms, () => {
      if (!down.has(id) && !paused.has(id)) return; // back already: the cluster did not remove it
      for (const m of g.members.values()) if (m.id !== id && !down.has(m.id) && !paused.has(m.id)) m.core.memberGone(id);
      flush();
    });
  };
  const fault = (): void => {
    if (now >= endMs) return;
    const kinds = ['crash', 'quick', 'pause', 'minority', 'isolateLeader', 'oneWay', 'bridge', 'replace', 'loss', 'churn', 'churn'];
    const kind = kinds[rnd.nextInt(kinds.length)] as string;
    const members = live();
    const pick = (): string => members[rnd.nextInt(members.length)] as string;
    let duration = 1000 + rnd.nextInt(8000);
    switch (kind) {
      case 'crash':
      case 'quick': {
        const id = kind === 'crash' && rnd.next() < 0.5 ? (leaderNow()?.id ?? pick()) : pick();
        if (kind === 'quick') duration = 50 + rnd.nextInt(300);
        log(`FAULT crash ${id} for ${duration} ms`);
        counts.crashes++;
        down.add(id);
        g.crash(id);
        memberGoneAfter(id, 1000);
        heap.push(now + duration, () => {
          down.delete(id);
          g.restart(id);
          log(`restart ${id}`);
          flush();
        });
        break;
      }
      case 'pause': {
        const id = rnd.next() < 0.5 ? (leaderNow()?.id ?? pick()) : pick();
        duration = 500 + rnd.nextInt(15_000);
        log(`FAULT pause ${id} for ${duration} ms`);
        counts.pauses++;
        paused.add(id);
        g.get(id).up = false;
        if (duration > 3000) memberGoneAfter(id, 3000);
        heap.push(now + duration, () => {
          paused.delete(id);
          g.get(id).up = true;
          const held = heldFor.get(id) ?? [];
          heldFor.delete(id);
          for (const msg of held) heap.push(now + rnd.nextInt(5), () => receive(msg));
          log(`resume ${id}`);
          flush();
        });
        break;
      }
      case 'minority':
      case 'isolateLeader':
      case 'oneWay':
      case 'bridge': {
        counts.partitions++;
        const all = [...g.members.keys()];
        const shuffled = all.map((u) => ({ u, k: rnd.next() })).sort((a, b) => a.k - b.k).map((x) => x.u);
        const l = leaderNow()?.id;
        let side: string[];
        if (kind === 'isolateLeader' && l !== undefined) side = [l];
        else side = shuffled.slice(0, 1 + rnd.nextInt(Math.max(1, Math.floor(all.length / 2))));
        const other = all.filter((u) => !side.includes(u));
        const bridge = kind === 'bridge' && other.length > 1 ? other[0] : undefined;
        for (const a of side) {
          for (const b of other) {
            if (b === bridge) continue;
            g.cut.add(`${a}>${b}`);
            if (kind !== 'oneWay') g.cut.add(`${b}>${a}`);
          }
        }
        log(`FAULT ${kind} [${side.join(',')}] | [${other.join(',')}]${bridge !== undefined ? ` bridge ${bridge}` : ''} for ${duration} ms`);
        heap.push(now + duration, () => {
          g.heal();
          log('heal');
        });
        break;
      }
      case 'churn': {
        // Leaders crash one after another, each soon after it was elected, some while their last
        // entries reached only a few members, and come back: elections over diverging logs.
        duration = 4000 + rnd.nextInt(8000);
        const until = now + duration;
        log(`FAULT churn for ${duration} ms`);
        const step = (): void => {
          if (now >= until) return;
          const l = leaderNow();
          if (l !== undefined && !down.has(l.id)) {
            const id = l.id;
            const others = [...g.members.keys()].filter((u) => u !== id);
            // Cut it off from most of the group first, so its next entries reach a minority.
            const reach = others.filter(() => rnd.next() < 0.3);
            for (const u of others) if (!reach.includes(u)) g.cut.add(`${id}>${u}`);
            heap.push(now + 20 + rnd.nextInt(200), () => {
              for (const u of others) g.cut.delete(`${id}>${u}`);
              if (down.has(id)) return;
              counts.crashes++;
              down.add(id);
              g.crash(id);
              log(`churn: crash ${id}`);
              memberGoneAfter(id, 300 + rnd.nextInt(700));
              heap.push(now + 100 + rnd.nextInt(1500), () => {
                down.delete(id);
                g.restart(id);
                log(`churn: restart ${id}`);
                flush();
              });
            });
          }
          heap.push(now + 300 + rnd.nextInt(1200), step);
        };
        step();
        break;
      }
      case 'loss': {
        loss = 0.2;
        log(`FAULT loss 20% for ${duration} ms`);
        heap.push(now + duration, () => {
          loss = 0.01;
        });
        break;
      }
      case 'replace': {
        const l = leaderNow();
        if (l === undefined || l.core.status().members.length !== size) break;
        const victim = l.core.status().members[rnd.nextInt(size)] as string;
        const r = l.core.proposeMembers({ remove: victim });
        if (!r.ok) break;
        counts.membershipChanges++;
        log(`FAULT remove ${victim} (leader ${l.id}), then add a new member`);
        flush();
        const added = `c${nextId++}`;
        const tryAdd = (): void => {
          const l2 = leaderNow();
          if (l2 !== undefined && !l2.core.status().members.includes(victim) && !l2.core.status().members.includes(added)) {
            if (!g.members.has(added)) {
              g.add(added, []);
              scheduleTicks(added, rnd.nextInt(TICK_MS));
            }
            if (l2.core.proposeMembers({ add: added }).ok) {
              log(`add ${added} (leader ${l2.id})`);
              flush();
              return;
            }
          }
          if (l2 !== undefined && l2.core.status().members.includes(added)) return;
          if (now < settleMs - 15_000) heap.push(now + 200, tryAdd);
        };
        heap.push(now + 200, tryAdd);
        // The removed member's process goes away once the change is through.
        heap.push(now + 5000, () => {
          const l3 = leaderNow();
          if (l3 !== undefined && !l3.core.status().members.includes(victim) && l3.core.status().commit >= l3.core.status().lastIndex - 50) {
            down.add(victim);
            g.crash(victim);
            log(`stop ${victim} (removed)`);
          }
        });
        duration = 6000;
        break;
      }
    }
    heap.push(now + duration + 500 + rnd.nextInt(2500), fault);
  };
  heap.push(2000 + rnd.nextInt(3000), fault);

  // ---- The end: every fault undone, then settle. ----
  heap.push(endMs, () => {
    faultsOn = false;
    log('faults end');
  });
  for (;;) {
    const ev = heap.pop();
    if (ev === undefined || ev.at > settleMs) break;
    now = ev.at;
    ev.run();
  }
  g.heal();
  checkApplied();
  const members = [...g.members.values()].filter((m) => !down.has(m.id) && !paused.has(m.id));
  const leader = leaderNow();
  if (leader === undefined) fail(`no leader ${(settleMs - endMs) / 1000} s after the faults ended (${members.map((m) => `${m.id}:${m.core.status().role}/t${m.core.status().term}`).join(' ')})`);
  const groupMembers = (leader as GroupMember).core.status().members;
  const lastApplied = (leader as GroupMember).lastApplied;
  for (const m of members) {
    if (!groupMembers.includes(m.id)) continue;
    if (m.lastApplied !== lastApplied) {
      if (o.verbose === true) for (const x of members) console.log(x.id, JSON.stringify(x.core.status()), JSON.stringify((x.core as unknown as { progress: Map<string, unknown> }).progress.get(m.id) ?? null));
      fail(`${m.id} applied up to ${m.lastApplied}, the leader ${lastApplied}`);
    }
  }
  for (const a of acked) {
    for (const m of members) {
      if (!groupMembers.includes(m.id)) continue;
      if (m.applied.get(a.index) !== a.command) fail(`acknowledged ${a.command} at ${a.index} is not applied there on ${m.id} (${m.applied.get(a.index)})`);
    }
  }
  let elections = g.retired.electionsStarted;
  let snapshotsInstalled = g.retired.snapshotsInstalled;
  for (const m of g.members.values()) {
    elections += m.core.counters.electionsStarted;
    snapshotsInstalled += m.core.counters.snapshotsInstalled;
  }
  return { seed: o.seed, size, ...counts, elections, snapshotsInstalled };
}
