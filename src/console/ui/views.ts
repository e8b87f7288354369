// The shapes of the member's read-only views (docs/rest.md "Cluster views") and the calls the
// screens share. The shapes are the documented JSON, written again here rather than imported from
// src/console/ (member-part.ts, structures.ts): the page is compiled on its own, for the browser,
// and imports nothing from the member.
import { CallError, getJson, managementBody, messageOf, request } from './api.js';

export interface Gathered {
  readonly answered: number;
  readonly of: number;
  readonly missing: readonly string[];
}

export interface WanPublisher {
  readonly replication: string;
  readonly publisher: string;
  readonly state: string;
  readonly queued: number;
  readonly backupQueued: number;
  readonly sent: number;
  readonly acked: number;
  readonly dropped: number;
  readonly lagMs: number;
  readonly syncsRunning: number;
}

export interface MemberRow {
  readonly uuid: string;
  readonly address: string;
  readonly master: boolean;
  readonly lite: boolean;
  readonly cpMember: boolean;
  readonly state: string;
  readonly clusterState: string;
  readonly version: string;
  readonly uptimeMs: number;
  readonly ownedPartitions: number;
  readonly backupPartitions: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly eventLoopDelayP99Ms: number;
  readonly heartbeatAgeMs: Readonly<Record<string, number>>;
  readonly memberList: readonly string[];
  readonly wan: readonly WanPublisher[];
  readonly persistence: { readonly logBytes: number; readonly logSegments: number; readonly recovering: boolean; readonly recordsWritten: number; readonly writeFailures: number };
}

export interface ClusterView extends Gathered {
  readonly clusterName: string;
  readonly members: readonly MemberRow[];
  readonly clusterState: string;
  readonly clusterSafe: boolean;
  readonly migrationsInProgress: number;
}

export interface PartitionsView {
  readonly version: number;
  readonly from: string;
  readonly partitions: readonly { readonly id: number; readonly replicas: readonly (string | null)[]; readonly migrating: boolean }[];
  readonly migrations: { readonly planned: number; readonly completed: number };
}

export interface GridEvent {
  readonly id: string;
  readonly timeMs: number;
  readonly member: string;
  readonly kind: string;
  readonly message: string;
  readonly actor: string | null;
}

export interface EventsView extends Gathered {
  readonly events: readonly GridEvent[];
}

export interface HistoryView extends Gathered {
  readonly stepMs: number;
  readonly members: Readonly<Record<string, readonly (readonly [number, number])[]>>;
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

export interface StructuresView extends Gathered {
  readonly maps: readonly MapRow[];
  readonly queues: readonly QueueRow[];
  readonly more: { readonly maps: boolean; readonly queues: boolean };
}

export const clusterView = (): Promise<ClusterView> => getJson<ClusterView>('/grid/rest/cluster/view');
export const partitionsView = (): Promise<PartitionsView> => getJson<PartitionsView>('/grid/rest/partitions');
export const eventsView = (limit: number): Promise<EventsView> => getJson<EventsView>(`/grid/rest/events?limit=${limit}`);

/** Names members by address where the page knows it, else by the UUID's start. */
export class MemberNames {
  private readonly byUuid = new Map<string, string>();

  learn(rows: readonly { readonly uuid: string; readonly address: string }[]): void {
    for (const r of rows) this.byUuid.set(r.uuid, r.address);
  }

  name(uuid: string | null): string {
    if (uuid === null) return 'none';
    return this.byUuid.get(uuid) ?? uuid.slice(0, 8);
  }
}

/** A management call (`p1&p2&…`): the parsed JSON answer; a `fail` status or an error status throws. */
export async function management(path: string, params: readonly string[]): Promise<Record<string, unknown>> {
  const a = await request('POST', path, managementBody(params));
  if (a.status !== 200) throw new CallError(a.status, `${a.status}: ${messageOf(a)}`);
  const v = a.text === '' ? {} : (JSON.parse(a.text) as Record<string, unknown>);
  if (v.status === 'fail') throw new CallError(a.status, typeof v.message === 'string' ? v.message : 'the member answered fail');
  return v;
}
