// Management calls (rest.md §7): parameters from the body (or credentials from a Basic header),
// checked in order: count → credentials → action.
import { GridError } from '../../util/errors.js';
import { REQUESTABLE_CLUSTER_STATES, type ClusterState, type MemberApi } from '../../member/member-api.js';
import { LOG_LEVELS } from '../../config/types.js';
import { parseMemberAddress } from '../../config/values.js';
import { parseLogLevel } from '../../util/logger.js';
import { json, fail, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { readManagementParams } from '../params.js';
import { requireHeaderCredentialsWhenSecure } from './info.js';

/** Reads `extra` parameters after the credentials and authenticates; throws 400 / 403. */
export function authenticated(req: HttpRequest, api: MemberApi, extra: number, endpoint: string): readonly string[] {
  const params = readManagementParams(req, extra);
  if (!api.authenticate(params.credentials, endpoint, req.remoteAddress)) {
    throw new GridError('ERR_AUTH_UNAUTHENTICATED', 'unauthenticated');
  }
  return params.values;
}

export function state(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 0, 'management/cluster/state');
  return json(200, { status: 'success', state: api.health().clusterState.toLowerCase() });
}

export async function changeState(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const [requested] = authenticated(req, api, 1, 'management/cluster/changeState');
  const upper = (requested as string).trim().toUpperCase();
  const target = REQUESTABLE_CLUSTER_STATES.find((s) => s === upper);
  if (target === undefined) {
    throw new GridError(
      'ERR_MGMT_BAD_STATE',
      `unknown cluster state '${requested}'; expected one of ${REQUESTABLE_CLUSTER_STATES.map((s) => s.toLowerCase()).join(', ')}`,
    );
  }
  const outcome = await api.changeClusterState(target as ClusterState);
  const body = { status: outcome === 'changed' ? 'success' : 'fail', state: target.toLowerCase() };
  return json(200, body);
}

export function version(req: HttpRequest, api: MemberApi): HttpReply {
  const [requested] = authenticated(req, api, 1, 'management/cluster/version');
  const v = (requested as string).trim();
  if (!api.supportsClusterVersion(v)) {
    throw new GridError('ERR_MGMT_BAD_VERSION', `cluster version '${v}' is not supported; this cluster runs ${api.clusterVersion()}`);
  }
  return json(200, { status: 'success', version: v });
}

/** Answer first, then act: the reply must leave before the member stops. */
function afterReply(action: () => void): void {
  setImmediate(action);
}

export function clusterShutdown(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 0, 'management/cluster/clusterShutdown');
  afterReply(() => api.shutdownCluster());
  return json(200, { status: 'success' });
}

export function memberShutdown(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 0, 'management/cluster/memberShutdown');
  afterReply(() => api.shutdownMember());
  return json(200, { status: 'success' });
}

export function nodes(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 0, 'management/cluster/nodes');
  return json(200, { status: 'success', response: api.nodesText() });
}

/** forceStart, partialStart, backup, backupInterrupt and the deprecated hotBackup names. */
export function persistenceAction(action: string, deprecated: boolean) {
  return (req: HttpRequest, api: MemberApi): HttpReply => {
    authenticated(req, api, 0, `management/cluster/${action}`);
    const headers = deprecated ? { deprecation: 'true' } : undefined;
    // Persistence is refused at start-up by this version (see docs/config.md), so a running member
    // never has it enabled; the answer says so rather than pretending to act.
    return fail(200, 'persistence is not enabled', headers);
  };
}

export function getLogLevel(req: HttpRequest, api: MemberApi): HttpReply {
  requireHeaderCredentialsWhenSecure(req, api, 'log-level');
  return json(200, { logLevel: api.runtimeLogLevel() });
}

export function setLogLevel(req: HttpRequest, api: MemberApi): HttpReply {
  const [requested] = authenticated(req, api, 1, 'log-level');
  const level = parseLogLevel(requested as string);
  if (level === null) {
    throw new GridError('ERR_MGMT_BAD_LOG_LEVEL', `Invalid level '${requested}', known levels are: ${LOG_LEVELS.join(', ')}`);
  }
  api.setLogLevel(level);
  return json(200, { status: 'success', message: 'log level is changed' });
}

export function resetLogLevel(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 0, 'log-level/reset');
  api.resetLogLevel();
  return json(200, { status: 'success', message: 'log level is reset' });
}

export function postLicense(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 1, 'license');
  throw new GridError('ERR_MGMT_NO_LICENSE', 'this member uses no license keys');
}

const TCP_IP_OFF = 'TCP-IP join mechanism is not enabled in the cluster.';

export function getMemberList(_req: HttpRequest, api: MemberApi): HttpReply {
  const list = api.tcpIpMemberList();
  if (list === null) throw new GridError('ERR_MGMT_TCP_IP_DISABLED', TCP_IP_OFF);
  return json(200, { status: 'success', 'member-list': list });
}

export function setMemberList(req: HttpRequest, api: MemberApi): HttpReply {
  const [members] = authenticated(req, api, 1, 'config/tcp-ip/member-list');
  const parsed = (members as string).split(/[,; ]+/).map((m) => m.trim()).filter((m) => m !== '');
  for (const member of parsed) {
    const checked = parseMemberAddress(member);
    if (!checked.ok) throw new GridError('ERR_HTTP_BAD_REQUEST', `member list entry '${member}': expected ${checked.expected}`);
  }
  const applied = api.setTcpIpMemberList(parsed);
  if (applied === null) throw new GridError('ERR_MGMT_TCP_IP_DISABLED', TCP_IP_OFF);
  return json(200, { status: 'success', message: 'The member list of TCP-IP join config is updated at run time.', 'member-list': applied });
}
