// Config → XML text for `--print-config`: every effective value, defaults included, in the same
// schema the loader reads, so the output can be saved and used as a configuration file (the
// round-trip test checks that parsing it gives back the same Config). Secrets print as `****`
// (realm user and identity passwords, and `<properties>` whose name says password, secret, token
// or key), so the output can go into a ticket or a log; `showSecrets` prints them as they are,
// for a file that must load again with the same credentials.
import { GRID_PROPERTY_SPECS, isGridPropertyName } from './properties.js';
import { ENDPOINT_GROUPS, type Config, type EndpointGroups, type MapConfig, type PortConfig, type QueueConfig, type SslConfig } from './types.js';

type Attrs = Readonly<Record<string, string | number | boolean>>;

/** A tiny tree for printing: text or child elements, never both. */
interface Out {
  readonly name: string;
  readonly attrs: Attrs;
  readonly body: string | readonly Out[];
}

const el = (name: string, attrs: Attrs = {}, body: string | number | boolean | readonly Out[] = []): Out => ({
  name,
  attrs,
  body: typeof body === 'object' ? body : String(body),
});

/** What a masked secret prints as. */
export const MASKED = '****';

const SECRET_PROPERTY = /pass(word|wd)?|pwd|(^|[._-])pw($|[._-])|secret|token|(^|[._-])key($|[._-])|credential/i;
/** camelCase keys (`apiKey`, `licenseKey`): case matters, or "monkey" would count. */
const SECRET_PROPERTY_CAMEL = /[a-z](Key|Secret|Token|Password)($|[._-])/;

function secretName(name: string): boolean {
  return SECRET_PROPERTY.test(name) || SECRET_PROPERTY_CAMEL.test(name);
}

export interface PrintOptions {
  /** Print passwords and secret-looking properties as they are (default: masked). */
  readonly showSecrets?: boolean;
}

