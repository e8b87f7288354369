// Command-line options of the nemesis (scripts/nemesis.ts), parsed and checked without I/O so a unit
// test can run every refusal. Anything out of range is a UsageError (exit status 2), never a default
// taken silently.

export const MERGE_POLICIES = [
  'PassThroughMergePolicy',
  'PutIfAbsentMergePolicy',
  'LatestUpdateMergePolicy',
  'HigherHitsMergePolicy',
  'LatestAccessMergePolicy',
  'ExpirationTimeMergePolicy',
  'DiscardMergePolicy',
] as const;

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
  /** Merge policy of the register map `nemesis-reg`. */
  readonly registerPolicy: string;
  /** grid.max.no.heartbeat.seconds of every member (default 10, the member's default). */
  readonly maxNoHeartbeatSeconds: number;
  readonly help: boolean;
}

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
  --register-policy NAME   merge policy of map nemesis-reg (default LatestUpdateMergePolicy)
  --max-no-heartbeat S     grid.max.no.heartbeat.seconds, 3..60 (default 10, the member's default;
                           shorter makes more pauses and partitions turn into split brains)
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

export function parseOptions(argv: readonly string[]): NemesisOptions {
  let seconds: number | null = null;
  let seed: number | null = null;
  let members = 5;
  let rate = 200;
  let clients = 10;
  let registerPolicy = 'LatestUpdateMergePolicy';
  let maxNoHeartbeatSeconds = 10;
  let help = false;
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
      case '--register-policy': {
        const v = value();
        const name = v?.replace(/^com\.hazelcast\.spi\.merge\./, '');
        if (name === undefined || !(MERGE_POLICIES as readonly string[]).includes(name)) {
          throw new UsageError(`--register-policy must be one of ${MERGE_POLICIES.join(', ')}, got ${v === undefined ? 'nothing' : `"${v}"`}`);
        }
        registerPolicy = name;
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
  if (help) return { seconds: seconds ?? 0, seed: seed ?? 0, members, rate, clients, registerPolicy, maxNoHeartbeatSeconds, help };
  if (seconds === null) throw new UsageError('--seconds N is required (10..86400)');
  if (seed === null) throw new UsageError('--seed S is required (a u32 integer)');
  return { seconds, seed, members, rate, clients, registerPolicy, maxNoHeartbeatSeconds, help };
}
