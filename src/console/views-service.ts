// Cluster-wide views gathered by the member they are asked of (spec/console.md "The views it reads"):
// it asks every other member of its list for its part (`viewAsk`), answers its own at once, and
// gives back what came within the deadline, saying who answered and who did not ("k of n"; a member
// that did not answer is listed as missing, never counted as zero). Each member answers a part
// from its own state only, through the views the composition root registers; a view that throws
// answers ok false. No I/O of its own: the root sends, the timers run the deadline.
import { message, type Message, type MessageKind } from '../cluster/messages.js';
import type { MemberService } from '../cluster/service.js';
import type { Peer } from '../cluster/transport.js';
import type { TimerHandle, Timers } from '../util/clock.js';

/** How long a gathered view waits for the other members' parts. */
export const VIEW_DEADLINE_MS = 2000;
/** The most gathered views waiting at once on one member (more are refused, not queued). */
export const VIEWS_WAITING_MAX = 64;
/** The largest part a member sends (its JSON, in bytes); a bigger one is answered ok false. */
export const VIEW_PART_BYTES_MAX = 4 * 1024 * 1024;

export interface ViewsHost {
  readonly selfUuid: string;
  /** This member's list (this member included), or itself alone when it is not joined. */
  memberUuids(): readonly string[];
  send(uuid: string, m: Message): void;
}

/** A member's part of a view: JSON-able, from its own state. */
export type LocalView = (query: unknown) => unknown;

export interface Gathered {
  /** Each answering member's part, by UUID, in member-list order. */
  readonly parts: ReadonlyMap<string, unknown>;
  /** The members asked (this one included). */
  readonly of: number;
  /** UUIDs of the members that did not answer in time, or answered that they could not. */
  readonly missing: readonly string[];
}

interface Waiting {
  readonly parts: Map<string, unknown>;
  readonly asked: Set<string>;
  readonly callIds: Map<number, string>;
  readonly order: readonly string[];
  readonly done: (g: Gathered) => void;
  timer: TimerHandle | null;
}

export class ViewsService implements MemberService {
  readonly name = 'console-views';
  readonly kinds: readonly MessageKind[] = ['viewAsk', 'viewAnswer'];
  /** Call id of each part asked → its gather. */
  private readonly waiting = new Map<number, Waiting>();
  private readonly gathers = new Set<Waiting>();
  private nextCallId = 1;
  readonly counters = { gathered: 0, partsAsked: 0, partsAnswered: 0, partsMissing: 0, refused: 0 };

  constructor(
    private readonly host: ViewsHost,
    private readonly timers: Timers,
    private readonly views: Record<string, LocalView>,
    private readonly deadlineMs = VIEW_DEADLINE_MS,
  ) {}

  /** Adds a view (the composition root, for parts only the runtime can state). */
  register(view: string, part: LocalView): void {
    this.views[view] = part;
  }

  /** This member's own part of `view`. */
  local(view: string, query: unknown): unknown {
    const v = this.views[view];
    if (v === undefined) throw new Error(`no view ${view}`);
    return v(query);
  }

  /** Gathers `view` from every member of the list. */
  gather(view: string, query: unknown): Promise<Gathered> {
    return new Promise((resolve, reject) => {
      if (this.views[view] === undefined) return reject(new Error(`no view ${view}`));
      const self = this.host.selfUuid;
      const order = this.host.memberUuids();
      const parts = new Map<string, unknown>([[self, this.local(view, query)]]);
      const others = order.filter((u) => u !== self);
      this.counters.gathered++;
      if (others.length === 0) return resolve({ parts, of: order.length === 0 ? 1 : order.length, missing: [] });
      if (this.gathers.size >= VIEWS_WAITING_MAX) {
        this.counters.refused++;
        return resolve({ parts, of: order.length, missing: others });
      }
      const w: Waiting = { parts, asked: new Set(others), callIds: new Map(), order, done: resolve, timer: null };
      this.gathers.add(w);
      const body = { view, query: JSON.stringify(query ?? null) };
      for (const u of others) {
        const callId = this.nextCallId++;
        w.callIds.set(callId, u);
        this.waiting.set(callId, w);
        this.counters.partsAsked++;
        this.host.send(u, message('viewAsk', body, callId));
      }
      w.timer = this.timers.setTimeout(() => this.finish(w), this.deadlineMs);
    });
  }

  private finish(w: Waiting): void {
    if (w.timer !== null) this.timers.clearTimeout(w.timer);
    w.timer = null;
    for (const id of w.callIds.keys()) this.waiting.delete(id);
    this.gathers.delete(w);
    const missing = w.order.filter((u) => !w.parts.has(u));
    this.counters.partsMissing += missing.length;
    // In list order (the master first).
    const parts = new Map<string, unknown>();
    for (const u of w.order) if (w.parts.has(u)) parts.set(u, w.parts.get(u));
    w.done({ parts, of: w.order.length, missing });
  }

  handle(from: Peer, m: Message): void {
    if (m.kind === 'viewAsk') {
      let reply: { ok: boolean; body: Buffer };
      try {
        const query = JSON.parse(m.body.query) as unknown;
        const json = Buffer.from(JSON.stringify(this.local(m.body.view, query) ?? null), 'utf8');
        reply = json.length > VIEW_PART_BYTES_MAX ? { ok: false, body: Buffer.from(`the ${m.body.view} part is ${json.length} bytes, over ${VIEW_PART_BYTES_MAX}`) } : { ok: true, body: json };
      } catch (e) {
        reply = { ok: false, body: Buffer.from(e instanceof Error ? e.message : String(e)) };
      }
      this.host.send(from.uuid, message('viewAnswer', reply, m.callId));
      return;
    }
    if (m.kind !== 'viewAnswer') return;
    const w = this.waiting.get(m.callId);
    // Only the member asked answers a call id (another one's answer is ignored).
    if (w === undefined || w.callIds.get(m.callId) !== from.uuid) return;
    this.waiting.delete(m.callId);
    w.callIds.delete(m.callId);
    w.asked.delete(from.uuid);
    if (m.body.ok) {
      try {
        w.parts.set(from.uuid, JSON.parse(Buffer.from(m.body.body).toString('utf8')) as unknown);
        this.counters.partsAnswered++;
      } catch {
        // A part that is not JSON counts as not answered.
      }
    }
    if (w.asked.size === 0) this.finish(w);
  }

  /** A member left the list: a view waiting for it stops waiting. */
  memberRemoved(uuid: string): void {
    for (const [id, w] of [...this.waiting]) {
      if (w.callIds.get(id) !== uuid) continue;
      this.waiting.delete(id);
      w.callIds.delete(id);
      w.asked.delete(uuid);
      if (w.asked.size === 0) this.finish(w);
    }
  }
}
