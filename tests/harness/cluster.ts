// Helpers for the real-process cluster tests: OS-chosen free ports, member XML with a tcp-ip member
// list, bounded condition polls on /grid/rest/cluster and the health calls, and a keep-alive HTTP
// client (one socket reused for many requests; it reconnects after a close) built on the raw-socket
// request writer and response parser of connection.ts / raw-http.ts, so load loops measure the
// member and not connection set-up. Every wait is bounded by a deadline; nothing sleeps for a
// fixed time to wait for a state.
import { randomInt } from 'node:crypto';
import net from 'node:net';
import { startMember, type MemberProcess } from './member-process.js';
import { httpRequest } from './connection.js';
import { parseResponses, request, type RawResponse } from './raw-http.js';

/**
 * Ports below the kernel's ephemeral range (32768 and up on Linux), so that no port the OS hands out
 * meanwhile (a member started with --port 0 by a test running beside this one, or any client
 * socket) can take one of them between this check and the member's bind: a port from `listen(0)`
 * was such a port, and a concurrent test file once took one (EADDRINUSE). Each port is checked by
 * binding it on every interface, as a member does; two test processes picking the same random port
 * in the range is what remains, at odds of about n²/12,000.
 */
const PORT_RANGE_START = 20_000;
const PORT_RANGE_END = 32_000;

export async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  for (let tries = 0; ports.length < n; tries++) {
    if (tries > 1000) throw new Error(`no ${n} free ports in ${PORT_RANGE_START}..${PORT_RANGE_END - 1}`);
    const port = PORT_RANGE_START + randomInt(PORT_RANGE_END - PORT_RANGE_START);
    if (ports.includes(port) || !(await bindable(port))) continue;
    ports.push(port);
  }
  return ports;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
  });
}

/** A named map or queue with its own backup count and (optionally) merge policy. */
export interface StructureXmlOptions {
  readonly backupCount: number;
  readonly mergePolicy?: string;
  /** A queue's max-size (items). */
  readonly maxSize?: number;
}

export interface MemberXmlOptions {
  readonly lite?: boolean;
  readonly mapBackupCount?: number;
  readonly queueBackupCount?: number;
  /** Extra `grid.*` properties. */
  readonly properties?: Readonly<Record<string, string | number>>;
  /** The member's public-address, and the host of peers given as bare ports (default 127.0.0.1). */
  readonly host?: string;
  /** Named maps and queues besides `default`. */
  readonly maps?: Readonly<Record<string, StructureXmlOptions>>;
  readonly queues?: Readonly<Record<string, StructureXmlOptions>>;
  /** The body of a `<cp-subsystem>` element; given, the CP endpoint group is on too. */
  readonly cpXml?: string;
}

function structureXml(element: 'map' | 'queue', name: string, s: StructureXmlOptions): string {
  const policy = s.mergePolicy === undefined ? '' : `<merge-policy>${s.mergePolicy}</merge-policy>`;
  const maxSize = s.maxSize === undefined ? '' : `<max-size>${s.maxSize}</max-size>`;
  return `<${element} name="${name}"><backup-count>${s.backupCount}</backup-count>${maxSize}${policy}</${element}>`;
}

/**
 * A member on `host`:`port` (host 127.0.0.1 unless given) joining `peers` by tcp-ip, REST with DATA
 * and CLUSTER_WRITE on. A peer is a port on the same host, or "host:port".
 */
export function memberXml(port: number, peers: readonly (number | string)[], options: MemberXmlOptions = {}): string {
  const props = Object.entries(options.properties ?? {});
  const host = options.host ?? '127.0.0.1';
  const named = [
    ...Object.entries(options.maps ?? {}).map(([name, s]) => structureXml('map', name, s)),
    ...Object.entries(options.queues ?? {}).map(([name, s]) => structureXml('queue', name, s)),
  ].join('\n  ');
  return `<grid><cluster-name>dev</cluster-name>
  ${props.length === 0 ? '' : `<properties>${props.map(([k, v]) => `<property name="${k}">${v}</property>`).join('')}</properties>`}
  <lite-member enabled="${options.lite === true}"/>
  <network><public-address>${host}</public-address>
  <port auto-increment="false">${port}</port>
  <join><tcp-ip enabled="true"><member-list>${peers.map((p) => `<member>${typeof p === 'number' ? `${host}:${p}` : p}</member>`).join('')}</member-list></tcp-ip></join>
  <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/><endpoint-group name="CLUSTER_WRITE" enabled="true"/>${options.cpXml === undefined ? '' : '<endpoint-group name="CP" enabled="true"/>'}</rest-api></network>
  ${options.cpXml === undefined ? '' : `<cp-subsystem>${options.cpXml}</cp-subsystem>`}
  <map name="default"><backup-count>${options.mapBackupCount ?? 1}</backup-count></map>
  <queue name="default"><backup-count>${options.queueBackupCount ?? 1}</backup-count></queue>
  ${named}</grid>`;
}

