// A real-process nemesis (issue 9): `npm run nemesis -- --seconds N --seed S`.
//
// Members (dist/member.js, default 5) run on their own loopback addresses 127.0.0.11.. with
// grid.socket.bind.any=false and one shared port, REST with DATA on, a tcp-ip list of all of them and
// backup-count 1 for nemesis-once, nemesis-q and one register map per merge policy
// (nemesis-reg-latestupdate, ...). A client pool writes through every member
// (scripts/nemesis/workload.ts) while a seeded schedule (scripts/nemesis/schedule.ts) injects one
// fault at a time: kill -9 and restart, SIGSTOP/SIGCONT, and nft partitions on loopback
// (majority/minority, isolate one, bridge, one-way). After each fault is undone the nemesis waits
// for the cluster to recover (every member up, one member list, cluster-safe; at most 60 s), then a
// quiet gap of 1–5 s. At the end it heals everything, waits (at most 120 s) for every member to be
// up, joined, listing the same members and cluster-safe, and checks the history
// (scripts/nemesis/analysis.ts): no acknowledged write-once key or queue item lost, no duplicate
// outside a split brain, register updates lost to each merge policy as a figure (per policy), no
// member crash or uncaught exception, every partition owned.
//
// Hygiene: one nft table of our own (inet grid_nemesis), deleted at the start (a killed run may
// have left it), at the end, on SIGINT/SIGTERM and on any exception; every stopped member gets
// SIGCONT and every member process SIGKILL in the same cleanup; a lock file keeps two runs apart.
// Exit: 0 pass, 1 a check failed (seed, schedule and member log paths printed), 2 bad options or a
// missing precondition (root, nft), 130/143 interrupted.
import fs from 'node:fs';
import path from 'node:path';
import { SeededRandom } from '../src/util/prng.js';
import { checkOnceReads, checkQueue, countsByKind, judgeRegisters, runDeliveries, type Delivery, type KeyProblem, type ReadResult, type RegisterVerdict, type Window } from './nemesis/analysis.js';
import type { Op } from './nemesis/workload.js';
import { Firewall, FirewallError, deleteTableSync, selfTest } from './nemesis/firewall.js';
import { Fleet, ONCE_MAP, endLeftoverMembers, memberHost, registerMap, type Member } from './nemesis/fleet.js';
import { readMemberLog, type Evidence, type LogIncarnation, type MemberError } from './nemesis/member-logs.js';
import { MERGE_POLICIES, parseOptions, USAGE, UsageError, type NemesisOptions } from './nemesis/options.js';
import { PreconditionError, commonFreePort, ensureNft, requireBuiltMember, requireNftWorks, requireRoot } from './nemesis/preconditions.js';
import { jsonLine, summaryTable, type Figures, type RegisterPolicyFigures } from './nemesis/report.js';
import { FAULT_KINDS, FaultSchedule, describeFault, type FaultKind, type FaultSpec } from './nemesis/schedule.js';
import { checkOwnership, drainQueue, readThroughEveryMember } from './nemesis/verify.js';
import { Workload } from './nemesis/workload.js';
import { CpWorkload, type CpVerdict } from './nemesis/cp-workload.js';

const ROOT_DIR = '/tmp/grid-nemesis';
const LOCK_FILE = path.join(ROOT_DIR, 'lock');
const PID_FILE = path.join(ROOT_DIR, 'members.pids');
const PARTITION_COUNT = 271; // the member's default grid.partition.count; the nemesis does not change it
const FORM_DEADLINE_MS = 120_000;
const RECOVER_DEADLINE_MS = 60_000;
const HEAL_DEADLINE_MS = 120_000;
const DRAIN_DEADLINE_MS = 300_000;
const WARMUP_MS = 5000;
const REQUEST_DEADLINE_MS = 20_000;
/** Keys of each register map (every policy's map has the same ones). */
const REGISTER_KEYS = 8;
const RESTART_TRIES = 5;
const LOCK_WAIT_MS = 1_800_000;
const CP_CLIENTS = 4;
const CP_DISCOVERY_DEADLINE_MS = 60_000;
/** With --cp-persistence: how long the CP workload runs again after every member was killed and restarted. */
const CP_AFTER_RESTART_MS = 20_000;
/** The linearizability checker's bound per kind of object; undecided is a failure. */
const CP_CHECK_DEADLINE_MS = 120_000;
const CP_SIZE = 3;

interface FaultRecord {
  readonly spec: FaultSpec;
  readonly text: string;
  startedAtMs: number;
  undoneAtMs: number | null;
  recoveredAtMs: number | null;
  note: string;
}

