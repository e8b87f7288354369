// A deterministic world for cluster simulations: virtual time, per-member timers and a simulated
// member network, all driven by ONE event queue and ONE seeded PRNG. A run is a pure function of the
// seed and of what the test does, so a failure printed as `seed=N` replays exactly.
//
// Intuition: nothing happens "by itself". Timers and message deliveries are events in a queue ordered
// by (virtual time, sequence number); the test advances the world with step/run/runFor/runUntil, and
// each event's callback runs synchronously at its virtual time.
//
// Invariants:
// - No Math.random, Date.now, real timers or promises: the world's own randomness comes from the
//   seed, in the order events happen.
// - Every message crosses the network as bytes: encodeBody (plus the frame header checks of
//   encodeFrameHeader) on send, decodeMessage on delivery. A codec failure is a SimFailure naming the
//   seed, thrown from send() or from the event that delivers.
// - Per link (sender address → receiver address) delivery is FIFO unless `reorder` is on; a
//   connection that closes (disconnect, crash, restart) drops what it still carries, like TCP.
// - A paused member (pause/resume: a long GC pause or SIGSTOP) runs nothing: its timers and the
//   messages delivered to it wait, in the order they fell due, and all run when it resumes, late,
//   against the view it had. Its connections stay open, as TCP's do to a stopped process.
// - Partitions may be one-way (block: A hears B, B does not hear A).
// - Three ways a member stops answering, as the transport tells them apart (issue #11):
//   * dead (crash(), the default: kill -9, OOM): its kernel closes its connections, so every peer
//     with an open connection to it is told (onDisconnected) one delay later, and every later dial
//     is refused (onUnreachable(address, true), one delay after the message that dialled);
//   * silent (crash(address, 'silent'): power loss, a cable pulled): nothing is told, messages
//     vanish, dials hang (never refused);
//   * paused (pause()): connections stay open, messages wait; nothing is refused.
//   Across a partition nothing is told either way: neither the close nor a refusal crosses it.
//   An address where no process ever ran drops messages silently, as before.
// - Two clusters can share the world (transportFor's clusterName). A member reaches another cluster
//   (a WAN publisher) through a dial-only transport at its own address (dialTransportFor), whose
//   handshake carries the other cluster's name: the target's members accept it, and what they send
//   to that address while the dialled connection is open travels back on it, as TcpTransport routes
//   an inbound connection's advertised address (member-port.ts openWanTransport). It lives and dies
//   with the member's own transport. With no such connection open, a send to the address dials the
//   member port and is refused as foreign, as a real dial would be.
// - degrade(from, to, ...) adds loss and latency to some links only (one way), e.g. the WAN link.
// - The real twin is runtime/'s TCP transport; both implement src/cluster/transport.ts.
import type { Message, MessageKind } from '../../src/cluster/messages.js';
import { decodeMessage, encodeBody, MESSAGE_TYPES } from '../../src/cluster/messages.js';
import { encodeFrameHeader, FRAME_BYTES_MAX_DEFAULT, HEADER_BYTES } from '../../src/cluster/protocol/frame.js';
import type { Peer, Transport, TransportHandler } from '../../src/cluster/transport.js';
import { assert } from '../../src/util/assert.js';
import type { Clock, TimerHandle, Timers } from '../../src/util/clock.js';
import { SeededRandom } from '../../src/util/prng.js';

/** Wall time at virtual time 0 (2023-11-14T22:13:20Z): fixed, so record timestamps replay too. */
export const SIM_EPOCH_MS_DEFAULT = 1_700_000_000_000;
/** The reason a sender's onRefused gets for a peer of another cluster (the cluster name is never echoed). */
export const SIM_REFUSAL_CLUSTER_NAME = 'CLUSTER_NAME_MISMATCH: cluster name does not match';
/** Largest timer delay, as in Node (2^31 - 1 ms); a larger one is a bug in the caller. */
const TIMER_DELAY_MS_MAX = 0x7fff_ffff;

/** What each network knob models. All probabilities are per message, drawn from the world's seed. */
export interface SimNetworkOptions {
  /** Smallest one-way delay of a message, in whole ms (default 1). */
  readonly delayMsMin?: number;
  /** Largest one-way delay of a message, in whole ms (default 5); uniform in [min, max]. */
  readonly delayMsMax?: number;
  /**
   * Probability that one message silently vanishes (default 0). Single holes in a stream: harsher
   * than TCP, which loses a tail only when the connection drops. send() still returns true.
   */
  readonly lossRate?: number;
  /**
   * Allows reordering within a link (default false = per-link FIFO like TCP). When on, each message
   * gets an extra uniform delay in [0, reorderDelayMsMax] and later messages may overtake it.
   */
  readonly reorder?: boolean;
  /** Extra delay bound used when `reorder` is on (default 20 ms). */
  readonly reorderDelayMsMax?: number;
  /** Probability that a message is delivered twice (default 0; TCP never duplicates). */
  readonly duplicateRate?: number;
  /**
   * Bytes a link may carry in flight before send() refuses with false (default 64 MiB): models the
   * real transport's write queue cap.
   */
  readonly linkInFlightBytesMax?: number;
  /** Frame size limit checked on send (default 64 MiB); a larger message is dropped, send() returns false. */
  readonly frameBytesMax?: number;
  /**
   * A message a partition or block stops is held, not dropped, and delivered after heal() if its
   * connection is still open then (default false). This is TCP under a firewall that drops packets
   * (the nemesis's nft rules): the sender's kernel keeps the bytes and retransmits them, and they
   * arrive late, after the heal, unless a side closed the connection meanwhile.
   */
  readonly partitionsHold?: boolean;
}