export function startClusterMember(port: number, peers: readonly number[], options: MemberXmlOptions = {}): Promise<MemberProcess> {
  return startMember({ xml: memberXml(port, peers, options), args: ['--port', String(port)] });
}

/**
 * One member per port, all joining each other. When one fails to start, the ones already started
 * are killed before the error goes on: left running, they would keep the test file from exiting.
 */
export async function startClusterMembers(ports: readonly number[], options: MemberXmlOptions = {}): Promise<MemberProcess[]> {
  const members: MemberProcess[] = [];
  try {
    for (const port of ports) members.push(await startClusterMember(port, ports, options));
  } catch (e) {
    await killAll(members);
    throw e;
  }
  return members;
}

/** Polls `f` (every 100 ms) until it returns non-null; throws naming `what` and the last error after `deadlineMs`. */
export async function until<T>(what: string, deadlineMs: number, f: () => Promise<T | null>): Promise<T> {
  const end = Date.now() + deadlineMs;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await f();
      if (v !== null) return v;
      last = null;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}${last === null ? '' : `: ${String(last)}`}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface ClusterMemberView {
  address: string;
  liteMember: boolean;
  localMember: boolean;
  uuid: string;
  memberVersion: string;
}

export interface ClusterView {
  members: ClusterMemberView[];
  connectionCount: number;
  allConnectionCount: number;
}

export async function clusterOf(port: number): Promise<ClusterView> {
  const r = await request(port, 'GET', '/grid/rest/cluster');
  if (r.status !== 200) throw new Error(`GET /grid/rest/cluster on ${port} answered ${r.statusLine}`);
  return r.json() as ClusterView;
}

export async function metricsOf(port: number): Promise<Record<string, number>> {
  const r = await request(port, 'GET', '/grid/rest/metrics');
  if (r.status !== 200) throw new Error(`GET /grid/rest/metrics on ${port} answered ${r.statusLine}`);
  return r.json() as Record<string, number>;
}

/** A one-line description of what each member reports (for timeout messages). */
export async function describeCluster(ports: readonly number[]): Promise<string> {
  const parts: string[] = [];
  for (const p of ports) {
    try {
      const h = (await request(p, 'GET', '/grid/health')).text();
      const c = await clusterOf(p);
      parts.push(`${p}: ${h} members=[${c.members.map((m) => m.address + (m.liteMember ? '(lite)' : '')).join(',')}]`);
    } catch (e) {
      parts.push(`${p}: ${String(e)}`);
    }
  }
  return parts.join('; ');
}

/**
 * True when every member in `ports` lists exactly `n` members (the same UUIDs in the same order),
 * answers cluster-safe 200 and migration-queue-size 0; else null (for `until`).
 */
export async function settled(ports: readonly number[], n: number): Promise<true | null> {
  let first: string | null = null;
  for (const p of ports) {
    const v = await clusterOf(p);
    if (v.members.length !== n) return null;
    const ids = v.members.map((m) => m.uuid).join(',');
    if (first === null) first = ids;
    else if (ids !== first) return null;
  }
  for (const p of ports) {
    if ((await request(p, 'GET', '/grid/health/cluster-safe')).status !== 200) return null;
    const q = await request(p, 'GET', '/grid/health/migration-queue-size');
    if (q.status !== 200 || q.text() !== '0') return null;
  }
  return true;
}

/** Every member in `ports` lists exactly `n` members (membership only, no safety check). */
export async function sizeIs(ports: readonly number[], n: number): Promise<true | null> {
  for (const p of ports) if ((await clusterOf(p)).members.length !== n) return null;
  return true;
}

