// Where the replicas of every partition should live: the master's target table, the promotion after a
// crash, and the partitions that still differ from the target (the migration queue). Pure functions
// over the partition table; the migration planner turns the difference into safe single steps.
//
// A current table that already meets the rules of the result (below) is the target as it is, so a
// balanced cluster never migrates. Otherwise assignTarget works one replica index at a time, owners
// first, like Hazelcast's PartitionStateGenerator. For each index it
//   1. sets a quota per member: floor(P/M) or ceil(P/M), the extra ones going to the members with the
//      fewest replicas over the earlier indices (so totals stay within ±1 as well), then to those
//      that already hold the most at this index (so fewer moves), then in join order;
//   2. keeps each current replica where its member still has quota; a member over quota keeps the
//      partitions nobody else could take cheaply and gives up the others;
//   3. fills a gap with a member that already holds a copy of the partition at another index (a
//      promotion or demotion, no data copy), then with a member with quota left: the one that
//      follows the partition's earlier replicas least often (so a crashed member's partitions are
//      promoted onto many members), then the one with the most quota left (new or underloaded);
//   4. if a gap is left because every member with quota already holds the partition, it moves
//      replicas along an augmenting path (partition ← member ← partition ...) until one ends at a
//      member with quota.
// Going index by index can paint itself into a corner when partitions are few for M·width (the last
// index is forced when every member holds every partition), so two repair passes follow, which
// rarely have anything to do: while one member's total exceeds another's by two, the first hands one
// replica to the second; then de Werra's equitable edge colouring: while a member holds two more
// replicas at index a than at index b, walk an a/b alternating trail from it to a member with more
// at b and swap a and b along it. Totals within ±1 and each member's index counts within ±1 of each
// other give floor/ceil(P/M) at every index. Index swaps never change who holds a partition.
// Invariants of the result: every list has min(width, M) distinct members followed by nulls; each
// member's count at each index is floor(P/M) or ceil(P/M), its total within ±1 of any other's.
// Same input, same output: all ties go to the lower partition id and the earlier member.
// Cost O(P·M·W²) for the index passes (W <= 7); augmenting paths and repairs cost O(P·M) each and
// are rare.
import { assert } from '../util/assert.js';
import type { PartitionTable, Replicas } from './table.js';
import { sameReplicas } from './table.js';

const NONE = -1;

/** The replica lists the master wants for `dataMembers` (join order; live, non-lite, not leaving).
 * Lists have the table's width; the first min(width, dataMembers.length) slots are filled. */
export function assignTarget(current: PartitionTable, dataMembers: readonly string[], width: number): Replicas[] {
  assert(Number.isInteger(width) && width >= 1 && width <= current.width, `replica width ${width} of table width ${current.width}`);
  const memberIndex = new Map<string, number>();
  dataMembers.forEach((uuid, m) => {
    assert(!memberIndex.has(uuid), `member ${uuid} listed twice`);
    memberIndex.set(uuid, m);
  });
  const layout = new Layout(current, memberIndex, Math.min(width, dataMembers.length));
  if (isBalanced(layout)) return current.replicas.slice();
  const cumulative = new Array<number>(dataMembers.length).fill(0);
  for (let i = 0; i < layout.filled; i++) {
    assignIndex(layout, i, cumulative);
    for (let p = 0; p < layout.partitions; p++) (cumulative[layout.target(p, i)] as number)++;
  }
  evenOutTotals(layout);
  evenOutIndices(layout);
  return layout.toReplicas(dataMembers);
}

/** The changes when `removed` members are gone at once: each list loses them and the later replicas
 * move up (the first surviving backup becomes owner, no data copy), nulls at the end. Only the
 * partitions that change are in the map. */
export function promoteAfterRemoval(current: PartitionTable, removed: ReadonlySet<string>): Map<number, Replicas> {
  const changes = new Map<number, Replicas>();
  current.replicas.forEach((r, p) => {
    if (!r.some((u) => u !== null && removed.has(u))) return;
    const kept: (string | null)[] = r.filter((u) => u !== null && !removed.has(u));
    while (kept.length < r.length) kept.push(null);
    changes.set(p, kept);
  });
  return changes;
}

/** Ids of the partitions whose replica list differs from the target, ascending: the remaining plan. */
export function migrationQueue(current: PartitionTable, target: readonly Replicas[]): number[] {
  assert(target.length === current.partitionCount, 'one target list per partition');
  const out: number[] = [];
  current.replicas.forEach((r, p) => {
    if (!sameReplicas(r, target[p] as Replicas)) out.push(p);
  });
  return out;
}