export interface SimWorldOptions extends SimNetworkOptions {
  /** Wall time (`clock.nowMs()`) at virtual time 0 (default SIM_EPOCH_MS_DEFAULT). */
  readonly epochMs?: number;
  /** Events one run/runFor/runUntil call may execute before it throws as a livelock (default 5,000,000). */
  readonly eventsPerRunMax?: number;
  /** Trace lines kept in memory, the most recent ones (default 10,000; 0 keeps none). The fingerprint covers all. */
  readonly traceLinesMax?: number;
  /** Debugging aid: called for every message sent, dropped (with the reason) and delivered. */
  readonly watch?: (event: 'send' | 'deliver' | DropReason, from: string, to: string, message: Message, atMs: number) => void;
}

/** Why a message was not delivered. */
export type DropReason =
  | 'loss' // lossRate
  | 'partition' // sender and receiver in different partition groups (checked on send and on delivery)
  | 'unreachable' // no live transport at the address on delivery (never created, or crashed)
  | 'closed' // the connection closed while the message was in flight (disconnect, crash, restart)
  | 'refused' // the receiver is of another cluster (send() returns false once the refusal is known)
  | 'sender-closed' // send() on a crashed or replaced transport (returns false)
  | 'queue-full' // linkInFlightBytesMax exceeded (returns false)
  | 'too-large' // the frame would exceed frameBytesMax (returns false, as the real transport does)
  | 'no-handler'; // the receiver has no handler yet

export interface SimNetworkStats {
  /** By message kind. `sent` counts every send() call, including those refused at once. */
  readonly sent: Readonly<Record<string, number>>;
  readonly delivered: Readonly<Record<string, number>>;
  readonly dropped: Readonly<Record<string, number>>;
  readonly droppedByReason: Readonly<Record<string, number>>;
  readonly duplicated: number;
  readonly bytesSent: number;
}

/** A failure inside the simulation (codec, livelock, or an exception from an event), with its seed. */
export class SimFailure extends Error {
  override name = 'SimFailure';
  constructor(
    message: string,
    readonly seed: number,
    readonly atMs: number,
    options?: { cause: unknown },
  ) {
    super(`${message} [seed=${seed} t=${atMs}ms]`, options);
  }
}

/** A scheduled callback that can be cancelled. */
export interface SimScheduled {
  cancel(): void;
}

interface SimEvent {
  readonly atMs: number;
  readonly seq: number;
  readonly label: string;
  readonly run: () => void;
  cancelled: boolean;
}

/** A binary min-heap of events ordered by (atMs, seq); cancelled events are skipped lazily. */
class EventQueue {
  private readonly heap: SimEvent[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(e: SimEvent): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(e, h[parent] as SimEvent)) break;
      h[i] = h[parent] as SimEvent;
      i = parent;
    }
    h[i] = e;
  }

  /** The earliest live event, without removing it; drops cancelled ones on the way. */
  peek(): SimEvent | undefined {
    while (this.heap.length > 0 && (this.heap[0] as SimEvent).cancelled) this.pop();
    return this.heap[0];
  }

  pop(): SimEvent | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const c = r < h.length && before(h[r] as SimEvent, h[l] as SimEvent) ? r : l;
      if (!before(h[c] as SimEvent, last)) break;
      h[i] = h[c] as SimEvent;
      i = c;
    }
    h[i] = last;
    return top;
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}

/** FNV-1a over UTF-16 code units: a cheap running fingerprint of the trace. */
function fnv1a(hash: number, s: string): number {
  let h = hash;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x0100_0193) >>> 0;
  return Math.imul(h ^ 0x0a, 0x0100_0193) >>> 0;
}

/**
 * One member's timers. cancelAll() is what a crash does to a process's timers; the object stays
 * usable afterwards (a restarted member may take the same one from world.timersFor).
 */
export class SimTimers implements Timers {
  private readonly pending = new Map<number, SimScheduled>();

  constructor(
    private readonly world: SimWorld,
    readonly memberId: string,
  ) {}

  /** As Node: a delay below 1 ms (or negative) fires after 1 ms; fractions are kept. */
  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    assert(typeof delayMs === 'number' && !Number.isNaN(delayMs) && delayMs <= TIMER_DELAY_MS_MAX, `timer delay out of range: ${delayMs}`);
    const id = this.world.nextTimerId();
    const label = `timer ${this.memberId}#${id}`;
    const scheduled = this.world.after(Math.max(1, delayMs), label, () => {
      // A paused process fires its due timers only when it runs again (still cancellable until then).
      if (this.world.deferIfPaused(this.memberId, label, () => this.pending.has(id), () => this.fire(id, fn))) return;
      this.fire(id, fn);
    });
    this.pending.set(id, scheduled);
    return { id };
  }

  private fire(id: number, fn: () => void): void {
    this.pending.delete(id);
    fn();
  }

  /** Clearing a fired, cleared or foreign handle does nothing, as in Node. */
  clearTimeout(handle: TimerHandle): void {
    const scheduled = this.pending.get(handle.id);
    if (scheduled === undefined) return;
    this.pending.delete(handle.id);
    scheduled.cancel();
  }

  /** Cancels every pending timer of this member; returns how many there were. */
  cancelAll(): number {
    const n = this.pending.size;
    for (const s of this.pending.values()) s.cancel();
    this.pending.clear();
    return n;
  }

  get pendingCount(): number {
    return this.pending.size;
  }
}

/**
 * One direction-less member-to-member connection ("one TCP connection per member pair"), or one
 * that a dial-only transport (`dialer`, at address a or b) opened to a member of another cluster.
 */
class Connection {
  /** Handshaken: a message crossed it. */
  open = false;
  /** Per sending address: the latest delivery time scheduled (FIFO) and the bytes in flight. */
  readonly lastAtMs = new Map<string, number>();
  readonly inFlightBytes = new Map<string, number>();

  constructor(
    readonly key: string,
    readonly a: string,
    readonly b: string,
    readonly dialer: SimTransport | null = null,
  ) {}
}