let started = Date.now();
const since = (t: number): string => `+${((t - started) / 1000).toFixed(1)}s`;
const say = (line: string): void => void process.stdout.write(`[nemesis ${since(Date.now())}] ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

// ── cleanup, reachable from finally blocks, signal and exit handlers ──────────────────────────────

let fleetForCleanup: Fleet | null = null;
/** The faults so far, for the replay printed when a run aborts. */
let recordsSoFar: readonly FaultRecord[] = [];
let tableCreated = false;
let lockHeld = false;
let cleanedUp = false;

function cleanupSync(): void {
  if (cleanedUp) return;
  cleanedUp = true;
  fleetForCleanup?.killAllSync();
  fleetForCleanup?.closeClients();
  if (tableCreated) {
    const r = deleteTableSync();
    if (r !== 'deleted' && r !== 'absent') process.stderr.write(`nemesis: ${r}\n`);
  }
  if (lockHeld) {
    try {
      fs.unlinkSync(LOCK_FILE);
    } catch {
      /* already gone */
    }
  }
}

function installHandlers(seed: number): void {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      process.stdout.write(`\nnemesis: ${signal}: healing (deleting table inet grid_nemesis, SIGCONT and SIGKILL to every member); seed ${seed}\n`);
      cleanupSync();
      process.exit(code);
    });
  }
  process.on('exit', cleanupSync);
  process.on('uncaughtException', (e) => {
    process.stderr.write(`nemesis: uncaught exception (seed ${seed}): ${e.stack ?? e.message}\n`);
    cleanupSync();
    process.exit(1);
  });
  process.on('unhandledRejection', (e) => {
    process.stderr.write(`nemesis: unhandled rejection (seed ${seed}): ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    cleanupSync();
    process.exit(1);
  });
}

/** The pid of a live nemesis run holding the lock, or null when the lock is free or stale. */
function lockHolder(): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(LOCK_FILE, 'utf8').trim());
  } catch {
    return null;
  }
  try {
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('nemesis') ? pid : null;
  } catch {
    return null;
  }
}

/**
 * One run at a time (they share the nft table): the lock file is created exclusively. Another live
 * run is waited for (at most LOCK_WAIT_MS, so a CI run queues behind a developer's run instead of
 * failing); a lock whose process is gone is removed.
 */
