// The members of a nemesis run as real processes (dist/member.js, started with the shared harness):
// member i listens on 127.0.0.(11+i):port with grid.socket.bind.any=false, so every member connection
// runs between two member addresses and nft can cut it. Each member keeps its config and one log
// file (every incarnation appended, stderr lines prefixed `[stderr] `) in the run directory.
//
// The fleet knows which processes it ended on purpose (kill -9) and which are stopped (SIGSTOP); any
// other exit is a crash, recorded with its exit status. Every pid is written to a pid file so a later
// run can end members a killed run left behind (only processes whose command line names that run's
// config file).
import fs from 'node:fs';
import path from 'node:path';
import { KeepAliveClient, memberXml } from '../../tests/harness/cluster.js';
import { startMember, type MemberProcess } from '../../tests/harness/member-process.js';
import { policyShortName } from './options.js';

/**
 * The register map of one merge policy (LatestUpdateMergePolicy -> nemesis-reg-latestupdate). Each
 * policy has a map of its own, so one run shows what every policy loses to the same faults.
 */
export const registerMap = (policy: string): string => `nemesis-reg-${policyShortName(policy)}`;
export const ONCE_MAP = 'nemesis-once';
export const QUEUE = 'nemesis-q';

export interface Incarnation {
  readonly n: number;
  readonly pid: number;
  readonly startedAtMs: number;
  uuid: string | null;
  /** When the nemesis sent SIGKILL (null: never). */
  killedAtMs: number | null;
  exitedAtMs: number | null;
  exitCode: number | null;
  exitSignal: string | null;
  /** Exited without the nemesis killing it. */
  crashed: boolean;
}

export interface Crash {
  readonly member: string;
  readonly pid: number;
  readonly atMs: number;
  readonly exitCode: number | null;
  readonly exitSignal: string | null;
  readonly stderrTail: string;
}

export interface HealthView {
  readonly nodeState: string;
  readonly clusterSafe: boolean;
  readonly migrationQueueSize: number;
  readonly clusterSize: number;
}

interface ClusterWire {
  members: { address: string; uuid: string; localMember: boolean }[];
}

export interface FleetOptions {
  readonly members: number;
  readonly port: number;
  readonly runDir: string;
  readonly pidFile: string;
  /** One register map each (`registerMap`), backup-count 1 like the other structures. */
  readonly registerPolicies: readonly string[];
  readonly maxNoHeartbeatSeconds: number;
  /** The members' `--log-level` (options.ts). */
  readonly logLevel: string;
  /** Run the CP subsystem (3 CP members, the first data members of the list). */
  readonly cp: boolean;
  /** With CP persistence under `<runDir>/cp` (every member the same base-dir: each finds its directory by address). */
  readonly cpPersistence: boolean;
}

export const memberHost = (i: number): string => `127.0.0.${11 + i}`;

export class Member {
  readonly host: string;
  readonly configFile: string;
  readonly logFile: string;
  readonly incarnations: Incarnation[] = [];
  process: MemberProcess | null = null;
  paused = false;
  private expectingExit = false;
  /** A short-deadline client for health and cluster calls (a stopped member must not hang the nemesis). */
  private monitor: KeepAliveClient;

  constructor(
    readonly index: number,
    readonly port: number,
    private readonly fleet: Fleet,
  ) {
    this.host = memberHost(index);
    this.configFile = path.join(fleet.options.runDir, `member-${this.host}.xml`);
    this.logFile = path.join(fleet.options.runDir, `member-${this.host}.log`);
    this.monitor = new KeepAliveClient(port, 3000, this.host);
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.process !== null;
  }

  get current(): Incarnation | null {
    return this.process === null ? null : (this.incarnations.at(-1) ?? null);
  }