interface InFlight {
  readonly from: SimTransport;
  readonly to: string;
  /** The dial-only transport at `to` this message travels back to on its connection, or null. */
  readonly toDialer: SimTransport | null;
  readonly conn: Connection;
  readonly kind: MessageKind;
  readonly callId: number;
  readonly body: Buffer;
}

/**
 * A member's end of the simulated network. It implements Transport; the member hands it its
 * handler with setHandler. Created by world.transportFor(address, uuid).
 *
 * send() returns false only when the message is dropped at once: this transport is crashed or
 * replaced, the address is known to be of another cluster, the frame is over frameBytesMax, or the
 * link's bytes in flight would exceed linkInFlightBytesMax. To an unknown or crashed address it returns true and the message is lost on
 * delivery (like TCP writes to a peer that is gone); loss and partitions also return true.
 * A send to the transport's own address is delivered like any other (loopback).
 */
export class SimTransport implements Transport {
  /** @internal */ handler: TransportHandler | null = null;
  /** @internal */ alive = true;
  /** @internal Crashed silently: dials to it hang instead of being refused. */
  silent = false;
  /** @internal Addresses known to be of another cluster: send() returns false at once. */
  readonly refused = new Set<string>();
  /** @internal Addresses whose refusal is on its way back. */
  readonly refusing = new Set<string>();

  constructor(
    private readonly world: SimWorld,
    readonly address: string,
    readonly uuid: string,
    readonly clusterName: string,
    /** Dial-only (dialTransportFor): nothing listens for it; answers come back on its connections. */
    readonly dialOnly = false,
  ) {}

  setHandler(handler: TransportHandler): void {
    this.handler = handler;
  }

  /** False once crashed, or replaced by a newer transport for the same address. */
  get isAlive(): boolean {
    return this.alive;
  }

  get peer(): Peer {
    return { uuid: this.uuid, address: this.address };
  }

  send(address: string, message: Message): boolean {
    return this.world.sendFrom(this, address, message);
  }

  disconnect(address: string, uuid?: string): void {
    this.world.disconnectFrom(this, address, uuid);
  }

  connectionCount(): number {
    return this.world.connectionCountOf(this);
  }
}

interface NetworkKnobs {
  partitionsHold: boolean;
  delayMsMin: number;
  delayMsMax: number;
  lossRate: number;
  reorder: boolean;
  reorderDelayMsMax: number;
  duplicateRate: number;
  linkInFlightBytesMax: number;
  frameBytesMax: number;
}

const NETWORK_DEFAULTS: NetworkKnobs = {
  delayMsMin: 1,
  delayMsMax: 5,
  lossRate: 0,
  reorder: false,
  reorderDelayMsMax: 20,
  duplicateRate: 0,
  linkInFlightBytesMax: 64 * 1024 * 1024,
  frameBytesMax: FRAME_BYTES_MAX_DEFAULT,
  partitionsHold: false,
};

function checkKnobs(k: NetworkKnobs): void {
  assert(Number.isInteger(k.delayMsMin) && k.delayMsMin >= 0, `delayMsMin must be a non-negative integer: ${k.delayMsMin}`);
  assert(Number.isInteger(k.delayMsMax) && k.delayMsMax >= k.delayMsMin, `delayMsMax must be an integer >= delayMsMin: ${k.delayMsMax}`);
  assert(k.lossRate >= 0 && k.lossRate <= 1, `lossRate must be in [0, 1]: ${k.lossRate}`);
  assert(k.duplicateRate >= 0 && k.duplicateRate <= 1, `duplicateRate must be in [0, 1]: ${k.duplicateRate}`);
  assert(Number.isInteger(k.reorderDelayMsMax) && k.reorderDelayMsMax >= 0, `reorderDelayMsMax must be a non-negative integer`);
  assert(Number.isSafeInteger(k.linkInFlightBytesMax) && k.linkInFlightBytesMax > 0, 'linkInFlightBytesMax must be a positive integer');
  assert(Number.isSafeInteger(k.frameBytesMax) && k.frameBytesMax > HEADER_BYTES, 'frameBytesMax must exceed the frame header');
}

function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function sortedRecord(map: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of [...map.keys()].sort()) out[k] = map.get(k) as number;
  return out;
}

export class SimWorld {
  readonly seed: number;
  readonly epochMs: number;
  /** The world's clock: wall = epochMs + virtual ms; monotonic = virtual ms. */
  readonly clock: Clock;

  private readonly random: SeededRandom;
  private readonly queue = new EventQueue();
  private readonly eventsPerRunMax: number;
  private readonly traceLinesMax: number;
  private readonly watch: SimWorldOptions['watch'];
  private knobs: NetworkKnobs;
  private virtualMs = 0;
  private seq = 0;
  private timerIds = 0;
  private eventsRun = 0;
  /** Called after every event with its label (invariant checkers: tests/harness/sim-invariants.ts); a throw fails that event. */
  afterEachStep: ((label: string) => void) | null = null;
  private liveEvents = 0;

  private readonly trace: string[] = [];
  private traceHead = 0;
  private traceHash = 0x811c_9dc5;

  private readonly timers = new Map<string, SimTimers>();
  private readonly transports = new Map<string, SimTransport>();
  /** Dial-only transports (WAN publishers' connections to other clusters), live ones. */
  private dialers: SimTransport[] = [];
  private readonly connections = new Map<string, Connection>();
  /** One-way degraded links: "from to" → extra loss and latency (degrade()). */
  private readonly degraded = new Map<string, { readonly lossRate: number; readonly delayMsMin: number; readonly delayMsMax: number }>();
  /** Partition group per address; unlisted addresses share group -1. Null: no partition. */
  private groups: Map<string, number> | null = null;
  /** Messages a partition stopped while partitionsHold is on, in the order they were stopped. */
  private held: InFlight[] = [];
  /** Held messages delivered after a heal, and dropped there (their connection had closed). */
  readonly heldCounts = { delivered: 0, dropped: 0 };
  /** One-way blocks: "from to" pairs whose messages are dropped. */
  private readonly blocked = new Set<string>();
  /** Paused members: address and timers id → what waits for the resume, in the order it fell due. */
  private readonly paused = new Map<string, { readonly timersId: string; readonly waiting: { label: string; live: () => boolean; run: () => void }[] }>();
  private readonly pausedTimers = new Map<string, string>();

