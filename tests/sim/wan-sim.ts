// One seeded run of WAN replication between two clusters in one process: cluster A (3 members,
// backup-count 1) replicates map `m` (wan-replication-ref `to-b`, PassThroughMergePolicy) to cluster
// B (2 members, backup-count 1) through one publisher targeting both B members, on SimWorld's virtual
// clock and network (the same ClusterNode code the real member runs; a member's WAN connection is a
// dial-only transport with B's cluster name: sim-world.ts dialTransportFor). A client writes through
// random members of A: puts of a small key space (so keys are overwritten), removes and clears, every
// put with a value no other write has (`v<n>`), so each value B stores names the A write it came from.
// Faults come in rounds, each bounded in time and over before the round ends, and may overlap within
// a round: loss or latency on the link between the clusters (one or both ways, latency up to beyond
// the response timeout), a partition between the clusters (both ways, one way, or one A member from
// one B member), crashes of an A member (dead or silent; it restarts empty under a new uuid or stays
// down; never two A members down at once), crashes and GC-like pauses of a B member (restarting
// empty), and outages of the whole of B (both members crash and restart empty: B's data is gone).
// Then everything heals, both clusters settle, the queues drain, and the run checks:
//
// (a) No queued event lost (no sync). Every key of map `m` has the same value on B as on A (or is
//     absent from both). Checked only when B never lost data (no outage of the whole of B: a single
//     B member restarting empty loses nothing, its partner holds a backup of every partition) and no
//     event was dropped for a full queue (queue-capacity is far above the workload; the run asserts
//     `dropped` is 0). Allowed difference: a write LOST IN A, one that an A owner applied and sent
//     before its backup had it, and then crashed (A forgot the write, B has it; the client was not
//     told it succeeded): B may hold a put A lost where A holds an older write of the key or none,
//     and may lack a key whose removal or clear A lost. A write is lost in A when the member that
//     applied it as owner crashed and the next change of owner of its partition found the new
//     owner's data version below the write's (ReplicaStore.jumpVersion wrapped on A's members: a
//     backup applies its owner's writes in version order, a migration hands over a snapshot).
// (b) No partition's events reordered. A's history of a key is the list of puts A's owners applied to
//     it, in order (each names its client write by its unique value; a put A's invoker retried
//     appears again, later). B's stores of a key are taken where B's key owners run the WAN calls
//     (ReplicaStore.runOwnerOp wrapped on B's members): every entry of a merge call (two puts of one
//     key in one call are two stores), removes of a present key, clears; in the order B ran them,
//     across B's members. Each store of a put is placed in A's history by its value and the record
//     version it carries (A's per-key entry version at that application: a put A's invoker re-ran
//     has the same value but another record version, unless a clear or remove reset the record in
//     between): at the first matching application at or after the place of the previous store, else
//     (going back) at the latest one before it.
//     A *step back* is a store placed before the furthest place B had reached, F. A publisher may
//     resend a partition's unacknowledged events from an older point (a timeout, a failover to the
//     other B endpoint, a new A owner resending its backup queue), and B applies them again; that
//     is a replay and is allowed when it is complete: the first later store placed at or beyond F
//     must be F itself (the replay re-applies everything after the point it restarted from). A
//     stale batch applied after newer events, a resend that moves a key back and stops, or a step
//     back that is never made good fails. Exceptions: F was lost in A (below) and cannot come
//     again; after a step back that is never made good, B removed or cleared the key (the final
//     state is then (a)'s business); an outage of the whole of B resets what B owes.
// (c) After a full sync (sync/allmaps through WanService.startSync on one live A member, FINISHED on
//     every live A member) and the queues drained again, B holds every entry of A with A's value.
//     B may hold entries A does not hold only if their value is a write lost in A (a full sync never
//     deletes target-only entries, wan.md); B has no writes of its own in this workload. (c) is
//     checked for every seed, whole-B outages included: the sync restores what B lost.
// Also: the final sync reaches FINISHED; the queues drain (primary and backup) within a minute of the
// heal; a sync started in the middle of the faults (one run in three) ends, FINISHED or FAILED (a
// member crashing or a partition moving mid-sync hands its share to the new owner, wan.md), within 3
// minutes of the heal, on every live A member.
// Besides the faults listed, one A fault in four is a pause of an A member under the heartbeat timeout.
// A failure also prints a diagnosis: each call B's targets make is tagged with the A partition and
// version of its events (WanTarget.plan and the WanHost's invoke, wrapped), so the run knows when a
// B member applied an event older than one B had applied before (a *stale apply*), which batch
// carried it, when that batch was sent and received, and which batch carried the newer event; and
// when an A publisher took an acknowledgement for a batch the acknowledging B member never received
// from it (WanPublisher.onAck wrapped: another endpoint's, or the same call id of an earlier
// incarnation of the A member at that address).
// A failure throws with `seed=N`, the fault log and the divergent keys; `npx tsx scripts/wan-sim.ts
// --seed N` replays it with the members' logs.
//
// The WAN target applies batches through promise chains (src/wan/target.ts), so this run is async:
// it steps the world one event at a time and lets the microtasks of each event run before the next
// (as Node runs them after each callback).
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { ClusterNode, type ClusterTimings } from '../../src/member/cluster-node.js';
import { OP, type MapMutation } from '../../src/data/replica-store.js';
import { decodeMapMerge } from '../../src/data/merge-batch.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { Logger } from '../../src/util/logger.js';
import type { SeededRandom } from '../../src/util/prng.js';
import { SimWorld, wireNode, type SimTransport, type SimWorldOptions } from '../harness/sim-world.js';

export interface WanSimOptions {
  readonly seed: number;
  readonly partitionCount?: number;
  /** Print the members' logs, the faults and the client's calls (replays). */
  readonly verbose?: boolean;
  /** Replays: print every write of this key's partition on A (owner and backups) and every store on B. */
  readonly watchKey?: string;
  /**
   * The publisher's target endpoints: both B members (default), or only the first (no failover
   * between B members: the schedule of faults is the same, only the endpoint list differs).
   */
  readonly targetEndpoints?: 1 | 2;
}

export interface WanSimReport {
  readonly seed: number;
  readonly writes: number;
  readonly acknowledgedWrites: number;
  readonly keysChecked: number;
  readonly faults: Readonly<Record<string, number>>;
  /** (a) was checked (B never lost its data). */
  readonly checkedNoSync: boolean;
  /** Step backs seen on B that were replays. */
  readonly replays: number;
  /** Writes lost in A (applied by an owner that crashed before its backup had them). */
  readonly lostInA: number;
  /** Virtual ms the full sync took. */
  readonly syncMs: number;
  /** Keys in which B differed from A before the sync (runs with an outage of B: what the sync repaired). */
  readonly differedBeforeSync: number;
  /** Events a B member applied after B had applied a newer event of the same A partition. */
  readonly staleApplies: number;
  /** Acknowledgements an A publisher took for a batch they did not answer (another endpoint's, or another incarnation's). */
  readonly misroutedAcks: number;
  /** How a sync started during the faults ended on the live A members ('none': no such sync). */
  readonly midSync: string;
  readonly virtualMs: number;
  readonly events: number;
}

export class WanSimFailure extends Error {}

const MAP = 'm';
const REPLICATION = 'to-b';
const PUBLISHER = 'b';
const A_COUNT = 3;
const B_COUNT = 2;
const QUEUE_CAPACITY = 1_000_000;

