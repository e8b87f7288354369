// The nemesis client pool and its history. `clients` async loops, each with one keep-alive connection
// per member (clients connect from 127.0.0.1, which no partition rule names), send paced requests
// to the members in turn (loop i starts at member i, then the next one, so every member is used),
// skipping a member only while the nemesis has it killed or stopped, as a load balancer's health
// check would. Three workloads:
//   once   POST nemesis-once/k-<loop>-<seq> = v-<loop>-<seq>: every key written once;
//   offer  POST nemesis-q with a unique item q-<loop>-<seq>;   poll  DELETE nemesis-q/0;
//   reg    GET <map>/r-<j> (recorded as a register read), then POST <map>/r-<j> = <n>, n rising per
//          map and key; one read-and-write per key in flight at a time, so the attempts of a key
//          are ordered and a read that returns an older value than an earlier acknowledged write
//          shows a lost update. <map> is one register map per merge policy (nemesis-reg-<policy>),
//          each with the same keys; the steps take the (map, key) slots round-robin, the map
//          changing fastest, so every policy is written at the same pace, through every fault, and
//          adding policies shares the register's part of the rate instead of adding to it.
// Every request's outcome is recorded: 200 is acknowledged (a poll's 200 carries the item, 204 is
// an empty queue); another status is "failed" and a socket error or deadline "indeterminate". Both
// may or may not have taken effect, and the checks treat them so; neither is ever counted as
// acknowledged.
import { KeepAliveClient } from '../../tests/harness/cluster.js';
import { SeededRandom } from '../../src/util/prng.js';
import { ONCE_MAP, QUEUE } from './fleet.js';

export type OpKind = 'once' | 'offer' | 'poll' | 'reg' | 'read';
export type Outcome = 'ack' | 'failed' | 'indeterminate';

export interface Op {
  readonly kind: OpKind;
  readonly member: number;
  /** The map (once, reg, read) or queue (offer, poll) it went to: register keys repeat in every register map. */
  readonly map: string;
  /** Map key (once, reg, read), item (offer), or '' (poll). */
  readonly key: string;
  /** Value written (once, reg), item offered (offer), item polled (poll with 200), value read (read with 200). */
  value: string;
  readonly sentMs: number;
  endMs: number;
  outcome: Outcome;
  /** HTTP status, 0 for a socket error or deadline. */
  status: number;
  detail: string;
}

export interface WorkloadOptions {
  readonly hosts: readonly string[];
  readonly port: number;
  readonly clients: number;
  readonly rate: number;
  /** Seeds of the client loops (drawn from the run's PRNG). */
  readonly seeds: readonly number[];
  /** The register maps, one per merge policy. */
  readonly registerMaps: readonly string[];
  /** Keys per register map (r-0 .. r-<registerKeys - 1> in each). */
  readonly registerKeys: number;
  readonly requestDeadlineMs: number;
}

/** Shares of the operation kinds (the rest are write-once puts). */
const OFFER_SHARE = 0.25;
const POLL_SHARE = 0.2;
const REG_SHARE = 0.2;

/**
 * Paced client loops, each with one keep-alive connection per member: loop i starts at member i and
 * takes the members in turn, skipping one only while the nemesis has it down (as a load balancer's
 * health check would), at `rate` steps a second over all loops, without bursts to catch up after a
 * slow step. A subclass says what one step sends.
 */
export abstract class PacedLoops {
  private readonly down = new Set<number>();
  private stopping = false;
  private running: Promise<void>[] = [];
  private readonly clients: KeepAliveClient[][] = [];
  /** Starts so far: a later start's loops draw other numbers and count their steps on from 1,000,000 × it. */
  private epoch = 0;

  constructor(private readonly pace: { readonly hosts: readonly string[]; readonly port: number; readonly clients: number; readonly rate: number; readonly seeds: readonly number[]; readonly requestDeadlineMs: number }) {}

  /** One step of loop `loop` through `member` (its connection `client`): the `seq`-th of the loop. */
  protected abstract step(loop: number, member: number, client: KeepAliveClient, seq: number, rnd: SeededRandom): Promise<void>;

  /** Starts the loops (again after a stop: a later phase of the run). */
  start(): void {
    this.stopping = false;
    this.running = [];
    this.clients.length = 0;
    const base = this.epoch++ * 1_000_000;
    for (let i = 0; i < this.pace.clients; i++) {
      this.clients.push(this.pace.hosts.map((h) => new KeepAliveClient(this.pace.port, this.pace.requestDeadlineMs, h)));
      this.running.push(this.loop(i, base));
    }
  }

  /** No new request goes to member `i` until `markUp` (requests in flight to it end on their own). */
  markDown(i: number): void {
    this.down.add(i);
  }

  markUp(i: number): void {
    this.down.delete(i);
  }

