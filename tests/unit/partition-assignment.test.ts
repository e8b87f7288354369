// Checks src/partition/assignment.ts, the master's target table, on the rules of cluster.md
// "Partitions and replicas": every target list holds min(width, M) distinct data members with no
// hole; each member's count at each replica index is floor(P/M) or ceil(P/M) and its total within
// ±1; the same input gives the same output and a balanced table is a fixed point; adding a member
// moves only what the new member must take (owner changes and data copies counted against the
// bounds the balance rule implies); a crash promotes the first surviving backup and keeps every
// surviving replica, and a crashed member's partitions are promoted onto all the others; members
// left out of the list (lite, leaving) get nothing; tiny tables (few partitions for members × width)
// still balance. A seeded property test runs random joins, crashes and graceful leaves and checks
// the invariants, determinism and the fixed point after each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionTable, replicaProblem } from '../../src/partition/table.js';
import type { Replicas } from '../../src/partition/table.js';
import { assignTarget, checkNeverFewer, liveReplicaCount, migrationQueue, promoteAfterRemoval } from '../../src/partition/assignment.js';
import { SeededRandom } from '../../src/util/prng.js';

const P = 271;
const names = (n: number, prefix = 'm'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const apply = (t: PartitionTable, target: readonly Replicas[]): PartitionTable => t.withReplicas(new Map(target.map((r, p) => [p, r])));
const assigned = (partitions: number, members: readonly string[], width: number, tableWidth = width): PartitionTable => {
  const empty = PartitionTable.empty(partitions, tableWidth);
  return apply(empty, assignTarget(empty, members, width));
};

const tableOf = (replicas: readonly Replicas[]): PartitionTable =>
  apply(PartitionTable.empty(replicas.length, (replicas[0] as Replicas).length), replicas);

/** Replica lists of the table width; the first min(width, M) slots filled with distinct data members. */
function checkShape(target: readonly Replicas[], members: readonly string[], width: number, tableWidth: number): void {
  const filled = Math.min(width, members.length);
  const known = new Set(members);
  target.forEach((r, p) => {
    assert.equal(r.length, tableWidth, `partition ${p} list length`);
    assert.equal(replicaProblem(r), null, `partition ${p}: ${replicaProblem(r) ?? ''}`);
    assert.equal(r.filter((u) => u !== null).length, filled, `partition ${p} replica count`);
    for (const u of r) if (u !== null) assert.ok(known.has(u), `partition ${p} holds non-data member ${u}`);
  });
}

/** Every index: each member holds floor(P/M) or ceil(P/M); totals within ±1. */
function checkBalance(target: readonly Replicas[], members: readonly string[], width: number): void {
  const filled = Math.min(width, members.length);
  const low = Math.floor(target.length / members.length);
  const high = Math.ceil(target.length / members.length);
  const totals = new Map(members.map((m) => [m, 0]));
  for (let i = 0; i < filled; i++) {
    const counts = new Map(members.map((m) => [m, 0]));
    for (const r of target) counts.set(r[i] as string, (counts.get(r[i] as string) ?? 0) + 1);
    for (const [m, n] of counts) {
      assert.ok(n >= low && n <= high, `index ${i}: member ${m} holds ${n}, want ${low}..${high}`);
      totals.set(m, (totals.get(m) ?? 0) + n);
    }
  }
  const all = [...totals.values()];
  assert.ok(Math.max(...all) - Math.min(...all) <= 1, `totals ${all.join(',')} not within ±1`);
}

function check(target: readonly Replicas[], members: readonly string[], width: number, tableWidth: number): void {
  checkShape(target, members, width, tableWidth);
  if (members.length > 0) checkBalance(target, members, width);
}

/** Replicas in `next` on members that held no copy of that partition in `before`. */
function dataCopies(before: PartitionTable, next: readonly Replicas[]): { total: number; byMember: Map<string, number> } {
  const byMember = new Map<string, number>();
  let total = 0;
  next.forEach((r, p) => {
    for (const u of r) {
      if (u === null || (before.replicas[p] as Replicas).includes(u)) continue;
      total++;
      byMember.set(u, (byMember.get(u) ?? 0) + 1);
    }
  });
  return { total, byMember };
}

test('first assignment is balanced and valid for 1..10 members and widths 1..4', () => {
  for (let m = 1; m <= 10; m++) {
    for (let w = 1; w <= 4; w++) {
      const members = names(m);
      const empty = PartitionTable.empty(P, w);
      check(assignTarget(empty, members, w), members, w, w);
    }
  }
});

test('few partitions, many members: some members own nothing, none more than one', () => {
  const members = names(10);
  const target = assignTarget(PartitionTable.empty(7, 3), members, 3);
  check(target, members, 3, 3);
});

test('few partitions for members × width: joins and leaves stay balanced (1..12 partitions, 1..8 members)', () => {
  for (let partitions = 1; partitions <= 12; partitions++) {
    for (let m = 1; m <= 8; m++) {
      for (let w = 1; w <= 4; w++) {
        const members = names(m);
        const t = assigned(partitions, members, w);
        check(t.replicas, members, w, w);
        const joined = [...members, 'new'];
        check(assignTarget(t, joined, w), joined, w, w);
        const left = members.slice(1);
        check(assignTarget(t, left, w), left, w, w);
      }
    }
  }
});

test('cases where going index by index alone paints itself into a corner', () => {
  // Every member holds every partition, so the last index is forced; a new member must end up at
  // three different indices.
  const full = tableOf([
    ['a', 'd', 'c', 'b', null, null],
    ['c', 'b', 'a', 'd', null, null],
    ['b', 'a', 'd', 'c', null, null],
  ]);
  const five = ['a', 'b', 'c', 'd', 'e'];
  check(assignTarget(full, five, 6), five, 6, 6);
  // The new member's only free partition already holds it at an earlier index: totals need a hand-off.
  const tight = tableOf([
    ['a', 'd', 'c', 'b', null, null, null],
    ['c', 'b', 'a', 'd', null, null, null],
    ['b', 'a', 'd', 'c', null, null, null],
  ]);
  check(assignTarget(tight, five, 4), five, 4, 7);
});

test('a crash spreads its promotions: each member\'s partitions have their first backups on all the others', () => {
  // The survivor promoted for a crashed member's partitions takes at most its share of them on top
  // of its own owners: ceil(P/M) + ceil(ceil(P/M) / (M - 1)).
  for (let m = 2; m <= 10; m++) {
    for (const w of [2, 3]) {
      const members = names(m);
      const t = assigned(P, members, w);
      const bound = Math.ceil(P / m) + Math.ceil(Math.ceil(P / m) / (m - 1));
      for (const gone of members) {
        const promoted = t.withReplicas(promoteAfterRemoval(t, new Set([gone])));
        const owned = new Map<string, number>();
        for (const r of promoted.replicas) owned.set(r[0] as string, (owned.get(r[0] as string) ?? 0) + 1);
        const most = Math.max(...owned.values());
        assert.ok(most <= bound, `M=${m} W=${w} without ${gone}: a survivor owns ${most} > ${bound}`);
      }
    }
  }
});

test('a narrower width fills the first slots of a wider table', () => {
  const members = names(5);
  const target = assignTarget(PartitionTable.empty(P, 7), members, 3);
  check(target, members, 3, 7);
});

test('fewer members than the width: each partition gets one replica per member', () => {
  for (let m = 1; m <= 3; m++) {
    const members = names(m);
    const target = assignTarget(PartitionTable.empty(P, 4), members, 4);
    check(target, members, 4, 4);
    for (const r of target) assert.deepEqual(new Set(r.slice(0, m)), new Set(members));
  }
});

test('no data members: every list is empty', () => {
  const t = assigned(P, names(3), 2);
  for (const r of assignTarget(t, [], 2)) assert.deepEqual(r, [null, null]);
});

test('deterministic, and a balanced table is a fixed point (no migrations)', () => {
  for (const [m, w] of [[3, 2], [4, 3], [7, 4], [10, 2]] as const) {
    const members = names(m);
    const empty = PartitionTable.empty(P, w);
    const a = assignTarget(empty, members, w);
    assert.deepEqual(assignTarget(empty, members, w), a);
    const t = apply(empty, a);
    assert.deepEqual(migrationQueue(t, assignTarget(t, members, w)), []);
  }
});

test('adding a member to three moves only what the new member must take', () => {
  for (let w = 1; w <= 3; w++) {
    const before = assigned(P, names(3), w);
    const members = [...names(3), 'new'];
    const target = assignTarget(before, members, w);
    check(target, members, w, w);
    // Balance makes the new member own at least floor(P/4) partitions; the best plan changes no other
    // owner, so at most ceil(P/4) owners change, all to the new member.
    let ownerChanges = 0;
    target.forEach((r, p) => {
      if (r[0] === before.owner(p)) return;
      ownerChanges++;
      assert.equal(r[0], 'new', `partition ${p} changed owner to ${r[0] ?? 'null'}`);
    });
    assert.ok(ownerChanges >= Math.floor(P / 4) && ownerChanges <= Math.ceil(P / 4), `owner changes ${ownerChanges}`);
    // Every replica the new member holds is a copy, and no one else needs one.
    const copies = dataCopies(before, target);
    assert.deepEqual([...copies.byMember.keys()], ['new']);
    assert.ok(copies.total <= Math.ceil((P * w) / 4), `copies ${copies.total}`);
  }
});

test('promoteAfterRemoval: first surviving backup becomes owner; every surviving replica kept', () => {
  const t = assigned(P, names(5), 3);
  const removed = new Set(['m1', 'm3']);
  const changes = promoteAfterRemoval(t, removed);
  const survivors = new Set(names(5).filter((m) => !removed.has(m)));
  t.replicas.forEach((r, p) => {
    const touched = r.some((u) => u !== null && removed.has(u));
    assert.equal(changes.has(p), touched, `partition ${p} in the change map`);
    const next = changes.get(p) ?? r;
    const expected = r.filter((u) => u !== null && !removed.has(u));
    while (expected.length < r.length) expected.push(null);
    assert.deepEqual(next, expected);
    assert.equal(replicaProblem(next), null);
    assert.equal(liveReplicaCount(next, survivors), liveReplicaCount(r, survivors));
    if (r[0] === 'm1' && r[1] !== 'm3') assert.equal(next[0], r[1]);
  });
  const promoted = t.withReplicas(changes);
  assert.ok(checkNeverFewer(t, promoted, survivors));
  assert.equal(promoteAfterRemoval(promoted, removed).size, 0);
});

test('after a crash the new target re-creates lost replicas with copies only where needed', () => {
  for (const [m, w] of [[4, 2], [5, 3], [6, 4], [10, 3]] as const) {
    const members = names(m);
    const t = assigned(P, members, w);
    const lost = t.replicas.filter((r) => r.includes('m1')).length;
    const promoted = t.withReplicas(promoteAfterRemoval(t, new Set(['m1'])));
    const rest = members.filter((u) => u !== 'm1');
    const target = assignTarget(promoted, rest, w);
    check(target, rest, w, w);
    assert.ok(checkNeverFewer(promoted, target, new Set(rest)));
    // Each lost replica needs one copy; the balance may need a few more (a slack of one per member).
    const copies = dataCopies(promoted, target).total;
    assert.ok(copies >= lost && copies <= lost + rest.length, `M=${m} W=${w}: ${copies} copies for ${lost} lost replicas`);
    // Owners come from the surviving copies: no partition gets an owner that held no copy.
    target.forEach((r, p) => assert.ok((promoted.replicas[p] as Replicas).includes(r[0] as string), `partition ${p} owner copied`));
  }
});

test('a leaving (or lite) member left out of the list gets nothing; its partitions go to their backups', () => {
  const members = names(4);
  const t = assigned(P, members, 2);
  const staying = members.filter((u) => u !== 'm2');
  const target = assignTarget(t, staying, 2);
  check(target, staying, 2, 2);
  target.forEach((r, p) => {
    assert.ok(!r.includes('m2'), `partition ${p} still on the leaving member`);
    if (t.owner(p) === 'm2') assert.equal(r[0], t.replicas[p]?.[1], `partition ${p} owner is its backup`);
  });
});

test('member order breaks ties: the first assignment follows join order', () => {
  const a = assignTarget(PartitionTable.empty(P, 2), ['x', 'y', 'z'], 2);
  const b = assignTarget(PartitionTable.empty(P, 2), ['z', 'y', 'x'], 2);
  assert.equal(a[0]?.[0], 'x');
  assert.equal(b[0]?.[0], 'z');
});

test('migrationQueue lists exactly the partitions that differ, ascending', () => {
  const t = assigned(P, names(3), 2);
  assert.deepEqual(migrationQueue(t, t.replicas), []);
  const target = t.replicas.slice();
  target[5] = [target[5]?.[1] ?? null, target[5]?.[0] ?? null];
  target[200] = ['zz', null];
  assert.deepEqual(migrationQueue(t, target), [5, 200]);
});

test('checkNeverFewer counts only live members', () => {
  const live = new Set(['a', 'b']);
  assert.ok(checkNeverFewer([['a', 'b']], [['b', 'a']], live));
  assert.ok(checkNeverFewer([['a', 'c']], [['a', 'b']], live));
  assert.ok(checkNeverFewer([['a', 'c']], [['a', null]], live));
  assert.equal(checkNeverFewer([['a', 'b']], [['a', 'c']], live), false);
  assert.equal(checkNeverFewer([['a', 'b'], ['a', null]], [['a', 'b'], [null, null]], live), false);
});

test('large tables stay balanced (32768 partitions, 64 members, width 7)', () => {
  const members = names(64);
  const t = assigned(32768, members, 7);
  checkBalance(t.replicas, members, 7);
  const more = [...members, 'new'];
  check(assignTarget(t, more, 7), more, 7, 7);
});

test('property: random joins, crashes and graceful leaves keep the invariants', () => {
  for (let seed = 1; seed <= 60; seed++) {
    const rnd = new SeededRandom(seed);
    const partitions = [1, 3, 7, 64, 271][rnd.nextInt(5)] as number;
    const tableWidth = 1 + rnd.nextInt(7);
    const width = 1 + rnd.nextInt(tableWidth);
    let members = names(1 + rnd.nextInt(8), `s${seed}-`);
    let next = 100;
    let t = assigned(partitions, members, width, tableWidth);
    for (let step = 0; step < 30; step++) {
      const ctx = `seed=${seed} step=${step} P=${partitions} W=${width}/${tableWidth} M=${members.length}`;
      const op = rnd.nextInt(3);
      if (op === 0 || members.length === 1) {
        members = [...members, `s${seed}-${next++}`];
      } else {
        const gone = members[rnd.nextInt(members.length)] as string;
        members = members.filter((u) => u !== gone);
        if (op === 1) {
          const promoted = t.withReplicas(promoteAfterRemoval(t, new Set([gone])));
          assert.ok(checkNeverFewer(t, promoted, new Set(members)), ctx);
          for (const r of promoted.replicas) assert.equal(replicaProblem(r), null, ctx);
          t = promoted;
        }
      }
      const target = assignTarget(t, members, width);
      try {
        check(target, members, width, tableWidth);
      } catch (err) {
        assert.fail(`${ctx}: ${(err as Error).message}`);
      }
      assert.ok(checkNeverFewer(t, target, new Set(members)), `${ctx}: target never has fewer live replicas`);
      assert.deepEqual(assignTarget(t, members, width), target, `${ctx}: deterministic`);
      t = apply(t, target);
      assert.deepEqual(migrationQueue(t, assignTarget(t, members, width)), [], `${ctx}: fixed point`);
    }
  }
});
