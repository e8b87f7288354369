// The read-only cluster views of spec/console.md as REST answers (docs/rest.md "Cluster views"):
// the event timeline merged across members, and the partition table with its migrations. The
// member asked gathers the other members' parts through the ViewsService; these functions check
// the query, merge the parts and shape the JSON.
import { GridError } from '../util/errors.js';
import { partitionIdOfKey } from '../partition/partition-id.js';
import { EVENTS_LIMIT_MAX, eventIdTime, mergeEvents, type GridEvent } from './event-ring.js';
import type { ViewsService } from './views-service.js';
import { clusterView, type ClusterViewAnswer } from './member-part.js';
import { HISTORY_SERIES, isSeries, MetricsHistory, type SampledFigures, type SeriesName } from './metrics-history.js';
import { mergeStructures, parseStructuresQuery, StructureRates, structuresPart, type HeldFigures, type MapRow, type QueueRow, type StructureCounters, type StructuresPart } from './structures.js';

/** The views as the REST handlers call them (MemberApi.clusterViews). */
export class ClusterViews {
  /** This member's recent figures (the runtime samples them every HISTORY_STEP_MS). */
  readonly history = new MetricsHistory();
  private readonly rates = new StructureRates();

  constructor(
    private readonly views: ViewsService,
    private readonly selfUuid: string,
    private readonly clusterName: string,
    held: () => HeldFigures,
    private readonly counters: StructureCounters,
  ) {
    views.register('history', (q) => {
      const h = q as { series: SeriesName; since?: number | null };
      return this.history.series(h.series, typeof h.since === 'number' ? h.since : -Infinity);
    });
    views.register('structures', () => structuresPart(held(), counters, this.rates));
  }

  /** The runtime's timer: one sample of this member's metrics, and of its structures' counters. */
  sampleHistory(timeMs: number, figures: SampledFigures & HeldFigures): void {
    this.history.sample(timeMs, figures);
    this.rates.sample(timeMs, figures, this.counters);
  }

  /** Every map and queue with entries, memory and rates, summed over the members that answered, paged by name. */
  async structures(rawQuery: string | null): Promise<StructuresAnswer> {
    const q = parseStructuresQuery(rawQuery);
    const g = await this.views.gather('structures', null);
    const merged = mergeStructures([...g.parts.values()] as StructuresPart[], q);
    return { answered: g.parts.size, of: g.of, missing: g.missing, ...merged };
  }

  /** One series of every member that answered: `[timeMs, value]` pairs, oldest first. */
  async metricsHistory(rawQuery: string | null): Promise<HistoryAnswer> {
    const { series, since } = parseHistoryQuery(rawQuery);
    const g = await this.views.gather('history', { series, since });
    const members: Record<string, [number, number][]> = {};
    for (const [u, p] of g.parts) if (Array.isArray(p)) members[u] = p as [number, number][];
    return { stepMs: this.history.stepMs, series, answered: g.parts.size, of: g.of, missing: g.missing, members };
  }

  /** The cluster's event timeline, merged from every member that answered. */
  events(q: EventsQuery): Promise<EventsAnswer> {
    return gatherEvents(this.views, q);
  }

  /** The partition table and its migrations, as the master holds them when it answers. */
  partitions(): Promise<PartitionsAnswer> {
    return gatherPartitions(this.views, this.selfUuid);
  }

  /** A map key's partition (of its UTF-8 bytes, as every member computes it) and its replicas in this member's table. */
  partitionOf(key: string): { readonly key: string; readonly partition: number; readonly replicas: readonly (string | null)[] } {
    if (key === '') throw new GridError('ERR_HTTP_BAD_REQUEST', 'missing key');
    const own = this.views.local('ownPartitions', null) as PartitionsPart;
    const partition = partitionIdOfKey(Buffer.from(key, 'utf8'), own.replicas.length);
    return { key, partition, replicas: own.replicas[partition] ?? [] };
  }

  /** Every member's row: state, partitions, process, heartbeat ages. */
  async cluster(): Promise<ClusterViewAnswer> {
    return clusterView(this.clusterName, this.selfUuid, await this.views.gather('member', null));
  }
}

/** Events an answer carries when the query names no limit. */
export const EVENTS_LIMIT_DEFAULT = 100;

export interface EventsQuery {
  readonly since: string | null;
  readonly limit: number;
}

