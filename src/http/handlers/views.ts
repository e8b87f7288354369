// The read-only cluster views the console reads (spec/console.md "The views it reads"; docs/rest.md
// "Cluster views"), group CLUSTER_READ, gathered by the member asked from every member.
import type { MemberApi } from '../../member/member-api.js';
import { parseEventsQuery } from '../../console/cluster-views.js';
import { GridError } from '../../util/errors.js';
import { json, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { requireHeaderCredentialsWhenSecure } from './info.js';

/** `GET /grid/rest/events?since=<id>&limit=<n>`: newest first, with who answered. */
export async function events(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  // With security on they need credentials: they name every member, map and action.
  requireHeaderCredentialsWhenSecure(req, api, 'GET /grid/rest/events');
  const q = parseEventsQuery(req.queryString?.() ?? null);
  const a = await api.clusterViews.events(q);
  return json(200, { answered: a.answered, of: a.of, missing: a.missing, events: a.events });
}

/** `GET /grid/rest/partitions`: every partition's replicas (UUIDs), and the migrations. */
export async function partitions(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  requireHeaderCredentialsWhenSecure(req, api, 'GET /grid/rest/partitions');
  const raw = req.queryString?.() ?? null;
  if (raw !== null && raw !== '') throw new GridError('ERR_HTTP_BAD_REQUEST', 'the partitions view takes no parameters');
  const a = await api.clusterViews.partitions();
  return json(200, { version: a.version, from: a.from, partitions: a.partitions, migrations: a.migrations });
}

/** `GET /grid/rest/partitions/of/{key}`: which partition a map key falls in, and its replicas (this member's table). */
export function partitionOfKey(req: HttpRequest, api: MemberApi): HttpReply {
  requireHeaderCredentialsWhenSecure(req, api, 'GET /grid/rest/partitions/of');
  return json(200, api.clusterViews.partitionOf(req.segments.slice(4).join('/')));
}

/** `GET /grid/rest/cluster/view`: every member's row, and the cluster as the member asked sees it. */
export async function clusterView(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  requireHeaderCredentialsWhenSecure(req, api, 'GET /grid/rest/cluster/view');
  const raw = req.queryString?.() ?? null;
  if (raw !== null && raw !== '') throw new GridError('ERR_HTTP_BAD_REQUEST', 'the cluster view takes no parameters');
  return json(200, await api.clusterViews.cluster());
}

/** `GET /grid/rest/metrics/history?series=<name>`: the last 15 minutes of one series on every member. */
export async function metricsHistory(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  requireHeaderCredentialsWhenSecure(req, api, 'GET /grid/rest/metrics/history');
  return json(200, await api.clusterViews.metricsHistory(req.queryString?.() ?? null));
}

/** `GET /grid/rest/structures?prefix=&limit=&after=`: every map and queue, summed over the members, paged by name. */
export async function structures(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  requireHeaderCredentialsWhenSecure(req, api, 'GET /grid/rest/structures');
  return json(200, await api.clusterViews.structures(req.queryString?.() ?? null));
}
