// Pure checks of a nemesis history against what the cluster holds after the heal. No I/O: the
// reads (verify.ts) and the member logs (member-logs.ts) are passed in, so a unit test can feed
// made-up histories.
//
// Rules (cluster.md, "Join and membership"):
//   - an acknowledged write-once key reads back with its value through every member; a key whose
//     write failed may be absent or hold its value, nothing else;
//   - every acknowledged offer is delivered at least once (polled during the run or drained after
//     the heal); nothing is delivered that was never offered. A poll whose answer was not a 200/204
//     (503 "may or may not have taken effect", a timeout, a broken connection) may have taken an
//     item that nobody saw, even an item offered after the poll was sent (its frame can reach the
//     owner late, once a partition heals). So each such poll may account for one undelivered item:
//     lost = undelivered acknowledged items - polls that may have taken one (never below 0). Polls
//     refused before they ran do not count: a 4xx, and the 503 of a member that has not joined
//     ("cluster not ready"), which answers at once without calling anyone;
//   - an item delivered twice is a duplicate; duplicates are allowed only across a split brain
//     (queues are at-least-once there): a duplicate is explained when the span from its offer to
//     its last delivery overlaps a split-brain window. An item whose whole life lies outside every
//     split brain (crashes, restarts, migrations only) must be delivered exactly once. Explained
//     duplicates are told apart by when the first delivery happened relative to the window:
//       'held'   the item was offered before the window ended and first delivered after it began:
//                polled on one side while the other held it, or handed back by a side at the heal;
//       'stale'  it had been delivered before the window began, and a side of the split delivered
//                it again: that side served a copy that did not have the earlier poll;
//   - the register's final value is a value that was written; when it is older than the last
//     acknowledged write of its key, the acknowledged updates after it were lost to the merge
//     policy: a figure, not a failure. Writes go on after every fault, so the final value alone
//     would hide what each heal lost: every register write is preceded by a read of its key, and a
//     read made while no fault was active (after the recovery from the last one) that returns a
//     value older than a write acknowledged before the read was sent shows that write lost (values
//     rise per key, so any later write reads as newer). A lost write acknowledged inside a
//     split-brain window went to the merge policy; one acknowledged outside every split brain was
//     lost by something else (a failure, like a lost write-once key, whatever the policy: no policy
//     merges anything without a split brain). One exception: DiscardMergePolicy drops what the
//     smaller side hands back, and when the larger side lost every replica of a partition (all of
//     them were on the smaller side), that includes writes acknowledged BEFORE the split; so for a
//     Discard map a lost write counts as the policy's when any split-brain window ends after it was
//     sent (the other policies keep such a write: the larger side holds nothing for the key, or a
//     newer value); and for the same reason a Discard key may be absent after the heal, which is
//     the policy's when every acknowledged write of it was sent before a split-brain window ended. There is one register map per merge policy, all with
//     the same keys, so every one of these checks runs on one map's operations at a time
//     (judgeRegisters): a key's values rise only within its own map.
import type { Op, OpKind } from './workload.js';

export interface Delivery {
  readonly item: string;
  /** When the poll was sent and answered (a drain poll after the heal too). */
  readonly sentMs: number;
  readonly endMs: number;
  readonly member: number;
  readonly duringRun: boolean;
}

export interface Window {
  readonly startMs: number;
  readonly endMs: number;
  readonly label: string;
}

export interface Counts {
  acked: number;
  failed: number;
  indeterminate: number;
}

export function countsByKind(history: readonly Op[]): Record<OpKind, Counts> {
  const out: Record<OpKind, Counts> = {
    once: { acked: 0, failed: 0, indeterminate: 0 },
    offer: { acked: 0, failed: 0, indeterminate: 0 },
    poll: { acked: 0, failed: 0, indeterminate: 0 },
    reg: { acked: 0, failed: 0, indeterminate: 0 },
    read: { acked: 0, failed: 0, indeterminate: 0 },
  };
  for (const op of history) {
    const c = out[op.kind];
    if (op.outcome === 'ack') c.acked++;
    else if (op.outcome === 'failed') c.failed++;
    else c.indeterminate++;
  }
  return out;
}

/** What one read of a key through one member answered: the value, null for absent (204), or an error text. */
export type ReadResult = { readonly kind: 'value'; readonly value: string } | { readonly kind: 'absent' } | { readonly kind: 'error'; readonly detail: string };