/** Waits until `ports` agree on `n` members and are safe with no migration left; the error describes every member. */
export async function waitSettled(ports: readonly number[], n: number, deadlineMs: number): Promise<void> {
  try {
    await until(`${n} members, cluster-safe and migration-queue-size 0 on ${ports.join(',')}`, deadlineMs, () => settled(ports, n));
  } catch (e) {
    throw new Error(`${(e as Error).message}; now: ${await describeCluster(ports)}`);
  }
}

export interface ClientRequestOptions {
  readonly body?: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
  readonly deadlineMs?: number;
}

interface Pending {
  readonly head: boolean;
  readonly resolve: (r: RawResponse) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * A keep-alive HTTP/1.1 client for one member port (on 127.0.0.1 unless `host` is given). Requests
 * are written on one socket (pipelined if issued concurrently) and answered in order; parsed bytes
 * are dropped as they are consumed, so a socket can carry any number of requests. A close, reset
 * or per-request deadline fails every request still waiting on that socket (their outcome is
 * unknown to the caller) and the next request opens a new socket.
 */
export class KeepAliveClient {
  private socket: net.Socket | null = null;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Pending[] = [];
  private closed = false;
  /** Sockets opened so far (1 when keep-alive held throughout). */
  connects = 0;

  constructor(
    readonly port: number,
    private readonly defaultDeadlineMs = 70_000,
    readonly host = '127.0.0.1',
  ) {}

  request(method: string, target: string, options: ClientRequestOptions = {}): Promise<RawResponse> {
    if (this.closed) return Promise.reject(new Error('client closed'));
    const socket = this.socket ?? this.open();
    return new Promise<RawResponse>((resolve, reject) => {
      const deadlineMs = options.deadlineMs ?? this.defaultDeadlineMs;
      const timer = setTimeout(() => this.fail(socket, new Error(`no answer to ${method} ${target} on ${this.host}:${this.port} within ${deadlineMs} ms`)), deadlineMs);
      this.pending.push({ head: method === 'HEAD', resolve, reject, timer });
      const opts: { body?: string | Buffer; headers?: Readonly<Record<string, string>> } = {};
      if (options.body !== undefined) opts.body = options.body;
      if (options.headers !== undefined) opts.headers = options.headers;
      socket.write(httpRequest(method, target, opts));
    });
  }

  close(): void {
    this.closed = true;
    if (this.socket !== null) this.fail(this.socket, new Error('client closed'));
  }

  private open(): net.Socket {
    const socket = net.connect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    this.connects++;
    this.socket = socket;
    this.buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      if (this.socket !== socket) return;
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      const parsed = parseResponses(this.buffer, this.pending.map((p) => p.head));
      this.buffer = Buffer.from(parsed.rest);
      for (const r of parsed.responses) {
        const p = this.pending.shift();
        if (p === undefined) {
          this.fail(socket, new Error(`unexpected response on ${this.host}:${this.port}: ${r.statusLine}`));
          return;
        }
        clearTimeout(p.timer);
        p.resolve(r);
      }
    });
    socket.on('error', (e) => this.fail(socket, e));
    socket.on('close', () => this.fail(socket, new Error(`connection to ${this.host}:${this.port} closed`)));
    return socket;
  }

  private fail(socket: net.Socket, error: Error): void {
    if (this.socket !== socket) return;
    this.socket = null;
    socket.destroy();
    const waiting = this.pending;
    this.pending = [];
    for (const p of waiting) {
      clearTimeout(p.timer);
      p.reject(error);
    }
  }
}

/** Runs `task` for every item with at most `concurrency` in flight; resolves when all are done. */
export async function forEachConcurrent<T>(items: readonly T[], concurrency: number, task: (item: T, worker: number) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async (_, w) => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item, w);
    }
  });
  await Promise.all(workers);
}

/** Kills (SIGKILL) every member still running; never throws. */
export async function killAll(members: readonly MemberProcess[]): Promise<void> {
  await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
}

/** The last `lines` lines of a member's stdout and stderr (for failure reports). */
export function logTail(member: MemberProcess, lines = 40): string {
  const tail = (s: string): string => s.split('\n').slice(-lines).join('\n');
  return `--- stdout (port ${member.port}) ---\n${tail(member.stdout())}\n--- stderr ---\n${tail(member.stderr())}`;
}