  private readonly sent = new Map<string, number>();
  private readonly delivered = new Map<string, number>();
  private readonly droppedByKind = new Map<string, number>();
  private readonly droppedByReason = new Map<string, number>();
  private duplicated = 0;
  private bytesSent = 0;

  constructor(seed: number, options: SimWorldOptions = {}) {
    assert(Number.isInteger(seed) && seed >= 0 && seed <= 0xffff_ffff, `seed must be a u32: ${seed}`);
    this.seed = seed;
    this.random = new SeededRandom(seed);
    this.epochMs = options.epochMs ?? SIM_EPOCH_MS_DEFAULT;
    this.eventsPerRunMax = options.eventsPerRunMax ?? 5_000_000;
    this.traceLinesMax = options.traceLinesMax ?? 10_000;
    this.watch = options.watch;
    assert(Number.isSafeInteger(this.eventsPerRunMax) && this.eventsPerRunMax > 0, 'eventsPerRunMax must be a positive integer');
    assert(Number.isSafeInteger(this.traceLinesMax) && this.traceLinesMax >= 0, 'traceLinesMax must be a non-negative integer');
    this.knobs = { ...NETWORK_DEFAULTS };
    this.setNetwork(options);
    this.clock = { nowMs: () => this.epochMs + this.virtualMs, monotonicMs: () => this.virtualMs };
  }

  // ---- time and events ------------------------------------------------------------------------

  /** Virtual time in ms since the world began (= clock.monotonicMs()). */
  get timeMs(): number {
    return this.virtualMs;
  }

  /** Events executed since the world began. */
  get eventCount(): number {
    return this.eventsRun;
  }

  /** Live (not cancelled) events waiting in the queue. */
  get pendingEvents(): number {
    return this.liveEvents;
  }

  /** Schedules `fn` at absolute virtual time `timeMs` (not in the past). */
  at(timeMs: number, label: string, fn: () => void): SimScheduled {
    assert(Number.isFinite(timeMs) && timeMs >= this.virtualMs, `cannot schedule at ${timeMs}, now is ${this.virtualMs}`);
    const e: SimEvent = { atMs: timeMs, seq: this.seq++, label, run: fn, cancelled: false };
    this.queue.push(e);
    this.liveEvents++;
    return {
      cancel: () => {
        if (e.cancelled) return;
        e.cancelled = true;
        this.liveEvents--;
      },
    };
  }

  /** Schedules `fn` after `delayMs` of virtual time (0 runs after the events already due now). */
  after(delayMs: number, label: string, fn: () => void): SimScheduled {
    assert(Number.isFinite(delayMs) && delayMs >= 0, `bad delay: ${delayMs}`);
    return this.at(this.virtualMs + delayMs, label, fn);
  }

  /** Runs the next event, advancing time to it. False when nothing is scheduled. */
  step(): boolean {
    const e = this.queue.peek();
    if (e === undefined) return false;
    this.queue.pop();
    // Marked cancelled once run, so a late cancel() of a fired event does not corrupt liveEvents.
    e.cancelled = true;
    this.liveEvents--;
    this.virtualMs = e.atMs;
    this.eventsRun++;
    this.note(e.label);
    try {
      e.run();
      this.afterEachStep?.(e.label);
    } catch (err) {
      if (err instanceof SimFailure) throw err;
      throw new SimFailure(`event "${e.label}" threw: ${err instanceof Error ? err.message : String(err)}`, this.seed, this.virtualMs, { cause: err });
    }
    return true;
  }

  /** Runs every event due at or before absolute virtual time `untilMs`, then sets the time to it. */
  run(untilMs: number): void {
    assert(Number.isFinite(untilMs) && untilMs >= this.virtualMs, `cannot run until ${untilMs}, now is ${this.virtualMs}`);
    let budget = this.eventsPerRunMax;
    for (let e = this.queue.peek(); e !== undefined && e.atMs <= untilMs; e = this.queue.peek()) {
      if (budget-- === 0) this.livelock();
      this.step();
    }
    this.virtualMs = untilMs;
  }

  /** run(timeMs + ms). */
  runFor(ms: number): void {
    this.run(this.virtualMs + ms);
  }

  /**
   * Runs events until `predicate()` holds (checked first, then after every event) or until the
   * absolute virtual time `deadlineMs`. Returns whether the predicate held; on success the time is
   * that of the event that made it true, on failure it is `deadlineMs`.
   */
  runUntil(predicate: () => boolean, deadlineMs: number): boolean {
    assert(Number.isFinite(deadlineMs) && deadlineMs >= this.virtualMs, `deadline ${deadlineMs} is before now (${this.virtualMs})`);
    if (predicate()) return true;
    let budget = this.eventsPerRunMax;
    for (let e = this.queue.peek(); e !== undefined && e.atMs <= deadlineMs; e = this.queue.peek()) {
      if (budget-- === 0) this.livelock();
      this.step();
      if (predicate()) return true;
    }
    this.virtualMs = deadlineMs;
    return predicate();
  }

  /** A member's timers (one object per id; the test decides whether ids are addresses or uuids). */
  timersFor(memberId: string): SimTimers {
    let t = this.timers.get(memberId);
    if (t === undefined) {
      t = new SimTimers(this, memberId);
      this.timers.set(memberId, t);
    }
    return t;
  }

  /** @internal Unique timer ids across the world. */
  nextTimerId(): number {
    return ++this.timerIds;
  }