/** How many replicas of the list are held by members in `live`. */
export function liveReplicaCount(r: Replicas, live: ReadonlySet<string>): number {
  let n = 0;
  for (const u of r) if (u !== null && live.has(u)) n++;
  return n;
}

/** A whole table or just its replica lists. */
export type ReplicaLayout = PartitionTable | readonly Replicas[];

/** True when no partition has fewer replicas on `live` members in `next` than in `current`: the
 * safety rule of every migration step. */
export function checkNeverFewer(current: ReplicaLayout, next: ReplicaLayout, live: ReadonlySet<string>): boolean {
  const a = 'replicas' in current ? current.replicas : current;
  const b = 'replicas' in next ? next.replicas : next;
  assert(a.length === b.length, 'layouts of the same partition count');
  for (let p = 0; p < a.length; p++) {
    if (liveReplicaCount(b[p] as Replicas, live) < liveReplicaCount(a[p] as Replicas, live)) return false;
  }
  return true;
}

/** Member numbers (join order) of the current table and the target being built, flat typed arrays. */
class Layout {
  readonly partitions: number;
  /** Slots per current list (the table width). */
  readonly held: number;
  /** Slots to fill per target list: min(width, member count). */
  readonly filled: number;
  readonly members: number;
  private readonly heldAt: Int32Array;
  private readonly targetAt: Int32Array;

  constructor(
    private readonly table: PartitionTable,
    memberIndex: ReadonlyMap<string, number>,
    filled: number,
  ) {
    this.partitions = table.partitionCount;
    this.held = table.width;
    this.filled = filled;
    this.members = memberIndex.size;
    this.heldAt = new Int32Array(this.partitions * this.held).fill(NONE);
    this.targetAt = new Int32Array(this.partitions * filled).fill(NONE);
    table.replicas.forEach((r, p) => {
      r.forEach((u, j) => {
        if (u !== null) this.heldAt[p * this.held + j] = memberIndex.get(u) ?? NONE;
      });
    });
  }

  /** Current member at index j of partition p (NONE when empty or not a data member). */
  current(p: number, j: number): number {
    return this.heldAt[p * this.held + j] as number;
  }

  /** True when slot j of partition p is empty in the current table (not merely a non-data member). */
  isEmpty(p: number, j: number): boolean {
    return this.table.replicas[p]?.[j] === null;
  }

  target(p: number, i: number): number {
    return this.targetAt[p * this.filled + i] as number;
  }

  setTarget(p: number, i: number, m: number): void {
    this.targetAt[p * this.filled + i] = m;
  }

  /** True when m already has a target slot of p before index i. */
  placedBefore(p: number, i: number, m: number): boolean {
    for (let k = 0; k < i; k++) if (this.targetAt[p * this.filled + k] === m) return true;
    return false;
  }

  /** Target index of m in partition p, or NONE. */
  targetIndexOf(p: number, m: number): number {
    for (let k = 0; k < this.filled; k++) if (this.targetAt[p * this.filled + k] === m) return k;
    return NONE;
  }

  /** True when m holds a replica of p in the current table. */
  holds(p: number, m: number): boolean {
    for (let j = 0; j < this.held; j++) if (this.heldAt[p * this.held + j] === m) return true;
    return false;
  }

  toReplicas(dataMembers: readonly string[]): Replicas[] {
    const out: Replicas[] = [];
    for (let p = 0; p < this.partitions; p++) {
      const r: (string | null)[] = new Array<string | null>(this.table.width).fill(null);
      for (let i = 0; i < this.filled; i++) r[i] = dataMembers[this.target(p, i)] ?? null;
      out.push(r);
    }
    return out;
  }
}

/** Fills target index i of every partition (indices before i are final). */
function assignIndex(layout: Layout, i: number, cumulative: readonly number[]): void {
  const keepable = keepableByMember(layout, i);
  const remaining = quotas(layout, cumulative, keepable);
  keepCurrent(layout, i, keepable, remaining);
  fillFromCopies(layout, i, remaining);
  fillFromQuota(layout, i, remaining);
}

/** True when the current table already meets every rule of the target: min(width, M) distinct data
 * members then empty slots in each list, floor/ceil(P/M) per member at each index, totals within ±1. */
