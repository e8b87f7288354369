// The maps and queues view (spec/console.md "Maps and queues"; `GET /grid/rest/structures`): each
// member states, per structure it holds, its owned and backup entries, the memory they hold, and
// its rates over the last history step (reads and puts it served as owner; offers and polls); the
// member asked sums the parts by name and pages the lists. Never a scan of a map: counts and
// counters only. No I/O.
import { GridError } from '../util/errors.js';
import type { ReplicaStore } from '../data/replica-store.js';

/** What a member's figures give per map and queue (member/metrics-snapshot.ts MapFigures, QueueFigures). */
export interface HeldFigures {
  readonly maps: readonly { readonly name: string; readonly owned: number; readonly backup: number }[];
  readonly queues: readonly { readonly name: string; readonly owned: number; readonly backup: number }[];
}

/** The counters a member keeps since it started: reads per map (MapService.figuresOf), owner writes (ReplicaStore). */
export interface StructureCounters {
  mapReads(name: string): number;
  mapPuts(name: string): number;
  queueOffers(name: string): number;
  queuePolls(name: string): number;
  mapExtras(name: string): { readonly heldBytes: number; readonly wan: boolean; readonly persistence: boolean } | null;
}

/** The counters of a member's store. */
export function storeCounters(store: ReplicaStore): StructureCounters {
  return {
    mapReads: (n) => store.maps.readsOf(n),
    mapPuts: (n) => store.ops.maps.get(n)?.puts ?? 0,
    queueOffers: (n) => store.ops.queues.get(n)?.offers ?? 0,
    queuePolls: (n) => store.ops.queues.get(n)?.polls ?? 0,
    mapExtras: (n) => store.maps.figuresOf(n),
  };
}

export interface MapRow {
  readonly name: string;
  readonly entries: number;
  readonly backupEntries: number;
  readonly bytes: number;
  readonly getsPerSecond: number;
  readonly putsPerSecond: number;
  readonly wan: boolean;
  readonly persistence: boolean;
}

export interface QueueRow {
  readonly name: string;
  readonly size: number;
  readonly offersPerSecond: number;
  readonly pollsPerSecond: number;
}

export interface StructuresPart {
  readonly maps: readonly MapRow[];
  readonly queues: readonly QueueRow[];
}

type Reading = [reads: number, puts: number, offers: number, polls: number];

/** Rates per structure over the last step: the counters read at each history sample, kept two at a time. */
export class StructureRates {
  private previous: { timeMs: number; readings: Map<string, Reading> } | null = null;
  private rates = new Map<string, Reading>();

  sample(timeMs: number, held: HeldFigures, counters: StructureCounters): void {
    const readings = new Map<string, Reading>();
    for (const m of held.maps) readings.set(`m${m.name}`, [counters.mapReads(m.name), counters.mapPuts(m.name), 0, 0]);
    for (const q of held.queues) readings.set(`q${q.name}`, [0, 0, counters.queueOffers(q.name), counters.queuePolls(q.name)]);
    const prev = this.previous;
    this.previous = { timeMs, readings };
    if (prev === null || timeMs <= prev.timeMs) return;
    const seconds = (timeMs - prev.timeMs) / 1000;
    const rates = new Map<string, Reading>();
    for (const [k, now] of readings) {
      const before = prev.readings.get(k) ?? now;
      rates.set(k, now.map((v, i) => Math.max(0, Math.round(((v - (before[i] as number)) / seconds) * 10) / 10)) as Reading);
    }
    this.rates = rates;
  }

  of(kind: 'm' | 'q', name: string): Reading {
    return this.rates.get(`${kind}${name}`) ?? [0, 0, 0, 0];
  }
}

/** This member's part: every structure it holds, with its rates over the last step. */
export function structuresPart(held: HeldFigures, counters: StructureCounters, rates: StructureRates): StructuresPart {
  return {
    maps: held.maps.map((m) => {
      const [gets, puts] = rates.of('m', m.name);
      const x = counters.mapExtras(m.name);
      return { name: m.name, entries: m.owned, backupEntries: m.backup, bytes: x?.heldBytes ?? 0, getsPerSecond: gets, putsPerSecond: puts, wan: x?.wan ?? false, persistence: x?.persistence ?? false };
    }),
    queues: held.queues.map((q) => {
      const [, , offers, polls] = rates.of('q', q.name);
      return { name: q.name, size: q.owned, offersPerSecond: offers, pollsPerSecond: polls };
    }),
  };
}

export interface StructuresQuery {
  readonly prefix: string;
  readonly limit: number;
  /** Names after this one (the last name of the previous page). */
  readonly after: string | null;
}

export const STRUCTURES_LIMIT_DEFAULT = 100;
export const STRUCTURES_LIMIT_MAX = 1000;

/** `?prefix=&limit=&after=`; anything else is 400 naming it. */
export function parseStructuresQuery(raw: string | null): StructuresQuery {
  const q = new URLSearchParams(raw ?? '');
  for (const k of q.keys()) if (k !== 'prefix' && k !== 'limit' && k !== 'after') throw new GridError('ERR_HTTP_BAD_REQUEST', `unknown parameter ${JSON.stringify(k.slice(0, 40))}: the structures view takes prefix, limit and after`);
  const rawLimit = q.get('limit');
  let limit = STRUCTURES_LIMIT_DEFAULT;
  if (rawLimit !== null) {
    limit = /^\d{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= STRUCTURES_LIMIT_MAX)) throw new GridError('ERR_HTTP_BAD_REQUEST', `limit must be an integer from 1 to ${STRUCTURES_LIMIT_MAX}, not ${JSON.stringify(rawLimit.slice(0, 40))}`);
  }
  return { prefix: q.get('prefix') ?? '', limit, after: q.get('after') };
}

function add<T extends { readonly name: string }>(into: Map<string, T>, row: T, merge: (a: T, b: T) => T): void {
  const had = into.get(row.name);
  into.set(row.name, had === undefined ? row : merge(had, row));
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

/** The members' parts summed by name, sorted by name, paged: `prefix`, then names after `after`, at most `limit` of each kind. */
export function mergeStructures(parts: readonly StructuresPart[], q: StructuresQuery): { maps: MapRow[]; queues: QueueRow[]; more: { maps: boolean; queues: boolean } } {
  const maps = new Map<string, MapRow>();
  const queues = new Map<string, QueueRow>();
  for (const p of parts) {
    for (const m of p.maps ?? []) {
      add(maps, m, (a, b) => ({ name: a.name, entries: a.entries + b.entries, backupEntries: a.backupEntries + b.backupEntries, bytes: a.bytes + b.bytes, getsPerSecond: round1(a.getsPerSecond + b.getsPerSecond), putsPerSecond: round1(a.putsPerSecond + b.putsPerSecond), wan: a.wan || b.wan, persistence: a.persistence || b.persistence }));
    }
    for (const x of p.queues ?? []) {
      add(queues, x, (a, b) => ({ name: a.name, size: a.size + b.size, offersPerSecond: round1(a.offersPerSecond + b.offersPerSecond), pollsPerSecond: round1(a.pollsPerSecond + b.pollsPerSecond) }));
    }
  }
  const pick = <T extends { readonly name: string }>(rows: Map<string, T>): { items: T[]; more: boolean } => {
    const all = [...rows.values()].filter((r) => r.name.startsWith(q.prefix) && (q.after === null || r.name > q.after)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { items: all.slice(0, q.limit), more: all.length > q.limit };
  };
  const m = pick(maps);
  const qq = pick(queues);
  return { maps: m.items, queues: qq.items, more: { maps: m.more, queues: qq.more } };
}