  /**
   * An independent PRNG for `name` (e.g. a member's eviction sampling), derived from the seed and the
   * name only, so drawing from it never shifts the network's randomness.
   */
  randomFor(name: string): SeededRandom {
    return new SeededRandom(fnv1a(this.seed ^ 0x9e37_79b9, name));
  }

  // ---- trace ----------------------------------------------------------------------------------

  /** Adds a line to the trace (and to the fingerprint), stamped with the virtual time. */
  note(text: string): void {
    const line = `${this.virtualMs} ${text}`;
    this.traceHash = fnv1a(this.traceHash, line);
    if (this.traceLinesMax === 0) return;
    if (this.trace.length < this.traceLinesMax) this.trace.push(line);
    else {
      this.trace[this.traceHead] = line;
      this.traceHead = (this.traceHead + 1) % this.traceLinesMax;
    }
  }

  /** The most recent trace lines (at most traceLinesMax), oldest first. */
  recentTrace(): string[] {
    return [...this.trace.slice(this.traceHead), ...this.trace.slice(0, this.traceHead)];
  }

  /** A hash of every trace line so far: equal seeds and equal test actions give equal fingerprints. */
  fingerprint(): string {
    return `${this.eventsRun}:${this.traceHash.toString(16).padStart(8, '0')}`;
  }

  // ---- network: topology and faults -------------------------------------------------------------

  /** Changes network knobs from now on (messages in flight keep their schedule). */
  setNetwork(options: SimNetworkOptions): void {
    const next: NetworkKnobs = { ...this.knobs };
    for (const key of Object.keys(NETWORK_DEFAULTS) as (keyof NetworkKnobs)[]) {
      const v = options[key];
      if (v !== undefined) (next as unknown as Record<string, unknown>)[key] = v;
    }
    checkKnobs(next);
    this.knobs = next;
  }

  /**
   * The transport of the member at `address` ("host:port"). If one exists it is replaced: the old
   * one dies as in crash() (this is how a restart looks: crash, then transportFor with a new uuid).
   */
  transportFor(address: string, uuid: string, options: { readonly clusterName?: string } = {}): SimTransport {
    assert(/^\S+:\d+$/.test(address), `address must be "host:port": ${address}`);
    this.crash(address);
    // Dials made while nothing (or a dead process) listened there failed: drop what they carry.
    this.closeConnectionsOf(address);
    const t = new SimTransport(this, address, uuid, options.clusterName ?? 'dev');
    this.transports.set(address, t);
    // A new process at the address may be of another cluster, or of ours again: forget old refusals.
    this.dialers = this.dialers.filter((d) => d.alive);
    for (const other of [...this.transports.values(), ...this.dialers]) {
      other.refused.delete(address);
      other.refusing.delete(address);
    }
    this.note(`up ${address} ${uuid}`);
    return t;
  }

  /**
   * A dial-only transport for the member whose transport is `owner`, to the members of cluster
   * `clusterName` (a WAN publisher's connection, member-port.ts openWanTransport): its handshake
   * advertises the owner's address and uuid with that cluster name, so the target's members accept
   * it; their sends to the owner's address travel back on the connection it opened while that is
   * open. It crashes with the owner (crash, restart at the address).
   */
  dialTransportFor(owner: SimTransport, clusterName: string): SimTransport {
    assert(owner.alive && this.transports.get(owner.address) === owner, `no live transport at ${owner.address}`);
    const t = new SimTransport(this, owner.address, owner.uuid, clusterName, true);
    this.dialers.push(t);
    this.note(`dialer ${owner.address} -> cluster ${clusterName}`);
    return t;
  }

  /** The current transport at the address (alive or crashed), if any. */
  transportAt(address: string): SimTransport | undefined {
    return this.transports.get(address);
  }

  isAlive(address: string): boolean {
    return this.transports.get(address)?.alive === true;
  }

  /**
   * The process at `address` dies: its transport neither sends (false) nor receives, and its
   * connections close, dropping what they carry. Its timers are NOT touched here: the test calls
   * timersFor(id).cancelAll(), since only it knows which id the member used.
   */
  crash(address: string, mode: 'dead' | 'silent' = 'dead'): void {
    const t = this.transports.get(address);
    if (t === undefined || !t.alive) return;
    t.alive = false;
    t.silent = mode === 'silent';
    for (const d of this.dialers) {
      if (d.address !== address || !d.alive) continue;
      d.alive = false;
      d.silent = t.silent;
    }
    if (mode === 'dead') {
      // The kernel closes the dead process's sockets: each peer with an open connection hears it.
      for (const c of this.connections.values()) {
        if (!c.open || (c.a !== address && c.b !== address) || c.a === c.b) continue;
        const otherAddress = c.a === address ? c.b : c.a;
        // The other end: the dial-only transport when the dead process is the member it dialled.
        const other = c.dialer !== null && c.dialer.address === otherAddress ? c.dialer : this.transports.get(otherAddress);
        if (other === undefined || !other.alive || this.partitioned(address, other.address)) continue;
        const peer = t.peer;
        this.notify(other, `closed ${address}->${other.address}`, () => other.handler?.onDisconnected?.(peer));
      }
    }
    this.closeConnectionsOf(address);
    this.note(`crash ${address}${mode === 'silent' ? ' (silent)' : ''}`);
  }

  /** Runs `fn` on `t` one network delay from now (later if t is paused then), unless t died. */
  private notify(t: SimTransport, label: string, fn: () => void): void {
    const k = this.knobs;
    const run = (): void => {
      if (!t.alive) return;
      const pause = this.paused.get(t.address);
      if (pause !== undefined) {
        pause.waiting.push({ label, live: () => t.alive, run });
        return;
      }
      fn();
    };
    this.after(k.delayMsMin + this.random.nextInt(k.delayMsMax - k.delayMsMin + 1), label, run);
  }

  private closeConnectionsOf(address: string): void {
    for (const [key, c] of this.connections) if (c.a === address || c.b === address) this.connections.delete(key);
  }

