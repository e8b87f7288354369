// A seeded load generator for the real-process cluster tests that records what it was told: several
// concurrent async loops, each with one keep-alive connection per member, send
//   - puts of distinct keys (each written once),
//   - overwrites of the loop's own "hot" keys with increasing values (one writer per key, so the
//     attempts of a key are ordered),
//   - queue offers of distinct items,
// to a member chosen at random among those still marked alive. Every request's outcome is kept: a
// 200 is acknowledged; anything else (503, another status, a socket error or deadline) is only
// "attempted" and may or may not have taken effect. `verifyMaps` / `drainAndVerifyQueues` then check
// the cluster against those records.
import { SeededRandom } from '../../src/util/prng.js';
import { KeepAliveClient, forEachConcurrent } from './cluster.js';

export interface Attempt {
  readonly value: string;
  acked: boolean;
}

export interface OfferRecord {
  readonly queue: string;
  readonly loop: number;
  /** Position among this loop's offers to this queue. */
  readonly order: number;
  acked: boolean;
}

export interface Failure {
  readonly port: number;
  readonly what: string;
  /** HTTP status, or 0 for a socket error / deadline. */
  readonly status: number;
  readonly detail: string;
  /** Milliseconds since the writer started: when the request was sent, and when it ended. */
  readonly sentMs: number;
  readonly atMs: number;
}

export interface WriterOptions {
  readonly ports: readonly number[];
  readonly loops: number;
  readonly seed: number;
  readonly map: string;
  readonly queues: readonly string[];
  readonly hotKeysPerLoop: number;
  /** Fractions of operations that are overwrites and offers; the rest are distinct puts. */
  readonly hotShare: number;
  readonly offerShare: number;
}

export class RecordingWriter {
  /** Distinct keys: one attempt each. */
  readonly distinct = new Map<string, Attempt>();
  /** Hot keys: every attempt in order. */
  readonly hot = new Map<string, Attempt[]>();
  /** Offered items by item text. */
  readonly offers = new Map<string, OfferRecord>();
  readonly failures: Failure[] = [];
  /** Every request's port, send time and answer time (ms since the writer started), answered or not. */
  readonly timings: { readonly port: number; readonly sentMs: number; readonly doneMs: number; readonly ok: boolean; readonly what: string; readonly status: number }[] = [];
  acked = 0;
  attempted = 0;
  private readonly alive: Set<number>;
  private stopping = false;
  private running: Promise<void>[] = [];
  private readonly clients: Map<number, KeepAliveClient>[] = [];
  private readonly startedAt = Date.now();

  constructor(readonly options: WriterOptions) {
    this.alive = new Set(options.ports);
  }

  /** Starts the loops. */
  start(): void {
    for (let i = 0; i < this.options.loops; i++) this.running.push(this.loop(i));
  }

  /** No new request goes to `port` from now on (requests in flight to it finish or fail). */
  markDead(port: number): void {
    this.alive.delete(port);
  }

  /** Requests go to `port` again (a member restarted at that port). */
  markAlive(port: number): void {
    this.alive.add(port);
  }

  /** Lets every loop finish its current request, then closes the connections. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
    for (const m of this.clients) for (const c of m.values()) c.close();
  }

  /** Requests sent and not answered yet (for a diagnosis when the writer stalls). */
  inFlight(): { port: number; what: string; sentMs: number }[] {
    return [...this.pending.values()];
  }

  private readonly pending = new Map<number, { port: number; what: string; sentMs: number }>();
  private nextPending = 0;

  elapsedMs(): number {
    return Date.now() - this.startedAt;
  }

