// Command-line options of the nemesis (scripts/nemesis.ts), parsed and checked without I/O so a unit
// test can run every refusal. Anything out of range is a UsageError (exit status 2), never a default
// taken silently.

import { MERGE_POLICIES } from '../../src/config/types.js';

/** The merge policies of config.md, the register maps' set (one map each). */
export { MERGE_POLICIES };

/**
 * The register map's short name for a policy: lower case, without the `MergePolicy` suffix
 * (LatestUpdateMergePolicy -> latestupdate), so each policy's map (fleet.ts) and report row keep
 * the same name from run to run.
 */
export function policyShortName(policy: string): string {
  return policy.replace(/MergePolicy$/, '').toLowerCase();
}

export interface NemesisOptions {
  /** How long the workload runs under faults, before the final heal and the checks. */
  readonly seconds: number;
  /** Seeds the fault schedule and the workload (one PRNG). */
  readonly seed: number;
  /** Members, on 127.0.0.11 .. 127.0.0.(10 + members). */
  readonly members: number;
  /** Operations per second over all clients (a ceiling; faults slow it down). */
  readonly rate: number;
  /** Concurrent client loops. */
  readonly clients: number;
  /**
   * The merge policies the register runs with, one register map each (`nemesis-reg-<short name>`),
   * in the order of MERGE_POLICIES whatever order they were given in, so the same seed runs the
   * same workload. Every policy by default.
   */
  readonly registerPolicies: readonly string[];
  /** grid.max.no.heartbeat.seconds of every member (default 10, the member's default). */
  readonly maxNoHeartbeatSeconds: number;
  /**
   * Pauses target the member that is master when the pause starts and last 15-25 s (past the
   * heartbeat timeout), and every round of kinds has two of them: the split a paused master makes
   * (the others claim, it wakes as master of a cluster that removed it) is the hardest case.
   */
  readonly pauseMaster: boolean;
  /**
   * The members' log level (`--log-level`): INFO by default; FINE adds every migration step,
   * resync, dropped copy and hand-back, which is what a failed run's diagnosis needs.
   */
  readonly logLevel: string;
  /** CP calls per second (cp-workload.ts); 0 runs the members without a CP subsystem. */
  readonly cpRate: number;
  readonly cpPersistence: boolean;
  readonly help: boolean;
}

/** Levels a member accepts for `--log-level` (config.md, "Logging"), as given to it. */
export const LOG_LEVELS = ['SEVERE', 'WARNING', 'INFO', 'CONFIG', 'FINE', 'FINER', 'FINEST'] as const;

export const USAGE = `usage: npm run nemesis -- --seconds N --seed S [options]

Starts real members (dist/member.js) on 127.0.0.11.., writes to them through every member while a
seeded schedule kills (-9) and restarts members, pauses them (SIGSTOP/SIGCONT) and cuts the network
between them with nft rules on loopback; then heals everything and checks that no acknowledged
write-once map key and no acknowledged queue item was lost. Needs root and nft (installs nftables
with apt-get when missing). Exit 0: every check passed; 1: a check failed (seed, schedule and log
paths printed); 2: bad options or a missing precondition; 130/143: interrupted.

  --seconds N              workload and fault phase, 10..86400 (required)
  --seed S                 u32 integer, 0..4294967295 (required)
  --members N              3..9 members (default 5)
  --rate N                 operations per second over all clients, 10..5000 (default 200)
  --clients N              concurrent client loops, 1..64 (default 10)
  --register-policy LIST   merge policies of the register, comma-separated, or all (default all:
                           PassThroughMergePolicy, PutIfAbsentMergePolicy, LatestUpdateMergePolicy,
                           HigherHitsMergePolicy, LatestAccessMergePolicy, ExpirationTimeMergePolicy,
                           DiscardMergePolicy); each gets its own map, nemesis-reg-latestupdate etc.
  --max-no-heartbeat S     grid.max.no.heartbeat.seconds, 3..60 (default 10, the member's default;
                           shorter makes more pauses and partitions turn into split brains)
  --cp-rate N              CP calls per second (AtomicLong CAS register, AtomicReference, unique ids
                           through every member, checked for linearizability), 0..2000 (default 60;
                           0: no CP subsystem on the members)
  --cp-persistence         the CP members keep their Raft state on disk (<run dir>/cp): a CP member
                           killed with -9 restarts on its directory as the same CP member, so the
                           nemesis does not remove and promote CP members after a kill
  --pause-master           every pause stops the current master for 15-25 s, two pauses a round
  --log-level LEVEL        the members' log level: SEVERE WARNING INFO CONFIG FINE FINER FINEST
                           (default INFO; FINE logs every migration step, resync and hand-back)
  --help                   this text`;