function isBalanced(layout: Layout): boolean {
  const width = layout.filled;
  const low = Math.floor(layout.partitions / Math.max(1, layout.members));
  const high = Math.ceil(layout.partitions / Math.max(1, layout.members));
  const counts = new Int32Array(layout.members * width);
  for (let p = 0; p < layout.partitions; p++) {
    for (let j = 0; j < layout.held; j++) {
      const m = layout.current(p, j);
      if (j >= width) {
        if (!layout.isEmpty(p, j)) return false;
        continue;
      }
      if (m === NONE) return false;
      for (let k = 0; k < j; k++) if (layout.current(p, k) === m) return false;
      (counts[m * width + j] as number)++;
    }
  }
  const totals = new Array<number>(layout.members).fill(0);
  for (let m = 0; m < layout.members; m++) {
    for (let i = 0; i < width; i++) {
      const n = counts[m * width + i] as number;
      if (n < low || n > high) return false;
      totals[m] = (totals[m] as number) + n;
    }
  }
  return totals.length === 0 || Math.max(...totals) - Math.min(...totals) <= 1;
}

/** For each member, the partitions (ascending) whose current replica at index i it could keep. */
function keepableByMember(layout: Layout, i: number): number[][] {
  const out: number[][] = Array.from({ length: layout.members }, () => []);
  if (i >= layout.held) return out;
  for (let p = 0; p < layout.partitions; p++) {
    const m = layout.current(p, i);
    if (m !== NONE && !layout.placedBefore(p, i, m)) (out[m] as number[]).push(p);
  }
  return out;
}

/** Replicas each member must take at this index; the extra ones of P mod M as the file comment says. */
function quotas(layout: Layout, cumulative: readonly number[], keepable: readonly number[][]): number[] {
  const base = Math.floor(layout.partitions / layout.members);
  const extra = layout.partitions % layout.members;
  const order = Array.from({ length: layout.members }, (_, m) => m);
  const kept = (m: number): number => (keepable[m] as number[]).length;
  order.sort((a, b) => (cumulative[a] as number) - (cumulative[b] as number) || kept(b) - kept(a) || a - b);
  const out = new Array<number>(layout.members).fill(base);
  for (let k = 0; k < extra; k++) out[order[k] as number] = base + 1;
  return out;
}

/** Keeps current replicas within quota. A member over quota keeps first the partitions no other
 * member with spare quota could take, then those only a data copy could fill, and gives up those
 * another current holder can take without a copy. */
function keepCurrent(layout: Layout, i: number, keepable: readonly number[][], remaining: number[]): void {
  const spare = keepable.map((ps, m) => Math.max(0, (remaining[m] as number) - ps.length));
  const spareMembers = spare.flatMap((s, m) => (s > 0 ? [m] : []));
  keepable.forEach((ps, m) => {
    let keep = ps;
    if (ps.length > (remaining[m] as number)) {
      const cost = (p: number): number => releaseEase(layout, p, i, m, spare, spareMembers);
      keep = ps
        .map((p) => ({ p, ease: cost(p) }))
        .sort((a, b) => a.ease - b.ease || a.p - b.p)
        .slice(0, remaining[m])
        .map((x) => x.p);
    }
    for (const p of keep) layout.setTarget(p, i, m);
    remaining[m] = (remaining[m] as number) - keep.length;
  });
}

/** How cheaply member m's slot i of partition p could go to another member: 2 when another current
 * holder has spare quota (no copy), 1 when some member with spare quota could take it, else 0. */
function releaseEase(
  layout: Layout,
  p: number,
  i: number,
  m: number,
  spare: readonly number[],
  spareMembers: readonly number[],
): number {
  for (let j = 0; j < layout.held; j++) {
    const h = layout.current(p, j);
    if (j !== i && h !== NONE && h !== m && (spare[h] as number) > 0 && !layout.placedBefore(p, i, h)) return 2;
  }
  for (const s of spareMembers) if (!layout.placedBefore(p, i, s)) return 1;
  return 0;
}

/** Fills gaps with members that hold a copy of the partition at another index: the nearest colder
 * index first (a promotion), then hotter ones. */
function fillFromCopies(layout: Layout, i: number, remaining: number[]): void {
  const others = otherIndices(i, layout.held);
  for (let p = 0; p < layout.partitions; p++) {
    if (layout.target(p, i) !== NONE) continue;
    for (const j of others) {
      const h = layout.current(p, j);
      if (h === NONE || (remaining[h] as number) === 0 || layout.placedBefore(p, i, h)) continue;
      layout.setTarget(p, i, h);
      remaining[h] = (remaining[h] as number) - 1;
      break;
    }
  }
}