const TIMINGS: Partial<ClusterTimings> = {
  joinBatchQuietMs: 300,
  joinBatchMaxMs: 1500,
  claimAfterMs: 1500,
  claimTimeoutMs: 2000,
  publishIntervalMs: 5000,
  antiEntropyIntervalMs: 3000,
  migrationTickMs: 100,
  migrationTimeoutMs: 15_000,
  holdTimeoutMs: 8000,
  transferAckTimeoutMs: 5000,
  attemptTimeoutMs: 3000,
  mergeProbeIntervalMs: 2000,
};

interface PublisherKnobs {
  readonly batchSize: number;
  readonly batchMaxDelayMs: number;
  readonly responseTimeoutMs: number;
}

function clusterConfig(cluster: 'a' | 'b', partitionCount: number, endpoints: readonly string[], k: PublisherKnobs): Config {
  const wan =
    cluster === 'a'
      ? `<wan-replication name="${REPLICATION}"><batch-publisher>
           <cluster-name>b</cluster-name><publisher-id>${PUBLISHER}</publisher-id>
           <target-endpoints>${endpoints.join(',')}</target-endpoints>
           <batch-size>${k.batchSize}</batch-size><batch-max-delay-millis>${k.batchMaxDelayMs}</batch-max-delay-millis>
           <response-timeout-millis>${k.responseTimeoutMs}</response-timeout-millis>
           <queue-capacity>${QUEUE_CAPACITY}</queue-capacity><queue-full-behavior>DISCARD_AFTER_MUTATION</queue-full-behavior>
           <acknowledge-type>ACK_ON_OPERATION_COMPLETE</acknowledge-type>
         </batch-publisher></wan-replication>`
      : '';
  const ref = cluster === 'a' ? `<wan-replication-ref name="${REPLICATION}"><merge-policy-class-name>PassThroughMergePolicy</merge-policy-class-name></wan-replication-ref>` : '';
  const xml = `<grid><cluster-name>${cluster}</cluster-name><map name="${MAP}"><backup-count>1</backup-count>${ref}</map>${wan}</grid>`;
  const r = loadConfig({
    argv: ['--config', '/grid.xml'],
    env: { GRID_PROPERTY_GRID_PARTITION_COUNT: String(partitionCount), GRID_PROPERTY_GRID_OPERATION_CALL_TIMEOUT_MILLIS: '20000' },
    cwd: '/',
    readFile: (p) => {
      if (p !== '/grid.xml') throw new Error(`ENOENT: ${p}`);
      return xml;
    },
    fileExists: (p) => p === '/grid.xml',
    randomHex: () => 'abcd',
    version: '0.1.0',
  });
  if (r.kind !== 'run') throw new Error(`wan sim config (${cluster}): ${r.stderr}`);
  return r.config;
}

interface Member {
  readonly cluster: 'a' | 'b';
  readonly slot: number;
  readonly address: string;
  readonly uuid: string;
  readonly node: ClusterNode;
  readonly transport: SimTransport;
  alive: boolean;
}

/** One A write as its owner applied it. */
interface AWrite {
  readonly partitionId: number;
  readonly version: number;
  /** uuid of the A member that applied it as owner. */
  readonly owner: string;
}

/** What B's key owners stored for a key, in order: a put (the A write's value) or a removal. */
/** A put names the A application it came from: its unique value and A's record version of the key then. */
type BStore = { readonly kind: 'put'; readonly value: string; readonly entryVersion: number } | { readonly kind: 'gone'; readonly why: 'remove' | 'clear' } | { readonly kind: 'reset' };

/** What this run reads or wraps inside a B member's WanTarget (src/wan/target.ts), by name. */
interface WanTargetInternals {
  readonly chains: Map<string, unknown>;
  plan: (key: string, partitionId: number, events: readonly unknown[], host: unknown) => { partitionId: number; op: object; version: number; sync: boolean }[];
}

/** A WAN event applied on B with an older A version than one B had applied before (see staleApplies). */
export interface StaleApply {
  readonly atMs: number;
  readonly partitionId: number;
  readonly version: number;
  /** Sync entries (their version is their snapshot's). */
  readonly sync: boolean;
  /** The B member (incarnation) that applied it, and the batch that carried it. */
  readonly by: string;
  readonly batch: BatchInfo;
  readonly newerVersion: number;
  readonly newerBy: string;
  readonly newerAtMs: number;
  readonly newerBatch: BatchInfo;
}

interface BatchInfo {
  readonly from: string;
  readonly callId: number;
  readonly sentAtMs: number;
  readonly receivedAtMs: number;
}

/** Replays: prints the WAN batches carrying events of `partition`, and every batch acknowledgement. */
function batchWatcher(partition: number): NonNullable<SimWorldOptions['watch']> {
  return (event, from, to, m, atMs) => {
    if (m.kind === 'wanBatchAck') {
      process.stdout.write(`[${atMs}ms] ~ ${event} ${from} -> ${to} wanBatchAck#${m.callId} ok=${m.body.ok}\n`);
      return;
    }
    if (m.kind !== 'wanBatch') return;
    const events = m.body.events.filter((e) => e.partitionId === partition);
    if (events.length === 0) return;
    const text = events.map((e) => `${['?', 'put', 'remove', 'clear', 'sync'][e.kind] ?? e.kind}@${e.version}${e.kind === 3 ? '' : ` ${Buffer.from(e.key).toString('utf8')}`}${e.kind === 1 || e.kind === 4 ? `=${Buffer.from(e.value).toString('utf8')}` : ''}`).join(', ');
    process.stdout.write(`[${atMs}ms] ~ ${event} ${from} -> ${to} wanBatch#${m.callId} p${partition}: ${text}\n`);
  };
}