async function takeLock(): Promise<void> {
  fs.mkdirSync(ROOT_DIR, { recursive: true });
  const end = Date.now() + LOCK_WAIT_MS;
  let announced = false;
  for (;;) {
    try {
      const fd = fs.openSync(LOCK_FILE, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      lockHeld = true;
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = lockHolder();
    if (holder === null) {
      try {
        fs.unlinkSync(LOCK_FILE);
      } catch {
        /* another starting run removed it first */
      }
      continue;
    }
    if (Date.now() >= end) throw new PreconditionError(`another nemesis run (pid ${holder}) still holds ${LOCK_FILE} after ${LOCK_WAIT_MS / 1000} s; runs share the nft table and cannot overlap`);
    if (!announced) say(`another nemesis run (pid ${holder}) is in progress; waiting for it to end (at most ${LOCK_WAIT_MS / 1000} s)`);
    announced = true;
    await sleep(2000);
  }
}

// ── the run ─────────────────────────────────────────────────────────────────────────────────────

/** Polls `fleet.notHealthy()` until it is null or `deadlineMs` passes; restarts crashed members meanwhile. */
/** The index of the member every answering member names as master (the first of its list), or null. */
async function masterIndex(fleet: Fleet): Promise<number | null> {
  for (const m of fleet.members) {
    if (!m.running || m.paused) continue;
    try {
      const address = await m.masterAddress();
      const i = fleet.members.findIndex((x) => x.address === address);
      if (i >= 0) return i;
    } catch {
      /* ask the next one */
    }
  }
  return null;
}

/** Every member answers the CP groups call (discovery complete everywhere). */
async function waitCpDiscovery(fleet: Fleet, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    let all = true;
    for (const m of fleet.members) {
      try {
        const r = await fetch(`http://${m.host}:${m.port}/grid/rest/cp-subsystem/groups`, { signal: AbortSignal.timeout(5000) });
        if (r.status !== 200) all = false;
        await r.arrayBuffer();
      } catch {
        all = false;
      }
    }
    if (all) return;
    if (Date.now() >= end) throw new Error(`CP discovery did not complete within ${deadlineMs / 1000} s`);
    await sleep(500);
  }
}

/**
 * What an operator does after a CP member's process was replaced (kill -9 without CP persistence:
 * the restarted process is a new member): remove the CP members whose process left the cluster,
 * then promote members until there are CP_SIZE again. Answers the changes made.
 */
async function repairCp(fleet: Fleet, log: (s: string) => void): Promise<number> {
  const up = fleet.members.filter((m) => m.running && !m.paused);
  const post = async (m: Member, p: string): Promise<{ status: number; text: string }> => {
    const r = await fetch(`http://${m.host}:${m.port}/grid/rest/cp-subsystem/${p}`, { method: 'POST', body: 'dev&', signal: AbortSignal.timeout(30_000) });
    return { status: r.status, text: await r.text() };
  };
  let changes = 0;
  try {
    const first = up[0] as Member;
    const list = (await (await fetch(`http://${first.host}:${first.port}/grid/rest/cp-subsystem/members`, { signal: AbortSignal.timeout(30_000) })).json()) as { uuid: string; address: string }[];
    let count = list.length;
    for (const cpm of list) {
      const r = await post(first, `members/${cpm.uuid}/remove`);
      if (r.status === 200) {
        changes++;
        count--;
        log(`CP: removed CP member ${cpm.uuid} (${cpm.address}): its process left the cluster`);
      }
    }
    for (const m of up) {
      if (count >= CP_SIZE) break;
      const local = await fetch(`http://${m.host}:${m.port}/grid/rest/cp-subsystem/members/local`, { signal: AbortSignal.timeout(30_000) });
      await local.arrayBuffer();
      if (local.status === 200) continue;
      const r = await post(m, 'members');
      if (r.status === 200) {
        changes++;
        count++;
        log(`CP: promoted ${m.address} to CP member`);
      } else log(`CP: promoting ${m.address} answered ${r.status} ${r.text.slice(0, 200)}`);
    }
  } catch (e) {
    log(`CP: repair did not complete: ${(e as Error).message}`);
  }
  return changes;
}

async function waitHealthy(fleet: Fleet, deadlineMs: number, restart: (m: Member) => Promise<void>): Promise<{ ok: boolean; reason: string }> {
  const end = Date.now() + deadlineMs;
  let reason = '';
  for (;;) {
    for (const m of fleet.members) if (!m.running) await restart(m);
    const r = await fleet.notHealthy();
    if (r === null) return { ok: true, reason: '' };
    reason = r;
    if (Date.now() >= end) return { ok: false, reason };
    await sleep(500);
  }
}

async function run(opts: NemesisOptions): Promise<Figures> {
  const failures: string[] = [];
  const hosts = Array.from({ length: opts.members }, (_, i) => memberHost(i));
  const stamp = new Date(started).toISOString().replace(/[:.]/g, '-');
  const runDir = path.join(ROOT_DIR, `run-${stamp}-seed-${opts.seed}`);
  fs.mkdirSync(runDir, { recursive: true });
  const leftovers = endLeftoverMembers(PID_FILE);
  if (leftovers > 0) say(`ended ${leftovers} member process(es) an earlier, killed run left behind`);
  const port = await commonFreePort(hosts);
  say(`seed ${opts.seed}, ${opts.seconds} s, ${opts.members} members on ${hosts[0]}..${hosts.at(-1)}:${port}, run directory ${runDir}`);

  const firewall = new Firewall(port);
  tableCreated = true;
  const created = firewall.create();
  if (created.leftover) say('deleted table inet grid_nemesis that an earlier run left');
  try {
    await selfTest(hosts[0] as string, hosts[1] as string);
  } catch (e) {
    if (e instanceof FirewallError) throw new PreconditionError(`nft rules cannot partition loopback here: ${e.message}`);
    throw e;
  }
  say('nft self-test passed: a rule on the output hook drops a TCP connect between two loopback addresses and spares 127.0.0.1');

  const rnd = new SeededRandom(opts.seed);
  const loopSeeds = Array.from({ length: opts.clients }, () => rnd.nextInt(0x1_0000_0000));
  const schedule = new FaultSchedule(rnd, opts.members, opts.pauseMaster);
  const fleet = new Fleet({ members: opts.members, port, runDir, pidFile: PID_FILE, registerPolicies: opts.registerPolicies, maxNoHeartbeatSeconds: opts.maxNoHeartbeatSeconds, logLevel: opts.logLevel, cp: opts.cpRate > 0, cpPersistence: opts.cpPersistence });
  fleetForCleanup = fleet;
  const address = (i: number): string => hosts[i] as string;
  const registerMaps = opts.registerPolicies.map(registerMap);
  const discardMaps = new Set(opts.registerPolicies.filter((p) => p === 'DiscardMergePolicy').map(registerMap));
  const workload = new Workload({ hosts, port, clients: opts.clients, rate: opts.rate, seeds: loopSeeds, registerMaps, registerKeys: REGISTER_KEYS, requestDeadlineMs: REQUEST_DEADLINE_MS });
  // A PRNG of their own: the fault schedule of a seed stays what it was before the CP workload.
  const cpRnd = new SeededRandom(opts.seed ^ 0x5eed_c0de);
  const cpSeeds = Array.from({ length: CP_CLIENTS }, () => cpRnd.nextInt(0x1_0000_0000));
  const cp = opts.cpRate > 0 ? new CpWorkload({ hosts, port, clients: CP_CLIENTS, rate: opts.cpRate, seeds: cpSeeds, requestDeadlineMs: REQUEST_DEADLINE_MS }) : null;
  let cpRepairs = 0;
  const records: FaultRecord[] = [];
  recordsSoFar = records;
  const faults = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;

  const restart = async (m: Member): Promise<void> => {
    let last = '';
    for (let t = 0; t < RESTART_TRIES; t++) {
      if (t > 0) await sleep(1000);
      try {
        await m.start();
        workload.markUp(m.index);
        cp?.markUp(m.index);
        return;
      } catch (e) {
        last = (e as Error).message.split('\n')[0] ?? '';
      }
    }
    failures.push(`${m.address} could not be restarted (${RESTART_TRIES} tries): ${last}`);
    throw new Error(`${m.address} could not be restarted: ${last}`);
  };

  // Start and form the cluster.
  await Promise.all(fleet.members.map((m) => m.start()));
  const formed = await waitHealthy(fleet, FORM_DEADLINE_MS, restart);
  if (!formed.ok) throw new Error(`the ${opts.members} members did not form one cluster-safe cluster within ${FORM_DEADLINE_MS / 1000} s: ${formed.reason}`);
  say(`cluster formed: ${opts.members} members, cluster-safe`);
  if (cp !== null) {
    await waitCpDiscovery(fleet, CP_DISCOVERY_DEADLINE_MS);
    say(`CP subsystem discovered: ${CP_SIZE} CP members; ${opts.cpRate} CP calls/s through every member`);
  }

  workload.start();
  cp?.start();
  const workloadStarted = Date.now();
  const endAt = workloadStarted + opts.seconds * 1000;
  await sleep(Math.min(WARMUP_MS, opts.seconds * 1000));

  while (Date.now() < endAt) {
    let spec = schedule.next();
    await sleep(Math.min(spec.gapMs, endAt - Date.now()));
    if (Date.now() >= endAt) break;
    if (spec.master) spec = { ...spec, target: (await masterIndex(fleet)) ?? (spec.target as number) };
    const rec: FaultRecord = { spec, text: describeFault(spec, address), startedAtMs: Date.now(), undoneAtMs: null, recoveredAtMs: null, note: '' };
    records.push(rec);
    faults[spec.kind]++;
    say(`fault ${spec.n}: ${rec.text}`);
    if (spec.kind === 'kill' || spec.kind === 'pause') {
      const m = fleet.members[spec.target as number] as Member;
      workload.markDown(m.index);
      cp?.markDown(m.index);
      if (spec.kind === 'kill') {
        await m.kill();
        await sleep(spec.durationMs);
        workload.holdRegister();
        await restart(m);
      } else {
        m.pause();
        await sleep(spec.durationMs);
        workload.holdRegister();
        m.resume();
        workload.markUp(m.index);
        cp?.markUp(m.index);
      }
    } else {
      firewall.cut(spec.drops.map((d) => ({ from: d.from.map(address), to: d.to.map(address) })));
      await sleep(spec.durationMs);
      workload.holdRegister();
      firewall.heal();
    }
    rec.undoneAtMs = Date.now();
    const recovered = await waitHealthy(fleet, RECOVER_DEADLINE_MS, restart);
    workload.releaseRegister();
    if (recovered.ok) {
      rec.recoveredAtMs = Date.now();
      say(`fault ${spec.n} undone; recovered in ${((rec.recoveredAtMs - rec.undoneAtMs) / 1000).toFixed(1)} s`);
      // With CP persistence a killed CP member comes back as itself: nothing to repair.
      if (cp !== null && !opts.cpPersistence) cpRepairs += await repairCp(fleet, say);
    } else {
      rec.note = `not recovered within ${RECOVER_DEADLINE_MS / 1000} s: ${recovered.reason}`;
      say(`fault ${spec.n} undone; ${rec.note}`);
    }
  }

  // The final heal: no rule, nobody stopped, everybody running; then the writes stop.
  say('healing: no rule, every member running and resumed; stopping the clients');
  firewall.heal();
  for (const m of fleet.members) if (m.paused) m.resume();
  for (const m of fleet.members) if (!m.running) await restart(m).catch(() => undefined);
  await Promise.all([workload.stop(), cp?.stop()]);
  const healStart = Date.now();
  const healed = await waitHealthy(fleet, HEAL_DEADLINE_MS, (m) => restart(m).catch(() => undefined));
  const healSeconds = healed.ok ? (Date.now() - healStart) / 1000 : null;
  if (healed.ok) say(`every member up, joined, one member list, cluster-safe after ${healSeconds?.toFixed(1)} s`);
  else failures.push(`cluster-safe never came back: not healthy ${HEAL_DEADLINE_MS / 1000} s after the heal: ${healed.reason}`);
  const healedAtMs = Date.now();

  const history = workload.history;
  const counts = countsByKind(history);

  // Split-brain windows: the schedule's long pauses and partitions, and what the members logged.
  const incarnations = new Map<string, LogIncarnation>();
  for (const [uuid, { member, inc }] of fleet.incarnationsByUuid()) incarnations.set(uuid, { uuid, member: member.address, goneAtMs: inc.killedAtMs ?? inc.exitedAtMs });
  const evidence: Evidence[] = [];
  const memberErrors: MemberError[] = [];
  const stderrNotes: MemberError[] = [];
  let severeLines = 0;
  for (const m of fleet.members) {
    const found = readMemberLog(m.address, fs.readFileSync(m.logFile, 'utf8'), incarnations);
    evidence.push(...found.evidence);
    memberErrors.push(...found.errors);
    stderrNotes.push(...found.notes);
    severeLines += found.severe;
  }
  const timeoutMs = opts.maxNoHeartbeatSeconds * 1000;
  const windows: Window[] = [];
  const attributed = new Set<Evidence>();
  records.forEach((rec, i) => {
    const endMs = rec.recoveredAtMs ?? records[i + 1]?.startedAtMs ?? healedAtMs;
    const inside = evidence.filter((e) => e.atMs >= rec.startedAtMs && e.atMs <= endMs);
    for (const e of inside) attributed.add(e);
    const long = rec.spec.kind !== 'kill' && rec.spec.durationMs >= timeoutMs;
    if (long || inside.length > 0) {
      const why = [long ? `${rec.spec.kind} of ${(rec.spec.durationMs / 1000).toFixed(1)} s >= ${opts.maxNoHeartbeatSeconds} s` : '', inside.length > 0 ? `${inside.length} member log line(s): ${[...new Set(inside.map((e) => e.kind))].join(', ')}` : ''].filter((x) => x !== '');
      windows.push({ startMs: rec.startedAtMs, endMs, label: `fault ${rec.spec.n} (${why.join('; ')})` });
    }
  });
  for (const e of evidence) {
    if (!attributed.has(e)) windows.push({ startMs: e.atMs - 2 * timeoutMs, endMs: e.atMs + 60_000, label: `unscheduled: ${e.member} ${e.line.slice(0, 160)}` });
  }

  let onceChecked = 0;
  let onceLost = 0;
  let onceWrong = 0;
  let queue: ReturnType<typeof checkQueue> | null = null;
  // Register writes shown lost by a read made while no fault was active, plus the final check; each
  // policy's map judged on its own. Without a heal there are no final reads (null).
  const quiet: Window[] = records.map((rec, i) => ({ startMs: rec.recoveredAtMs ?? Infinity, endMs: records[i + 1]?.startedAtMs ?? healedAtMs, label: `after fault ${rec.spec.n}` }));
  quiet.push({ startMs: workloadStarted, endMs: records[0]?.startedAtMs ?? healedAtMs, label: 'before the first fault' });
  let registerVerdicts: RegisterVerdict[] | null = null;
  if (healed.ok) {
    const ownership = await checkOwnership(fleet, PARTITION_COUNT);
    if (ownership.problem !== null) failures.push(`partition owners after the heal: ${ownership.problem}`);
    const onceKeys = history.filter((o) => o.kind === 'once').map((o) => o.key);
    say(`reading ${onceKeys.length} write-once key(s) through each of the ${opts.members} members`);
    const once = checkOnceReads(history, await readThroughEveryMember(fleet, ONCE_MAP, onceKeys));
    onceChecked = once.checked;
    onceLost = new Set(once.lost.map((p) => p.key)).size;
    onceWrong = new Set(once.wrong.map((p) => p.key)).size;
    // Per key: which member took the write and when, and what each member answers now.
    const describeKeys = (problems: readonly KeyProblem[]): string[] => {
      const byKey = new Map<string, KeyProblem[]>();
      for (const p of problems) byKey.set(p.key, [...(byKey.get(p.key) ?? []), p]);
      return [...byKey].map(([key, ps]) => {
        const w = history.find((o) => o.kind === 'once' && o.key === key) as Op;
        return `${key} (written through ${address(w.member)}, sent ${since(w.sentMs)} ${new Date(w.sentMs).toISOString()}, answered ${w.status} ${since(w.endMs)}; expected ${ps[0]?.expected}; got ${ps.map((p) => `${p.got} via ${address(p.member)}`).join(', ')})`;
      });
    };
    const lostKeys = describeKeys(once.lost);
    const wrongKeys = describeKeys(once.wrong);
    fs.writeFileSync(path.join(runDir, 'once-problems.json'), JSON.stringify({ lost: lostKeys, wrong: wrongKeys }, null, 1));
    if (onceLost > 0) failures.push(`${onceLost} acknowledged write-once key(s) lost (all in once-problems.json), e.g. ${lostKeys.slice(0, 5).join('; ')}`);
    if (onceWrong > 0) failures.push(`${onceWrong} write-once key(s) hold a value never written, e.g. ${wrongKeys.slice(0, 5).join('; ')}`);

    const registerFinals = new Map<string, Map<string, ReadResult[]>>();
    for (const map of registerMaps) {
      const regKeys = [...new Set(history.filter((o) => o.kind === 'reg' && o.map === map).map((o) => o.key))];
      registerFinals.set(map, await readThroughEveryMember(fleet, map, regKeys));
    }
    registerVerdicts = judgeRegisters(history, registerMaps, quiet, windows, registerFinals, discardMaps);
    // A lost write outside every split brain fails the run whatever the policy: no policy merges
    // anything without a split brain, so the loss is not the policy's doing.
    registerVerdicts.forEach((r, i) => {
      const policy = opts.registerPolicies[i] as string;
      for (const p of r.problems) failures.push(`register ${r.map} (${policy}) ${p}`);
      if (r.lostOutsideSplitBrain.length > 0) {
        const e = r.lostOutsideSplitBrain.slice(0, 5).map((w) => `${w.key}=${w.value} (acknowledged via ${address(w.member)} at ${since(w.endMs)})`);
        failures.push(`${r.lostOutsideSplitBrain.length} acknowledged register write(s) of ${r.map} (${policy}) lost outside any split brain, e.g. ${e.join('; ')}`);
      }
    });

    say('draining nemesis-q through every member');
    let drained: Delivery[] = [];
    try {
      drained = await drainQueue(fleet, DRAIN_DEADLINE_MS);
    } catch (e) {
      failures.push(`queue drain: ${(e as Error).message}`);
    }
    queue = checkQueue(history, [...runDeliveries(history), ...drained], windows);
    if (queue.lost > 0) {
      failures.push(`${queue.lost} acknowledged queue item(s) lost: ${queue.undelivered.length} never delivered, more than the ${queue.uncertainPolls} poll(s) without an answer could have taken; e.g. ${queue.undelivered.slice(0, 10).join(', ')}`);
    } else if (queue.undelivered.length > 0) {
      say(`${queue.undelivered.length} acknowledged item(s) never delivered (${queue.undelivered.slice(0, 10).join(', ')}), within the ${queue.uncertainPolls} poll(s) that may have taken an item without an answer`);
    }
    if (queue.unknown.length > 0) failures.push(`${queue.unknown.length} item(s) delivered that were never offered, e.g. ${queue.unknown.slice(0, 10).join(', ')}`);
    const outside = queue.duplicates.filter((d) => d.explainedBy === null);
    if (outside.length > 0) {
      failures.push(`${outside.length} queue item(s) delivered more than once outside a split brain, e.g. ${outside.slice(0, 5).map((d) => `${d.item} x${d.count}, first via ${address(d.first.member)} at ${since(d.first.endMs)}`).join('; ')}`);
    }
  }
  // With CP persistence: a kill -9 of every member at once, a restart of all, and the CP workload
  // again on the same objects and sessions; its history continues the one checked below.
  let cpWholeRestart = false;
  if (cp !== null && opts.cpPersistence && healed.ok) {
    say('CP persistence: kill -9 of every member at once');
    for (const m of fleet.members) {
      workload.markDown(m.index);
      cp.markDown(m.index);
    }
    await Promise.all(fleet.members.map((m) => m.kill()));
    await Promise.all(fleet.members.map((m) => restart(m).catch(() => undefined)));
    const back = await waitHealthy(fleet, HEAL_DEADLINE_MS, (m) => restart(m).catch(() => undefined));
    if (!back.ok) failures.push(`after a kill -9 of every member the cluster did not come back: ${back.reason}`);
    else {
      const t0 = Date.now();
      try {
        await waitCpDiscovery(fleet, CP_DISCOVERY_DEADLINE_MS);
        say(`CP persistence: every member restarted; the CP subsystem answered ${((Date.now() - t0) / 1000).toFixed(1)} s after the cluster formed; CP workload for ${CP_AFTER_RESTART_MS / 1000} s`);
        cp.start();
        await sleep(CP_AFTER_RESTART_MS);
        await cp.stop();
        cpWholeRestart = true;
      } catch (e) {
        failures.push(`after a kill -9 of every member the CP subsystem did not come back: ${(e as Error).message}`);
      }
    }
  }
  let cpVerdict: CpVerdict | null = null;
  if (cp !== null) {
    say(`checking ${cp.longOps.length + cp.refOps.length + cp.idCalls.length + cp.lockOps.length + cp.semOps.length} CP operation(s) for linearizability (${cp.lockOps.length} FencedLock, ${cp.semOps.length} Semaphore)`);
    cpVerdict = cp.verdict(CP_CHECK_DEADLINE_MS);
    for (const p of cpVerdict.problems) failures.push(`CP: ${p}`);
    if (cpVerdict.counts.sessionsLost > 0) say(`note: ${cpVerdict.counts.sessionsLost} CP session(s) expired under a client: the FencedLock and Semaphore histories were not checked`);
    fs.writeFileSync(path.join(runDir, 'cp-history.json'), JSON.stringify({ long: cp.longOps, ref: cp.refOps, ids: cp.idCalls, lock: cp.lockOps, semaphore: cp.semOps }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v === Infinity ? 'Infinity' : v)));
  }
  for (const c of fleet.crashes) failures.push(`member ${c.member} (pid ${c.pid}) exited on its own at ${since(c.atMs)} with ${c.exitSignal ?? `status ${c.exitCode}`}; stderr: ${c.stderrTail.trim().split('\n').slice(-3).join(' | ') || 'empty'}`);
  if (memberErrors.length > 0) failures.push(`${memberErrors.length} member error line(s) (exceptions on stderr, unexpected failures), e.g. ${memberErrors.slice(0, 3).map((e) => `${e.member}: ${e.line.slice(0, 300)}`).join(' || ')}`);
  for (const n of stderrNotes.slice(0, 5)) say(`note: ${n.member} wrote on stderr: ${n.line.slice(0, 200)}`);

  // Keep the history and schedule beside the logs for a look after the run.
  fs.writeFileSync(path.join(runDir, 'schedule.json'), JSON.stringify(records, null, 1));
  fs.writeFileSync(path.join(runDir, 'history.jsonl'), history.map((o) => JSON.stringify(o)).join('\n') + '\n');
  fs.writeFileSync(path.join(runDir, 'split-brain.json'), JSON.stringify({ windows, evidence }, null, 1));
  fs.writeFileSync(path.join(runDir, 'queue.json'), JSON.stringify(queue, null, 1));

  // Without a heal nothing was read back: the figures count the writes and judged reads only.
  registerVerdicts ??= judgeRegisters(history, registerMaps, quiet, windows, null);
  const registerByPolicy: RegisterPolicyFigures[] = registerVerdicts.map((r, i) => ({
    policy: opts.registerPolicies[i] as string,
    map: r.map,
    ackedWrites: r.ackedWrites,
    readsJudged: r.readsJudged,
    updatesLost: r.lostInSplitBrain.length,
    lostOutsideSplitBrain: r.lostOutsideSplitBrain.length,
    keysBehind: r.keysBehind,
  }));
  const registerSum = (f: (p: RegisterPolicyFigures) => number): number => registerByPolicy.reduce((n, p) => n + f(p), 0);

  const figures: Figures = {
    seed: opts.seed,
    seconds: opts.seconds,
    members: opts.members,
    maxNoHeartbeatSeconds: opts.maxNoHeartbeatSeconds,
    registerPolicies: opts.registerPolicies,
    faults,
    ops: counts,
    onceKeysChecked: onceChecked,
    onceLost,
    onceWrong,
    queueAckedOffers: queue?.ackedOffers ?? counts.offer.acked,
    queueDelivered: queue?.deliveredDuringRun ?? 0,
    queueDrained: queue?.drained ?? 0,
    queueUndelivered: queue?.undelivered.length ?? 0,
    queueUncertainPolls: queue?.uncertainPolls ?? 0,
    queueLost: queue?.lost ?? 0,
    queueUnknown: queue?.unknown.length ?? 0,
    queueDuplicated: queue?.duplicates.length ?? 0,
    queueDuplicatedOutsideSplitBrain: queue?.duplicates.filter((d) => d.explainedBy === null).length ?? 0,
    queueDuplicatedStale: queue?.duplicates.filter((d) => d.how === 'stale').length ?? 0,
    registerByPolicy,
    registerAckedWrites: registerSum((p) => p.ackedWrites),
    registerUpdatesLost: registerSum((p) => p.updatesLost),
    registerLostOutsideSplitBrain: registerSum((p) => p.lostOutsideSplitBrain),
    registerReadsJudged: registerSum((p) => p.readsJudged),
    registerKeysBehind: registerSum((p) => p.keysBehind),
    cpOperations: cpVerdict === null ? 0 : cpVerdict.counts.acknowledged + cpVerdict.counts.indeterminate + cpVerdict.counts.readsUnanswered,
    cpAcknowledged: cpVerdict?.counts.acknowledged ?? 0,
    cpIndeterminate: cpVerdict?.counts.indeterminate ?? 0,
    cpReadsUnanswered: cpVerdict?.counts.readsUnanswered ?? 0,
    cpChecked: cpVerdict?.checked ?? 0,
    cpVerdict: cpVerdict === null ? 'off' : cpVerdict.problems.length === 0 ? 'linearizable' : 'NOT linearizable or undecided',
    cpCheckSeconds: cpVerdict?.checkSeconds ?? 0,
    cpRepairs,
    cpWholeRestart,
    splitBrain: windows.length > 0,
    splitBrainWindows: windows.length,
    crashes: fleet.crashes.length,
    memberErrors: memberErrors.length,
    severeLines,
    clusterSafeAfterHeal: healed.ok,
    healSeconds,
    wallSeconds: (Date.now() - started) / 1000,
    passed: failures.length === 0,
    failures,
    runDir,
  };
  fs.writeFileSync(path.join(runDir, 'figures.json'), JSON.stringify(figures, null, 1));
  if (windows.length > 0) say(`split-brain windows: ${windows.map((w) => `${since(w.startMs)}..${since(w.endMs)} ${w.label}`).join('; ')}`);
  if (!figures.passed) printReplay(opts, records, fleet, since);
  return figures;
}

