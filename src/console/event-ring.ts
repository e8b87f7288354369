// Each member's part of the event timeline (spec/console.md "Timeline", `GET /grid/rest/events`): a
// bounded ring of what happened here, newest kept, and the merge of the rings of every member that
// answered. No I/O; the clock is passed in.
//
// An event's id is `<timeMs>-<recording member's UUID>-<sequence, 10 digits>`: unique in the
// cluster, and it carries its time, so `since=<id>` can be answered by a member that never held
// that event (it came from another member, or left this ring). Order, newest first: by time, then
// by id; "newer than `since`" means after it in that order.
import type { Clock } from '../util/clock.js';
import type { EventDetails, EventKind, EventSink } from '../util/timeline.js';

export interface GridEvent {
  readonly id: string;
  readonly timeMs: number;
  /** The member it happened to (a UUID). */
  readonly member: string;
  readonly kind: EventKind;
  readonly message: string;
  /** Who asked (management calls, logins), or null. */
  readonly actor: string | null;
}

/** The ring's bounds: at most this many events, and about this many bytes (the oldest go first). */
export const EVENTS_MAX = 2000;
export const EVENT_BYTES_MAX = 512 * 1024;
/** A message or actor longer than this is cut (with an ellipsis): one event cannot fill the ring. */
export const EVENT_TEXT_CHARS_MAX = 1024;
/** The most events one answer carries. */
export const EVENTS_LIMIT_MAX = 1000;

/** What an event costs the ring (the strings at two bytes a character, and the object). */
export function eventBytes(e: GridEvent): number {
  return 96 + 2 * (e.id.length + e.member.length + e.message.length + (e.actor?.length ?? 0));
}

/** Newest first: later time first, then the greater id. */
export function compareNewestFirst(a: { timeMs: number; id: string }, b: { timeMs: number; id: string }): number {
  if (a.timeMs !== b.timeMs) return b.timeMs - a.timeMs;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The time an event id carries, or null when it is not an event id. */
export function eventIdTime(id: string): number | null {
  const m = /^(\d{1,16})-[^\s]{1,128}-\d{10}$/.exec(id);
  if (m === null) return null;
  const t = Number(m[1]);
  return Number.isSafeInteger(t) ? t : null;
}

function clip(s: string): string {
  return s.length <= EVENT_TEXT_CHARS_MAX ? s : `${s.slice(0, EVENT_TEXT_CHARS_MAX - 1)}…`;
}

export class EventRing implements EventSink {
  private readonly events: GridEvent[] = [];
  private head = 0;
  private bytesNow = 0;
  private seq = 0;
  readonly counters = { recorded: 0, dropped: 0 };

  constructor(
    private readonly selfUuid: string,
    private readonly clock: Clock,
    private readonly eventsMax = EVENTS_MAX,
    private readonly bytesMax = EVENT_BYTES_MAX,
  ) {}

  record(kind: EventKind, message: string, details: EventDetails = {}): void {
    const timeMs = Math.floor(this.clock.nowMs());
    const e: GridEvent = {
      id: `${timeMs}-${this.selfUuid}-${String(++this.seq % 1e10).padStart(10, '0')}`,
      timeMs,
      member: details.member ?? this.selfUuid,
      kind,
      message: clip(message),
      actor: details.actor === undefined ? null : clip(details.actor),
    };
    this.events.push(e);
    this.bytesNow += eventBytes(e);
    this.counters.recorded++;
    while (this.events.length - this.head > this.eventsMax || (this.bytesNow > this.bytesMax && this.events.length - this.head > 1)) {
      this.bytesNow -= eventBytes(this.events[this.head] as GridEvent);
      this.head++;
      this.counters.dropped++;
    }
    // Compact now and then so the array does not grow without end.
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Events newer than `since` (an event id, or null for all), newest first, at most `limit`. */
  list(since: string | null, limit: number): GridEvent[] {
    const out: GridEvent[] = [];
    const after = sinceKey(since);
    // Every event is looked at (the ring is small): recorded in time order on one clock, but a
    // clock stepped back breaks that order.
    for (let i = this.head; i < this.events.length; i++) {
      const e = this.events[i] as GridEvent;
      if (after === null || compareNewestFirst(e, after) < 0) out.push(e);
    }
    return out.sort(compareNewestFirst).slice(0, limit);
  }

  get size(): number {
    return this.events.length - this.head;
  }

  get bytes(): number {
    return this.bytesNow;
  }
}

function sinceKey(since: string | null): { timeMs: number; id: string } | null {
  if (since === null) return null;
  const t = eventIdTime(since);
  return t === null ? null : { timeMs: t, id: since };
}

/** The events of every answering member as one list: each id once, newer than `since`, newest first, at most `limit`. */
export function mergeEvents(lists: readonly (readonly GridEvent[])[], since: string | null, limit: number): GridEvent[] {
  const after = sinceKey(since);
  const seen = new Set<string>();
  const all: GridEvent[] = [];
  for (const list of lists) {
    for (const e of list) {
      if (seen.has(e.id) || (after !== null && compareNewestFirst(e, after) >= 0)) continue;
      seen.add(e.id);
      all.push(e);
    }
  }
  return all.sort(compareNewestFirst).slice(0, limit);
}
