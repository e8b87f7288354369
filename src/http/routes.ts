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
import { KIND } from './request-stats.js';
import * as data from './handlers/data.js';
import * as info from './handlers/info.js';
import * as mgmt from './handlers/management.js';
import * as wancp from './handlers/wan-cp.js';
import * as cp from './handlers/cp.js';
import * as views from './handlers/views.js';
import * as consolePage from './handlers/console.js';

export type Handler = (req: HttpRequest, api: MemberApi) => HttpReply | Promise<HttpReply>;

export interface Route {
  readonly handler: Handler;
  /** Data calls answer errors with an empty body and `Grid-Error`; others with JSON. */
  readonly dataCall: boolean;
  /** What the request is counted as in the metrics (request-stats.ts KIND). */
  readonly kind: number;
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
  const dataRoute = (methods: string[], pattern: string, handler: Handler, kind: number): void => {
    router.on(methods, pattern, { handler, dataCall: true, kind });
  };
  const route = (methods: string[], pattern: string, handler: Handler, kind: number): void => {
    router.on(methods, pattern, { handler, dataCall: false, kind });
  };

  for (const pattern of ['/grid/rest/maps/:map', '/grid/rest/maps/:map/*key']) {
    dataRoute(['POST', 'PUT'], pattern, data.mapPut, KIND.MAP_PUT);
    dataRoute(['GET'], pattern, data.mapGet, KIND.MAP_GET);
    dataRoute(['DELETE'], pattern, data.mapDelete, KIND.MAP_DELETE);
  }
  dataRoute(['HEAD'], '/grid/rest/maps/*any', data.dataHead, KIND.OTHER);
  for (const pattern of ['/grid/rest/queues/:queue', '/grid/rest/queues/:queue/*rest']) {
    dataRoute(['POST', 'PUT'], pattern, data.queueOffer, KIND.QUEUE_OFFER);
    dataRoute(['GET'], pattern, data.queueGet, KIND.QUEUE_GET);
    dataRoute(['DELETE'], pattern, data.queueDelete, KIND.QUEUE_POLL);
  }
  dataRoute(['HEAD'], '/grid/rest/queues/*any', data.dataHead, KIND.OTHER);

  const INFO = KIND.CLUSTER_INFO;
  route(['GET'], '/grid/rest/cluster', info.cluster, INFO);
  // Cluster views for the console and operators (spec/console.md), gathered from every member.
  route(['GET'], '/grid/rest/events', views.events, INFO);
  route(['GET'], '/grid/rest/partitions', views.partitions, INFO);
  route(['GET'], '/grid/rest/partitions/of/*key', views.partitionOfKey, INFO);
  route(['GET'], '/grid/rest/structures', views.structures, INFO);
  route(['GET'], '/grid/rest/cluster/view', views.clusterView, INFO);
  route(['GET'], '/grid/rest/metrics/history', views.metricsHistory, INFO);
  route(['GET'], '/grid/console', consolePage.consoleRoot, INFO);
  route(['GET'], '/grid/console/session', consolePage.sessionGet, INFO);
  route(['POST'], '/grid/console/session', consolePage.sessionLogin, INFO);
  route(['DELETE'], '/grid/console/session', consolePage.sessionLogout, INFO);
  route(['GET'], '/grid/console/*file', consolePage.consoleFile, INFO);
  route(['GET'], '/grid/rest/instance', info.instance, INFO);
  route(['GET'], '/grid/rest/metrics', info.metrics, INFO);
  route(['GET'], '/grid/rest/metrics/prometheus', info.prometheusMetrics, INFO);
  route(['GET'], '/grid/rest/management/cluster/version', info.clusterVersion, INFO);
  route(['GET'], '/grid/rest/license', info.license, INFO);

  const HEALTH = KIND.HEALTH;
  route(['GET'], '/grid/health', info.health, HEALTH);
  route(['HEAD'], '/grid/health', info.healthHead, HEALTH);
  route(['GET'], '/grid/health/node-state', info.nodeState, HEALTH);
  route(['GET'], '/grid/health/cluster-state', info.clusterState, HEALTH);
  route(['GET'], '/grid/health/cluster-safe', info.clusterSafe, HEALTH);
  route(['GET'], '/grid/health/migration-queue-size', info.migrationQueueSize, HEALTH);
  route(['GET'], '/grid/health/cluster-size', info.clusterSize, HEALTH);
  route(['GET'], '/grid/health/ready', info.ready, HEALTH);