/** `?since=<event id>&limit=<1..1000>`; anything else is 400 naming the parameter. */
export function parseEventsQuery(raw: string | null): EventsQuery {
  const q = new URLSearchParams(raw ?? '');
  for (const k of q.keys()) if (k !== 'since' && k !== 'limit') throw new GridError('ERR_HTTP_BAD_REQUEST', `unknown parameter ${JSON.stringify(k)}: the events view takes since and limit`);
  const since = q.get('since');
  if (since !== null && eventIdTime(since) === null) throw new GridError('ERR_HTTP_BAD_REQUEST', `since must be an event id (as the events view answers it), not ${JSON.stringify(since.slice(0, 200))}`);
  const rawLimit = q.get('limit');
  let limit = EVENTS_LIMIT_DEFAULT;
  if (rawLimit !== null) {
    limit = /^\d{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= EVENTS_LIMIT_MAX)) throw new GridError('ERR_HTTP_BAD_REQUEST', `limit must be an integer from 1 to ${EVENTS_LIMIT_MAX}, not ${JSON.stringify(rawLimit.slice(0, 40))}`);
  }
  return { since, limit };
}

export interface EventsAnswer {
  readonly answered: number;
  readonly of: number;
  readonly missing: readonly string[];
  readonly events: readonly GridEvent[];
}

export async function gatherEvents(views: ViewsService, q: EventsQuery): Promise<EventsAnswer> {
  const g = await views.gather('events', q);
  const lists = [...g.parts.values()].filter((p): p is GridEvent[] => Array.isArray(p));
  return { answered: g.parts.size, of: g.of, missing: g.missing, events: mergeEvents(lists, q.since, q.limit) };
}

/** A member's part of the partitions view (the master's is the one used: it knows the migrations). */
export interface PartitionsPart {
  readonly master: boolean;
  readonly version: number;
  readonly replicas: readonly (readonly (string | null)[])[];
  /** Partitions with a migration under way (the master's part only). */
  readonly migrating: readonly number[];
  readonly planned: number;
  readonly completed: number;
}

export interface PartitionsAnswer {
  readonly version: number;
  /** The member whose table this is: the master when it answered, else the member asked. */
  readonly from: string;
  readonly partitions: readonly { readonly id: number; readonly replicas: readonly (string | null)[]; readonly migrating: boolean }[];
  readonly migrations: { readonly planned: number; readonly completed: number };
}

/**
 * The master's table: this member's own when it is the master, else the master's part of a gather
 * (the other members answer null), else, when the master does not answer, this member's own.
 */
export async function gatherPartitions(views: ViewsService, selfUuid: string): Promise<PartitionsAnswer> {
  let from = selfUuid;
  let part = views.local('ownPartitions', null) as PartitionsPart;
  if (!part.master) {
    for (const [u, p] of (await views.gather('partitions', null)).parts) {
      const pp = p as PartitionsPart | null;
      if (pp !== null && typeof pp === 'object' && pp.master === true && Array.isArray(pp.replicas)) {
        from = u;
        part = pp;
        break;
      }
    }
  }
  const migrating = new Set(part.migrating);
  return {
    version: part.version,
    from,
    partitions: part.replicas.map((replicas, id) => ({ id, replicas, migrating: migrating.has(id) })),
    migrations: { planned: part.planned, completed: part.completed },
  };
}

export interface HistoryAnswer {
  readonly stepMs: number;
  readonly series: SeriesName;
  readonly answered: number;
  readonly of: number;
  readonly missing: readonly string[];
  readonly members: Readonly<Record<string, [number, number][]>>;
}

/** `?series=<name>`, one of HISTORY_SERIES; anything else is 400 listing them. */
export function parseHistoryQuery(raw: string | null): { readonly series: SeriesName; readonly since: number | null } {
  const q = new URLSearchParams(raw ?? '');
  const series = q.get('series');
  const extra = [...q.keys()].find((k) => k !== 'series' && k !== 'since');
  if (series === null || !isSeries(series) || extra !== undefined || q.getAll('series').length > 1) {
    throw new GridError('ERR_HTTP_BAD_REQUEST', `series must be one of ${HISTORY_SERIES.join(', ')}${extra === undefined ? '' : ` (and no other parameter than since: ${JSON.stringify(extra)})`}`);
  }
  // `since`: only the points after this time (ms since the epoch), so a page that keeps the past
  // asks every refresh for one new point per member rather than 15 minutes of them.
  const rawSince = q.get('since');
  if (rawSince !== null && (!/^\d{1,15}$/.test(rawSince) || q.getAll('since').length > 1)) {
    throw new GridError('ERR_HTTP_BAD_REQUEST', `since must be a time in ms since the epoch (an integer), not ${JSON.stringify(rawSince.slice(0, 40))}`);
  }
  return { series, since: rawSince === null ? null : Number(rawSince) };
}

export interface StructuresAnswer {
  readonly answered: number;
  readonly of: number;
  readonly missing: readonly string[];
  readonly maps: readonly MapRow[];
  readonly queues: readonly QueueRow[];
  /** Whether a list was cut at `limit` (ask again with `after` = its last name). */
  readonly more: { readonly maps: boolean; readonly queues: boolean };
}
