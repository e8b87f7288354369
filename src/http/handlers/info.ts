// Cluster information and health (rest.md §5, §6). These never run partition operations, so they
// answer in every node and cluster state, which is what probes and load balancers need.
import { GridError } from '../../util/errors.js';
import type { MemberApi } from '../../member/member-api.js';
import { empty, json, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { headerCredentials } from '../params.js';

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

export function metrics(_req: HttpRequest, api: MemberApi): HttpReply {
  return json(200, api.metrics());
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
