// One seeded run of a whole cluster in one process: 3 to 7 members (ClusterNode, the same code the
// real member runs) on SimWorld's virtual clock and simulated network, a client writing unique keys
// and queue items through random members, and faults drawn from the seed, one per round with the
// cluster settled in between (so at most backup-count members are ever down at once): message loss,
// delay, reordering, member crashes, restarts with a new identity, a crash followed by a restart at
// the same address within the heartbeat timeout (often of the master), pauses of 2-20 s (a GC pause
// or SIGSTOP: timers fire late, the old view is kept), short and long network partitions
// (one member isolated, majority/minority, a bridge member that sees both sides), one-way
// partitions, and members joining while migrations run. After the faults stop, the run waits for
// the cluster to settle and checks the invariants:
//   - every live member is joined and sees the same member list and partition table as the master;
//   - exactly one owner per partition; replicas distinct and on live data members;
//   - every acknowledged map write is readable from the partition's owner and its backups;
//   - every acknowledged queue item was polled or is still queued (an item may vanish only with an
//     in-doubt poll, which is counted); outside a split brain no item is polled or queued twice;
//     inside one (a member was removed while alive: cluster.md) duplicates are allowed and counted;
//   - a member restarted while its old incarnation was still listed never founds a cluster of its
//     own when nothing cut it off (cluster.md, "A member restarted at the address of a listed member");
//   - (one fault at a time) a crashed member whose dials are refused (a dead process, not a silent
//     one) is removed within the refusal window (REFUSAL_REMOVAL_MS; longer for a master, which
//     needs a claim); a member paused for less than PAUSE_KEPT_MS (under the heartbeat timeout) is
//     never removed. Crashes are dead (refused) or, one in three, silent (dropped; removed by the
//     heartbeat timeout as before).
// A failure throws with `seed=N`; `npx tsx scripts/sim.ts --seed N` replays it with a trace.
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { ClusterNode, type ClusterTimings } from '../../src/member/cluster-node.js';
import { OP } from '../../src/data/replica-store.js';
import type { LocalResult } from '../../src/invocation/invoker.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { Logger } from '../../src/util/logger.js';
import { SimInvariants } from '../harness/sim-invariants.js';
import { SimWorld, wireNode, type SimTransport, type SimWorldOptions } from '../harness/sim-world.js';

export interface SimRunOptions {
  readonly seed: number;
  readonly partitionCount?: number;
  /** Print the member logs (replays). */
  readonly verbose?: boolean;
  /**
   * Let faults overlap: the next fault comes 3 s after the previous one, settled or not (a
   * partition may still be in force, a suspicion not yet due). Default: each fault is over (healed,
   * resumed, restarted) and the cluster settled before the next.
   */
  readonly overlap?: boolean;
  /**
   * How crashed processes look to the others. 'mixed' (default): dead (connections closed, dials
   * refused) or, one crash in three, silent. 'silent': every crash silent, the only model before the
   * refusal-based detector, so the seeds pinned before it replay the schedules that found their bugs.
   * The choice comes from a stream of its own: the fault schedule is the same either way.
   */
  readonly crashes?: 'mixed' | 'silent';
  /**
   * Share of the refusal interval two counted refusals are apart at least (ClusterTimings); the
   * seeds found before the 0.75 rule replay their schedules with 1.
   */
  readonly refusalSpacingShare?: number;
  /** Check the invariants after every step (sim-invariants.ts); default true. */
  readonly invariants?: boolean;
  /**
   * Also write a register: 4 keys of map `reg` (PassThroughMergePolicy: the merging side wins)
   * overwritten with rising values, during the faults and, one fault at a time, in a quiet second
   * after each settle. A value acknowledged in a quiet second may be overwritten only by a newer
   * one: no policy merges anything without a split brain, and the copies a split starts from hold
   * it (the nemesis's register check, in the simulation). Off by default: it changes the schedules
   * of the seeds pinned before it.
   */
  readonly register?: boolean;
  /**
   * Partitions hold messages as TCP under a dropping firewall does and deliver them after the heal
   * on connections still open (SimWorld's partitionsHold), instead of dropping them. Off by default
   * (the pinned seeds' schedules).
   */
  readonly tcp?: boolean;
  /** Replays: print every message about this partition, or of this kind (sent, dropped, delivered). */
  readonly watch?: { readonly partition?: number; readonly kind?: string };
}

/** Prints the watched messages, bytes as latin1 text, each line cut at 300 characters. */
function watcher(w: { readonly partition?: number; readonly kind?: string }): NonNullable<SimWorldOptions['watch']> {
  const bytesAsText = (_key: string, v: unknown): unknown => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1');
    const data = (v as { type?: unknown; data?: unknown } | null)?.data;
    return (v as { type?: unknown } | null)?.type === 'Buffer' && Array.isArray(data) ? Buffer.from(data as number[]).toString('latin1') : v;
  };
  return (event, from, to, m, atMs) => {
    const b = m.body as { partitionId?: unknown };
    if (!(w.partition !== undefined && b.partitionId === w.partition) && m.kind !== w.kind && w.kind !== '*') return;
    process.stdout.write(`[${atMs}ms] ~ ${event} ${from} -> ${to} ${m.kind}#${m.callId} ${JSON.stringify(b, bytesAsText).slice(0, 300)}\n`);
  };
}