function otherIndices(i: number, width: number): number[] {
  const out: number[] = [];
  for (let j = i + 1; j < width; j++) out.push(j);
  for (let j = i - 1; j >= 0; j--) out.push(j);
  return out;
}

/** Fills the remaining gaps from quota: the eligible member that follows the ones already placed in
 * the fewest partitions, then the one with the most quota left. A gap no
 * member with quota can take is filled along an augmenting path, or failing that by the eligible
 * member with the fewest replicas here (the repair passes even it out). */
function fillFromQuota(layout: Layout, i: number, remaining: number[]): void {
  const shared = sharedCounts(layout, i);
  const stuck: number[] = [];
  for (let p = 0; p < layout.partitions; p++) {
    if (layout.target(p, i) !== NONE) continue;
    let best = NONE;
    let bestShared = 0;
    for (let m = 0; m < layout.members; m++) {
      const left = remaining[m] as number;
      if (left === 0 || layout.placedBefore(p, i, m)) continue;
      let s = 0;
      for (let k = 0; k < i; k++) s += shared[layout.target(p, k) * layout.members + m] as number;
      if (best === NONE || s < bestShared || (s === bestShared && left > (remaining[best] as number))) {
        best = m;
        bestShared = s;
      }
    }
    if (best === NONE) {
      stuck.push(p);
      continue;
    }
    layout.setTarget(p, i, best);
    remaining[best] = (remaining[best] as number) - 1;
    for (let k = 0; k < i; k++) {
      const other = layout.target(p, k);
      (shared[other * layout.members + best] as number)++;
    }
  }
  for (const p of stuck) {
    if (augment(layout, i, p, remaining)) continue;
    overfill(layout, i, p);
  }
}

/** shared[a·M + b]: partitions where member a has a target slot before member b's, both at index <= i
 * so far. Directed, so each member's partitions spread their next replica (the one promoted if it
 * crashes) over the others. */
function sharedCounts(layout: Layout, i: number): Int32Array {
  const shared = new Int32Array(layout.members * layout.members);
  for (let p = 0; p < layout.partitions; p++) {
    for (let a = 0; a <= i; a++) {
      const x = layout.target(p, a);
      if (x === NONE) continue;
      for (let b = a + 1; b <= i; b++) {
        const y = layout.target(p, b);
        if (y === NONE) continue;
        (shared[x * layout.members + y] as number)++;
      }
    }
  }
  return shared;
}

/** Breadth-first search for an alternating path from the empty slot i of `root`: root takes member
 * m1 from partition p1, p1 takes m2 from p2, ... until a member with quota left. Moves along it. */
function augment(layout: Layout, i: number, root: number, remaining: number[]): boolean {
  const slotsOf: number[][] = Array.from({ length: layout.members }, () => []);
  for (let p = 0; p < layout.partitions; p++) {
    const m = layout.target(p, i);
    if (m !== NONE) (slotsOf[m] as number[]).push(p);
  }
  const from = new Int32Array(layout.partitions).fill(NONE);
  const expanded = new Uint8Array(layout.members);
  const visited = new Uint8Array(layout.partitions);
  visited[root] = 1;
  const queue = [root];
  for (let head = 0; head < queue.length; head++) {
    const x = queue[head] as number;
    for (let m = 0; m < layout.members; m++) {
      if (m === layout.target(x, i) || layout.placedBefore(x, i, m)) continue;
      if ((remaining[m] as number) > 0) {
        shiftAlong(layout, i, x, m, from);
        remaining[m] = (remaining[m] as number) - 1;
        return true;
      }
      if (expanded[m] === 1) continue;
      expanded[m] = 1;
      for (const y of slotsOf[m] as number[]) {
        if (visited[y] === 1) continue;
        visited[y] = 1;
        from[y] = x;
        queue.push(y);
      }
    }
  }
  return false;
}

/** Gives `m` to partition x; x's previous member goes to the partition x was reached from, and so on
 * back to the root (whose `from` is NONE). */
function shiftAlong(layout: Layout, i: number, x: number, m: number, from: Int32Array): void {
  let p = x;
  let member = m;
  while (p !== NONE) {
    const previous = layout.target(p, i);
    layout.setTarget(p, i, member);
    member = previous;
    p = from[p] as number;
  }
}

