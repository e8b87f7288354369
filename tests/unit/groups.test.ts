// Checks endpoint-group classification against the table of rest.md §2, row by row, including the
// method-dependent rows and paths that belong to no group.
import test from 'node:test';
import assert from 'node:assert/strict';
import { classifyGroup } from '../../src/http/groups.js';

const seg = (p: string): string[] => p.slice(1).split('/');
const cases: [string, string, string | null][] = [
  ['POST', '/grid/rest/maps/m/k', 'DATA'],
  ['GET', '/grid/rest/maps/', 'DATA'],
  ['GET', '/grid/rest/maps', null],
  ['DELETE', '/grid/rest/queues/q/1', 'DATA'],
  ['GET', '/grid/health', 'HEALTH_CHECK'],
  ['GET', '/grid/health/ready', 'HEALTH_CHECK'],
  ['GET', '/grid/healthgarbage', null],
  ['POST', '/grid/rest/wan/sync/map', 'WAN'],
  ['POST', '/grid/rest/management/cluster/forceStart', 'PERSISTENCE'],
  ['POST', '/grid/rest/management/cluster/hotBackupInterrupt', 'PERSISTENCE'],
  ['GET', '/grid/rest/cluster', 'CLUSTER_READ'],
  ['HEAD', '/grid/rest/cluster', 'CLUSTER_READ'],
  ['GET', '/grid/rest/clusterXYZ', null],
  ['GET', '/grid/rest/instance', 'CLUSTER_READ'],
  ['POST', '/grid/rest/management/cluster/state', 'CLUSTER_READ'],
  ['POST', '/grid/rest/management/cluster/nodes', 'CLUSTER_READ'],
  ['GET', '/grid/rest/management/cluster/version', 'CLUSTER_READ'],
  ['POST', '/grid/rest/management/cluster/version', 'CLUSTER_WRITE'],
  ['GET', '/grid/rest/log-level', 'CLUSTER_READ'],
  ['POST', '/grid/rest/log-level', 'CLUSTER_WRITE'],
  ['POST', '/grid/rest/log-level/reset', 'CLUSTER_WRITE'],
  ['GET', '/grid/rest/license', 'CLUSTER_READ'],
  ['POST', '/grid/rest/license', 'CLUSTER_WRITE'],
  ['GET', '/grid/rest/config/tcp-ip/member-list', 'CLUSTER_READ'],
  ['POST', '/grid/rest/config/tcp-ip/member-list', 'CLUSTER_WRITE'],
  ['GET', '/grid/rest/metrics', 'CLUSTER_READ'],
  ['HEAD', '/grid/rest/metrics', 'CLUSTER_READ'],
  ['GET', '/grid/rest/metrics/prometheus', 'CLUSTER_READ'],
  ['HEAD', '/grid/rest/metrics/prometheus', 'CLUSTER_READ'],
  ['POST', '/grid/rest/metrics', null],
  ['POST', '/grid/rest/metrics/prometheus', null],
  ['GET', '/grid/rest/metrics/other', null],
  ['GET', '/grid/rest/metrics/prometheus/x', null],
  ['POST', '/grid/rest/management/cluster/clusterShutdown', 'CLUSTER_WRITE'],
  ['POST', '/grid/rest/management/cluster/memberShutdown', 'CLUSTER_WRITE'],
  ['POST', '/grid/rest/management/cluster/changeState', 'CLUSTER_WRITE'],
  ['GET', '/grid/rest/management/cluster/changeState', null],
  ['GET', '/grid/rest/cp-subsystem/groups', 'CP'],
  ['GET', '/grid/rest/undefined', null],
  ['GET', '/other/rest/cluster', null],
  ['DELETE', '/grid/rest/cluster', null],
];

test('every row of the group table', () => {
  for (const [method, path, group] of cases) assert.equal(classifyGroup(method, seg(path)), group, `${method} ${path}`);
});

// HEAD is classified like GET (rest.md §2): every edge of the table, including the ones where the
// group depends on the segment count (a data path needs the `/` that starts a name) or the method.
const HEAD_EDGES: [string, string | null][] = [
  ['/grid/rest/maps', null],
  ['/grid/rest/maps/', 'DATA'],
  ['/grid/rest/maps/m', 'DATA'],
  ['/grid/rest/maps/m/k/', 'DATA'],
  ['/grid/rest/queues', null],
  ['/grid/rest/queues/', 'DATA'],
  ['/grid/rest/queues/q/size', 'DATA'],
  ['/grid/rest/wan', null],
  ['/grid/rest/wan/', 'WAN'],
  ['/grid/rest/wan/sync/progress/u', 'WAN'],
  ['/grid/rest/cp-subsystem', null],
  ['/grid/rest/cp-subsystem/', 'CP'],
  ['/grid/rest/cp-subsystem/groups', 'CP'],
  ['/grid/health', 'HEALTH_CHECK'],
  ['/grid/health/', 'HEALTH_CHECK'],
  ['/grid/health/node-state', 'HEALTH_CHECK'],
  ['/grid/rest/cluster', 'CLUSTER_READ'],
  ['/grid/rest/cluster/', null],
  ['/grid/rest/instance', 'CLUSTER_READ'],
  ['/grid/rest/metrics', 'CLUSTER_READ'],
  ['/grid/rest/license', 'CLUSTER_READ'],
  ['/grid/rest/log-level', 'CLUSTER_READ'],
  ['/grid/rest/log-level/reset', null],
  ['/grid/rest/config/tcp-ip/member-list', 'CLUSTER_READ'],
  ['/grid/rest/config/tcp-ip', null],
  ['/grid/rest/management/cluster/version', 'CLUSTER_READ'],
  ['/grid/rest/management/cluster/state', null],
  ['/grid/rest/management/cluster/nodes', null],
  ['/grid/rest/management/cluster/changeState', null],
  ['/grid/rest/management/cluster/forceStart', 'PERSISTENCE'],
  ['/grid/rest/management/cluster', null],
  ['/grid/rest', null],
  ['/grid', null],
];

test('HEAD is classified exactly like GET on every edge of the table', () => {
  for (const [path, group] of HEAD_EDGES) {
    assert.equal(classifyGroup('GET', seg(path)), group, `GET ${path}`);
    assert.equal(classifyGroup('HEAD', seg(path)), group, `HEAD ${path}`);
  }
});