export interface SimReport {
  readonly seed: number;
  readonly members: number;
  readonly acknowledgedWrites: number;
  readonly acknowledgedItems: number;
  readonly crashes: number;
  readonly restarts: number;
  readonly partitions: number;
  readonly pauses: number;
  readonly bounces: number;
  readonly splitBrain: boolean;
  readonly duplicatedItems: number;
  readonly joinsDuringMigration: number;
  readonly virtualMs: number;
  readonly events: number;
}

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

const REGISTER_XML = '<grid><map name="reg"><merge-policy>PassThroughMergePolicy</merge-policy></map></grid>';

function simConfig(partitionCount: number, register = false): Config {
  const r = loadConfig({
    argv: register ? ['--rest', '--config', '/sim.xml'] : ['--rest'],
    env: { GRID_PROPERTY_GRID_PARTITION_COUNT: String(partitionCount), GRID_PROPERTY_GRID_OPERATION_CALL_TIMEOUT_MILLIS: '20000' },
    cwd: '/',
    readFile: (file: string) => {
      if (register && file === '/sim.xml') return REGISTER_XML;
      throw new Error('no file');
    },
    fileExists: (file: string) => register && file === '/sim.xml',
    randomHex: () => 'abcd',
    version: '0.1.0',
  });
  if (r.kind !== 'run') throw new Error(`sim config: ${r.stderr}`);
  return r.config;
}

interface SimMember {
  readonly id: number;
  readonly address: string;
  readonly uuid: string;
  readonly node: ClusterNode;
  readonly transport: SimTransport;
  alive: boolean;
}

export class SimFailureReport extends Error {}

/**
 * A dead member is out of its master's list this soon after its crash: the refusal rule (3 faults
 * 100 ms apart, dialled on the close) plus network delays, with room to spare.
 */
const REFUSAL_REMOVAL_MS = 1000;
/** A dead master: its successor also needs a claim (asked at once; a refused claim is asked again the next second). */
const REFUSAL_MASTER_REMOVAL_MS = 3500;
/** Pauses this short stay under the heartbeat timeout (10 s) with a heartbeat interval and lost heartbeats to spare. */
const PAUSE_KEPT_MS = 7000;