  /**
   * Splits the network: messages between addresses of different groups are dropped (on send, and on
   * delivery if they were in flight). Addresses in no group form one more group together, so
   * partition([[a]]) isolates a. Replaces any earlier partition. Connections stay "open" as TCP's do.
   */
  partition(groups: readonly (readonly string[])[]): void {
    const map = new Map<string, number>();
    groups.forEach((group, i) => {
      for (const address of group) {
        assert(!map.has(address), `${address} is in two partition groups`);
        map.set(address, i);
      }
    });
    this.groups = map;
    this.note(`partition ${groups.map((g) => `[${g.join(',')}]`).join(' ')}`);
  }

  /**
   * A one-way partition: messages from any address of `from` to any of `to` are dropped (on send and
   * on delivery); the other direction still flows. Adds to any earlier block; heal() lifts all.
   */
  block(from: readonly string[], to: readonly string[]): void {
    for (const a of from) for (const b of to) if (a !== b) this.blocked.add(`${a} ${b}`);
    this.note(`block [${from.join(',')}] -> [${to.join(',')}]`);
  }

  heal(): void {
    this.groups = null;
    this.blocked.clear();
    this.note('heal');
    // Held messages go now, in the order they were stopped (FIFO per link still holds), over
    // connections that are still open; a closed one took its unsent bytes with it.
    const held = this.held;
    this.held = [];
    for (const m of held) {
      if (!m.from.alive || this.connections.get(m.conn.key) !== m.conn) {
        this.heldCounts.dropped++;
        this.drop(m.kind, 'closed', true);
      } else {
        this.heldCounts.delivered++;
        this.schedule(m);
      }
    }
  }

  /**
   * Degrades the links from every address of `from` to every address of `to` (one way): each message
   * is lost with `lossRate` (on top of the world's) and takes an extra uniform delay in
   * [delayMsMin, delayMsMax] (FIFO per link still holds unless `reorder` is on). Replaces an earlier
   * degradation of the same links; restore() lifts them all (heal() does not).
   */
  degrade(from: readonly string[], to: readonly string[], o: { readonly lossRate?: number; readonly delayMsMin?: number; readonly delayMsMax?: number }): void {
    const lossRate = o.lossRate ?? 0;
    const delayMsMin = o.delayMsMin ?? 0;
    const delayMsMax = o.delayMsMax ?? delayMsMin;
    assert(lossRate >= 0 && lossRate <= 1, `lossRate must be in [0, 1]: ${lossRate}`);
    assert(Number.isInteger(delayMsMin) && delayMsMin >= 0 && Number.isInteger(delayMsMax) && delayMsMax >= delayMsMin, `bad extra delay [${delayMsMin}, ${delayMsMax}]`);
    for (const a of from) for (const b of to) if (a !== b) this.degraded.set(`${a} ${b}`, { lossRate, delayMsMin, delayMsMax });
    this.note(`degrade [${from.join(',')}] -> [${to.join(',')}] loss ${lossRate} delay ${delayMsMin}-${delayMsMax} ms`);
  }

  /** Lifts every degrade(). */
  restore(): void {
    this.degraded.clear();
    this.note('restore');
  }

  /** Virtual time of the next live event, or null when nothing is scheduled (for drivers that step). */
  nextEventAtMs(): number | null {
    return this.queue.peek()?.atMs ?? null;
  }

  /** Whether a message from `a` to `b` would be dropped by the current partition or block. */
  partitioned(a: string, b: string): boolean {
    if (a === b) return false;
    if (this.blocked.size > 0 && this.blocked.has(`${a} ${b}`)) return true;
    if (this.groups === null) return false;
    return (this.groups.get(a) ?? -1) !== (this.groups.get(b) ?? -1);
  }

  // ---- pauses (GC, SIGSTOP) ---------------------------------------------------------------------

  /**
   * The member at `address`, whose timers are `timersId`, stops running: its due timers and the
   * messages delivered to it wait until resume(). Its connections stay open.
   */
  pause(address: string, timersId: string): void {
    assert(!this.paused.has(address), `${address} is already paused`);
    this.paused.set(address, { timersId, waiting: [] });
    this.pausedTimers.set(timersId, address);
    this.note(`pause ${address}`);
  }

  /** The paused member runs again: everything that fell due meanwhile runs now, in order, late. */
  resume(address: string): void {
    const p = this.paused.get(address);
    if (p === undefined) return;
    this.paused.delete(address);
    this.pausedTimers.delete(p.timersId);
    this.note(`resume ${address} (${p.waiting.length} waiting)`);
    for (const w of p.waiting) {
      this.after(0, `resumed ${w.label}`, () => {
        if (w.live()) w.run();
      });
    }
  }

  isPaused(address: string): boolean {
    return this.paused.has(address);
  }

  /** @internal A timer of a paused member fell due: keep it for the resume. True when deferred. */
  deferIfPaused(timersId: string, label: string, live: () => boolean, run: () => void): boolean {
    const address = this.pausedTimers.get(timersId);
    if (address === undefined) return false;
    this.paused.get(address)?.waiting.push({ label, live, run });
    return true;
  }

  // ---- network: counters ----------------------------------------------------------------------

  stats(): SimNetworkStats {
    return {
      sent: sortedRecord(this.sent),
      delivered: sortedRecord(this.delivered),
      dropped: sortedRecord(this.droppedByKind),
      droppedByReason: sortedRecord(this.droppedByReason),
      duplicated: this.duplicated,
      bytesSent: this.bytesSent,
    };
  }

