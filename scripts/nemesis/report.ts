// The nemesis's closing output: a table of the figures for people and one JSON line with the same
// figures for scripts (the last line of the output).
import type { Counts } from './analysis.js';
import type { FaultKind } from './schedule.js';

/** One merge policy's register map: its share of the register figures. */
export interface RegisterPolicyFigures {
  readonly policy: string;
  readonly map: string;
  readonly ackedWrites: number;
  readonly readsJudged: number;
  /** Acknowledged writes lost, acknowledged inside a split-brain window (the policy's doing). */
  readonly updatesLost: number;
  /** Acknowledged writes lost outside every split brain (a failure, whatever the policy). */
  readonly lostOutsideSplitBrain: number;
  /** Keys whose final value is older than their last acknowledged write. */
  readonly keysBehind: number;
}

export interface Figures {
  readonly seed: number;
  readonly seconds: number;
  readonly members: number;
  readonly maxNoHeartbeatSeconds: number;
  /** The register's merge policies, one map each (options.ts order). */
  readonly registerPolicies: readonly string[];
  readonly faults: Readonly<Record<FaultKind, number>>;
  readonly ops: Readonly<Record<'once' | 'offer' | 'poll' | 'reg' | 'read', Counts>>;
  readonly onceKeysChecked: number;
  readonly onceLost: number;
  readonly onceWrong: number;
  readonly queueAckedOffers: number;
  readonly queueDelivered: number;
  readonly queueDrained: number;
  readonly queueUndelivered: number;
  readonly queueUncertainPolls: number;
  readonly queueLost: number;
  readonly queueUnknown: number;
  readonly queueDuplicated: number;
  readonly queueDuplicatedOutsideSplitBrain: number;
  /** Duplicates delivered before a split began and again by a side of it (a stale copy). */
  readonly queueDuplicatedStale: number;
  /** The register figures of each policy's map, in registerPolicies' order; the five below are their sums. */
  readonly registerByPolicy: readonly RegisterPolicyFigures[];
  readonly registerAckedWrites: number;
  /** Acknowledged register writes lost, acknowledged inside a split-brain window (the merge policies' doing). */
  readonly registerUpdatesLost: number;
  /** Acknowledged register writes lost outside every split brain (a failure). */
  readonly registerLostOutsideSplitBrain: number;
  /** Register reads made while no fault was active, each compared with the writes before it. */
  readonly registerReadsJudged: number;
  readonly registerKeysBehind: number;
  /** CP calls made, answered, without an answer (writes; reads without an answer are left out), and checked. */
  readonly cpOperations: number;
  readonly cpAcknowledged: number;
  readonly cpIndeterminate: number;
  readonly cpReadsUnanswered: number;
  readonly cpChecked: number;
  readonly cpVerdict: string;
  readonly cpCheckSeconds: number;
  /** CP members removed and promoted by the nemesis after kill -9 restarts (an operator's part). */
  readonly cpRepairs: number;
  /** --cp-persistence: every member was killed at once, restarted, and the CP workload ran again. */
  readonly cpWholeRestart: boolean;
  readonly splitBrain: boolean;
  readonly splitBrainWindows: number;
  readonly crashes: number;
  readonly memberErrors: number;
  readonly severeLines: number;
  readonly clusterSafeAfterHeal: boolean;
  readonly healSeconds: number | null;
  readonly wallSeconds: number;
  readonly passed: boolean;
  readonly failures: readonly string[];
  readonly runDir: string;
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  ')).join('\n');
}

