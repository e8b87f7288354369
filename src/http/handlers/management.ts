// Management calls (rest.md §7): parameters from the body (or credentials from a Basic header),
// checked in order: count → credentials → action.
import { GridError } from '../../util/errors.js';
import { REQUESTABLE_CLUSTER_STATES, type Actor, type ClusterState, type MemberApi } from '../../member/member-api.js';
import { LOG_LEVELS } from '../../config/types.js';
import { parseMemberAddress } from '../../config/values.js';
import { parseLogLevel } from '../../util/logger.js';
import { json, fail, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { headerCredentials, readManagementParams } from '../params.js';
import { requireHeaderCredentialsWhenSecure } from './info.js';

/** Reads `extra` parameters after the credentials and authenticates; throws 400 / 403. */
export function authenticated(req: HttpRequest, api: MemberApi, extra: number, endpoint: string): readonly string[] {
  return authenticatedActor(req, api, extra, endpoint).values;
}

/** authenticated(), also saying who made the call (for the log lines of calls that change something). */
export function authenticatedActor(req: HttpRequest, api: MemberApi, extra: number, endpoint: string): { values: readonly string[]; by: Actor } {
  let params;
  try {
    params = readManagementParams(req, extra);
  } catch (e) {
    // Too few parameters: with security on, a call that carries no credentials is audited too.
    if (api.securityEnabled() && headerCredentials(req) === null) api.auditMissingCredentials(endpoint, req.remoteAddress);
    throw e;
  }
  if (!api.authenticate(params.credentials, endpoint, req.remoteAddress)) {
    throw new GridError('ERR_AUTH_UNAUTHENTICATED', 'unauthenticated');
  }
  return { values: params.values, by: { user: params.credentials.user, source: req.remoteAddress } };
}

export function state(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 0, 'management/cluster/state');
  return json(200, { status: 'success', state: api.health().clusterState.toLowerCase() });
}

export async function changeState(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const { values, by } = authenticatedActor(req, api, 1, 'management/cluster/changeState');
  const [requested] = values;
  const upper = (requested as string).trim().toUpperCase();
  const target = REQUESTABLE_CLUSTER_STATES.find((s) => s === upper);
  if (target === undefined) {
    throw new GridError(
      'ERR_MGMT_BAD_STATE',
      `unknown cluster state '${requested}'; expected one of ${REQUESTABLE_CLUSTER_STATES.map((s) => s.toLowerCase()).join(', ')}`,
    );
  }
  const outcome = await api.changeClusterState(target as ClusterState, by);
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
  const { by } = authenticatedActor(req, api, 0, 'management/cluster/clusterShutdown');
  afterReply(() => api.shutdownCluster(by));
  return json(200, { status: 'success' });
}

/** Success; when the cluster state forbids the hand-off, a `message` says the member leaves without it. */
export function memberShutdown(req: HttpRequest, api: MemberApi): HttpReply {
  const { by } = authenticatedActor(req, api, 0, 'management/cluster/memberShutdown');
  const note = api.memberShutdownNote();
  afterReply(() => api.shutdownMember(by));
  return json(200, note === null ? { status: 'success' } : { status: 'success', message: `${note}: this member stops without handing its replicas off` });
}

export function nodes(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 0, 'management/cluster/nodes');
  return json(200, { status: 'success', response: api.nodesText() });
}

/** forceStart, partialStart, backup, backupInterrupt and the deprecated hotBackup names. */
export function persistenceAction(action: string, deprecated: boolean) {
  return async (req: HttpRequest, api: MemberApi): Promise<HttpReply> => {
    const { by } = authenticatedActor(req, api, 0, `management/cluster/${action}`);
    const headers = deprecated ? { deprecation: 'true' } : undefined;
    const p = api.persistenceStatus();
    if (!p.enabled) return fail(200, 'persistence is not enabled', headers);
    switch (action) {
      case 'forceStart':
        if (!p.recovering || !api.forceStart(by)) return fail(200, 'no recovery is in progress: nothing to force', headers);
        return json(200, { status: 'success' }, headers);
      case 'partialStart':
        if (!p.recovering) return fail(200, 'no recovery is in progress: nothing to start partially', headers);
        if (p.policy === 'FULL_RECOVERY_ONLY') return fail(200, 'the cluster-data-recovery-policy is FULL_RECOVERY_ONLY: a partial start is not allowed', headers);
        if (!api.partialStart(by)) return fail(200, 'no recovery is in progress: nothing to start partially', headers);
        return json(200, { status: 'success' }, headers);
      case 'backupInterrupt':
      case 'hotBackupInterrupt':
        if (p.backupDir === '') return fail(400, 'no backup-dir is configured for persistence', headers);
        api.interruptBackup(by);
        return json(200, { status: 'success' }, headers);
      default: {
        if (p.backupDir === '') return fail(400, 'no backup-dir is configured for persistence', headers);
        const r = await api.startBackup(by);
        return r.ok ? json(200, { status: 'success' }, headers) : fail(200, r.message, headers);
      }
    }
  };
}

export function getLogLevel(req: HttpRequest, api: MemberApi): HttpReply {
  requireHeaderCredentialsWhenSecure(req, api, 'log-level');
  return json(200, { logLevel: api.runtimeLogLevel() });
}

export function setLogLevel(req: HttpRequest, api: MemberApi): HttpReply {
  const { values, by } = authenticatedActor(req, api, 1, 'log-level');
  const [requested] = values;
  const level = parseLogLevel(requested as string);
  if (level === null) {
    throw new GridError('ERR_MGMT_BAD_LOG_LEVEL', `Invalid level '${requested}', known levels are: ${LOG_LEVELS.join(', ')}`);
  }
  api.setLogLevel(level, by);
  return json(200, { status: 'success', message: 'log level is changed' });
}

export function resetLogLevel(req: HttpRequest, api: MemberApi): HttpReply {
  const { by } = authenticatedActor(req, api, 0, 'log-level/reset');
  api.resetLogLevel(by);
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
  const { values, by } = authenticatedActor(req, api, 1, 'config/tcp-ip/member-list');
  const [members] = values;
  const parsed = (members as string).split(/[,; ]+/).map((m) => m.trim()).filter((m) => m !== '');
  for (const member of parsed) {
    const checked = parseMemberAddress(member);
    if (!checked.ok) throw new GridError('ERR_HTTP_BAD_REQUEST', `member list entry '${member}': expected ${checked.expected}`);
  }
  const applied = api.setTcpIpMemberList(parsed, by);
  if (applied === null) throw new GridError('ERR_MGMT_TCP_IP_DISABLED', TCP_IP_OFF);
  return json(200, { status: 'success', message: 'The member list of TCP-IP join config is updated at run time.', 'member-list': applied });
}
