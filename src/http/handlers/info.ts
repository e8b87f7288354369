// Cluster information and health (rest.md §5, §6). These never run partition operations, so they
// answer in every node and cluster state, which is what probes and load balancers need.
import { GridError } from '../../util/errors.js';
import type { MemberApi } from '../../member/member-api.js';
import { empty, json, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { headerCredentials } from '../params.js';
import { metricsJson, prometheusText } from '../metrics-catalog.js';
import { PROMETHEUS_CONTENT_TYPE } from '../prometheus.js';

export function cluster(_req: HttpRequest, api: MemberApi): HttpReply {
  const info = api.clusterInfo();
  return json(200, {
    members: info.members.map((m) => ({
      address: `[${m.host}]:${m.port}`,
      liteMember: m.liteMember,
      localMember: m.localMember,
      uuid: m.uuid,
      memberVersion: m.memberVersion,
    })),
    connectionCount: info.connectionCount,
    allConnectionCount: info.allConnectionCount,
  });
}

export function instance(_req: HttpRequest, api: MemberApi): HttpReply {
  return json(200, { name: api.instanceName() });
}

export function clusterVersion(_req: HttpRequest, api: MemberApi): HttpReply {
  return json(200, { status: 'success', version: api.clusterVersion() });
}

/** JSON by default; the Prometheus text when the client's Accept asks for it (wantsPrometheusText). */
export function metrics(req: HttpRequest, api: MemberApi): HttpReply {
  const accept = req.header('accept');
  if (accept !== undefined && wantsPrometheusText(accept)) return prometheusMetrics(req, api);
  return json(200, metricsJson(api.metricsSnapshot()), VARY_ACCEPT);
}

/** `GET /grid/rest/metrics/prometheus`: the text exposition format 0.0.4 whatever the Accept says. */
export function prometheusMetrics(_req: HttpRequest, api: MemberApi): HttpReply {
  return { status: 200, headers: { 'content-type': PROMETHEUS_CONTENT_TYPE, ...VARY_ACCEPT }, body: prometheusText(api.metricsSnapshot()) };
}

const VARY_ACCEPT = { vary: 'Accept' };
const TEXT_TYPES = new Set(['text/plain', 'application/openmetrics-text']);

/**
 * Whether an Accept header prefers the text format: a `text/plain` or `application/openmetrics-text`
 * range with q > 0 whose q is at least that of an explicit `application/json`. Wildcard ranges
 * alone (curl's default) keep JSON, the form existing users read. OpenMetrics is answered with the
 * 0.0.4 text, which Prometheus accepts when it asks for OpenMetrics first.
 */
export function wantsPrometheusText(accept: string): boolean {
  let text = 0;
  let jsonQ = 0;
  for (const range of accept.split(',')) {
    const [typePart, ...params] = range.split(';');
    const type = (typePart ?? '').trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if ((k ?? '').trim().toLowerCase() === 'q') {
        const n = Number((v ?? '').trim());
        q = Number.isFinite(n) ? n : 0;
      }
    }
    if (TEXT_TYPES.has(type)) text = Math.max(text, q);
    else if (type === 'application/json') jsonQ = Math.max(jsonQ, q);
  }
  return text > 0 && text >= jsonQ;
}

export function license(_req: HttpRequest): HttpReply {
  return json(200, { licenseInfo: { type: 'OPEN_SOURCE' } });
}

export function health(_req: HttpRequest, api: MemberApi): HttpReply {
  const h = api.health();
  return json(200, {
    nodeState: h.nodeState,
    clusterState: h.clusterState,
    clusterSafe: h.clusterSafe,
    migrationQueueSize: h.migrationQueueSize,
    clusterSize: h.clusterSize,
  });
}

export function healthHead(_req: HttpRequest, api: MemberApi): HttpReply {
  const h = api.health();
  return empty(200, {
    'grid-nodestate': h.nodeState,
    'grid-clusterstate': h.clusterState,
    'grid-clustersafe': String(h.clusterSafe),
    'grid-migrationqueuesize': String(h.migrationQueueSize),
    'grid-clustersize': String(h.clusterSize),
  });
}

export function nodeState(_req: HttpRequest, api: MemberApi): HttpReply {
  const state = api.health().nodeState;
  return state === 'SHUT_DOWN' ? empty(503) : json(200, state);
}

/** cluster-state is the one health call that takes credentials when security is on (header only). */
export function clusterState(req: HttpRequest, api: MemberApi): HttpReply {
  requireHeaderCredentialsWhenSecure(req, api, 'health/cluster-state');
  return json(200, api.health().clusterState);
}

export function clusterSafe(_req: HttpRequest, api: MemberApi): HttpReply {
  return empty(api.health().clusterSafe ? 200 : 503);
}

export function migrationQueueSize(_req: HttpRequest, api: MemberApi): HttpReply {
  return json(200, api.health().migrationQueueSize);
}

export function clusterSize(_req: HttpRequest, api: MemberApi): HttpReply {
  return json(200, api.health().clusterSize);
}

export function ready(_req: HttpRequest, api: MemberApi): HttpReply {
  return empty(api.health().ready ? 200 : 503);
}

/** GET endpoints that demand credentials with security on read them from `Authorization: Basic`. */
export function requireHeaderCredentialsWhenSecure(req: HttpRequest, api: MemberApi, endpoint: string): void {
  if (!api.securityEnabled()) return;
  const credentials = headerCredentials(req);
  if (credentials === null) api.auditMissingCredentials(endpoint, req.remoteAddress);
  if (credentials === null || !api.authenticate(credentials, endpoint, req.remoteAddress)) {
    throw new GridError('ERR_AUTH_UNAUTHENTICATED', 'unauthenticated');
  }
}
