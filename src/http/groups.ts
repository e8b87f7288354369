// Which endpoint group a request belongs to (rest.md §2), from its method and decoded path segments.
// Segments exclude the empty segment before the first `/`: `/grid/rest/maps/m/k` is
// ['grid','rest','maps','m','k']. First match wins; HEAD is classified like GET. A request that
// belongs to no group is left to the router (404 / 405).
import type { EndpointGroup } from '../config/types.js';

const PERSISTENCE_ACTIONS = new Set(['forceStart', 'partialStart', 'backup', 'backupInterrupt', 'hotBackup', 'hotBackupInterrupt']);
const WRITE_ACTIONS = new Set(['clusterShutdown', 'memberShutdown', 'changeState', 'version']);

export function classifyGroup(method: string, s: readonly string[]): EndpointGroup | null {
  if (s[0] !== 'grid') return null;
  const area = s[1];
  if (area === 'health') return 'HEALTH_CHECK';
  const m = method === 'HEAD' ? 'GET' : method;
  // The web console's page and files (spec/console.md: viewing needs CLUSTER_READ).
  if (area === 'console') return m === 'GET' ? 'CLUSTER_READ' : null;
  if (area !== 'rest') return null;
  const what = s[2];
  const n = s.length;
  switch (what) {
    case 'maps':
    case 'queues':
      return n >= 4 ? 'DATA' : null;
    case 'cp':
      // CP data structures (spec/cp.md "REST: data structures") are data calls.
      return n >= 5 ? 'DATA' : null;
    case 'wan':
      return n >= 4 ? 'WAN' : null;
    case 'cp-subsystem':
      return n >= 4 ? 'CP' : null;
    case 'cluster':
    case 'instance':
    // The console's cluster views (spec/console.md), `/cluster/view` among them.
    case 'events':
    case 'partitions':
    case 'structures':
      if (m !== 'GET') return null;
      if (what === 'partitions' && n >= 5 && s[3] === 'of') return 'CLUSTER_READ';
      return n === 3 || (n === 4 && what === 'cluster' && s[3] === 'view') ? 'CLUSTER_READ' : null;
    case 'metrics':
      // `/metrics/prometheus` is this project's addition: the same figures in the Prometheus text format.
      // `/metrics/history` is the console's (spec/console.md).
      return m === 'GET' && (n === 3 || (n === 4 && (s[3] === 'prometheus' || s[3] === 'history'))) ? 'CLUSTER_READ' : null;
    case 'license':
    case 'log-level':
      if (n === 3 && m === 'GET') return 'CLUSTER_READ';
      if (m === 'POST' && (n === 3 || (n === 4 && what === 'log-level' && s[3] === 'reset'))) return 'CLUSTER_WRITE';
      return null;
    case 'config':
      if (n === 5 && s[3] === 'tcp-ip' && s[4] === 'member-list') {
        if (m === 'GET') return 'CLUSTER_READ';
        if (m === 'POST') return 'CLUSTER_WRITE';
      }
      return null;
    case 'management':
      return classifyManagement(m, s);
    default:
      return null;
  }
}

function classifyManagement(m: string, s: readonly string[]): EndpointGroup | null {
  if (s.length !== 5 || s[3] !== 'cluster') return null;
  const action = s[4] as string;
  if (PERSISTENCE_ACTIONS.has(action)) return 'PERSISTENCE';
  if (m === 'POST' && (action === 'state' || action === 'nodes')) return 'CLUSTER_READ';
  if (m === 'GET' && action === 'version') return 'CLUSTER_READ';
  if (m === 'POST' && WRITE_ACTIONS.has(action)) return 'CLUSTER_WRITE';
  return null;
}