export function summaryTable(f: Figures): string {
  const faults = Object.entries(f.faults).map(([k, n]) => `${k} ${n}`).join(', ');
  const opRows = (['once', 'offer', 'poll', 'reg', 'read'] as const).map((k) => {
    const c = f.ops[k];
    const name = { once: 'write-once puts (nemesis-once)', offer: 'queue offers (nemesis-q)', poll: 'queue polls (nemesis-q)', reg: 'register writes (nemesis-reg-*)', read: 'register reads (nemesis-reg-*)' }[k];
    return [name, String(c.acked), String(c.failed), String(c.indeterminate)];
  });
  const lines = [
    `nemesis seed ${f.seed}, ${f.seconds} s, ${f.members} members, max-no-heartbeat ${f.maxNoHeartbeatSeconds} s, register policies ${f.registerPolicies.join(', ')}`,
    `faults injected: ${faults} (total ${Object.values(f.faults).reduce((a, b) => a + b, 0)})`,
    '',
    table([['workload', 'acknowledged', 'failed', 'indeterminate'], ...opRows]),
    '',
    table([
      ['check', 'figure'],
      ['write-once keys checked through every member', String(f.onceKeysChecked)],
      ['acknowledged write-once keys lost', String(f.onceLost)],
      ['write-once keys holding a value never written', String(f.onceWrong)],
      ['acknowledged queue offers', String(f.queueAckedOffers)],
      ['items delivered (run polls + drain)', `${f.queueDelivered} + ${f.queueDrained}`],
      ['acknowledged items never delivered', String(f.queueUndelivered)],
      ['  polls without an answer (each may have taken one)', String(f.queueUncertainPolls)],
      ['acknowledged queue items lost', String(f.queueLost)],
      ['items never offered', String(f.queueUnknown)],
      ['items delivered more than once', String(f.queueDuplicated)],
      ['  of those, outside a split brain', String(f.queueDuplicatedOutsideSplitBrain)],
      ['  of those, polled before a split and delivered again by a side of it', String(f.queueDuplicatedStale)],
      ['register (every policy): acknowledged writes', String(f.registerAckedWrites)],
      ['register (every policy): reads made with no fault active, checked against earlier writes', String(f.registerReadsJudged)],
      ['register (every policy): acknowledged updates lost to the merge policy', `${f.registerUpdatesLost} (${f.registerKeysBehind} key(s) behind at the end)`],
      ['register (every policy): acknowledged updates lost outside a split brain', String(f.registerLostOutsideSplitBrain)],
      ['CP calls (AtomicLong CAS register, AtomicReference, unique ids, FencedLock, Semaphore)', `${f.cpOperations}: ${f.cpAcknowledged} answered, ${f.cpIndeterminate} writes without an answer, ${f.cpReadsUnanswered} reads without one`],
      ['CP operations checked for linearizability', `${f.cpChecked} in ${f.cpCheckSeconds.toFixed(1)} s: ${f.cpVerdict}`],
      ['CP members removed and promoted after restarts', String(f.cpRepairs)],
      ['kill -9 of every member at once, CP back from disk (--cp-persistence)', f.cpWholeRestart ? 'yes: the CP history goes on across it' : 'no'],
      ['split brain', f.splitBrain ? `yes (${f.splitBrainWindows} window(s))` : 'no'],
      ['member crashes', String(f.crashes)],
      ['member errors (exceptions on stderr, unexpected failures)', String(f.memberErrors)],
      ['SEVERE log lines (e.g. a minority lost every replica)', String(f.severeLines)],
      ['cluster-safe on every member after the heal', f.clusterSafeAfterHeal ? `yes, after ${f.healSeconds?.toFixed(1)} s` : 'NO'],
      ['wall time', `${f.wallSeconds.toFixed(1)} s`],
    ]),
    '',
    table([
      ['register by merge policy', 'acknowledged writes', 'reads judged', 'lost to the policy (split brain)', 'lost outside a split brain', 'keys behind at the end'],
      ...f.registerByPolicy.map((p) => [`${p.policy} (${p.map})`, String(p.ackedWrites), String(p.readsJudged), String(p.updatesLost), String(p.lostOutsideSplitBrain), String(p.keysBehind)]),
      ['total', String(f.registerAckedWrites), String(f.registerReadsJudged), String(f.registerUpdatesLost), String(f.registerLostOutsideSplitBrain), String(f.registerKeysBehind)],
    ]),
    '',
    f.passed ? 'PASS' : `FAIL (${f.failures.length} problem(s)):\n${f.failures.map((x) => `  - ${x}`).join('\n')}`,
  ];
  return lines.join('\n');
}

export function jsonLine(f: Figures): string {
  return JSON.stringify({ nemesis: f.passed ? 'pass' : 'fail', ...f });
}