export class UsageError extends Error {
  override name = 'UsageError';
}

function integer(flag: string, text: string | undefined, min: number, max: number): number {
  if (text === undefined || text.startsWith('--')) throw new UsageError(`${flag} needs a value`);
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} must be an integer in ${min}..${max}, got "${text}"`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${flag} must be an integer in ${min}..${max}, got ${text}`);
  return n;
}

/**
 * `--register-policy`'s value: `all`, or policy names separated by commas (a name may carry the
 * `com.hazelcast.spi.merge.` prefix). An unknown or empty name is refused rather than dropped (the
 * run would report on fewer policies than were asked for), and so is a repeated one: each policy has
 * one map, so a repeat is most likely a slip for another name.
 */
function parseRegisterPolicies(flag: string, text: string | undefined): string[] {
  if (text === undefined || text.startsWith('--')) throw new UsageError(`${flag} needs a value (policy names separated by commas, or all)`);
  if (text.trim() === 'all') return [...MERGE_POLICIES];
  const chosen = new Set<string>();
  for (const item of text.split(',')) {
    const name = item.trim().replace(/^com\.hazelcast\.spi\.merge\./, '');
    if (name === '') throw new UsageError(`${flag} has an empty name in "${text}" (policy names separated by commas, or all)`);
    if (!(MERGE_POLICIES as readonly string[]).includes(name)) {
      throw new UsageError(`${flag}: "${item.trim()}" is not a merge policy; each name must be one of ${MERGE_POLICIES.join(', ')}, or the whole value all`);
    }
    if (chosen.has(name)) throw new UsageError(`${flag} names ${name} twice in "${text}"`);
    chosen.add(name);
  }
  return MERGE_POLICIES.filter((p) => chosen.has(p));
}

export function parseOptions(argv: readonly string[]): NemesisOptions {
  let seconds: number | null = null;
  let seed: number | null = null;
  let members = 5;
  let rate = 200;
  let clients = 10;
  let registerPolicies: readonly string[] = [...MERGE_POLICIES];
  let maxNoHeartbeatSeconds = 10;
  let help = false;
  let pauseMaster = false;
  let logLevel = 'INFO';
  let cpRate = 60;
  let cpPersistence = false;
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] as string;
    const eq = raw.indexOf('=');
    const flag = raw.startsWith('--') && eq > 0 ? raw.slice(0, eq) : raw;
    const inline = raw.startsWith('--') && eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--seconds':
        seconds = integer(flag, value(), 10, 86_400);
        break;
      case '--seed':
        seed = integer(flag, value(), 0, 0xffff_ffff);
        break;
      case '--members':
        members = integer(flag, value(), 3, 9);
        break;
      case '--rate':
        rate = integer(flag, value(), 10, 5000);
        break;
      case '--clients':
        clients = integer(flag, value(), 1, 64);
        break;
      case '--max-no-heartbeat':
        maxNoHeartbeatSeconds = integer(flag, value(), 3, 60);
        break;
      case '--register-policy':
        registerPolicies = parseRegisterPolicies(flag, value());
        break;
      case '--cp-rate':
        cpRate = integer(flag, value(), 0, 2000);
        break;
      case '--cp-persistence':
        if (inline !== undefined) throw new UsageError('--cp-persistence takes no value');
        cpPersistence = true;
        break;
      case '--pause-master':
        if (inline !== undefined) throw new UsageError('--pause-master takes no value');
        pauseMaster = true;
        break;
      case '--log-level': {
        const v = value();
        if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value (${LOG_LEVELS.join(' ')})`);
        const level = v.toUpperCase();
        if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError(`${flag} must be one of ${LOG_LEVELS.join(' ')}, got "${v}"`);
        logLevel = level;
        break;
      }
      case '--help':
      case '-h':
        help = true;
        break;
      default:
        throw new UsageError(`unknown argument "${raw}" (see --help)`);
    }
  }
  if (help) return { seconds: seconds ?? 0, seed: seed ?? 0, members, rate, clients, registerPolicies, maxNoHeartbeatSeconds, pauseMaster, logLevel, cpRate, cpPersistence, help };
  if (seconds === null) throw new UsageError('--seconds N is required (10..86400)');
  if (seed === null) throw new UsageError('--seed S is required (a u32 integer)');
  return { seconds, seed, members, rate, clients, registerPolicies, maxNoHeartbeatSeconds, pauseMaster, logLevel, cpRate, cpPersistence, help };
}