  writeConfig(peers: readonly string[]): void {
    const xml = memberXml(this.port, peers, {
      host: this.host,
      properties: {
        'grid.socket.bind.any': 'false',
        ...(this.fleet.options.maxNoHeartbeatSeconds === 10 ? {} : { 'grid.max.no.heartbeat.seconds': this.fleet.options.maxNoHeartbeatSeconds }),
      },
      maps: {
        [ONCE_MAP]: { backupCount: 1, mergePolicy: 'PutIfAbsentMergePolicy' },
        ...Object.fromEntries(this.fleet.options.registerPolicies.map((p) => [registerMap(p), { backupCount: 1, mergePolicy: p }])),
      },
      queues: { [QUEUE]: { backupCount: 1, mergePolicy: 'PutIfAbsentMergePolicy' } },
      ...(this.fleet.options.cp
        ? { cpXml: `<cp-member-count>3</cp-member-count>${this.fleet.options.cpPersistence ? `<persistence-enabled>true</persistence-enabled><base-dir>${path.join(this.fleet.options.runDir, 'cp')}</base-dir>` : ''}` }
        : {}),
    });
    fs.writeFileSync(this.configFile, xml);
  }

  /** Starts a new incarnation and waits until it listens and has logged its uuid. */
  async start(): Promise<Incarnation> {
    if (this.process !== null) throw new Error(`${this.address} is already running`);
    const n = this.incarnations.length + 1;
    fs.appendFileSync(this.logFile, `=== nemesis: incarnation ${n} of ${this.address} starting at ${new Date().toISOString()} ===\n`);
    const proc = await startMember({
      args: ['--config', this.configFile, '--port', String(this.port), '--log-level', this.fleet.options.logLevel],
      cwd: this.fleet.options.runDir,
      logFile: this.logFile,
      stdoutCharsMax: 1 << 22,
      deadlineMs: 30_000,
    });
    const inc: Incarnation = { n, pid: proc.child.pid ?? -1, startedAtMs: Date.now(), uuid: null, killedAtMs: null, exitedAtMs: null, exitCode: null, exitSignal: null, crashed: false };
    this.incarnations.push(inc);
    this.process = proc;
    this.paused = false;
    this.expectingExit = false;
    this.fleet.recordPid(inc.pid, this.configFile);
    proc.child.on('exit', (code, signal) => {
      inc.exitedAtMs = Date.now();
      inc.exitCode = code;
      inc.exitSignal = signal;
      if (this.process === proc) this.process = null;
      if (!this.expectingExit) {
        inc.crashed = true;
        this.fleet.crashes.push({ member: this.address, pid: inc.pid, atMs: inc.exitedAtMs, exitCode: code, exitSignal: signal, stderrTail: proc.stderr().split('\n').slice(-20).join('\n') });
      }
    });
    const m = await proc.waitForOutput(/- ([0-9a-f-]{36}) this/, 10_000);
    inc.uuid = m[1] as string;
    return inc;
  }

  /** kill -9, then wait (bounded) for the exit. */
  async kill(): Promise<void> {
    const proc = this.process;
    if (proc === null) return;
    this.expectingExit = true;
    const inc = this.current;
    if (inc !== null) inc.killedAtMs = Date.now();
    proc.child.kill('SIGKILL');
    await proc.waitForExit(10_000);
    this.process = null;
    this.paused = false;
    this.monitor.close();
    this.monitor = new KeepAliveClient(this.port, 3000, this.host);
  }

  pause(): void {
    const pid = this.process?.child.pid;
    if (pid === undefined) return;
    process.kill(pid, 'SIGSTOP');
    this.paused = true;
  }

  resume(): void {
    const pid = this.process?.child.pid;
    if (pid !== undefined) process.kill(pid, 'SIGCONT');
    this.paused = false;
  }

  async health(): Promise<HealthView> {
    const r = await this.monitor.request('GET', '/grid/health');
    if (r.status !== 200) throw new Error(`GET /grid/health on ${this.address} answered ${r.statusLine}`);
    return r.json() as HealthView;
  }

  async memberUuids(): Promise<string[]> {
    const r = await this.monitor.request('GET', '/grid/rest/cluster');
    if (r.status !== 200) throw new Error(`GET /grid/rest/cluster on ${this.address} answered ${r.statusLine}`);
    return (r.json() as ClusterWire).members.map((m) => m.uuid);
  }

  /** The address of the master in this member's view (the first of its list). */
  async masterAddress(): Promise<string | null> {
    const r = await this.monitor.request('GET', '/grid/rest/cluster');
    if (r.status !== 200) throw new Error(`GET /grid/rest/cluster on ${this.address} answered ${r.statusLine}`);
    return (r.json() as ClusterWire).members[0]?.address ?? null;
  }