/** Last resort when the quotas cannot be met at this index: the eligible member with the fewest
 * replicas here. There always is one, since fewer than M slots of the partition are placed. */
function overfill(layout: Layout, i: number, p: number): void {
  const counts = new Array<number>(layout.members).fill(0);
  for (let q = 0; q < layout.partitions; q++) {
    const m = layout.target(q, i);
    if (m !== NONE) (counts[m] as number)++;
  }
  let best = NONE;
  for (let m = 0; m < layout.members; m++) {
    if (layout.placedBefore(p, i, m)) continue;
    if (best === NONE || (counts[m] as number) < (counts[best] as number)) best = m;
  }
  assert(best !== NONE, `no member can take replica ${i} of partition ${p}`);
  layout.setTarget(p, i, best);
}

/** While the largest total exceeds the smallest by two or more, the member with the largest hands one
 * replica (same index) to the one with the smallest: in a partition where the latter holds a current
 * copy if there is one, else the lowest such partition. Lowers the sum of squared totals, so it ends. */
function evenOutTotals(layout: Layout): void {
  if (layout.members < 2) return;
  const totals = new Array<number>(layout.members).fill(0);
  for (let p = 0; p < layout.partitions; p++) for (let i = 0; i < layout.filled; i++) (totals[layout.target(p, i)] as number)++;
  for (;;) {
    let high = 0;
    let low = 0;
    totals.forEach((n, m) => {
      if (n > (totals[high] as number)) high = m;
      if (n < (totals[low] as number)) low = m;
    });
    if ((totals[high] as number) - (totals[low] as number) < 2) return;
    let pick = NONE;
    let pickIndex = NONE;
    for (let p = 0; p < layout.partitions; p++) {
      const i = layout.targetIndexOf(p, high);
      if (i === NONE || layout.targetIndexOf(p, low) !== NONE) continue;
      if (pick === NONE || layout.holds(p, low)) {
        pick = p;
        pickIndex = i;
      }
      if (layout.holds(p, low)) break;
    }
    assert(pick !== NONE, 'a member with more replicas holds a partition the other does not');
    layout.setTarget(pick, pickIndex, low);
    totals[high] = (totals[high] as number) - 1;
    totals[low] = (totals[low] as number) + 1;
  }
}

/** Swaps replica indices inside partitions until every member's counts at any two indices differ by
 * at most one (totals within ±1 then give floor/ceil(P/M) per index). Each swap lowers the sum of
 * squared counts, so it ends; after the greedy pass there is rarely anything to do. */
function evenOutIndices(layout: Layout): void {
  const width = layout.filled;
  if (width < 2) return;
  const counts = new Int32Array(layout.members * width);
  for (let p = 0; p < layout.partitions; p++) for (let i = 0; i < width; i++) (counts[layout.target(p, i) * width + i] as number)++;
  const count = (m: number, i: number): number => counts[m * width + i] as number;
  let changed = true;
  while (changed) {
    changed = false;
    for (let m = 0; m < layout.members; m++) {
      for (let a = 0; a < width; a++) {
        for (let b = 0; b < width; b++) {
          while (a !== b && count(m, a) >= count(m, b) + 2) {
            const end = swapAlongTrail(layout, m, a, b);
            (counts[m * width + a] as number)--;
            (counts[m * width + b] as number)++;
            (counts[end * width + a] as number)++;
            (counts[end * width + b] as number)--;
            changed = true;
          }
        }
      }
    }
  }

  /** Walks m -a- p1 -b- m1 -a- p2 -b- ... until a member with more replicas at b than at a, swaps
   * indices a and b in every partition of the trail, and returns that last member. */
  function swapAlongTrail(layout: Layout, start: number, a: number, b: number): number {
    const atA: number[][] = Array.from({ length: layout.members }, () => []);
    for (let p = layout.partitions - 1; p >= 0; p--) (atA[layout.target(p, a)] as number[]).push(p);
    const trail: number[] = [];
    let m = start;
    for (;;) {
      const p = (atA[m] as number[]).pop();
      assert(p !== undefined, `no unused index-${a} replica of member ${m} on the trail`);
      trail.push(p);
      m = layout.target(p, b);
      if (count(m, b) > count(m, a)) break;
    }
    for (const p of trail) {
      const x = layout.target(p, a);
      layout.setTarget(p, a, layout.target(p, b));
      layout.setTarget(p, b, x);
    }
    return m;
  }
}