export interface KeyProblem {
  readonly key: string;
  readonly member: number;
  readonly expected: string;
  readonly got: string;
  readonly acked: boolean;
}

/** Checks every write-once key's reads (`reads.get(key)[member]`). */
export function checkOnceReads(history: readonly Op[], reads: ReadonlyMap<string, readonly ReadResult[]>): { checked: number; lost: KeyProblem[]; wrong: KeyProblem[] } {
  const lost: KeyProblem[] = [];
  const wrong: KeyProblem[] = [];
  let checked = 0;
  for (const op of history) {
    if (op.kind !== 'once') continue;
    const rs = reads.get(op.key);
    if (rs === undefined) throw new Error(`no read of ${op.key}`);
    checked++;
    const acked = op.outcome === 'ack';
    rs.forEach((r, member) => {
      const got = r.kind === 'value' ? r.value : r.kind === 'absent' ? '<absent>' : `<error: ${r.detail}>`;
      if (r.kind === 'value' && r.value === op.value) return;
      if (r.kind === 'absent' && !acked) return;
      const problem = { key: op.key, member, expected: acked ? op.value : `${op.value} or absent`, got, acked };
      // An acknowledged key that is absent or unreadable is lost; a value never written is wrong either way.
      if (r.kind === 'value') wrong.push(problem);
      else if (acked) lost.push(problem);
      else wrong.push(problem);
    });
  }
  return { checked, lost, wrong };
}

export interface Duplicate {
  readonly item: string;
  readonly count: number;
  readonly first: Delivery;
  readonly last: Delivery;
  /** The split-brain window that explains it, or null: delivered twice outside any split brain. */
  readonly explainedBy: string | null;
  readonly how: 'held' | 'stale' | null;
}

export interface QueueReport {
  readonly ackedOffers: number;
  /** Acknowledged items neither polled during the run nor drained after it. */
  readonly undelivered: readonly string[];
  /** Polls without a 200/204 answer (and not refused with a 4xx): each may have taken one item. */
  readonly uncertainPolls: number;
  /** Undelivered items beyond what the uncertain polls can explain: the lost items. */
  readonly lost: number;
  readonly deliveries: number;
  readonly deliveredDuringRun: number;
  readonly drained: number;
  readonly unknown: readonly string[];
  /** Items delivered more than once, with the deliveries in time order. */
  readonly duplicates: readonly Duplicate[];
}

/** Deliveries from the run's polls (200 with an item). */
export function runDeliveries(history: readonly Op[]): Delivery[] {
  return history
    .filter((op) => op.kind === 'poll' && op.outcome === 'ack' && op.status === 200)
    .map((op) => ({ item: op.value, sentMs: op.sentMs, endMs: op.endMs, member: op.member, duringRun: true }));
}

/** A failed call that certainly did not run: a 4xx, or the 503 of a member not joined yet. */
function refusedBeforeRunning(op: Op): boolean {
  if (op.outcome !== 'failed') return false;
  return (op.status >= 400 && op.status < 500) || (op.status === 503 && NOT_JOINED.test(op.detail));
}

const NOT_JOINED = /^cluster not ready\b/;

export function checkQueue(history: readonly Op[], deliveries: readonly Delivery[], splitBrainWindows: readonly Window[]): QueueReport {
  const offered = new Map<string, Op>();
  for (const op of history) if (op.kind === 'offer') offered.set(op.key, op);
  const byItem = new Map<string, Delivery[]>();
  const unknown: string[] = [];
  for (const d of deliveries) {
    if (!offered.has(d.item)) {
      unknown.push(d.item === '' ? '<empty item>' : d.item);
      continue;
    }
    let list = byItem.get(d.item);
    if (list === undefined) byItem.set(d.item, (list = []));
    list.push(d);
  }
  let ackedOffers = 0;
  const undelivered: string[] = [];
  for (const [item, op] of offered) {
    if (op.outcome !== 'ack') continue;
    ackedOffers++;
    if (!byItem.has(item)) undelivered.push(item);
  }
  const uncertainPolls = history.filter((op) => op.kind === 'poll' && op.outcome !== 'ack' && !refusedBeforeRunning(op)).length;
  const duplicates: Duplicate[] = [];
  for (const [item, list] of byItem) {
    if (list.length < 2) continue;
    const ordered = [...list].sort((a, b) => a.endMs - b.endMs);
    const first = ordered[0] as Delivery;
    const last = ordered.at(-1) as Delivery;
    const offeredAtMs = (offered.get(item) as Op).sentMs;
    const held = splitBrainWindows.find((x) => x.startMs <= first.endMs && offeredAtMs <= x.endMs);
    const stale = held === undefined ? splitBrainWindows.find((x) => x.startMs <= last.endMs && offeredAtMs <= x.endMs) : undefined;
    const w = held ?? stale;
    duplicates.push({ item, count: list.length, first, last, explainedBy: w?.label ?? null, how: held !== undefined ? 'held' : stale !== undefined ? 'stale' : null });
  }
  return {
    ackedOffers,
    undelivered,
    uncertainPolls,
    lost: Math.max(0, undelivered.length - uncertainPolls),
    deliveries: deliveries.length,
    deliveredDuringRun: deliveries.filter((d) => d.duringRun).length,
    drained: deliveries.filter((d) => !d.duringRun).length,
    unknown,
    duplicates,
  };
}