  /** The counters as a few lines of text, for a failing test's output. */
  formatStats(): string {
    const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
    const reasons = [...this.droppedByReason].sort().map(([r, n]) => `${r} ${n}`).join(', ');
    const lines = [
      `network seed=${this.seed} t=${this.virtualMs}ms: sent ${total(this.sent)} (${this.bytesSent} bytes), delivered ${total(this.delivered)}, ` +
        `dropped ${total(this.droppedByKind)}${reasons === '' ? '' : ` (${reasons})`}, duplicated ${this.duplicated}`,
    ];
    for (const kind of [...this.sent.keys()].sort()) {
      lines.push(`  ${kind}: sent ${this.sent.get(kind) ?? 0}, delivered ${this.delivered.get(kind) ?? 0}, dropped ${this.droppedByKind.get(kind) ?? 0}`);
    }
    return lines.join('\n');
  }

  // ---- network: the transport side ------------------------------------------------------------

  /** @internal SimTransport.send. */
  sendFrom(from: SimTransport, to: string, message: Message): boolean {
    const body = this.encode(message);
    bump(this.sent, message.kind);
    this.bytesSent += HEADER_BYTES + body.length;
    if (!from.alive) return this.drop(message.kind, 'sender-closed', false);
    if (HEADER_BYTES + body.length > this.knobs.frameBytesMax) return this.drop(message.kind, 'too-large', false);
    // An open connection a dial-only transport at `to` made to this member carries the answer back.
    const back = from.dialOnly ? null : this.dialledFrom(to, from);
    if (back === null && from.refused.has(to)) return this.drop(message.kind, 'refused', false);
    const conn = back ?? (from.dialOnly ? this.dialConnectionFor(from, to) : this.connectionFor(from.address, to));
    if ((conn.inFlightBytes.get(from.address) ?? 0) + body.length > this.knobs.linkInFlightBytesMax) {
      return this.drop(message.kind, 'queue-full', false);
    }
    if (this.partitioned(from.address, to)) {
      if (this.knobs.partitionsHold) {
        this.held.push({ from, to, toDialer: back?.dialer ?? null, conn, kind: message.kind, callId: message.callId, body });
        return true;
      }
      return this.drop(message.kind, 'partition', true, from.address, to, message);
    }
    if (this.knobs.lossRate > 0 && this.random.next() < this.knobs.lossRate) return this.drop(message.kind, 'loss', true, from.address, to, message);
    const degraded = this.degraded.size === 0 ? undefined : this.degraded.get(`${from.address} ${to}`);
    if (degraded !== undefined && degraded.lossRate > 0 && this.random.next() < degraded.lossRate) return this.drop(message.kind, 'loss', true, from.address, to, message);
    this.watch?.('send', from.address, to, message, this.virtualMs);
    const m: InFlight = { from, to, toDialer: back?.dialer ?? null, conn, kind: message.kind, callId: message.callId, body };
    this.schedule(m);
    if (this.knobs.duplicateRate > 0 && this.random.next() < this.knobs.duplicateRate) {
      this.duplicated++;
      this.schedule(m);
    }
    return true;
  }

  /** @internal SimTransport.disconnect. */
  disconnectFrom(from: SimTransport, to: string, uuid?: string): void {
    // A restart closed the old incarnation's connections already; the new one's stays open.
    if (uuid !== undefined && this.transports.get(to)?.uuid !== uuid) return;
    from.refused.delete(to);
    from.refusing.delete(to);
    const key = from.dialOnly ? dialKey(from, to) : pairKey(from.address, to);
    if (this.connections.delete(key)) this.note(`disconnect ${from.address} ${to}`);
  }

  /** @internal SimTransport.connectionCount: open connections to other live members. */
  connectionCountOf(t: SimTransport): number {
    if (!t.alive) return 0;
    let n = 0;
    for (const c of this.connections.values()) {
      if (!c.open || c.a === c.b || (c.a !== t.address && c.b !== t.address)) continue;
      // A dialled connection belongs to its dialer at that end, to the member transport at the other.
      const mine = c.dialer === null ? !t.dialOnly : c.dialer.address === t.address ? c.dialer === t : !t.dialOnly;
      if (mine) n++;
    }
    return n;
  }

  private encode(message: Message): Buffer {
    try {
      const type = MESSAGE_TYPES[message.kind];
      assert(type !== undefined, `unknown message kind ${String(message.kind)}`);
      const body = Buffer.from(encodeBody(message));
      // The header checks (type, call id) as the real transport makes them; the size is sendFrom's.
      encodeFrameHeader({ messageType: type, callId: message.callId }, body.length, Number.MAX_SAFE_INTEGER);
      return body;
    } catch (err) {
      throw new SimFailure(`encoding ${String(message.kind)} failed: ${err instanceof Error ? err.message : String(err)}`, this.seed, this.virtualMs, {
        cause: err,
      });
    }
  }

  private decode(m: InFlight): Message {
    try {
      return decodeMessage(MESSAGE_TYPES[m.kind], m.callId, m.body);
    } catch (err) {
      throw new SimFailure(`decoding ${m.kind} failed: ${err instanceof Error ? err.message : String(err)}`, this.seed, this.virtualMs, { cause: err });
    }
  }

  private connectionFor(a: string, b: string): Connection {
    const key = pairKey(a, b);
    let c = this.connections.get(key);
    if (c === undefined) {
      c = a < b ? new Connection(key, a, b) : new Connection(key, b, a);
      this.connections.set(key, c);
    }
    return c;
  }

  /** The connection a dial-only transport opens to the member at `to` (one per dialer and address). */
  private dialConnectionFor(dialer: SimTransport, to: string): Connection {
    const key = dialKey(dialer, to);
    let c = this.connections.get(key);
    if (c === undefined) {
      c = new Connection(key, dialer.address, to, dialer);
      this.connections.set(key, c);
    }
    return c;
  }

  /** An open connection that a live dial-only transport at `address` made to `member` (same cluster name), or null. */
  private dialledFrom(address: string, member: SimTransport): Connection | null {
    for (const d of this.dialers) {
      if (!d.alive || d.address !== address || d.clusterName !== member.clusterName) continue;
      const c = this.connections.get(dialKey(d, member.address));
      if (c !== undefined && c.open) return c;
    }
    return null;
  }