  /** Counts of outcomes by kind, e.g. {"200": 5000, "503": 3, "socket": 2}. */
  summary(): Record<string, number> {
    const out: Record<string, number> = { ack: this.acked, attempted: this.attempted };
    for (const f of this.failures) {
      const k = f.status === 0 ? `socket@${f.port}` : `${f.status}@${f.port}`;
      out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  }

  private client(loop: number, port: number): KeepAliveClient {
    let m = this.clients[loop];
    if (m === undefined) this.clients[loop] = m = new Map();
    let c = m.get(port);
    if (c === undefined) m.set(port, (c = new KeepAliveClient(port)));
    return c;
  }

  private async loop(i: number): Promise<void> {
    const rnd = new SeededRandom(this.options.seed * 1000 + i);
    const hotValues = new Array<number>(this.options.hotKeysPerLoop).fill(0);
    const offerOrder = new Map<string, number>();
    let seq = 0;
    while (!this.stopping) {
      const ports = [...this.alive];
      if (ports.length === 0) return;
      const port = ports[rnd.nextInt(ports.length)] as number;
      const r = rnd.next();
      seq++;
      if (r < this.options.offerShare) {
        const queue = this.options.queues[rnd.nextInt(this.options.queues.length)] as string;
        const item = `item-${i}-${seq}`;
        const order = offerOrder.get(queue) ?? 0;
        offerOrder.set(queue, order + 1);
        const rec: OfferRecord = { queue, loop: i, order, acked: false };
        this.offers.set(item, rec);
        rec.acked = await this.send(i, port, 'POST', `/grid/rest/queues/${queue}`, item, `offer ${item} to ${queue}`);
      } else if (r < this.options.offerShare + this.options.hotShare) {
        const h = rnd.nextInt(this.options.hotKeysPerLoop);
        const key = `hot-${i}-${h}`;
        const value = String(++hotValues[h]!);
        const attempt: Attempt = { value, acked: false };
        let list = this.hot.get(key);
        if (list === undefined) this.hot.set(key, (list = []));
        list.push(attempt);
        attempt.acked = await this.send(i, port, 'POST', `/grid/rest/maps/${this.options.map}/${key}`, value, `put ${key}=${value}`);
      } else {
        const key = `key-${i}-${seq}`;
        const attempt: Attempt = { value: `value-${i}-${seq}`, acked: false };
        this.distinct.set(key, attempt);
        attempt.acked = await this.send(i, port, 'POST', `/grid/rest/maps/${this.options.map}/${key}`, attempt.value, `put ${key}`);
      }
    }
  }

  private async send(loop: number, port: number, method: string, path: string, body: string, what: string): Promise<boolean> {
    this.attempted++;
    const sentMs = this.elapsedMs();
    const id = this.nextPending++;
    this.pending.set(id, { port, what, sentMs });
    try {
      return await this.sendOnce(loop, port, method, path, body, what, sentMs);
    } finally {
      this.pending.delete(id);
    }
  }

  private async sendOnce(loop: number, port: number, method: string, path: string, body: string, what: string, sentMs: number): Promise<boolean> {
    try {
      const res = await this.client(loop, port).request(method, path, { body, headers: { 'Content-Type': 'text/plain' } });
      this.timings.push({ port, sentMs, doneMs: this.elapsedMs(), ok: res.status === 200, what, status: res.status });
      if (res.status === 200) {
        this.acked++;
        return true;
      }
      this.failures.push({ port, what, status: res.status, detail: res.headers['grid-error'] ?? '', sentMs, atMs: this.elapsedMs() });
    } catch (e) {
      this.timings.push({ port, sentMs, doneMs: this.elapsedMs(), ok: false, what, status: 0 });
      this.failures.push({ port, what, status: 0, detail: (e as Error).message, sentMs, atMs: this.elapsedMs() });
    }
    return false;
  }
}

export interface Problem {
  readonly key: string;
  readonly expected: string;
  readonly got: string;
}

/**
 * Reads every recorded key through `port` and returns the keys whose value breaks the rules:
 * an acknowledged distinct key must hold its value; a hot key must hold its last acknowledged value
 * or a value attempted after it (its answer was lost); a key with no acknowledged write may hold any
 * attempted value or nothing.
 */
export async function verifyMaps(port: number, map: string, writer: RecordingWriter, concurrency = 8): Promise<{ checked: number; problems: Problem[] }> {
  const problems: Problem[] = [];
  const jobs: [string, Set<string>, boolean][] = [];
  for (const [key, a] of writer.distinct) jobs.push([key, new Set([a.value]), !a.acked]);
  for (const [key, attempts] of writer.hot) {
    let last = -1;
    for (let j = 0; j < attempts.length; j++) if (attempts[j]!.acked) last = j;
    const allowed = new Set(attempts.slice(Math.max(last, 0)).map((a) => a.value));
    jobs.push([key, allowed, last < 0]);
  }
  const clients = Array.from({ length: concurrency }, () => new KeepAliveClient(port, 30_000));
  try {
    await forEachConcurrent(jobs, concurrency, async ([key, allowed, absentOk], w) => {
      const r = await clients[w]!.request('GET', `/grid/rest/maps/${map}/${key}`);
      const got = r.status === 200 ? r.text() : `<${r.status}>`;
      if (r.status === 204 && absentOk) return;
      if (r.status === 200 && allowed.has(got)) return;
      problems.push({ key, expected: `${[...allowed].join('|')}${absentOk ? '|<204>' : ''}`, got });
    });
  } finally {
    for (const c of clients) c.close();
  }
  return { checked: jobs.length, problems };
}

export interface QueueCheck {
  readonly polled: number;
  readonly ackedOffers: number;
  readonly missing: string[];
  readonly duplicates: string[];
  readonly unknown: string[];
  readonly outOfOrder: string[];
}

/**
 * Polls every queue empty through `port` (timeout 0, one poller per queue) and checks the items:
 * every acknowledged offer exactly once, nothing twice, nothing never offered, and the acknowledged
 * items of one loop to one queue in their offer order.
 */
export async function drainAndVerifyQueues(port: number, writer: RecordingWriter): Promise<QueueCheck> {
  const seen = new Map<string, number>();
  const unknown: string[] = [];
  const outOfOrder: string[] = [];
  let polled = 0;
  await Promise.all(
    writer.options.queues.map(async (queue) => {
      const client = new KeepAliveClient(port, 30_000);
      const lastOrder = new Map<number, number>();
      try {
        for (;;) {
          const r = await client.request('DELETE', `/grid/rest/queues/${queue}/0`);
          if (r.status === 204) break;
          if (r.status !== 200) throw new Error(`poll of ${queue} via ${port} answered ${r.statusLine} ${r.headers['grid-error'] ?? ''}`);
          polled++;
          const item = r.text();
          seen.set(item, (seen.get(item) ?? 0) + 1);
          const rec = writer.offers.get(item);
          if (rec === undefined || rec.queue !== queue) {
            unknown.push(`${item} in ${queue}`);
            continue;
          }
          if (rec.acked) {
            const prev = lastOrder.get(rec.loop) ?? -1;
            if (rec.order < prev) outOfOrder.push(`${item} in ${queue} after order ${prev}`);
            lastOrder.set(rec.loop, rec.order);
          }
        }
      } finally {
        client.close();
      }
    }),
  );
  const missing: string[] = [];
  let ackedOffers = 0;
  for (const [item, rec] of writer.offers) {
    if (!rec.acked) continue;
    ackedOffers++;
    if (!seen.has(item)) missing.push(`${item} (${rec.queue})`);
  }
  const duplicates = [...seen].filter(([, n]) => n > 1).map(([item, n]) => `${item} x${n}`);
  return { polled, ackedOffers, missing, duplicates, unknown, outOfOrder };
}