export function runClusterSim(o: SimRunOptions): SimReport {
  const seed = o.seed >>> 0;
  const rnd = new SimWorld(seed).randomFor('scenario');
  const crashMode = new SimWorld(seed).randomFor('crash-mode');
  const world = new SimWorld(seed, {
    delayMsMin: 1,
    delayMsMax: 1 + rnd.nextInt(8),
    lossRate: process.env.SIM_LOSS === '0' ? 0 : rnd.next() < 0.3 ? rnd.next() * 0.01 : 0,
    reorder: rnd.next() < 0.2,
    partitionsHold: o.tcp === true,
    traceLinesMax: o.verbose === true ? 10_000 : 0,
    ...(o.watch === undefined ? {} : { watch: watcher(o.watch) }),
  });
  const partitionCount = o.partitionCount ?? 31;
  const config = simConfig(partitionCount, o.register === true);
  const memberCount = 3 + rnd.nextInt(5);
  const addresses = Array.from({ length: memberCount + 2 }, (_, i) => `10.0.0.${i + 1}:5701`);
  const members: SimMember[] = [];
  const logger = new Logger(o.verbose === true ? 'FINE' : 'OFF', 'text', { write: (line) => process.stdout.write(`[${world.timeMs}ms] ${line}`) });
  // One logger per member, so each line of a replay names the member that logged it.
  const memberLogger = (address: string): Logger => {
    if (o.verbose !== true) return logger;
    const l = new Logger('FINE', 'text', { write: (line) => process.stdout.write(`[${world.timeMs}ms] ${line}`) });
    l.setMemberAddress(address);
    return l;
  };
  let uuidCounter = 0;
  const newUuid = (): string => {
    uuidCounter++;
    const hex = (seed.toString(16).padStart(8, '0') + uuidCounter.toString(16).padStart(12, '0')).slice(-20);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${uuidCounter.toString(16).padStart(12, '0')}`;
  };
  const fail = (message: string): never => {
    throw new SimFailureReport(`seed=${seed} t=${world.timeMs}ms: ${message}`);
  };
  // The invariants checked after every step (sim-invariants.ts), so a broken one names its step.
  const invariants = new SimInvariants(() => members, partitionCount, (key) => partitionIdOfKey(Buffer.from(key, 'utf8'), partitionCount), fail);
  if (o.invariants !== false) world.afterEachStep = (label) => invariants.afterStep(label);
  if (o.verbose === true && process.env.SIM_TRACE_KEY !== undefined) invariants.traceKey = process.env.SIM_TRACE_KEY;

  const startMember = (slot: number): SimMember => {
    const uuid = newUuid();
    const address = addresses[slot] as string;
    const transport = world.transportFor(address, uuid, { clusterName: 'dev' });
    const timers = world.timersFor(`${address}/${uuid}`);
    // Each process has its own monotonic origin (performance.now() starts near 0 at process start)
    // and fractional readings, so no duration computed from it may reach the wire unrounded.
    const monotonicOriginMs = world.timeMs - 25 - (uuidCounter % 97) - 0.371;
    const clock = { nowMs: () => world.clock.nowMs(), monotonicMs: () => world.timeMs - monotonicOriginMs };
    const node = new ClusterNode({
      config,
      uuid,
      memberVersion: '0.1.0',
      transport,
      clock,
      timers,
      random: world.randomFor(`member-${uuid}`),
      logger: memberLogger(address),
      newUuid,
      timings: o.refusalSpacingShare === undefined ? TIMINGS : { ...TIMINGS, refusalSpacingShare: o.refusalSpacingShare },
      onShutdownRequested: () => {},
    });
    wireNode(transport, node);
    const [host, port] = address.split(':') as [string, string];
    node.start(host, Number(port), addresses.slice(0, memberCount + 1));
    const m: SimMember = { id: slot, address, uuid, node, transport, alive: true };
    members.push(m);
    if (o.invariants !== false) invariants.watch(m);
    return m;
  };
  const crash = (m: SimMember, mode: 'dead' | 'silent' = 'dead'): void => {
    m.alive = false;
    world.crash(m.address, mode);
    world.timersFor(`${m.address}/${m.uuid}`).cancelAll();
    m.node.stop();
    invariants.crashed();
    // Its unanswered polls are in doubt, as for a client whose connection broke: each may have taken
    // an item (a local owner removes it before the backup's ack lets the answer go).
    const unanswered = pollsVia.get(m) ?? 0;
    pollsVia.delete(m);
    inDoubtPolls += unanswered;
    invariants.pollsInFlight -= unanswered;
    invariants.pollsInDoubt += unanswered;
  };
  const live = (): SimMember[] => members.filter((m) => m.alive);

  // ── workload: map writes enter as REST and client calls do (LocalMember.run) ──
  // On the owner's fast path the key is borrowed from a scratch buffer that the member's next call
  // overwrites (here at once, with bytes no key has); a write kept past the call (a backup resend,
  // the hand-back of an unconfirmed write) must keep a copy. Elsewhere the call goes through the
  // invoker with a key of its own. The order of events is the invoker's own: a local owner runs the
  // call at once there too.
  const scratch = new Map<SimMember, Buffer>();
  const put = (m: SimMember, map: string, keyBytes: Buffer, value: Buffer, done: (r: LocalResult) => void): void => {
    const p = partitionIdOfKey(keyBytes, partitionCount);
    if (!m.node.ops.isFastLocal(p)) {
      m.node.invoker.invoke(p, ClusterNode.op(OP.MAP_PUT, map, keyBytes, value, 'text/plain'), 20_000, done);
      return;
    }
    let buf = scratch.get(m);
    if (buf === undefined || buf.length < keyBytes.length) scratch.set(m, (buf = Buffer.alloc(Math.max(64, keyBytes.length))));
    keyBytes.copy(buf);
    const borrowed = buf.subarray(0, keyBytes.length);
    const answer = (r: LocalResult): void => {
      if (r.kind === 'retry') m.node.invoker.invoke(p, ClusterNode.op(OP.MAP_PUT, map, keyBytes, value, 'text/plain'), 20_000, done);
      else done(r);
    };
    const now = m.node.ops.runLocalNow(p, ClusterNode.op(OP.MAP_PUT, map, borrowed, value, 'text/plain'), () => answer, () => {});
    buf.fill(0xff, 0, keyBytes.length);
    if (now !== null) answer(now);
  };

  // ── workload: unique keys and unique queue items, acknowledged ones recorded ──
  const acked = new Map<string, string>();
  const ackedItems = new Set<string>();
  const polledItems = new Map<string, number>();
  let inDoubtPolls = 0;
  /** Polls sent through each member and not answered yet: a member that crashes answers none of them. */
  const pollsVia = new Map<SimMember, number>();
  let opCounter = 0;
  const queues = ['q0', 'q1'];
  const clientOp = (): void => {
    const via = live().filter((m) => !world.isPaused(m.address));
    if (via.length === 0) return;
    const m = via[rnd.nextInt(via.length)] as SimMember;
    const n = opCounter++;
    const kind = rnd.nextInt(10);
    if (kind < 6) {
      const key = `k${n}`;
      const value = `v${n}`;
      put(m, 'm', Buffer.from(key, 'utf8'), Buffer.from(value), (r) => {
        if (r.kind === 'ok') {
          acked.set(key, value);
          invariants.acknowledgedWrite(key, value);
        }
        if (o.verbose === true) process.stdout.write(`[${world.timeMs}ms] CLIENT put ${key} via ${m.address}: ${r.kind}\n`);
      });
    } else if (kind < 8) {
      const q = queues[rnd.nextInt(queues.length)] as string;
      const item = `i${n}`;
      m.node.invoker.invoke(m.node.store.queuePartition(q), ClusterNode.op(OP.QUEUE_OFFER, q, Buffer.alloc(0), Buffer.from(item)), 20_000, (r) => {
        if (r.kind === 'ok' && r.outcome.kind === 'flag' && r.outcome.flag) {
          ackedItems.add(item);
          // Unless a poll already took it (the poll's answer can come first).
          if (!polledItems.has(item)) invariants.acknowledgedItem(q, m.node.store.queuePartition(q), item);
        }
      });
    } else {
      const q = queues[rnd.nextInt(queues.length)] as string;
      invariants.pollsInFlight++;
      pollsVia.set(m, (pollsVia.get(m) ?? 0) + 1);
      m.node.invoker.invoke(m.node.store.queuePartition(q), ClusterNode.op(OP.QUEUE_POLL, q), 20_000, (r) => {
        invariants.pollsInFlight--;
        pollsVia.set(m, (pollsVia.get(m) ?? 1) - 1);
        if (r.kind === 'ok' && r.outcome.kind === 'value' && r.outcome.value !== null) {
          const item = r.outcome.value.toString();
          polledItems.set(item, (polledItems.get(item) ?? 0) + 1);
          invariants.delivered(q, item);
        } else if (r.kind === 'error') {
          inDoubtPolls++;
          invariants.pollsInDoubt++;
        }
      });
    }
  };

  // ── workload: the register (o.register), on a random stream of its own ──
  const regRnd = world.randomFor('register');
  let regCounter = 0;
  const regWrites: RegisterWrite[] = [];
  /** Quiet seconds: after a settle, before the next fault (one fault at a time). */
  const quietWindows: [number, number][] = [];
  const regWrite = (): void => {
    const via = live().filter((m) => !world.isPaused(m.address));
    if (via.length === 0) return;
    const m = via[regRnd.nextInt(via.length)] as SimMember;
    const w: RegisterWrite = { key: `r${regRnd.nextInt(4)}`, value: ++regCounter, sentMs: world.timeMs, endMs: -1, ok: false };
    regWrites.push(w);
    put(m, 'reg', Buffer.from(w.key, 'utf8'), Buffer.from(String(w.value)), (r) => {
      w.endMs = world.timeMs;
      w.ok = r.kind === 'ok';
      if (o.verbose === true) process.stdout.write(`[${world.timeMs}ms] CLIENT reg ${w.key}=${w.value} via ${m.address}: ${r.kind}\n`);
    });
  };

  // ── scenario ──
  for (let i = 0; i < memberCount; i++) world.after(rnd.nextInt(1500), `start ${i}`, () => startMember(i));
  world.runFor(4000);
  let crashes = 0;
  let restarts = 0;
  let splits = 0;
  let pauses = 0;
  let bounces = 0;
  let joinsDuringMigration = 0;
  /** Members restarted into a cluster that still listed their old incarnation, with when. */
  const bounced: { member: SimMember; atMs: number }[] = [];
  /** Intervals during which a partition, block or pause was in force (a restart then may be cut off). */
  const disturbed: [number, number][] = [];
  const disturb = (forMs: number): void => void disturbed.push([world.timeMs, world.timeMs + forMs]);
  const faultRounds = 3 + rnd.nextInt(4);
  /** Slots whose crashed member restarts on a timer (a bounce): not restarted by another fault. */
  const bouncing = new Set<number>();
  const spareSlot = memberCount;
  const faultLog = (text: string): void => {
    if (o.verbose === true) process.stdout.write(`[${world.timeMs}ms] FAULT ${text}\n`);
  };
  const masterOf = (ms: SimMember[]): SimMember | undefined => ms.find((m) => m.node.membership.isMaster);
  const pick = (ms: SimMember[], preferMaster: boolean): SimMember => (preferMaster ? masterOf(ms) : undefined) ?? (ms[rnd.nextInt(ms.length)] as SimMember);
  for (let round = 0; round < faultRounds; round++) {
    for (let i = 0; i < 40; i++) world.after(rnd.nextInt(3000), 'client op', clientOp);
    if (o.register === true) for (let i = 0; i < 10; i++) world.after(regRnd.nextInt(3000), 'register write', regWrite);
    const fault = rnd.nextInt(10);
    const victims = live();
    const addressesOf = (ms: SimMember[]): string[] => ms.map((m) => m.address);
    if (fault === 0 && victims.length > 2) {
      // Crash one member (backup-count 1: one down at a time), then let the cluster repair.
      const victim = victims[rnd.nextInt(victims.length)] as SimMember;
      const silent = o.crashes === 'silent' || crashMode.next() < 1 / 3;
      const wasMaster = victim.node.membership.isMaster;
      faultLog(`crash ${victim.address}${wasMaster ? ' (master)' : ''}${silent ? ' (silent)' : ''}`);
      crash(victim, silent ? 'silent' : 'dead');
      crashes++;
      if (!silent && o.overlap !== true) {
        // A dead process refuses every reconnect: the survivors' master drops it within the window.
        const windowMs = wasMaster ? REFUSAL_MASTER_REMOVAL_MS : REFUSAL_REMOVAL_MS;
        // Watched every 50 ms: a later fault (the next round may pause the new master) must not hide it.
        const crashedAtMs = world.timeMs;
        const removed = (): boolean => live().some((m) => m.node.membership.isMaster && !m.node.membership.isMember(victim.uuid));
        const watch = (): void => {
          if (removed()) return;
          if (world.timeMs - crashedAtMs >= windowMs) {
            fail(`${victim.address} (${victim.uuid}) crashed ${windowMs} ms ago and refuses every reconnect, but no master has removed it: ${describe(live())}`);
          }
          world.after(50, 'check refusal removal', watch);
        };
        world.after(50, 'check refusal removal', watch);
      }
    } else if (fault === 1) {
      // Restart a crashed slot with a new identity, or join the spare slot while migrations run.
      const dead = members.filter((m) => !m.alive && !bouncing.has(m.id) && !members.some((x) => x.alive && x.id === m.id));
      const slot = dead.length > 0 ? (dead[0] as SimMember).id : spareSlot;
      // A bouncing slot restarts on its own timer: starting it here too would put two processes on one
      // address, which a real machine refuses (the port is taken) (seeds 5741, 8062 with --overlap).
      if (!bouncing.has(slot) && !members.some((x) => x.alive && x.id === slot)) {
        faultLog(`start slot ${slot}`);
        startMember(slot);
        if (dead.length > 0) restarts++;
        else joinsDuringMigration++;
      }
    } else if (fault === 2 && victims.length > 2) {
      // A short partition (healed before suspicion) isolating one member.
      const isolated = victims[rnd.nextInt(victims.length)] as SimMember;
      faultLog(`isolate ${isolated.address} briefly`);
      world.partition([[isolated.address]]);
      splits++;
      const forMs = 2000 + rnd.nextInt(4000);
      disturb(forMs);
      world.after(forMs, 'heal', () => world.heal());
    } else if (fault === 3 && victims.length > 2) {
      // kill -9 and a restart at the same address before the others noticed (often the master).
      const victim = pick(victims, rnd.next() < 0.5);
      const downMs = 1000 + rnd.nextInt(7000);
      faultLog(`bounce ${victim.address}${victim.node.membership.isMaster ? ' (master)' : ''} for ${downMs} ms`);
      crash(victim);
      bounces++;
      // Checked only when another live member lists the old incarnation (a cluster exists to join).
      const listed = victims.some((m) => m !== victim && m.node.membership.isMember(victim.uuid));
      bouncing.add(victim.id);
      world.after(downMs, 'bounce', () => {
        bouncing.delete(victim.id);
        const member = startMember(victim.id);
        if (listed) bounced.push({ member, atMs: world.timeMs });
      });
    } else if (fault === 4 && victims.length > 2) {
      // A pause (GC, SIGSTOP) of 2-20 s: shorter than the heartbeat timeout, or long enough to be removed.
      const victim = pick(victims, rnd.next() < 0.33);
      const pauseMs = 2000 + rnd.nextInt(18_000);
      faultLog(`pause ${victim.address}${victim.node.membership.isMaster ? ' (master)' : ''} for ${pauseMs} ms`);
      world.pause(victim.address, `${victim.address}/${victim.uuid}`);
      pauses++;
      disturb(pauseMs);
      world.after(pauseMs, 'resume', () => world.resume(victim.address));
      if (pauseMs < PAUSE_KEPT_MS && o.overlap !== true) {
        // Under the heartbeat timeout, and a stopped process refuses nothing: nobody may remove it.
        const leftBefore = victim.node.membership.counters.leftCluster;
        world.after(pauseMs + 3000, 'check pause kept', () => {
          const master = masterOf(live());
          if (victim.node.membership.counters.leftCluster !== leftBefore || master === undefined || !master.node.membership.isMember(victim.uuid)) {
            fail(`${victim.address} (${victim.uuid}), paused for ${pauseMs} ms (under the heartbeat timeout), was removed`);
          }
        });
      }
    } else if (fault === 5 && victims.length > 2) {
      // A long partition: a minority (at most half, rounded down) cut off past the heartbeat timeout.
      const shuffled = victims.map((m) => ({ m, r: rnd.next() })).sort((a, b) => a.r - b.r).map((x) => x.m);
      const minority = shuffled.slice(0, 1 + rnd.nextInt(Math.max(1, Math.floor((victims.length - 1) / 2))));
      const forMs = 5000 + rnd.nextInt(20_000);
      faultLog(`partition minority [${addressesOf(minority).join(',')}] for ${forMs} ms`);
      world.partition([addressesOf(minority)]);
      splits++;
      disturb(forMs);
      world.after(forMs, 'heal', () => world.heal());
    } else if (fault === 6 && victims.length > 2) {
      // A one-way partition: one member hears the others but they do not hear it, or the reverse.
      const x = victims[rnd.nextInt(victims.length)] as SimMember;
      const others = addressesOf(victims.filter((m) => m !== x));
      const outbound = rnd.next() < 0.5;
      const forMs = 3000 + rnd.nextInt(17_000);
      faultLog(`one-way: ${outbound ? `${x.address} not heard by the others` : `${x.address} does not hear the others`} for ${forMs} ms`);
      if (outbound) world.block([x.address], others);
      else world.block(others, [x.address]);
      splits++;
      disturb(forMs);
      world.after(forMs, 'heal', () => world.heal());
    } else if (fault === 7 && victims.length > 2) {
      // A bridge: two sides that cannot reach each other, and one member that reaches both.
      const [bridge, ...rest] = victims.map((m) => ({ m, r: rnd.next() })).sort((a, b) => a.r - b.r).map((x) => x.m) as [SimMember, ...SimMember[]];
      const cut = 1 + rnd.nextInt(Math.max(1, rest.length - 1));
      const left = addressesOf(rest.slice(0, cut));
      const right = addressesOf(rest.slice(cut));
      const forMs = 5000 + rnd.nextInt(15_000);
      faultLog(`bridge ${bridge.address} between [${left.join(',')}] and [${right.join(',')}] for ${forMs} ms`);
      world.block(left, right);
      world.block(right, left);
      splits++;
      disturb(forMs);
      world.after(forMs, 'heal', () => world.heal());
    }
    if (o.overlap !== true) {
      // One fault at a time: let this one end (heal, resume, restart) before the next.
      const endMs = Math.max(0, ...disturbed.map(([, to]) => to));
      world.runUntil(() => world.timeMs >= endMs && bouncing.size === 0, world.timeMs + 60_000);
    }
    world.runFor(3000);
    // Wait until the cluster is back in shape before the next fault: at most one member down at once.
    const back = settle(world, live, 60_000);
    if (o.register === true && o.overlap !== true && back) {
      // A quiet second: register writes with no fault in force and the cluster settled.
      const from = world.timeMs;
      for (let i = 0; i < 8; i++) world.after(regRnd.nextInt(1000), 'register write', regWrite);
      world.runFor(1500);
      quietWindows.push([from, world.timeMs]);
    }
  }
  world.heal();
  world.setNetwork({ lossRate: 0 });
  world.runFor(5000);
  if (!settle(world, live, 120_000)) {
    if (process.env.SIM_DEBUG !== undefined) for (const m of live()) if (m.node.membership.isMaster) console.log(m.node.partitions.debugState());
    fail(`the cluster did not settle: ${describe(live())}`);
  }
  world.runFor(25_000); // let in-flight client calls finish or time out

  // A restarted member may found a cluster of its own only when a fault cut it off while it joined.
  const founders = new Set<SimMember>();
  for (const { member: m, atMs } of bounced) {
    if (m.node.membership.counters.clustersFounded === 0) continue;
    founders.add(m);
    const cutOff = disturbed.some(([from, to]) => from <= atMs + 3000 && atMs <= to);
    if (!cutOff) fail(`${m.address} (${m.uuid}), restarted at ${atMs} ms while its old incarnation was listed, founded a cluster of its own with nothing cutting it off`);
  }
  // A split brain (cluster.md): a member was removed while alive, so it left its cluster (removed,
  // or merging with its side). A restart's own founding does not count.
  // A founder's own merge back is excused once per cluster it founded, not the member's later
  // removals while alive (seed 215108 with --overlap counted none, then judged a hand-back's
  // duplicate outside a split brain).
  const splitBrain = members.some((m) => m.node.membership.counters.leftCluster > (founders.has(m) ? m.node.membership.counters.clustersFounded : 0));
  // Every call through a live member is answered within its timeout (20 s; the run waited 25 s).
  for (const [m, n] of pollsVia) if (m.alive && n > 0) fail(`${n} poll(s) through ${m.address} were never answered`);
  const duplicatedItems = check(live(), partitionCount, acked, ackedItems, polledItems, inDoubtPolls, splitBrain, fail);
  checkNoPhantoms(live(), partitionCount, opCounter, regWrites, fail);
  if (o.register === true) checkRegister(live(), partitionCount, regWrites, quietWindows, fail);
  for (const m of live()) m.node.stop();
  return {
    seed,
    members: memberCount,
    acknowledgedWrites: acked.size,
    acknowledgedItems: ackedItems.size,
    crashes,
    restarts,
    partitions: splits,
    pauses,
    bounces,
    splitBrain,
    duplicatedItems,
    joinsDuringMigration,
    virtualMs: world.timeMs,
    events: world.eventCount,
  };
}

/**
 * No member holds an entry no client wrote: every key of map `m` is a `k<n>` the workload sent,
 * with its own value `v<n>`, in its own partition, and every register value was written to that
 * register. A write kept past its call with a borrowed key that was overwritten meanwhile (a backup
 * resend, an unconfirmed write handed back) puts another key, or bytes no key has, in its place.
 */
function checkNoPhantoms(live: SimMember[], partitionCount: number, opsSent: number, regWrites: readonly RegisterWrite[], fail: (m: string) => never): void {
  const written = new Set(regWrites.map((w) => `${w.key}=${w.value}`));
  for (const m of live) {
    for (let p = 0; p < partitionCount; p++) {
      for (const e of m.node.store.maps.exportPartition(p, 0)) {
        const key = e.key.toString('utf8');
        const value = e.value.toString('utf8');
        const own = partitionIdOfKey(e.key, partitionCount) === p;
        if (e.mapName === 'm') {
          const n = /^k(\d+)$/.exec(key)?.[1];
          if (n === undefined || Number(n) >= opsSent || value !== `v${n}` || !own) fail(`${m.address} holds ${JSON.stringify(key)}=${JSON.stringify(value)} in partition ${p} of map m, which no client wrote`);
        } else if (e.mapName === 'reg') {
          if (!written.has(`${key}=${value}`) || !own) fail(`${m.address} holds ${JSON.stringify(key)}=${JSON.stringify(value)} in partition ${p} of the register, which no client wrote`);
        }
      }
    }
  }
}

/**
 * The register: a value acknowledged inside a quiet window (sent and answered in it) is not
 * overwritten by a write answered before it was sent. Values rise across all keys; a final value
 * below it left by such a write means an older copy came back (a stale copy handed back or
 * promoted), which no merge policy explains. The owner's backups must agree with it.
 */
export interface RegisterWrite {
  readonly key: string;
  readonly value: number;
  readonly sentMs: number;
  endMs: number;
  ok: boolean;
}

/**
 * The acknowledged writes of `key` made inside a quiet window that its final value `final` (0:
 * absent) shows lost. The write that left the final value may have taken effect after one of them
 * only if it was still unanswered when that one was sent (concurrent writes land in either order,
 * and a call whose answer was lost is sent again and lands late); one answered before it was sent
 * must not win over it.
 */
export function lostRegisterWrites(writes: readonly RegisterWrite[], quiet: readonly [number, number][], key: string, final: number): RegisterWrite[] {
  const last = writes.find((x) => x.key === key && x.value === final);
  const answeredAtMs = last === undefined ? -1 : last.ok ? last.endMs : Infinity;
  return writes.filter((w) => w.key === key && w.ok && quiet.some(([from, to]) => from <= w.sentMs && w.endMs <= to) && w.value > final && answeredAtMs < w.sentMs);
}

function checkRegister(live: SimMember[], partitionCount: number, writes: readonly RegisterWrite[], quiet: readonly [number, number][], fail: (m: string) => never): void {
  const master = live.find((m) => m.node.membership.isMaster) as SimMember;
  const byUuid = new Map(live.map((m) => [m.uuid, m]));
  for (const key of new Set(writes.map((w) => w.key))) {
    const keyBytes = Buffer.from(key, 'utf8');
    const p = partitionIdOfKey(keyBytes, partitionCount);
    const replicas = (master.node.partitions.table.replicas[p] ?? []).filter((u): u is string => u !== null);
    const values = replicas.map((u) => byUuid.get(u)?.node.store.maps.peek('reg', keyBytes, p, 0)?.value.toString() ?? null);
    if (new Set(values).size > 1) fail(`register ${key} (partition ${p}): the replicas disagree: ${replicas.map((u, i) => `${byUuid.get(u)?.address}=${values[i]}`).join(', ')}`);
    const final = values[0] === null || values[0] === undefined ? 0 : Number(values[0]);
    for (const w of lostRegisterWrites(writes, quiet, key, final)) {
      fail(`register ${key}=${w.value}, acknowledged in a quiet window at ${w.endMs} ms, is lost: partition ${p} holds ${values[0] ?? 'nothing'} on ${replicas.map((u) => byUuid.get(u)?.address).join(', ')}`);
    }
  }
}

function settled(world: SimWorld, live: SimMember[]): boolean {
  if (live.some((m) => world.isPaused(m.address))) return false;
  const master = live.find((m) => m.node.membership.isMaster);
  if (master === undefined) return false;
  const mv = master.node.membership.version;
  const tv = master.node.partitions.table.version;
  if (master.node.membership.list.length !== live.length) return false;
  for (const m of live) {
    if (!m.node.membership.joined || m.node.membership.version !== mv || m.node.partitions.table.version !== tv) return false;
    if (!m.node.isSafe()) return false;
  }
  return true;
}

function settle(world: SimWorld, live: () => SimMember[], forMs: number): boolean {
  return world.runUntil(() => settled(world, live()), world.timeMs + forMs);
}

function describe(live: SimMember[]): string {
  return live
    .map((m) => `${m.address} joined=${m.node.membership.joined} master=${m.node.membership.isMaster} members=${m.node.membership.list.length}@v${m.node.membership.version} table=v${m.node.partitions.table.version} queue=${m.node.partitions.migrationQueueSize} safe=${m.node.isSafe()}${m.node.isSafe() ? '' : ` (why: ${unsafeReasons(m)})`}`)
    .join('; ');
}

/** What keeps a member from being safe, for the failure line. */
function unsafeReasons(m: SimMember): string {
  const n = m.node;
  const why: string[] = [];
  if (n.partitions.activeMigrations > 0) why.push(`${n.partitions.activeMigrations} migrations active`);
  if (n.replicator.syncing) why.push(`receiving partitions ${n.replicator.receivingPartitions.join(',')}`);
  if (n.replicator.staleCount > 0) why.push(`${n.replicator.staleCount} stale backups`);
  const hb = n.handBack.backlog;
  if (hb.pending > 0 || hb.inFlight > 0) why.push(`hand-back ${hb.pending} pending, ${hb.inFlight} in flight`);
  return why.join(', ') || 'replicas short';
}

function check(
  live: SimMember[],
  partitionCount: number,
  acked: Map<string, string>,
  ackedItems: Set<string>,
  polled: Map<string, number>,
  inDoubtPolls: number,
  splitBrain: boolean,
  fail: (m: string) => never,
): number {
  const master = live.find((m) => m.node.membership.isMaster) ?? fail('no master');
  const table = master.node.partitions.table;
  const liveData = new Set(live.filter((m) => !m.node.membership.self.lite).map((m) => m.uuid));
  for (const m of live) {
    if (m.node.partitions.table.version !== table.version) fail(`${m.address} has table v${m.node.partitions.table.version}, master v${table.version}`);
    for (let p = 0; p < partitionCount; p++) {
      if (JSON.stringify(m.node.partitions.table.replicas[p]) !== JSON.stringify(table.replicas[p])) fail(`${m.address} disagrees on partition ${p}`);
    }
  }
  for (let p = 0; p < partitionCount; p++) {
    const r = table.replicas[p] ?? [];
    const owner = r[0];
    if (owner === null || owner === undefined) fail(`partition ${p} has no owner`);
    const filled = r.filter((u): u is string => u !== null);
    if (new Set(filled).size !== filled.length) fail(`partition ${p} has a member twice`);
    for (const u of filled) if (!liveData.has(u)) fail(`partition ${p} has replica ${u}, not a live data member`);
    if (filled.length < Math.min(table.width, liveData.size)) fail(`partition ${p} has ${filled.length} replicas`);
  }
  const byUuid = new Map(live.map((m) => [m.uuid, m]));
  for (const [key, value] of acked) {
    const keyBytes = Buffer.from(key, 'utf8');
    const p = partitionIdOfKey(keyBytes, partitionCount);
    const owner = byUuid.get(table.owner(p) as string) ?? fail(`owner of ${p} is not live`);
    const got = owner.node.store.maps.get('m', keyBytes, p, 0);
    if (got === null || got.value.toString() !== value) fail(`acknowledged write ${key}=${value} lost (owner ${owner.address} has ${got?.value.toString() ?? 'nothing'})`);
    for (const u of (table.replicas[p] ?? []).slice(1)) {
      if (u === null) continue;
      const b = byUuid.get(u);
      const copy = b?.node.store.maps.get('m', keyBytes, p, 0);
      if (copy === null || copy === undefined || copy.value.toString() !== value) {
        fail(`backup ${b?.address ?? u} of partition ${p} misses ${key} (owner at version ${owner.node.store.version(p)}, backup at ${b?.node.store.version(p) ?? '?'})`);
      }
    }
  }
  // Queue items: everything acknowledged is polled once or still queued; nothing appears twice.
  const remaining = new Map<string, number>();
  for (const q of ['q0', 'q1']) {
    const p = live[0]?.node.store.queuePartition(q) ?? 0;
    const owner = byUuid.get(table.owner(p) as string) ?? fail('queue owner not live');
    const snap = owner.node.store.queues.exportQueue(q);
    for (const item of snap?.items ?? []) {
      const text = item.value.toString();
      remaining.set(text, (remaining.get(text) ?? 0) + 1);
    }
  }
  // Outside a split brain every item is delivered exactly once; inside one, at least once (counted).
  let duplicated = 0;
  const duplicate = (what: string): void => {
    if (!splitBrain) fail(what);
    duplicated++;
  };
  for (const [item, n] of polled) if (n > 1) duplicate(`item ${item} was polled ${n} times`);
  for (const [item, n] of remaining) {
    if (n > 1) duplicate(`item ${item} is queued ${n} times`);
    if (polled.has(item)) duplicate(`item ${item} was polled and is still queued`);
  }
  let missing = 0;
  for (const item of ackedItems) if (!polled.has(item) && !remaining.has(item)) missing++;
  if (missing > inDoubtPolls) fail(`${missing} acknowledged queue item(s) lost (${[...ackedItems].filter((i) => !polled.has(i) && !remaining.has(i)).join(',')}), only ${inDoubtPolls} poll(s) in doubt; queued: ${[...remaining.keys()].join(',')}`);
  return duplicated;
}