  private schedule(m: InFlight): void {
    const k = this.knobs;
    let atMs = this.virtualMs + k.delayMsMin + this.random.nextInt(k.delayMsMax - k.delayMsMin + 1);
    const degraded = this.degraded.size === 0 ? undefined : this.degraded.get(`${m.from.address} ${m.to}`);
    if (degraded !== undefined) atMs += degraded.delayMsMin + this.random.nextInt(degraded.delayMsMax - degraded.delayMsMin + 1);
    if (k.reorder) atMs += this.random.nextInt(k.reorderDelayMsMax + 1);
    else {
      // FIFO per link: never before the previous message; equal times keep send order by sequence.
      atMs = Math.max(atMs, m.conn.lastAtMs.get(m.from.address) ?? 0);
      m.conn.lastAtMs.set(m.from.address, atMs);
    }
    bump(m.conn.inFlightBytes, m.from.address, m.body.length);
    this.at(atMs, `deliver ${m.from.address}->${m.to} ${m.kind}#${m.callId}`, () => this.deliver(m));
  }

  private deliver(m: InFlight): void {
    const pause = this.paused.get(m.to);
    if (pause !== undefined) {
      // Bytes reach a stopped process's socket buffer; it reads them when it runs again.
      pause.waiting.push({ label: `deliver ${m.from.address}->${m.to} ${m.kind}#${m.callId}`, live: () => true, run: () => this.deliver(m) });
      return;
    }
    bump(m.conn.inFlightBytes, m.from.address, -m.body.length);
    if (this.connections.get(m.conn.key) !== m.conn) return void this.drop(m.kind, 'closed', true);
    if (m.toDialer !== null) return this.deliverToDialer(m, m.toDialer);
    const target = this.transports.get(m.to);
    if (target === undefined || !target.alive) {
      if (target !== undefined && !target.silent && !this.partitioned(m.from.address, m.to)) this.refuseDial(m);
      return void this.drop(m.kind, 'unreachable', true);
    }
    if (this.partitioned(m.from.address, m.to)) return void (this.knobs.partitionsHold ? this.held.push(m) : this.drop(m.kind, 'partition', true));
    if (target.clusterName !== m.from.clusterName) {
      this.refuse(m.from, m.to);
      return void this.drop(m.kind, 'refused', true);
    }
    if (target.handler === null) return void this.drop(m.kind, 'no-handler', true);
    m.conn.open = true;
    const message = this.decode(m);
    this.watch?.('deliver', m.from.address, m.to, message, this.virtualMs);
    bump(this.delivered, m.kind);
    target.handler.onMessage(m.from.peer, message);
  }

  /** An answer on a dialled connection: it reaches the dial-only transport that opened it. */
  private deliverToDialer(m: InFlight, dialer: SimTransport): void {
    if (!dialer.alive) return void this.drop(m.kind, 'unreachable', true);
    if (this.partitioned(m.from.address, m.to)) return void (this.knobs.partitionsHold ? this.held.push(m) : this.drop(m.kind, 'partition', true));
    if (dialer.handler === null) return void this.drop(m.kind, 'no-handler', true);
    const message = this.decode(m);
    this.watch?.('deliver', m.from.address, m.to, message, this.virtualMs);
    bump(this.delivered, m.kind);
    dialer.handler.onMessage(m.from.peer, message);
  }

  /**
   * A message reached a dead process's address: the connection it opened is refused (ECONNREFUSED).
   * The connection goes, so the next send dials again, and the sender hears of it one delay later.
   */
  private refuseDial(m: InFlight): void {
    if (this.connections.get(m.conn.key) === m.conn) this.connections.delete(m.conn.key);
    const from = m.from;
    const to = m.to;
    this.notify(from, `refused dial ${from.address}->${to}`, () => from.handler?.onUnreachable?.(to, true));
  }

  /** The handshake answer travels back; once it arrives the sender knows and is told (soft refusal). */
  private refuse(from: SimTransport, to: string): void {
    if (from.refused.has(to) || from.refusing.has(to)) return;
    from.refusing.add(to);
    const k = this.knobs;
    this.after(k.delayMsMin + this.random.nextInt(k.delayMsMax - k.delayMsMin + 1), `refused ${to}->${from.address}`, () => {
      if (!from.alive || !from.refusing.delete(to)) return;
      from.refused.add(to);
      from.handler?.onRefused(to, SIM_REFUSAL_CLUSTER_NAME, false);
    });
  }

  private drop(kind: MessageKind, reason: DropReason, result: boolean, from?: string, to?: string, message?: Message): boolean {
    if (this.watch !== undefined && message !== undefined) this.watch(reason, from ?? '', to ?? '', message, this.virtualMs);
    bump(this.droppedByKind, kind);
    bump(this.droppedByReason, reason);
    return result;
  }

  private livelock(): never {
    throw new SimFailure(`more than ${this.eventsPerRunMax} events in one run call (livelock?); last events:\n${this.recentTrace().slice(-20).join('\n')}`, this.seed, this.virtualMs);
  }
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a} ${b}` : `${b} ${a}`;
}

/** A dial-only transport's connection to `to`: apart from member connections between the same addresses. */
function dialKey(dialer: SimTransport, to: string): string {
  return `dial ${dialer.address}/${dialer.clusterName} ${to}`;
}

/** Hands everything the simulated transport hears to the member's ClusterNode, as member-runtime does. */
export function wireNode(transport: SimTransport, node: { onMessage(from: Peer, m: Message): void; onRefused(a: string): void; onUnreachable(a: string, refused?: boolean): void; onDisconnected(peer: Peer): void }): void {
  transport.setHandler({
    onMessage: (from, m) => node.onMessage(from, m),
    onRefused: (a) => node.onRefused(a),
    onUnreachable: (a, refused) => node.onUnreachable(a, refused),
    onDisconnected: (peer) => node.onDisconnected(peer),
  });
}