export interface RegisterReport {
  readonly keys: number;
  readonly ackedWrites: number;
  /** Keys whose final value is older than their last acknowledged write. */
  readonly keysBehind: number;
  /** Acknowledged writes newer than their key's final value. */
  readonly updatesLost: number;
  /** Those writes, as "key=value". */
  readonly lost: readonly string[];
  /** Final values never written, absent keys with acknowledged writes, members that disagree: failures. */
  readonly problems: readonly string[];
  /** Keys absent after the heal although writes of them were acknowledged (each also in problems). */
  readonly absent: readonly { readonly key: string; readonly problem: string }[];
}

/** `finals.get(key)[member]`: the register's value read through each member after the heal. */
export function checkRegister(history: readonly Op[], finals: ReadonlyMap<string, readonly ReadResult[]>): RegisterReport {
  const attempts = new Map<string, Op[]>();
  for (const op of history) {
    if (op.kind !== 'reg') continue;
    let list = attempts.get(op.key);
    if (list === undefined) attempts.set(op.key, (list = []));
    list.push(op);
  }
  let ackedWrites = 0;
  let keysBehind = 0;
  const lostWrites: string[] = [];
  const problems: string[] = [];
  const absent: { key: string; problem: string }[] = [];
  for (const [key, ops] of attempts) {
    const acked = ops.filter((o) => o.outcome === 'ack').map((o) => Number(o.value));
    ackedWrites += acked.length;
    const rs = finals.get(key) ?? [];
    const texts = rs.map((r) => (r.kind === 'value' ? r.value : r.kind === 'absent' ? '<absent>' : `<error: ${r.detail}>`));
    if (new Set(texts).size !== 1) {
      problems.push(`${key}: members disagree after the heal: ${texts.map((t, m) => `#${m}=${t}`).join(' ')}`);
      continue;
    }
    const r = rs[0];
    if (r === undefined || r.kind === 'error') {
      problems.push(`${key}: unreadable after the heal: ${texts[0] ?? 'no read'}`);
      continue;
    }
    if (r.kind === 'absent') {
      if (acked.length > 0) {
        const problem = `${key}: absent after the heal, ${acked.length} acknowledged write(s)`;
        problems.push(problem);
        absent.push({ key, problem });
      }
      continue;
    }
    const final = Number(r.value);
    if (!ops.some((o) => o.value === r.value)) {
      problems.push(`${key}: holds ${r.value}, a value never written`);
      continue;
    }
    const lost = acked.filter((v) => v > final);
    if (lost.length > 0) keysBehind++;
    lostWrites.push(...lost.map((v) => `${key}=${v}`));
  }
  return { keys: attempts.size, ackedWrites, keysBehind, updatesLost: lostWrites.length, lost: lostWrites, problems, absent };
}

/**
 * The acknowledged register writes that a later read shows lost: for every read answered while no
 * fault was active (inside one of `quiet`), each write of its key acknowledged before the read was
 * sent with a value newer than the one read (or any value, when the read found the key absent).
 * Returns "key=value" once per lost write, and how many reads were judged.
 */
export function registerLostByReads(history: readonly Op[], quiet: readonly Window[]): { lost: string[]; judged: number } {
  const acked = new Map<string, Op[]>();
  for (const op of history) {
    if (op.kind !== 'reg' || op.outcome !== 'ack') continue;
    let list = acked.get(op.key);
    if (list === undefined) acked.set(op.key, (list = []));
    list.push(op);
  }
  const lost = new Set<string>();
  let judged = 0;
  for (const r of history) {
    if (r.kind !== 'read' || r.outcome !== 'ack') continue;
    if (!quiet.some((w) => w.startMs <= r.sentMs && r.endMs <= w.endMs)) continue;
    judged++;
    const seen = r.status === 200 ? Number(r.value) : 0;
    for (const w of acked.get(r.key) ?? []) if (w.endMs < r.sentMs && Number(w.value) > seen) lost.add(`${w.key}=${w.value}`);
  }
  return { lost: [...lost], judged };
}

/** One register map's verdict: what its merge policy did with the same faults as the others. */
export interface RegisterVerdict {
  readonly map: string;
  readonly ackedWrites: number;
  /** Reads made while no fault was active, each compared with the writes of its key before it. */
  readonly readsJudged: number;
  /** Keys whose final value is older than their last acknowledged write (0 without final reads). */
  readonly keysBehind: number;
  /** Lost acknowledged writes acknowledged inside a split-brain window: the merge policy's doing (a figure). */
  readonly lostInSplitBrain: readonly Op[];
  /** Lost acknowledged writes acknowledged outside every split brain: a failure. */
  readonly lostOutsideSplitBrain: readonly Op[];
  /** checkRegister's problems (a value never written, an absent key, members disagreeing): failures. */
  readonly problems: readonly string[];
}

/**
 * Judges each register map of `maps` on its own operations (register keys repeat in every map, so
 * mixing them would compare one policy's values with another's): the writes that reads in the
 * `quiet` windows show lost (registerLostByReads), the final values (checkRegister on
 * `finals.get(map)`), and each lost write placed inside a split-brain window (it overlaps one, from
 * sent to answered) or outside every one. `finals` is null when the cluster never healed: nothing
 * was read back, and the lost writes are not judged (the run has failed already).
 */
export function judgeRegisters(
  history: readonly Op[],
  maps: readonly string[],
  quiet: readonly Window[],
  splitBrainWindows: readonly Window[],
  finals: ReadonlyMap<string, ReadonlyMap<string, readonly ReadResult[]>> | null,
  /** Maps whose policy may drop writes acknowledged before a split (DiscardMergePolicy). */
  dropsEarlierWrites: ReadonlySet<string> = new Set(),
): RegisterVerdict[] {
  return maps.map((map) => {
    const ops = history.filter((o) => (o.kind === 'reg' || o.kind === 'read') && o.map === map);
    const ackedWrites = ops.filter((o) => o.kind === 'reg' && o.outcome === 'ack').length;
    const byReads = registerLostByReads(ops, quiet);
    if (finals === null) return { map, ackedWrites, readsJudged: byReads.judged, keysBehind: 0, lostInSplitBrain: [], lostOutsideSplitBrain: [], problems: [] };
    const final = checkRegister(ops, finals.get(map) ?? new Map());
    const lostInSplitBrain: Op[] = [];
    const lostOutsideSplitBrain: Op[] = [];
    // Discard can drop a whole key the same way it drops its older writes (the larger side lost
    // every replica of its partition and restarted it empty): such a key's writes are the policy's
    // when every one was sent before a split-brain window ended; otherwise the absence stays a problem.
    const policyKeys = new Set<string>();
    const problems = final.problems.filter((problem) => {
      const a = final.absent.find((x) => x.problem === problem);
      if (a === undefined || !dropsEarlierWrites.has(map)) return true;
      const writes = ops.filter((o) => o.kind === 'reg' && o.outcome === 'ack' && o.key === a.key);
      if (!writes.every((w) => splitBrainWindows.some((x) => w.sentMs <= x.endMs))) return true;
      policyKeys.add(a.key);
      return false;
    });
    for (const w of new Set([...byReads.lost, ...final.lost])) {
      const write = ops.find((o) => o.kind === 'reg' && `${o.key}=${o.value}` === w) as Op;
      if (policyKeys.has(write.key)) continue;
      const later = dropsEarlierWrites.has(map);
      if (splitBrainWindows.some((x) => (later || x.startMs <= write.endMs) && write.sentMs <= x.endMs)) lostInSplitBrain.push(write);
      else lostOutsideSplitBrain.push(write);
    }
    for (const o of ops) if (o.kind === 'reg' && o.outcome === 'ack' && policyKeys.has(o.key)) lostInSplitBrain.push(o);
    return { map, ackedWrites, readsJudged: byReads.judged, keysBehind: final.keysBehind, lostInSplitBrain, lostOutsideSplitBrain, problems };
  });
}