export async function runWanSim(o: WanSimOptions): Promise<WanSimReport> {
  const seed = o.seed >>> 0;
  const verbose = o.verbose === true;
  const rnd: SeededRandom = new SimWorld(seed).randomFor('wan-scenario');
  const partitionCount = o.partitionCount ?? 31;
  const watchPartition = o.watchKey === undefined ? -1 : partitionIdOfKey(Buffer.from(o.watchKey, 'utf8'), partitionCount);
  const watchBatches = watchPartition < 0 ? null : batchWatcher(watchPartition);
  /** `${source address}#${callId}` of each WAN batch → when it was sent (the latest send of that id). */
  const batchSentAt = new Map<string, number>();
  const world = new SimWorld(seed, {
    delayMsMin: 1,
    delayMsMax: 1 + rnd.nextInt(5),
    traceLinesMax: verbose ? 10_000 : 0,
    watch: (event, from, to, m, atMs) => {
      // When each batch left its A member (the diagnosis of a stale apply names it).
      if (event === 'send' && m.kind === 'wanBatch') batchSentAt.set(`${from}#${m.callId}`, atMs);
      watchBatches?.(event, from, to, m, atMs);
    },
  });
  const aAddresses = Array.from({ length: A_COUNT }, (_, i) => `10.0.1.${i + 1}:5701`);
  const bAddresses = Array.from({ length: B_COUNT }, (_, i) => `10.0.2.${i + 1}:5701`);
  const knobs: PublisherKnobs = {
    batchSize: [5, 20, 100][rnd.nextInt(3)] as number,
    batchMaxDelayMs: [10, 50, 200][rnd.nextInt(3)] as number,
    responseTimeoutMs: [500, 1500, 4000][rnd.nextInt(3)] as number,
  };
  const configA = clusterConfig('a', partitionCount, bAddresses.slice(0, o.targetEndpoints ?? B_COUNT), knobs);
  const configB = clusterConfig('b', partitionCount, bAddresses, knobs);
  const faultLog: string[] = [];
  const note = (text: string): void => {
    faultLog.push(`${world.timeMs} ${text}`);
    if (verbose) process.stdout.write(`[${world.timeMs}ms] FAULT ${text}\n`);
  };
  note(`batch-size ${knobs.batchSize}, batch-max-delay ${knobs.batchMaxDelayMs} ms, response-timeout ${knobs.responseTimeoutMs} ms`);
  let diagnosis = (_partitions: readonly number[]): string => '';
  const fail = (message: string, keys: readonly string[] = []): never => {
    const partitions = keys.map((k) => partitionIdOfKey(Buffer.from(k, 'utf8'), partitionCount));
    throw new WanSimFailure(`seed=${seed} t=${world.timeMs}ms: ${message}${diagnosis(partitions)}\nfaults:\n  ${faultLog.join('\n  ')}`);
  };

  let uuidCounter = 0;
  const newUuid = (): string => {
    uuidCounter++;
    const hex = (seed.toString(16).padStart(8, '0') + uuidCounter.toString(16).padStart(12, '0')).slice(-20);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${uuidCounter.toString(16).padStart(12, '0')}`;
  };
  const loggerFor = (label: string): Logger => {
    if (!verbose) return new Logger('OFF', 'text', { write: () => {} });
    const l = new Logger('FINE', 'text', { write: (line) => process.stdout.write(`[${world.timeMs}ms] ${line}`) });
    l.setMemberAddress(label);
    return l;
  };

  // ── instrumentation ──
  /** Value → the A write that stored it (its latest application, if a retry applied it twice). */
  const aWrites = new Map<string, AWrite>();
  /**
   * Every change of a partition's owner in A (ReplicaStore.jumpVersion on the new owner): the data
   * version the new owner had, and how many owner writes had been applied by then. An owner write
   * survives the first change of owner after it exactly when the new owner's version had reached it
   * (a backup applies its owner's writes in version order; a migration hands over a snapshot).
   */
  const aJumps: { partitionId: number; before: number; atWrite: number }[] = [];
  /** uuid → virtual ms it crashed at. */
  const crashedAt = new Map<string, number>();
  /** Key → what B's owners stored, in order. */
  const bStores = new Map<string, BStore[]>();
  let bStoreCount = 0;
  const bStoreSeq = new Map<string, number[]>();

  /** Every A owner write (puts, removes, clears), for "lost in A". */
  const ownerWrites: { partitionId: number; version: number; owner: string; kind: MapMutation['kind']; key: string; value: string | null; entryVersion: number }[] = [];

  const watch = (who: string, m: MapMutation, node: ClusterNode): void => {
    if (m.partitionId !== watchPartition || m.mapName !== MAP) return;
    const r = m.kind === 'put' ? node.store.maps.peek(MAP, m.key, m.partitionId, m.timeMs) : null;
    process.stdout.write(`[${world.timeMs}ms] WATCH ${who} ${m.owner ? 'owner' : 'backup'} p${m.partitionId} v${m.version} ${m.kind} ${Buffer.from(m.key).toString('utf8')}${r === null ? '' : `=${r.value.toString('utf8')}`}${m.origin === null ? '' : ` from ${m.origin}`}\n`);
  };

  const instrumentA = (node: ClusterNode, uuid: string): void => {
    const who = `A ${node.uuid.slice(-4)}`;
    // Beside the WAN listener: sees the same stream; WAN's drop mask goes on to the backups.
    node.store.setMutationListener('sim', (mutation) => {
      if (mutation.kind !== 'put' && mutation.kind !== 'remove' && mutation.kind !== 'clear') return 0;
      const m: MapMutation = mutation;
      if (watchPartition >= 0) watch(who, m, node);
      if (m.mapName === MAP && m.origin === null) {
        if (m.owner) {
          let value: string | null = null;
          let entryVersion = 0;
          if (m.kind === 'put') {
            const r = node.store.maps.peek(MAP, m.key, m.partitionId, m.timeMs);
            if (r !== null) {
              aWrites.set((value = r.value.toString('utf8')), { partitionId: m.partitionId, version: m.version, owner: uuid });
              entryVersion = r.version;
            }
          }
          ownerWrites.push({ partitionId: m.partitionId, version: m.version, owner: uuid, kind: m.kind, key: Buffer.from(m.key).toString('utf8'), value, entryVersion });
        }
      }
      return 0;
    });
    if (watchPartition >= 0) {
      // Replays: the watched partition's replicas and WAN queue as this member sees them, at each table change.
      const applied = node.wan.onTableApplied.bind(node.wan);
      node.wan.onTableApplied = (changed) => {
        applied(changed);
        if (!changed.includes(watchPartition)) return;
        const replicas = (node.partitions.table.replicas[watchPartition] ?? []).map((u) => (u === null ? '-' : u.slice(-4))).join(',');
        const q = node.wan.publisher(REPLICATION, PUBLISHER).queues[watchPartition];
        const queued = q === undefined ? 'none' : q.writeEvents().map((e) => `${e.version}`).join(',');
        process.stdout.write(`[${world.timeMs}ms] WATCH ${who} table v${node.partitions.table.version} p${watchPartition} replicas [${replicas}] queue [${queued}]\n`);
      };
      const imported = node.store.importPartition.bind(node.store);
      node.store.importPartition = (partitionId, version, entries, queues, nowMs, wan) => {
        if (partitionId === watchPartition) {
          const events = (wan ?? []).flatMap((q) => q.events.map((e) => e.version)).join(',');
          process.stdout.write(`[${world.timeMs}ms] WATCH ${who} imports p${partitionId} at v${version}: ${entries.length} entries, WAN events [${events}]\n`);
        }
        imported(partitionId, version, entries, queues, nowMs, wan);
      };
      const dropped = node.store.dropPartition.bind(node.store);
      node.store.dropPartition = (partitionId) => {
        if (partitionId === watchPartition) process.stdout.write(`[${world.timeMs}ms] WATCH ${who} drops p${partitionId}\n`);
        return dropped(partitionId);
      };
    }
    // An acknowledgement the publisher takes for a batch it sent to another endpoint (diagnosis).
    const publisher = node.wan.publisher(REPLICATION, PUBLISHER);
    const batches = (publisher as unknown as { batches: Map<number, { endpoint: { address: string } }> }).batches;
    const onAck = publisher.onAck.bind(publisher);
    publisher.onAck = (from, m) => {
      const b = batches.get(m.callId);
      // The batch the acknowledging B member last received with this call id from this address.
      const answered = batchSource.get(`${from.address}|${memberAddress(node)}#${m.callId}`);
      if (b !== undefined && (b.endpoint.address !== from.address || (answered !== undefined && answered !== node.uuid))) {
        misroutedAcks.push({
          atMs: world.timeMs,
          member: `${who} (${memberAddress(node)})`,
          callId: m.callId,
          sentTo: b.endpoint.address,
          from: `${from.address} (${from.uuid.slice(-4)})`,
          answered: answered === undefined ? 'unknown' : answered === node.uuid ? 'this member' : `A ${answered.slice(-4)}`,
        });
      }
      onAck(from, m);
    };
    const jump = node.store.jumpVersion.bind(node.store);
    node.store.jumpVersion = (partitionId: number): void => {
      aJumps.push({ partitionId, before: node.store.version(partitionId), atWrite: ownerWrites.length });
      jump(partitionId);
    };
  };
  const instrumentB = (node: ClusterNode): void => {
    const who = `B ${node.uuid.slice(-4)}`;
    if (watchPartition >= 0) {
      node.store.setMutationListener('sim', (m) => {
        if (m.kind === 'put' || m.kind === 'remove' || m.kind === 'clear') watch(who, m, node);
        return 0;
      });
    }
    // What B's key owners store, taken where they run the WAN calls (in the order they run them):
    // every entry of a merge (two puts of one key in one call are two stores), removes and clears.
    const run = node.store.runOwnerOp.bind(node.store);
    node.store.runOwnerOp = (partitionId, op, nowMs) => {
      if (op.name !== MAP || (op.code !== OP.WAN_MAP_MERGE && op.code !== OP.WAN_MAP_REMOVE && op.code !== OP.WAN_MAP_CLEAR)) return run(partitionId, op, nowMs);
      const present = op.code === OP.WAN_MAP_CLEAR ? [...node.store.maps.exportMapPartition(MAP, partitionId, world.clock.nowMs())].map((e) => Buffer.from(e.key).toString('utf8')) : [];
      const existed = op.code === OP.WAN_MAP_REMOVE && node.store.maps.peek(MAP, op.key, partitionId, nowMs) !== null;
      const r = run(partitionId, op, nowMs);
      const seq = bStoreCount++;
      const store = (key: string, s: BStore): void => {
        let list = bStores.get(key);
        if (list === undefined) bStores.set(key, (list = []));
        let seqs = bStoreSeq.get(key);
        if (seqs === undefined) bStoreSeq.set(key, (seqs = []));
        list.push(s);
        seqs.push(seq);
      };
      // A call the owner skipped as older than what it applied from the stream (replica-store.ts
      // wanGuard) stores nothing: a merge then stores no entry, a remove or clear removes nothing.
      if (op.code === OP.WAN_MAP_MERGE) {
        // PassThroughMergePolicy: every entry is stored, in order (or none when the call was skipped).
        if (r.outcome.kind === 'count' && r.outcome.count > 0) {
          for (const e of decodeMapMerge(op.value).entries) store(Buffer.from(e.key).toString('utf8'), { kind: 'put', value: Buffer.from(e.value).toString('utf8'), entryVersion: e.version });
        }
      } else if (op.code === OP.WAN_MAP_REMOVE) {
        if (existed && node.store.maps.peek(MAP, op.key, partitionId, nowMs) === null) store(Buffer.from(op.key).toString('utf8'), { kind: 'gone', why: 'remove' });
      } else {
        for (const key of present) if (node.store.maps.peek(MAP, Buffer.from(key, 'utf8'), partitionId, nowMs) === null) store(key, { kind: 'gone', why: 'clear' });
      }
      return r;
    };
    // Each call the target makes to apply events is tagged with the A partition and version of its
    // events (WanTarget.plan), so the order in which B applies a source partition's events can be
    // followed across B's members: a diagnosis for the failures (b) and (a) report.
    const target = (node.wan as unknown as { target: WanTargetInternals }).target;
    const handle = node.wan.handle.bind(node.wan);
    node.wan.handle = (from, m) => {
      if (m.kind === 'wanBatch') {
        const info: BatchInfo = { from: from.address, callId: m.callId, sentAtMs: batchSentAt.get(`${from.address}#${m.callId}`) ?? -1, receivedAtMs: world.timeMs };
        batchSource.set(`${memberAddress(node)}|${from.address}#${m.callId}`, from.uuid);
        for (const e of m.body.events) batchOf.set(e, info);
      }
      return handle(from, m);
    };
    const plan = target.plan.bind(target);
    target.plan = (key, partitionId, events, host) => {
      const steps = plan(key, partitionId, events, host);
      const batch = batchOf.get(events[0] as object) ?? { from: '?', callId: 0, sentAtMs: -1, receivedAtMs: -1 };
      for (const step of steps) stepOf.set(step.op, { partitionId: step.partitionId, version: step.version, sync: step.sync, batch });
      return steps;
    };
    const host = (node.wan as unknown as { host: { invoke: (p: number, op: object, cb: (r: LocalResult) => void) => void } }).host;
    const invoke = host.invoke;
    host.invoke = (p, op, cb) =>
      invoke(p, op, (r) => {
        const step = stepOf.get(op);
        if (step !== undefined && r.kind === 'ok') noteApplied(step.partitionId, step.version, step.sync, `${who} (${memberAddress(node)})`, step.batch);
        cb(r);
      });
  };
  const stepOf = new WeakMap<object, { partitionId: number; version: number; sync: boolean; batch: BatchInfo }>();
  const batchOf = new WeakMap<object, BatchInfo>();
  const memberAddress = (node: ClusterNode): string => members.find((m) => m.node === node)?.address ?? '?';
  diagnosis = (partitions) => staleText(partitions);
  /** Per A partition: the newest A version B applied, by whom, when. Reset when B loses its data. */
  const newestApplied = new Map<number, { version: number; by: string; atMs: number; batch: BatchInfo }>();
  const staleApplies: StaleApply[] = [];
  // A call's version is the newest of its events (a merge call may hold several); sync entries carry
  // the version of their snapshot and, as in the target, never count as newer.
  const noteApplied = (partitionId: number, version: number, sync: boolean, by: string, batch: BatchInfo): void => {
    const newest = newestApplied.get(partitionId);
    if (newest !== undefined && version < newest.version) {
      staleApplies.push({ atMs: world.timeMs, partitionId, version, sync, by, batch, newerVersion: newest.version, newerBy: newest.by, newerAtMs: newest.atMs, newerBatch: newest.batch });
      return;
    }
    if (!sync) newestApplied.set(partitionId, { version, by, atMs: world.timeMs, batch });
  };
  const batchText = (b: BatchInfo): string => `batch #${b.callId} from ${b.from} sent at ${b.sentAtMs} ms, received at ${b.receivedAtMs} ms`;
  /** Acknowledgements an A publisher matched (by call id) to a batch it had sent to another endpoint. */
  const misroutedAcks: { atMs: number; member: string; callId: number; sentTo: string; from: string; answered: string }[] = [];
  /** `${B address}|${A address}#${callId}` → uuid of the A member whose batch that B member last received with that id. */
  const batchSource = new Map<string, string>();
  const staleText = (partitions: readonly number[]): string => {
    const misrouted = misroutedAcks.map((x) => `\n  diagnosis: misrouted ack: at ${x.atMs} ms ${x.member} took an acknowledgement from ${x.from} (answering a batch #${x.callId} of ${x.answered}) for its own batch #${x.callId}, which it had sent to ${x.sentTo}`).join('');
    const s = staleApplies.find((x) => partitions.includes(x.partitionId)) ?? staleApplies[0];
    if (s === undefined) return `${misrouted}\n  diagnosis: B never applied an event older than one it had applied before (no stale apply)`;
    const kind = s.batch.sentAtMs < s.newerAtMs ? 'a batch sent before B applied the newer event, applied late' : 'a resend, sent after B had applied the newer event';
    return (
      misrouted +
      `\n  diagnosis: ${staleApplies.length} stale apply(s) on B; ${partitions.includes(s.partitionId) ? 'on this partition' : 'the first'}: at ${s.atMs} ms ${s.by} applied A p${s.partitionId}@${s.version}${s.sync ? ' (sync entries)' : ''} (${batchText(s.batch)}) ` +
      `after ${s.newerBy} had applied p${s.partitionId}@${s.newerVersion} at ${s.newerAtMs} ms (${batchText(s.newerBatch)}): ${kind}`
    );
  };

  // ── members ──
  const members: Member[] = [];
  const startMember = (cluster: 'a' | 'b', slot: number): Member => {
    const uuid = newUuid();
    const addresses = cluster === 'a' ? aAddresses : bAddresses;
    const address = addresses[slot] as string;
    const transport = world.transportFor(address, uuid, { clusterName: cluster });
    const timers = world.timersFor(`${address}/${uuid}`);
    const monotonicOriginMs = world.timeMs - 25 - (uuidCounter % 97) - 0.371;
    const clock = { nowMs: () => world.clock.nowMs(), monotonicMs: () => world.timeMs - monotonicOriginMs };
    const node = new ClusterNode({
      config: cluster === 'a' ? configA : configB,
      uuid,
      memberVersion: '0.1.0',
      transport,
      clock,
      timers,
      random: world.randomFor(`member-${uuid}`),
      logger: loggerFor(`${cluster}:${address}`),
      newUuid,
      timings: TIMINGS,
      onShutdownRequested: () => {},
      openWanTransport: (publisher, handler) => {
        const t = world.dialTransportFor(transport, publisher.clusterName);
        t.setHandler(handler);
        return t;
      },
    });
    wireNode(transport, node);
    if (cluster === 'a') instrumentA(node, uuid);
    else instrumentB(node);
    const [host, port] = address.split(':') as [string, string];
    node.start(host, Number(port), addresses);
    const m: Member = { cluster, slot, address, uuid, node, transport, alive: true };
    members.push(m);
    return m;
  };
  const crash = (m: Member, mode: 'dead' | 'silent'): void => {
    m.alive = false;
    crashedAt.set(m.uuid, world.timeMs);
    if (world.isPaused(m.address)) world.resume(m.address);
    world.crash(m.address, mode);
    world.timersFor(`${m.address}/${m.uuid}`).cancelAll();
    m.node.stop();
  };
  const liveA = (): Member[] => members.filter((m) => m.alive && m.cluster === 'a');
  const liveB = (): Member[] => members.filter((m) => m.alive && m.cluster === 'b');
  const slotUp = (cluster: 'a' | 'b', slot: number): boolean => members.some((m) => m.alive && m.cluster === cluster && m.slot === slot);

  // ── driving the world (microtasks after each event) ──
  const targetOf = (m: Member): WanTargetInternals => (m.node.wan as unknown as { target: WanTargetInternals }).target;
  const applying = (): boolean => members.some((m) => m.cluster === 'b' && m.alive && targetOf(m).chains.size > 0);
  const drain = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  const EVENTS_MAX = 20_000_000;
  let stepped = 0;
  const runUntil = async (predicate: () => boolean, deadlineMs: number): Promise<boolean> => {
    if (predicate()) return true;
    for (;;) {
      const at = world.nextEventAtMs();
      if (at === null || at > deadlineMs) break;
      const before = applying();
      world.step();
      if (++stepped > EVENTS_MAX) fail(`more than ${EVENTS_MAX} events (livelock?)`);
      if (before || applying()) await drain();
      if (predicate()) return true;
    }
    if (deadlineMs > world.timeMs) world.run(deadlineMs);
    return predicate();
  };
  const runFor = async (ms: number): Promise<void> => void (await runUntil(() => false, world.timeMs + ms));

  const settled = (group: Member[]): boolean => {
    if (group.length === 0 || group.some((m) => world.isPaused(m.address))) return false;
    const master = group.find((m) => m.node.membership.isMaster);
    if (master === undefined || master.node.membership.list.length !== group.length) return false;
    const mv = master.node.membership.version;
    const tv = master.node.partitions.table.version;
    return group.every((m) => m.node.membership.joined && m.node.membership.version === mv && m.node.partitions.table.version === tv && m.node.isSafe());
  };
  const describe = (group: Member[]): string =>
    group.map((m) => `${m.address} joined=${m.node.membership.joined} master=${m.node.membership.isMaster} members=${m.node.membership.list.length}@v${m.node.membership.version} table=v${m.node.partitions.table.version} safe=${m.node.isSafe()}`).join('; ');

  // ── workload ──
  const keySpace = 10 + rnd.nextInt(60);
  let writeCounter = 0;
  let acknowledged = 0;
  const pid = (key: string): number => partitionIdOfKey(Buffer.from(key, 'utf8'), partitionCount);
  const clientOp = (): void => {
    const via = liveA().filter((m) => !world.isPaused(m.address) && m.node.membership.joined);
    if (via.length === 0) return;
    const m = via[rnd.nextInt(via.length)] as Member;
    const n = writeCounter++;
    const kind = rnd.nextInt(100);
    const done = (what: string) => (r: LocalResult): void => {
      if (r.kind === 'ok') acknowledged++;
      if (verbose) process.stdout.write(`[${world.timeMs}ms] CLIENT ${what} via ${m.address}: ${r.kind}\n`);
    };
    if (kind < 2) {
      // A map clear, as the member API makes it: one clear per partition.
      let left = partitionCount;
      let ok = true;
      for (let p = 0; p < partitionCount; p++) {
        m.node.invoker.invoke(p, ClusterNode.op(OP.MAP_CLEAR_PARTITION, MAP), 20_000, (r) => {
          ok &&= r.kind === 'ok';
          if (--left > 0) return;
          if (ok) acknowledged++;
          if (verbose) process.stdout.write(`[${world.timeMs}ms] CLIENT clear #${n} via ${m.address}: ${ok ? 'ok' : 'failed'}\n`);
        });
      }
      return;
    }
    const key = `k${rnd.nextInt(keySpace)}`;
    const keyBytes = Buffer.from(key, 'utf8');
    if (kind < 17) {
      m.node.invoker.invoke(pid(key), ClusterNode.op(OP.MAP_REMOVE, MAP, keyBytes), 20_000, done(`remove ${key}`));
    } else {
      const value = `v${n}`;
      m.node.invoker.invoke(pid(key), ClusterNode.op(OP.MAP_PUT, MAP, keyBytes, Buffer.from(value, 'utf8'), 'text/plain'), 20_000, done(`put ${key}=${value}`));
    }
  };

  // ── start ──
  for (let i = 0; i < A_COUNT; i++) world.after(rnd.nextInt(1000), `start a${i}`, () => startMember('a', i));
  for (let i = 0; i < B_COUNT; i++) world.after(rnd.nextInt(1000), `start b${i}`, () => startMember('b', i));
  await runFor(3000);
  if (!(await runUntil(() => settled(liveA()) && settled(liveB()), world.timeMs + 60_000))) fail(`the clusters did not form: A ${describe(liveA())}; B ${describe(liveB())}`);

  // ── fault rounds ──
  const faults: Record<string, number> = {};
  const count = (what: string): void => void (faults[what] = (faults[what] ?? 0) + 1);
  let bDataLost = false;
  /** Faults running now, with when they end (their heal is scheduled). */
  let busyUntilMs = 0;
  const busy = (untilMs: number): void => void (busyUntilMs = Math.max(busyUntilMs, untilMs));
  const rounds = 3 + rnd.nextInt(4);
  const aPauses = new SimWorld(seed).randomFor('wan-a-pause');
  // One run in three starts a full sync in the middle of the faults (a stream of its own).
  const midSyncRandom = new SimWorld(seed).randomFor('wan-mid-sync');
  const midSyncRound = midSyncRandom.next() < 1 / 3 ? midSyncRandom.nextInt(rounds) : -1;
  const midSyncAtMs = midSyncRandom.nextInt(5000);
  const midSyncPick = midSyncRandom.next();
  let midSyncId: string | null = null;
  for (let round = 0; round < rounds; round++) {
    const roundMs = 2000 + rnd.nextInt(6000);
    if (round === midSyncRound) {
      world.after(Math.min(midSyncAtMs, roundMs), 'mid-run sync', () => {
        const via = liveA().filter((m) => m.node.membership.joined && !world.isPaused(m.address));
        const m = via[Math.floor(midSyncPick * via.length)];
        if (m === undefined) return;
        midSyncId = m.node.wan.syncs.startSync(REPLICATION, PUBLISHER, null);
        note(`full sync ${midSyncId} through ${m.address} (during the faults)`);
        count('mid-run-sync');
      });
    }
    for (let i = 0; i < 20 + rnd.nextInt(40); i++) world.after(rnd.nextInt(roundMs), 'client op', clientOp);
    const faultCount = 1 + rnd.nextInt(2);
    let aFaultTaken = false;
    let bFaultTaken = false;
    for (let f = 0; f < faultCount; f++) {
      const startInMs = rnd.nextInt(roundMs);
      const fault = rnd.nextInt(100);
      // Link faults need nothing; crashes one per cluster per round.
      if (fault < 12) {
        const forMs = 1000 + rnd.nextInt(15_000);
        const lossRate = [0.05, 0.2, 0.5, 1][rnd.nextInt(4)] as number;
        const ways = rnd.nextInt(3);
        busy(world.timeMs + startInMs + forMs);
        world.after(startInMs, 'fault', () => {
          note(`loss ${lossRate} on ${['A->B', 'B->A', 'both ways'][ways]} for ${forMs} ms`);
          count('loss');
          if (ways !== 1) world.degrade(aAddresses, bAddresses, { lossRate });
          if (ways !== 0) world.degrade(bAddresses, aAddresses, { lossRate });
          world.after(forMs, 'restore', () => {
            note('link restored');
            world.restore();
          });
        });
      } else if (fault < 24) {
        const forMs = 1000 + rnd.nextInt(15_000);
        const maxMs = [50, 300, 1500, 6000][rnd.nextInt(4)] as number;
        const ways = rnd.nextInt(3);
        busy(world.timeMs + startInMs + forMs + maxMs);
        world.after(startInMs, 'fault', () => {
          note(`latency up to ${maxMs} ms on ${['A->B', 'B->A', 'both ways'][ways]} for ${forMs} ms`);
          count('latency');
          if (ways !== 1) world.degrade(aAddresses, bAddresses, { delayMsMin: maxMs >> 2, delayMsMax: maxMs });
          if (ways !== 0) world.degrade(bAddresses, aAddresses, { delayMsMin: maxMs >> 2, delayMsMax: maxMs });
          world.after(forMs, 'restore', () => {
            note('link restored');
            world.restore();
          });
        });
      } else if (fault < 40) {
        const forMs = 1000 + rnd.nextInt(20_000);
        const shape = rnd.nextInt(4);
        const ai = rnd.nextInt(A_COUNT);
        const bi = rnd.nextInt(B_COUNT);
        busy(world.timeMs + startInMs + forMs);
        world.after(startInMs, 'fault', () => {
          count('partition');
          if (shape === 0) {
            note(`partition between the clusters for ${forMs} ms`);
            world.block(aAddresses, bAddresses);
            world.block(bAddresses, aAddresses);
          } else if (shape === 1) {
            note(`one-way partition: B does not hear A for ${forMs} ms`);
            world.block(aAddresses, bAddresses);
          } else if (shape === 2) {
            note(`one-way partition: A does not hear B for ${forMs} ms`);
            world.block(bAddresses, aAddresses);
          } else {
            note(`partition between ${aAddresses[ai]} and ${bAddresses[bi]} for ${forMs} ms`);
            world.block([aAddresses[ai] as string], [bAddresses[bi] as string]);
            world.block([bAddresses[bi] as string], [aAddresses[ai] as string]);
          }
          world.after(forMs, 'heal', () => {
            note('partition healed');
            world.heal();
          });
        });
      } else if (fault < 62 && !aFaultTaken) {
        // One A member down at most: crash one (restarting empty, or staying down), or restart the one down.
        aFaultTaken = true;
        const silent = rnd.next() < 1 / 3;
        const stay = rnd.next() < 0.25;
        const downMs = 1000 + rnd.nextInt(10_000);
        const pick = rnd.next();
        busy(world.timeMs + startInMs + downMs);
        // One A fault in four is a pause under the heartbeat timeout instead (a stream of its own, so
        // the other schedules stay as they were before pauses were added).
        const pauseMs = aPauses.next() < 0.25 ? 1000 + aPauses.nextInt(5500) : 0;
        const pausePick = aPauses.next();
        world.after(startInMs, 'fault', () => {
          const down = aAddresses.findIndex((_, i) => !slotUp('a', i));
          if (pauseMs > 0 && down < 0) {
            const live = liveA();
            const victim = live[Math.floor(pausePick * live.length)] as Member;
            note(`pause a${victim.slot} ${victim.address}${victim.node.membership.isMaster ? ' (master)' : ''} for ${pauseMs} ms`);
            count('a-pause');
            world.pause(victim.address, `${victim.address}/${victim.uuid}`);
            world.after(pauseMs, 'resume', () => world.resume(victim.address));
            return;
          }
          if (down >= 0) {
            note(`restart a${down} (down) empty`);
            count('a-restart');
            startMember('a', down);
            return;
          }
          const live = liveA();
          if (!settled(live)) return void note('A not settled: no A crash this round');
          const victim = live[Math.floor(pick * live.length)] as Member;
          note(`crash a${victim.slot} ${victim.address}${victim.node.membership.isMaster ? ' (master)' : ''}${silent ? ' (silent)' : ''}${stay ? ', stays down' : `, restarts empty in ${downMs} ms`}`);
          count(silent ? 'a-crash-silent' : 'a-crash');
          crash(victim, silent ? 'silent' : 'dead');
          if (!stay) {
            world.after(downMs, 'restart', () => {
              if (slotUp('a', victim.slot)) return;
              note(`restart a${victim.slot} empty`);
              startMember('a', victim.slot);
            });
          }
        });
      } else if (fault < 94 && !bFaultTaken) {
        bFaultTaken = true;
        const what = rnd.nextInt(10);
        const silent = rnd.next() < 1 / 3;
        const downMs = 1000 + rnd.nextInt(12_000);
        const bi = rnd.nextInt(B_COUNT);
        busy(world.timeMs + startInMs + downMs + 1000);
        world.after(startInMs, 'fault', () => {
          const live = liveB();
          if (what < 1) {
            // The whole of B goes down and comes back empty.
            note(`outage of B for ${downMs} ms${silent ? ' (silent)' : ''}, both restart empty`);
            count('b-outage');
            bDataLost = true;
            newestApplied.clear();
            // B's data is gone: what it stores from now on is compared with nothing it had before.
            for (const [key, list] of bStores) {
              list.push({ kind: 'reset' });
              bStoreSeq.get(key)?.push(bStoreCount);
            }
            for (const m of live) crash(m, silent ? 'silent' : 'dead');
            world.after(downMs, 'restart B', () => {
              for (let i = 0; i < B_COUNT; i++) if (!slotUp('b', i)) startMember('b', i);
            });
            return;
          }
          if (live.length < B_COUNT || !settled(live)) return void note('B not settled: no B fault this round');
          const victim = live.find((m) => m.slot === bi) as Member;
          if (what < 4) {
            const pauseMs = Math.min(downMs, 6000);
            note(`pause b${bi} ${victim.address} for ${pauseMs} ms`);
            count('b-pause');
            world.pause(victim.address, `${victim.address}/${victim.uuid}`);
            world.after(pauseMs, 'resume', () => world.resume(victim.address));
            return;
          }
          note(`crash b${bi} ${victim.address}${silent ? ' (silent)' : ''}, restarts empty in ${downMs} ms`);
          count(silent ? 'b-crash-silent' : 'b-crash');
          crash(victim, silent ? 'silent' : 'dead');
          world.after(downMs, 'restart', () => {
            if (slotUp('b', bi)) return;
            note(`restart b${bi} empty`);
            startMember('b', bi);
          });
        });
      }
    }
    await runFor(roundMs);
    await runUntil(() => world.timeMs >= busyUntilMs, busyUntilMs + 1);
    await runFor(1000);
    // The next round starts with both clusters in shape: at most one A member is ever down.
    if (!(await runUntil(() => settled(liveA()) && settled(liveB()), world.timeMs + 90_000))) {
      fail(`the clusters did not settle after round ${round}: A ${describe(liveA())}; B ${describe(liveB())}`);
    }
  }

  // ── heal everything and let the queues drain ──
  world.heal();
  world.restore();
  for (const m of members) if (m.alive && world.isPaused(m.address)) world.resume(m.address);
  for (let i = 0; i < B_COUNT; i++) if (!slotUp('b', i)) startMember('b', i);
  note('healed');
  await runFor(30_000); // client calls answer or time out
  if (!(await runUntil(() => settled(liveA()) && settled(liveB()), world.timeMs + 120_000))) fail(`the clusters did not settle after the heal: A ${describe(liveA())}; B ${describe(liveB())}`);
  const drained = (): boolean =>
    !applying() &&
    liveA().every((m) => {
      const f = m.node.wan.figures()[`${REPLICATION}/${PUBLISHER}`];
      return f !== undefined && f.queued === 0 && f.backupQueued === 0 && m.node.wan.publisher(REPLICATION, PUBLISHER).inFlight === 0;
    });
  const figures = (): string =>
    liveA()
      .map((m) => {
        const pub = m.node.wan.publisher(REPLICATION, PUBLISHER);
        // Where events are left: partition, owner here or backup, and the versions queued.
        const left: string[] = [];
        pub.queues.forEach((q, pid) => {
          if (q === undefined || q.eventCount === 0) return;
          const owner = m.node.partitions.table.owner(pid) === m.node.uuid;
          left.push(`p${pid}${owner ? ' owned' : ' backup'} v${q.writeEvents().map((e) => e.version).join(',')}`);
        });
        return `${m.address} ${JSON.stringify(m.node.wan.figures()[`${REPLICATION}/${PUBLISHER}`])} inFlight=${pub.inFlight}${left.length > 0 ? ` left: ${left.slice(0, 5).join('; ')}` : ''}`;
      })
      .join('; ');
  if (!(await runUntil(drained, world.timeMs + 60_000))) fail(`the WAN queues did not drain within 60 s of the heal: ${figures()}`);
  // A sync started during the faults ends, FINISHED or FAILED (a stalled one fails after STALL_MS).
  let midSync = 'none';
  if (midSyncId !== null) {
    const id = midSyncId;
    const ended = (): boolean => liveA().every((m) => {
      const stage = m.node.wan.syncs.progress(id)?.stage;
      return stage === undefined || stage === 'FINISHED' || stage === 'FAILED';
    });
    // Within 30 s of the heal (both clusters settled, the queues drained): the retries of a sync are
    // bounded by the response timeout and the 5 s backoff, and a member that left mid-sync fails it
    // (wan.md). Not ending at all would be caught by the 2-minute stall rule; this asks for less.
    if (!(await runUntil(ended, world.timeMs + 30_000))) {
      const record = (m: Member): string => {
        const r = m.node.wan.syncs.records.get(id);
        if (r === undefined) return `${m.address}: no record`;
        const started = [...r.started].map(([u, ps]) => `${u.slice(-4)}:${ps.size}`).join(',');
        return `${m.address}: ${r.stage} ${r.done.size}/${r.total} done, unfinished per member [${started}], owns ${Array.from({ length: partitionCount }, (_, p) => p).filter((p) => m.node.partitions.table.owner(p) === m.uuid).length}`;
      };
      fail(`the sync started during the faults had not ended 30 s after the heal: ${liveA().map(record).join('; ')}; crashed: ${[...crashedAt.keys()].map((u) => u.slice(-4)).join(',')}`);
    }
    const stages = new Set(liveA().map((m) => m.node.wan.syncs.progress(id)?.stage ?? 'unknown'));
    midSync = [...stages].sort().join('/');
    note(`the sync started during the faults ended: ${midSync}`);
    if (!(await runUntil(drained, world.timeMs + 60_000))) fail(`the WAN queues did not drain after the sync started during the faults ended: ${figures()}`);
  }
  await runFor(500);
  for (const m of liveA()) {
    const f = m.node.wan.figures()[`${REPLICATION}/${PUBLISHER}`];
    if (f !== undefined && f.dropped > 0) fail(`${m.address} dropped ${f.dropped} event(s) with queue-capacity ${QUEUE_CAPACITY}`);
  }

  // ── reading both clusters ──
  const mapOf = (group: Member[]): Map<string, string> => {
    const master = group.find((m) => m.node.membership.isMaster) ?? fail('no master');
    const byUuid = new Map(group.map((m) => [m.uuid, m]));
    const out = new Map<string, string>();
    for (let p = 0; p < partitionCount; p++) {
      const owner = byUuid.get(master.node.partitions.table.replicas[p]?.[0] ?? '') ?? fail(`partition ${p} has no live owner`);
      for (const e of owner.node.store.maps.exportMapPartition(MAP, p, world.clock.nowMs())) out.set(Buffer.from(e.key).toString('utf8'), Buffer.from(e.value).toString('utf8'));
    }
    return out;
  };

  // Writes lost in A: applied by an owner that crashed, never applied by a backup.
  const lostInA = new Set<string>();
  const lostRemovalKeys = new Set<string>();
  const lostAt = (i: number): boolean => {
    const w = ownerWrites[i];
    if (w === undefined || !crashedAt.has(w.owner)) return false;
    const next = aJumps.find((j) => j.partitionId === w.partitionId && j.atWrite > i);
    return next !== undefined && next.before < w.version;
  };
  for (let i = 0; i < ownerWrites.length; i++) {
    const w = ownerWrites[i] as (typeof ownerWrites)[number];
    if (!lostAt(i)) continue;
    if (w.kind === 'put' && w.value !== null) lostInA.add(w.value);
    if (w.kind === 'remove') lostRemovalKeys.add(w.key);
    if (w.kind === 'clear') for (let k = 0; k < keySpace; k++) if (pid(`k${k}`) === w.partitionId) lostRemovalKeys.add(`k${k}`);
  }
  const versionOf = (value: string): number => aWrites.get(value)?.version ?? fail(`B stored ${value}, a value no A owner ever stored`);
  const diff = (a: Map<string, string>, b: Map<string, string>, allowBOnly: boolean): { key: string; text: string }[] => {
    const out: { key: string; text: string }[] = [];
    for (const key of new Set([...a.keys(), ...b.keys()])) {
      const av = a.get(key);
      const bv = b.get(key);
      if (av === bv) continue;
      // B has a write A lost (A holds the older value, or nothing).
      if (bv !== undefined && lostInA.has(bv) && (av === undefined || versionOf(av) < versionOf(bv))) continue;
      // A lost a removal B applied.
      if (bv === undefined && lostRemovalKeys.has(key) && !allowBOnly) continue;
      if (allowBOnly && av === undefined && bv !== undefined && lostInA.has(bv)) continue;
      out.push({ key, text: `${key}: A ${av ?? '(none)'}, B ${bv ?? '(none)'} (B stored ${(bStores.get(key) ?? []).map((s) => (s.kind === 'put' ? s.value : s.kind === 'reset' ? '|' : s.why === 'clear' ? 'clear' : '-')).join(' ')})` });
    }
    return out;
  };

  // (a) without a sync.
  const mapA = mapOf(liveA());
  const checkedNoSync = !bDataLost;
  const d = diff(mapA, mapOf(liveB()), false);
  if (checkedNoSync) {
    if (d.length > 0) fail(`(a) B differs from A without a sync in ${d.length} key(s):\n  ${d.slice(0, 20).map((x) => x.text).join('\n  ')}`, d.map((x) => x.key));
  }

  // (b) no step back that is not a replay. A's history of a key is the puts its owners applied, in
  // order (a put retried by A's invoker appears again, later); each value B stored is placed in it:
  // at the first application at or after the previous store's place, else (a step back) at the last
  // one before it.
  let replays = 0;
  const aPuts = new Map<string, { value: string; entryVersion: number; lost: boolean }[]>();
  ownerWrites.forEach((w, i) => {
    if (w.kind !== 'put' || w.value === null) return;
    let list = aPuts.get(w.key);
    if (list === undefined) aPuts.set(w.key, (list = []));
    list.push({ value: w.value, entryVersion: w.entryVersion, lost: lostAt(i) });
  });
  for (const [key, stores] of bStores) {
    const history = aPuts.get(key) ?? [];
    const seqs = bStoreSeq.get(key) ?? [];
    const placed: string[] = [];
    let cursor = -1;
    let furthest = -1;
    /** The furthest place before an unmade step back, and the store index it happened at. */
    let owed: { place: number; at: number } | null = null;
    const explain = (): string => `\n  B stored: ${placed.join(' ')}\n  A applied: ${history.map((h, i) => `${i}:${h.value}${h.lost ? '(lost in A)' : ''}`).join(' ')}`;
    for (let i = 0; i < stores.length; i++) {
      const s = stores[i] as BStore;
      if (s.kind === 'reset') {
        // B lost its data (an outage): nothing B stored before is owed any more.
        placed.push('|');
        cursor = -1;
        furthest = -1;
        owed = null;
        continue;
      }
      if (s.kind !== 'put') {
        placed.push(s.why === 'clear' ? 'clear' : '-');
        continue;
      }
      let place = -1;
      // The application with the same value and record version; a value A applied twice (its invoker
      // re-ran a put) has a different record version each time, unless the record was reset between.
      const same = (p: number): boolean => history[p]?.value === s.value && history[p]?.entryVersion === s.entryVersion;
      for (let p = Math.max(0, cursor); p < history.length; p++) if (same(p)) { place = p; break; }
      // Going back, the latest application before the cursor with this value and record version. Two
      // applications can match: a clear or remove resets a key's record version, and A's invoker can
      // re-run the same put after it (seed 475: v2 and v4 applied, cleared, then re-run). Placing the
      // store at the later one asks the least of the replay; a store that really went back still
      // lands before the furthest place and must be made good.
      if (place < 0) for (let p = Math.min(cursor, history.length) - 1; p >= 0; p--) if (same(p)) { place = p; break; }
      if (place < 0) fail(`(b) key ${key}: B stored ${s.value}, which no A owner applied to this key${explain()}`, [key]);
      placed.push(`${s.value}@${place}`);
      if (owed !== null && place >= owed.place) {
        // The step back is made good when the replay stores the furthest write again (or it was lost in A).
        if (place !== owed.place && history[owed.place]?.lost !== true) {
          fail(`(b) key ${key}: after a step back B stored write ${place} (${s.value}) without storing write ${owed.place} (${history[owed.place]?.value}) again, the newest it had before: events reordered${explain()}`, [key]);
        }
        replays++;
        owed = null;
      }
      if (place < furthest && owed === null) owed = { place: furthest, at: seqs[i] ?? 0 };
      cursor = place;
      furthest = Math.max(furthest, place);
    }
    if (owed !== null) {
      const at = owed.at;
      const removedAfter = stores.some((x, j) => x.kind === 'gone' && (seqs[j] ?? 0) > at);
      if (history[owed.place]?.lost !== true && !removedAfter) {
        fail(`(b) key ${key}: B stepped back from write ${owed.place} (${history[owed.place]?.value}) and never stored it again: events reordered${explain()}`, [key]);
      }
      replays++;
    }
  }

  // (c) a full sync, then B holds all of A.
  const coordinator = liveA()[rnd.nextInt(liveA().length)] as Member;
  const syncStartMs = world.timeMs;
  const syncId = coordinator.node.wan.syncs.startSync(REPLICATION, PUBLISHER, null);
  note(`full sync ${syncId} through ${coordinator.address}`);
  const stages = (): string => liveA().map((m) => `${m.address} ${JSON.stringify(m.node.wan.syncs.progress(syncId))}`).join('; ');
  const finished = (): boolean => liveA().every((m) => m.node.wan.syncs.progress(syncId)?.stage === 'FINISHED') || liveA().some((m) => m.node.wan.syncs.progress(syncId)?.stage === 'FAILED');
  if (!(await runUntil(finished, world.timeMs + 60_000))) fail(`the full sync did not finish within 60 s: ${stages()}`);
  if (liveA().some((m) => m.node.wan.syncs.progress(syncId)?.stage !== 'FINISHED')) fail(`the full sync failed: ${stages()}`);
  const syncMs = world.timeMs - syncStartMs;
  if (!(await runUntil(drained, world.timeMs + 60_000))) fail(`the WAN queues did not drain after the sync: ${figures()}`);
  await runFor(500);
  const afterSync = diff(mapOf(liveA()), mapOf(liveB()), true);
  if (afterSync.length > 0) fail(`(c) after a full sync B differs from A in ${afterSync.length} key(s):\n  ${afterSync.slice(0, 20).map((x) => x.text).join('\n  ')}`, afterSync.map((x) => x.key));

  for (const m of members) if (m.alive) m.node.stop();
  return {
    seed,
    writes: writeCounter,
    acknowledgedWrites: acknowledged,
    keysChecked: mapA.size,
    faults,
    checkedNoSync,
    replays,
    lostInA: lostInA.size,
    syncMs,
    differedBeforeSync: d.length,
    staleApplies: staleApplies.length,
    misroutedAcks: misroutedAcks.length,
    midSync,
    virtualMs: world.timeMs,
    events: world.eventCount,
  };
}