  const MGMT = KIND.MANAGEMENT;
  route(['POST'], '/grid/rest/license', mgmt.postLicense, MGMT);
  route(['POST'], '/grid/rest/management/cluster/state', mgmt.state, MGMT);
  route(['POST'], '/grid/rest/management/cluster/changeState', mgmt.changeState, MGMT);
  route(['POST'], '/grid/rest/management/cluster/version', mgmt.version, MGMT);
  route(['POST'], '/grid/rest/management/cluster/clusterShutdown', mgmt.clusterShutdown, MGMT);
  route(['POST'], '/grid/rest/management/cluster/memberShutdown', mgmt.memberShutdown, MGMT);
  route(['POST'], '/grid/rest/management/cluster/nodes', mgmt.nodes, MGMT);
  for (const [action, deprecated] of PERSISTENCE_ACTIONS) {
    route(['POST'], `/grid/rest/management/cluster/${action}`, mgmt.persistenceAction(action, deprecated), MGMT);
  }
  route(['GET'], '/grid/rest/log-level', mgmt.getLogLevel, MGMT);
  route(['POST'], '/grid/rest/log-level', mgmt.setLogLevel, MGMT);
  route(['POST'], '/grid/rest/log-level/reset', mgmt.resetLogLevel, MGMT);
  route(['GET'], '/grid/rest/config/tcp-ip/member-list', mgmt.getMemberList, MGMT);
  route(['POST'], '/grid/rest/config/tcp-ip/member-list', mgmt.setMemberList, MGMT);

  for (const [action, extra] of WAN_ACTIONS) route(['POST'], `/grid/rest/wan/${action}`, wancp.wanAction(action, extra), MGMT);
  route(['POST'], '/grid/rest/wan/addWanConfig', wancp.addWanConfig, MGMT);
  route(['GET'], '/grid/rest/wan/sync/progress/:uuid', wancp.wanProgress, MGMT);
  route(['GET'], '/grid/rest/wan/consistencyCheck/:uuid', wancp.wanCheckResult, MGMT);

  for (const path of ['groups', 'groups/:group', 'groups/:group/sessions', 'members', 'members/local']) {
    route(['GET'], `/grid/rest/cp-subsystem/${path}`, cp.cpManagement, MGMT);
  }
  for (const path of ['members', 'members/:uuid/remove', 'groups/:group/remove', 'groups/:group/sessions/:session/remove', 'reset']) {
    route(['POST'], `/grid/rest/cp-subsystem/${path}`, cp.cpManagement, MGMT);
  }
  // CP data structures (spec/cp.md "REST: data structures"); errors as JSON, like management calls.
  const CP = KIND.OTHER;
  route(['GET', 'POST'], '/grid/rest/cp/atomiclongs/:name', cp.cpData, CP);
  route(['POST'], '/grid/rest/cp/atomiclongs/:name/:op', cp.cpData, CP);
  route(['GET', 'POST', 'DELETE'], '/grid/rest/cp/atomicrefs/:name', cp.cpData, CP);
  route(['GET', 'POST'], '/grid/rest/cp/countdownlatches/:name', cp.cpData, CP);
  route(['POST'], '/grid/rest/cp/countdownlatches/:name/:op', cp.cpData, CP);
  route(['GET'], '/grid/rest/cp/countdownlatches/:name/:op/:arg', cp.cpData, CP);
  route(['POST'], '/grid/rest/cp/sessions/:name', cp.cpData, CP);
  route(['DELETE'], '/grid/rest/cp/sessions/:name/:op', cp.cpData, CP);
  route(['POST'], '/grid/rest/cp/sessions/:name/:op/:arg', cp.cpData, CP);
  route(['GET'], '/grid/rest/cp/locks/:name', cp.cpData, CP);
  route(['POST'], '/grid/rest/cp/locks/:name/:op', cp.cpData, CP);
  route(['GET'], '/grid/rest/cp/semaphores/:name', cp.cpData, CP);
  route(['POST'], '/grid/rest/cp/semaphores/:name/:op', cp.cpData, CP);
  return router;
}