function printReplay(opts: NemesisOptions, records: readonly FaultRecord[], fleet: Fleet, at: (t: number) => string): void {
  const lines = [
    '',
    `replay: npm run nemesis -- --seconds ${opts.seconds} --seed ${opts.seed}${opts.members === 5 ? '' : ` --members ${opts.members}`}${opts.rate === 200 ? '' : ` --rate ${opts.rate}`}${opts.clients === 10 ? '' : ` --clients ${opts.clients}`}${opts.maxNoHeartbeatSeconds === 10 ? '' : ` --max-no-heartbeat ${opts.maxNoHeartbeatSeconds}`}${opts.registerPolicies.length === MERGE_POLICIES.length ? '' : ` --register-policy ${opts.registerPolicies.join(',')}`}${opts.pauseMaster ? ' --pause-master' : ''}${opts.cpPersistence ? ' --cp-persistence' : ''}${opts.cpRate === 60 ? '' : ` --cp-rate ${opts.cpRate}`}${opts.logLevel === 'INFO' ? '' : ` --log-level ${opts.logLevel}`}`,
    'fault schedule (times since the nemesis started):',
    ...records.map((r) => `  ${at(r.startedAtMs)} fault ${r.spec.n} ${r.spec.kind}: ${r.text}; undone ${r.undoneAtMs === null ? 'never' : at(r.undoneAtMs)}; ${r.recoveredAtMs === null ? r.note || 'not recovered' : `recovered ${at(r.recoveredAtMs)}`}`),
    'member logs:',
    ...fleet.members.map((m) => `  ${m.logFile} (${m.incarnations.length} incarnation(s): pids ${m.incarnations.map((i) => i.pid).join(', ')})`),
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

async function main(): Promise<number> {
  let opts: NemesisOptions;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`nemesis: ${e.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  installHandlers(opts.seed);
  try {
    requireRoot();
    say(ensureNft(say));
    requireNftWorks();
    requireBuiltMember();
    await takeLock();
    started = Date.now(); // times and wall time count from here, not from a wait for the lock
    const figures = await run(opts);
    process.stdout.write('\n' + summaryTable(figures) + '\n');
    process.stdout.write(jsonLine(figures) + '\n');
    return figures.passed ? 0 : 1;
  } catch (e) {
    if (e instanceof PreconditionError) {
      process.stderr.write(`nemesis: cannot run: ${e.message}\n`);
      return 2;
    }
    process.stderr.write(`nemesis: run failed (seed ${opts.seed}): ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    if (fleetForCleanup !== null) printReplay(opts, recordsSoFar, fleetForCleanup, since);
    return 1;
  } finally {
    cleanupSync();
  }
}

process.exitCode = await main();
// Timers of abandoned client requests must not keep the process alive after the verdict.
process.exit();