export function printConfig(c: Config, options: PrintOptions = {}): string {
  const secret = (value: string): string => (options.showSecrets === true ? value : MASKED);
  const children: Out[] = [
    el('cluster-name', {}, c.clusterName),
    el('instance-name', {}, c.instanceName),
    el('properties', {}, properties(c, secret, secretValues(c))),
    el('lite-member', { enabled: c.liteMember }),
    el('logging', { level: c.logging.level, format: c.logging.format }),
    network(c),
  ];
  const a = c.advancedNetwork;
  if (a.enabled || a.memberEndpoint !== null || a.restEndpoint !== null || a.wanEndpoints.length > 0) children.push(advancedNetwork(c));
  children.push(...c.maps.map(map), ...c.queues.map(queue), ...c.wanReplications.map(wan));
  children.push(persistence(c), security(c, secret), cpSubsystem(c));
  // A comment may not contain "--"; a path might.
  const note = `Effective configuration of ${c.instanceName} (source: ${c.source})`.replace(/--/g, '- -');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<!-- ${note} -->\n${render(el('grid', {}, children), '')}`;
}

/** Every password of the configuration: a property holding one of them is a secret whatever its name (a placeholder's source). */
function secretValues(c: Config): ReadonlySet<string> {
  const out = new Set<string>();
  for (const r of c.security.realms) {
    for (const u of r.users) if (u.password !== '') out.add(u.password);
    if (r.identity !== null && r.identity.password !== '') out.add(r.identity.password);
  }
  return out;
}

function properties(c: Config, secret: (value: string) => string, secrets: ReadonlySet<string>): Out[] {
  const grid = GRID_PROPERTY_SPECS.map((p) => el('property', { name: p.name }, c.properties[p.key]));
  const others = Object.entries(c.rawProperties)
    .filter(([name]) => !isGridPropertyName(name))
    .map(([name, value]) => el('property', { name }, secretName(name) || secrets.has(value) ? secret(value) : value));
  return [...grid, ...others];
}

const port = (p: PortConfig): Out => el('port', { 'auto-increment': p.autoIncrement, 'port-count': p.portCount }, p.port);

const ssl = (s: SslConfig): Out =>
  el('ssl', { enabled: s.enabled, 'key-file': s.keyFile, 'cert-file': s.certFile, 'ca-file': s.caFile, 'client-auth': s.clientAuth });

const groups = (g: EndpointGroups): Out[] => ENDPOINT_GROUPS.map((name) => el('endpoint-group', { name, enabled: g[name] }));

function network(c: Config): Out {
  const n = c.network;
  const t = n.join.tcpIp;
  const children: Out[] = [];
  if (n.publicAddress !== null) children.push(el('public-address', {}, n.publicAddress));
  children.push(
    port(n.port),
    el('interfaces', { enabled: n.interfaces.enabled }, n.interfaces.interfaces.map((i) => el('interface', {}, i))),
    el('join', {}, [
      el('tcp-ip', { enabled: t.enabled, 'connection-timeout-seconds': t.connectionTimeoutSeconds }, [
        el('member-list', {}, t.members.map((m) => el('member', {}, m))),
      ]),
    ]),
    el('rest-api', { enabled: n.restApi.enabled }, [...groups(n.restApi.groups), el('console', { enabled: n.restApi.console.enabled })]),
    el('client-protocol', { enabled: n.clientProtocol.enabled }),
    ssl(n.ssl),
  );
  return el('network', {}, children);
}

function advancedNetwork(c: Config): Out {
  const a = c.advancedNetwork;
  const children: Out[] = [];
  if (a.memberEndpoint !== null) children.push(el('member-server-socket-endpoint-config', {}, [port(a.memberEndpoint.port)]));
  if (a.restEndpoint !== null) {
    const r = a.restEndpoint;
    children.push(el('rest-server-socket-endpoint-config', {}, [port(r.port), el('endpoint-groups', {}, groups(r.groups)), ssl(r.ssl)]));
  }
  for (const w of a.wanEndpoints) children.push(el('wan-server-socket-endpoint-config', { name: w.name }, [port(w.port)]));
  return el('advanced-network', { enabled: a.enabled }, children);
}

function map(m: MapConfig): Out {
  const children: Out[] = [
    el('backup-count', {}, m.backupCount),
    el('async-backup-count', {}, m.asyncBackupCount),
    el('time-to-live-seconds', {}, m.timeToLiveSeconds),
    el('max-idle-seconds', {}, m.maxIdleSeconds),
    el('eviction', { 'eviction-policy': m.eviction.policy, 'max-size-policy': m.eviction.maxSizePolicy, size: m.eviction.size }),
    el('merkle-tree', { enabled: m.merkleTree.enabled }, [el('depth', {}, m.merkleTree.depth)]),
    el('data-persistence', { enabled: m.dataPersistence.enabled, fsync: m.dataPersistence.fsync }),
    el('merge-policy', { 'batch-size': m.mergePolicy.batchSize }, m.mergePolicy.policy),
  ];
  const ref = m.wanReplicationRef;
  if (ref !== null) {
    children.push(
      el('wan-replication-ref', { name: ref.name }, [
        el('merge-policy-class-name', {}, ref.mergePolicy),
        el('republishing-enabled', {}, ref.republishingEnabled),
      ]),
    );
  }
  return el('map', { name: m.name }, children);
}

function queue(q: QueueConfig): Out {
  return el('queue', { name: q.name }, [
    el('max-size', {}, q.maxSize),
    el('backup-count', {}, q.backupCount),
    el('async-backup-count', {}, q.asyncBackupCount),
    el('empty-queue-ttl', {}, q.emptyQueueTtlSeconds),
    el('data-persistence', { enabled: q.dataPersistence.enabled, fsync: q.dataPersistence.fsync }),
    el('merge-policy', { 'batch-size': q.mergePolicy.batchSize }, q.mergePolicy.policy),
  ]);
}

function wan(w: Config['wanReplications'][number]): Out {
  return el(
    'wan-replication',
    { name: w.name },
    w.publishers.map((p) =>
      el('batch-publisher', {}, [
        el('cluster-name', {}, p.clusterName),
        el('publisher-id', {}, p.publisherId),
        el('target-endpoints', {}, p.targetEndpoints.join(',')),
        el('batch-size', {}, p.batchSize),
        el('batch-max-delay-millis', {}, p.batchMaxDelayMs),
        el('response-timeout-millis', {}, p.responseTimeoutMs),
        el('queue-capacity', {}, p.queueCapacity),
        el('queue-full-behavior', {}, p.queueFullBehavior),
        el('acknowledge-type', {}, p.acknowledgeType),
        el('initial-publisher-state', {}, p.initialPublisherState),
        el('sync', {}, [el('consistency-check-strategy', {}, p.consistencyCheckStrategy)]),
      ]),
    ),
  );
}

function persistence(c: Config): Out {
  const p = c.persistence;
  return el('persistence', { enabled: p.enabled }, [
    el('base-dir', {}, p.baseDir),
    el('backup-dir', {}, p.backupDir),
    el('validation-timeout-seconds', {}, p.validationTimeoutSeconds),
    el('data-load-timeout-seconds', {}, p.dataLoadTimeoutSeconds),
    el('cluster-data-recovery-policy', {}, p.clusterDataRecoveryPolicy),
    el('auto-remove-stale-data', {}, p.autoRemoveStaleData),
  ]);
}

function cpSubsystem(c: Config): Out {
  const cp = c.cpSubsystem;
  const r = cp.raftAlgorithm;
  return el('cp-subsystem', {}, [
    el('cp-member-count', {}, cp.cpMemberCount),
    el('group-size', {}, cp.groupSize),
    el('session-time-to-live-seconds', {}, cp.sessionTimeToLiveSeconds),
    el('session-heartbeat-interval-seconds', {}, cp.sessionHeartbeatIntervalSeconds),
    el('missing-cp-member-auto-removal-seconds', {}, cp.missingCpMemberAutoRemovalSeconds),
    el('fail-on-indeterminate-operation-state', {}, cp.failOnIndeterminateOperationState),
    el('persistence-enabled', {}, cp.persistenceEnabled),
    el('base-dir', {}, cp.baseDir),
    el('data-load-timeout-seconds', {}, cp.dataLoadTimeoutSeconds),
    el('raft-algorithm', {}, [
      el('leader-election-timeout-in-millis', {}, r.leaderElectionTimeoutInMillis),
      el('leader-heartbeat-period-in-millis', {}, r.leaderHeartbeatPeriodInMillis),
      el('max-missed-leader-heartbeat-count', {}, r.maxMissedLeaderHeartbeatCount),
      el('append-request-max-entry-count', {}, r.appendRequestMaxEntryCount),
      el('commit-index-advance-count-to-snapshot', {}, r.commitIndexAdvanceCountToSnapshot),
      el('uncommitted-entry-count-to-reject-new-appends', {}, r.uncommittedEntryCountToRejectNewAppends),
      el('append-request-backoff-timeout-in-millis', {}, r.appendRequestBackoffTimeoutInMillis),
    ]),
    el('semaphores', {}, cp.semaphores.map((x) => el('semaphore', { name: x.name }, [el('jdk-compatible', {}, x.jdkCompatible), el('initial-permits', {}, x.initialPermits)]))),
    el('locks', {}, cp.locks.map((x) => el('fenced-lock', { name: x.name }, [el('lock-acquire-limit', {}, x.lockAcquireLimit)]))),
  ]);
}

function security(c: Config, secret: (value: string) => string): Out {
  const s = c.security;
  const realms = s.realms.map((r) => {
    const children: Out[] = [
      el('authentication', {}, [el('simple', {}, r.users.map((u) => el('user', { username: u.username, password: secret(u.password), roles: u.role })))]),
    ];
    if (r.identity !== null) {
      children.push(el('identity', {}, [el('username-password', { username: r.identity.username, password: secret(r.identity.password) })]));
    }
    return el('realm', { name: r.name }, children);
  });
  const children: Out[] = [el('realms', {}, realms)];
  if (s.memberAuthenticationRealm !== null) children.push(el('member-authentication', { realm: s.memberAuthenticationRealm }));
  return el('security', { enabled: s.enabled }, children);
}

function render(node: Out, indent: string): string {
  const attrs = Object.entries(node.attrs)
    .map(([k, v]) => ` ${k}="${escapeAttribute(String(v))}"`)
    .join('');
  if (typeof node.body === 'string') {
    return node.body === '' ? `${indent}<${node.name}${attrs}/>\n` : `${indent}<${node.name}${attrs}>${escapeText(node.body)}</${node.name}>\n`;
  }
  const body = node.body as readonly Out[];
  if (body.length === 0) return `${indent}<${node.name}${attrs}/>\n`;
  return `${indent}<${node.name}${attrs}>\n${body.map((c) => render(c, `${indent}  `)).join('')}${indent}</${node.name}>\n`;
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Tabs and newlines become references: a parser would otherwise turn them into spaces. */
function escapeAttribute(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}