  async metrics(): Promise<Record<string, number>> {
    const r = await this.monitor.request('GET', '/grid/rest/metrics');
    if (r.status !== 200) throw new Error(`GET /grid/rest/metrics on ${this.address} answered ${r.statusLine}`);
    return r.json() as Record<string, number>;
  }

  closeClients(): void {
    this.monitor.close();
  }

  /** For cleanup handlers: SIGCONT then SIGKILL, synchronously, never throws. */
  killNowSync(): void {
    const pid = this.process?.child.pid;
    if (pid === undefined) return;
    this.expectingExit = true;
    const inc = this.current;
    if (inc !== null && inc.killedAtMs === null) inc.killedAtMs = Date.now();
    for (const sig of ['SIGCONT', 'SIGKILL'] as const) {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  }
}

export class Fleet {
  readonly members: Member[];
  readonly crashes: Crash[] = [];

  constructor(readonly options: FleetOptions) {
    this.members = Array.from({ length: options.members }, (_, i) => new Member(i, options.port, this));
    const peers = this.members.map((m) => m.address);
    for (const m of this.members) m.writeConfig(peers);
    fs.writeFileSync(options.pidFile, '');
  }

  recordPid(pid: number, configFile: string): void {
    fs.appendFileSync(this.options.pidFile, `${pid} ${configFile}\n`);
  }

  /** Every incarnation's uuid → its record (for reading member logs). */
  incarnationsByUuid(): Map<string, { member: Member; inc: Incarnation }> {
    const out = new Map<string, { member: Member; inc: Incarnation }>();
    for (const member of this.members) for (const inc of member.incarnations) if (inc.uuid !== null) out.set(inc.uuid, { member, inc });
    return out;
  }

  /**
   * Null when every member runs unpaused, reports ACTIVE, cluster-safe and an empty migration queue,
   * and lists exactly the current incarnations (same order on every member); else what is not so.
   */
  async notHealthy(): Promise<string | null> {
    const expected = new Set(this.members.map((m) => m.current?.uuid ?? '?'));
    let first: string | null = null;
    for (const m of this.members) {
      if (!m.running) return `${m.address} is not running`;
      if (m.paused) return `${m.address} is stopped`;
      let h: HealthView;
      let uuids: string[];
      try {
        h = await m.health();
        uuids = await m.memberUuids();
      } catch (e) {
        return `${m.address}: ${(e as Error).message}`;
      }
      if (h.nodeState !== 'ACTIVE') return `${m.address} is ${h.nodeState}`;
      if (uuids.length !== expected.size || !uuids.every((u) => expected.has(u))) return `${m.address} lists ${uuids.length} member(s), not the ${expected.size} running`;
      const order = uuids.join(',');
      if (first === null) first = order;
      else if (order !== first) return `${m.address} lists the members in another order (another view)`;
      if (!h.clusterSafe) return `${m.address} is not cluster-safe`;
      if (h.migrationQueueSize !== 0) return `${m.address} has ${h.migrationQueueSize} migration(s) queued`;
    }
    return null;
  }

  /** SIGCONT + SIGKILL to every member process; synchronous, for exit and signal handlers. */
  killAllSync(): void {
    for (const m of this.members) m.killNowSync();
  }

  closeClients(): void {
    for (const m of this.members) m.closeClients();
  }
}

/**
 * Ends members a killed earlier run left behind: pids from its pid file whose command line still
 * names that run's config file and the member script. Returns how many were ended.
 */
export function endLeftoverMembers(pidFile: string): number {
  if (!fs.existsSync(pidFile)) return 0;
  let ended = 0;
  for (const line of fs.readFileSync(pidFile, 'utf8').split('\n')) {
    const m = /^(\d+) (.+)$/.exec(line);
    if (m === null) continue;
    const pid = Number(m[1]);
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmdline.includes(m[2] as string) || !cmdline.includes('member.js')) continue;
    for (const sig of ['SIGCONT', 'SIGKILL'] as const) {
      try {
        process.kill(pid, sig);
      } catch {
        /* gone meanwhile */
      }
    }
    ended++;
  }
  return ended;
}