  /** Lets every loop finish its request in flight (bounded by the request deadline), then closes the connections. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
    for (const row of this.clients) for (const c of row) c.close();
  }

  private async loop(i: number, base: number): Promise<void> {
    const rnd = new SeededRandom(((this.pace.seeds[i] ?? i) + base) >>> 0);
    const n = this.pace.hosts.length;
    const intervalMs = (this.pace.clients * 1000) / this.pace.rate;
    let turn = i;
    let seq = base;
    let nextAt = Date.now();
    while (!this.stopping) {
      const now = Date.now();
      if (nextAt > now) await new Promise((r) => setTimeout(r, nextAt - now));
      // Paced, without bursts to catch up after a slow request.
      nextAt = Math.max(nextAt + intervalMs, Date.now() - 1000);
      if (this.stopping) break;
      let member = -1;
      for (let k = 0; k < n; k++) {
        const m = (turn + k) % n;
        if (!this.down.has(m)) {
          member = m;
          break;
        }
      }
      turn++;
      if (member < 0) continue;
      seq++;
      await this.step(i, member, this.clients[i]![member]!, seq, rnd);
    }
  }
}

export class Workload extends PacedLoops {
  readonly history: Op[] = [];
  /** Per (map, key) slot, slot s = map s % maps, key floor(s / maps): a step in flight, and the last value sent. */
  private readonly regBusy: boolean[];
  private readonly regNext: number[];
  /** The slot the next register step starts looking from (shared by the loops: round-robin over all of them). */
  private regTurn = 0;
  private registerHeld = false;

  constructor(readonly options: WorkloadOptions) {
    super(options);
    const slots = options.registerMaps.length * options.registerKeys;
    this.regBusy = new Array<boolean>(slots).fill(false);
    this.regNext = new Array<number>(slots).fill(0);
  }

  /**
   * No new register write starts until `releaseRegister` (the loops write once-keys instead). The
   * nemesis holds the register from the moment a fault is undone until the cluster recovered, so
   * the first read of each key afterwards shows what the heal kept, before a newer write hides it.
   */
  holdRegister(): void {
    this.registerHeld = true;
  }

  releaseRegister(): void {
    this.registerHeld = false;
  }

  protected async step(i: number, member: number, client: KeepAliveClient, seq: number, rnd: SeededRandom): Promise<void> {
    const r = rnd.next();
    if (r < OFFER_SHARE) {
      const item = `q-${i}-${seq}`;
      await this.send(client, { kind: 'offer', member, map: QUEUE, key: item, value: item }, 'POST', `/grid/rest/queues/${QUEUE}`, item);
    } else if (r < OFFER_SHARE + POLL_SHARE) {
      await this.send(client, { kind: 'poll', member, map: QUEUE, key: '', value: '' }, 'DELETE', `/grid/rest/queues/${QUEUE}/0`, null);
    } else if (r < OFFER_SHARE + POLL_SHARE + REG_SHARE && !this.registerHeld && this.regBusy.includes(false)) {
      const slot = this.nextRegisterSlot();
      const maps = this.options.registerMaps.length;
      const map = this.options.registerMaps[slot % maps] as string;
      const key = `r-${Math.floor(slot / maps)}`;
      const value = String(++this.regNext[slot]!);
      this.regBusy[slot] = true;
      try {
        await this.send(client, { kind: 'read', member, map, key, value: '' }, 'GET', `/grid/rest/maps/${map}/${key}`, null);
        await this.send(client, { kind: 'reg', member, map, key, value }, 'POST', `/grid/rest/maps/${map}/${key}`, value);
      } finally {
        this.regBusy[slot] = false;
      }
    } else {
      const key = `k-${i}-${seq}`;
      const value = `v-${i}-${seq}`;
      await this.send(client, { kind: 'once', member, map: ONCE_MAP, key, value }, 'POST', `/grid/rest/maps/${ONCE_MAP}/${key}`, value);
    }
  }

  /** The first free (map, key) slot from the round-robin turn on, which then moves past it (the caller checked that one is free). */
  private nextRegisterSlot(): number {
    const slots = this.regBusy.length;
    for (let k = 0; k < slots; k++) {
      const slot = (this.regTurn + k) % slots;
      if (this.regBusy[slot]) continue;
      this.regTurn = (slot + 1) % slots;
      return slot;
    }
    throw new Error('no free register slot');
  }

  private async send(client: KeepAliveClient, what: { kind: OpKind; member: number; map: string; key: string; value: string }, method: string, target: string, body: string | null): Promise<void> {
    const op: Op = { ...what, sentMs: Date.now(), endMs: 0, outcome: 'indeterminate', status: 0, detail: '' };
    this.history.push(op);
    try {
      const res = await client.request(method, target, body === null ? {} : { body, headers: { 'Content-Type': 'text/plain' } });
      op.status = res.status;
      if (res.status === 200 || ((what.kind === 'poll' || what.kind === 'read') && res.status === 204)) {
        op.outcome = 'ack';
        if ((what.kind === 'poll' || what.kind === 'read') && res.status === 200) op.value = res.text();
      } else {
        op.outcome = 'failed';
        op.detail = res.headers['grid-error'] ?? '';
      }
    } catch (e) {
      op.outcome = 'indeterminate';
      op.detail = (e as Error).message;
    }
    op.endMs = Date.now();
  }
}
