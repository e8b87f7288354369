// The member's route table: every endpoint of rest.md in one place. Patterns use `:name` for one
// segment and `*name` for the rest of the path after a `/` (map keys). A tail needs its `/`, so the
// calls without a key or argument (`DELETE /maps/{m}` clears the map, `POST /queues/{q}` offers the
// body) register `/:map` and `/:queue` too, with the same handlers (their tail is then []).
// `/grid/rest/maps` and `/grid/rest/queues` themselves are unknown paths (404). HEAD falls back to
// GET unless a HEAD route is given.
import type { MemberApi } from '../member/member-api.js';
import type { HttpReply } from './reply.js';
import type { HttpRequest } from './request.js';
import { Router } from './router.js';
import * as data from './handlers/data.js';
import * as info from './handlers/info.js';
import * as mgmt from './handlers/management.js';
import * as wancp from './handlers/wan-cp.js';

export type Handler = (req: HttpRequest, api: MemberApi) => HttpReply | Promise<HttpReply>;

export interface Route {
  readonly handler: Handler;
  /** Data calls answer errors with an empty body and `Grid-Error`; others with JSON. */
  readonly dataCall: boolean;
}

export type RouteTable = Router<Route>;

const PERSISTENCE_ACTIONS: readonly [string, boolean][] = [
  ['forceStart', false],
  ['partialStart', false],
  ['backup', false],
  ['backupInterrupt', false],
  ['hotBackup', true],
  ['hotBackupInterrupt', true],
];

const WAN_ACTIONS: readonly [string, number][] = [
  ['clearWanQueues', 2],
  ['pausePublisher', 2],
  ['resumePublisher', 2],
  ['stopPublisher', 2],
  ['sync/map', 3],
  ['sync/allmaps', 2],
  ['consistencyCheck/map', 3],
];

export function buildRoutes(): RouteTable {
  const router = new Router<Route>();
  const dataRoute = (methods: string[], pattern: string, handler: Handler): void => {
    router.on(methods, pattern, { handler, dataCall: true });
  };
  const route = (methods: string[], pattern: string, handler: Handler): void => {
    router.on(methods, pattern, { handler, dataCall: false });
  };

  for (const pattern of ['/grid/rest/maps/:map', '/grid/rest/maps/:map/*key']) {
    dataRoute(['POST', 'PUT'], pattern, data.mapPut);
    dataRoute(['GET'], pattern, data.mapGet);
    dataRoute(['DELETE'], pattern, data.mapDelete);
  }
  dataRoute(['HEAD'], '/grid/rest/maps/*any', data.dataHead);
  for (const pattern of ['/grid/rest/queues/:queue', '/grid/rest/queues/:queue/*rest']) {
    dataRoute(['POST', 'PUT'], pattern, data.queueOffer);
    dataRoute(['GET'], pattern, data.queueGet);
    dataRoute(['DELETE'], pattern, data.queueDelete);
  }
  dataRoute(['HEAD'], '/grid/rest/queues/*any', data.dataHead);

  route(['GET'], '/grid/rest/cluster', info.cluster);
  route(['GET'], '/grid/rest/instance', info.instance);
  route(['GET'], '/grid/rest/metrics', info.metrics);
  route(['GET'], '/grid/rest/management/cluster/version', info.clusterVersion);
  route(['GET'], '/grid/rest/license', info.license);
  route(['POST'], '/grid/rest/license', mgmt.postLicense);

  route(['GET'], '/grid/health', info.health);
  route(['HEAD'], '/grid/health', info.healthHead);
  route(['GET'], '/grid/health/node-state', info.nodeState);
  route(['GET'], '/grid/health/cluster-state', info.clusterState);
  route(['GET'], '/grid/health/cluster-safe', info.clusterSafe);
  route(['GET'], '/grid/health/migration-queue-size', info.migrationQueueSize);
  route(['GET'], '/grid/health/cluster-size', info.clusterSize);
  route(['GET'], '/grid/health/ready', info.ready);

  route(['POST'], '/grid/rest/management/cluster/state', mgmt.state);
  route(['POST'], '/grid/rest/management/cluster/changeState', mgmt.changeState);
  route(['POST'], '/grid/rest/management/cluster/version', mgmt.version);
  route(['POST'], '/grid/rest/management/cluster/clusterShutdown', mgmt.clusterShutdown);
  route(['POST'], '/grid/rest/management/cluster/memberShutdown', mgmt.memberShutdown);
  route(['POST'], '/grid/rest/management/cluster/nodes', mgmt.nodes);
  for (const [action, deprecated] of PERSISTENCE_ACTIONS) {
    route(['POST'], `/grid/rest/management/cluster/${action}`, mgmt.persistenceAction(action, deprecated));
  }
  route(['GET'], '/grid/rest/log-level', mgmt.getLogLevel);
  route(['POST'], '/grid/rest/log-level', mgmt.setLogLevel);
  route(['POST'], '/grid/rest/log-level/reset', mgmt.resetLogLevel);
  route(['GET'], '/grid/rest/config/tcp-ip/member-list', mgmt.getMemberList);
  route(['POST'], '/grid/rest/config/tcp-ip/member-list', mgmt.setMemberList);

  for (const [action, extra] of WAN_ACTIONS) route(['POST'], `/grid/rest/wan/${action}`, wancp.wanAction(action, extra));
  route(['POST'], '/grid/rest/wan/addWanConfig', wancp.addWanConfig);
  route(['GET'], '/grid/rest/wan/sync/progress/:uuid', wancp.wanProgress);
  route(['GET'], '/grid/rest/wan/consistencyCheck/:uuid', wancp.wanProgress);

  for (const path of ['groups', 'groups/:group', 'groups/:group/sessions', 'members', 'members/local']) {
    route(['GET'], `/grid/rest/cp-subsystem/${path}`, wancp.cpCall);
  }
  for (const path of ['members', 'members/:uuid/remove', 'groups/:group/remove', 'groups/:group/sessions/:session/remove', 'reset']) {
    route(['POST'], `/grid/rest/cp-subsystem/${path}`, wancp.cpCall);
  }
  return router;
}
