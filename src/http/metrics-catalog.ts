// Every metric the member exposes, in one list: its Prometheus name, type, labels and meaning, and
// which figures of a MetricsSnapshot it reads. `METRIC_FAMILIES` is what docs/operations.md
// ("Metrics") lists; tests/unit/metrics-catalog.test.ts keeps the two in step, and the integration
// test checks that every scalar JSON key of a real member is read by some family here.
// The JSON form of the metrics call is built here too, so that both forms come from one snapshot.
import type { ClusterState, NodeState } from '../member/member-api.js';
import type { CpGroupFigures, MetricsSnapshot, WanFigures } from '../member/metrics-snapshot.js';
import { CP_LATENCY_BOUNDS_SECONDS } from '../cp/call-stats.js';
import { encodeExposition, type Family, type HistogramSample, type Labels, type MetricType, type ScalarSample } from './prometheus.js';

const NODE_STATES: readonly NodeState[] = ['STARTING', 'ACTIVE', 'PASSIVE', 'SHUTTING_DOWN', 'SHUT_DOWN'];
const CLUSTER_STATES: readonly ClusterState[] = ['ACTIVE', 'NO_MIGRATION', 'FROZEN', 'PASSIVE', 'IN_TRANSITION'];

/** The label every sample carries: this member's address. */
export const MEMBER_LABEL = 'member';

export interface FamilySpec {
  readonly name: string;
  readonly type: MetricType;
  /** Labels besides `member` (and `le` of histogram buckets). */
  readonly labels: readonly string[];
  readonly help: string;
  /** Scalar JSON keys (snapshot.flat) this family reports. */
  readonly jsonKeys: readonly string[];
  readonly read: (s: MetricsSnapshot) => readonly ScalarSample[] | readonly HistogramSample[];
}

const NO_LABELS: Labels = [];

/** One unlabelled sample from one JSON key (absent key: no sample). */
function scalar(name: string, type: 'counter' | 'gauge', key: string, help: string): FamilySpec {
  return {
    name,
    type,
    labels: [],
    help,
    jsonKeys: [key],
    read: (s) => (s.flat[key] === undefined ? [] : [{ labels: NO_LABELS, value: s.flat[key] as number }]),
  };
}

const counter = (name: string, key: string, help: string): FamilySpec => scalar(name, 'counter', key, help);
const gauge = (name: string, key: string, help: string): FamilySpec => scalar(name, 'gauge', key, help);

/** A figure per WAN publisher, labelled `replication` and `publisher`. */
function wanFamily(type: 'gauge' | 'counter', name: string, read: (w: WanFigures) => number, help: string): FamilySpec {
  return {
    name,
    type,
    labels: ['replication', 'publisher'],
    help,
    jsonKeys: [],
    read: (s) => s.wan.map((w) => ({ labels: [['replication', w.replication], ['publisher', w.publisher]] as Labels, value: read(w) })),
  };
}
const wanGauge = (name: string, read: (w: WanFigures) => number, help: string): FamilySpec => wanFamily('gauge', name, read, help);
const wanCounter = (name: string, read: (w: WanFigures) => number, help: string): FamilySpec => wanFamily('counter', name, read, help);

/** A figure per CP group this member holds a replica of, labelled `group`. */
function cpFamily(type: 'gauge' | 'counter', name: string, read: (g: CpGroupFigures) => number, help: string): FamilySpec {
  return { name, type, labels: ['group'], help, jsonKeys: [], read: (s) => s.cp.map((g) => ({ labels: [['group', g.group]] as Labels, value: read(g) })) };
}
const cpGauge = (name: string, read: (g: CpGroupFigures) => number, help: string): FamilySpec => cpFamily('gauge', name, read, help);
const cpCounter = (name: string, read: (g: CpGroupFigures) => number, help: string): FamilySpec => cpFamily('counter', name, read, help);

/** A gauge with a `state` label: 1 for the current state, 0 for the others. */
function stateGauge(name: string, states: readonly string[], current: (s: MetricsSnapshot) => string, help: string): FamilySpec {
  return {
    name,
    type: 'gauge',
    labels: ['state'],
    help,
    jsonKeys: [],
    read: (s) => states.map((state) => ({ labels: [['state', state]] as Labels, value: current(s) === state ? 1 : 0 })),
  };
}

const REFUSAL_REASONS: readonly [string, string][] = [
  ['unknown_protocol', 'connectionsRefusedUnknown'],
  ['tls_on_plain_port', 'connectionsRefusedTls'],
  ['sniff_timeout', 'connectionsRefusedTimeout'],
  ['protocol_off', 'connectionsRefusedProtocolOff'],
];

export const METRIC_FAMILIES: readonly FamilySpec[] = [
  // ── data ──────────────────────────────────────────────────────────────────────────────────────
  {
    name: 'grid_map_entries',
    type: 'gauge',
    labels: ['map', 'replica'],
    help: 'Entries of a map held on this member: replica="owned" in partitions it owns, replica="backup" in partitions another member owns (backups, and copies not yet dropped after a migration). Expired entries count until the sweep removes them.',
    jsonKeys: ['mapEntries', 'mapEntriesBackup'],
    read: (s) =>
      s.maps.flatMap((m) => [
        { labels: [['map', m.name], ['replica', 'owned']] as Labels, value: m.owned },
        { labels: [['map', m.name], ['replica', 'backup']] as Labels, value: m.backup },
      ]),
  },
  gauge('grid_maps', 'maps', 'Maps created on this member (a map is created where it is first written, as owner or backup, and kept).'),
  {
    name: 'grid_queue_items',
    type: 'gauge',
    labels: ['queue', 'replica'],
    help: 'Items of a queue held on this member: replica="owned" when it owns the queue\'s partition, replica="backup" otherwise.',
    jsonKeys: ['queueItems', 'queueItemsBackup'],
    read: (s) =>
      s.queues.flatMap((q) => [
        { labels: [['queue', q.name], ['replica', 'owned']] as Labels, value: q.owned },
        { labels: [['queue', q.name], ['replica', 'backup']] as Labels, value: q.backup },
      ]),
  },
  {
    name: 'grid_queue_waiting_polls',
    type: 'gauge',
    labels: ['queue'],
    help: 'Polls waiting for an item of a queue on this member (the owner of the queue holds them, for local and forwarded polls).',
    jsonKeys: [],
    read: (s) => s.queues.map((q) => ({ labels: [['queue', q.name]] as Labels, value: q.waitingPolls })),
  },
  gauge('grid_queues', 'queues', 'Queues held on this member (owned or backup copies); an empty queue nobody waits on is dropped.'),
  gauge('grid_waiting_polls', 'waitingPolls', 'Polls waiting on this member, all queues together.'),
  gauge('grid_partitions_owned', 'ownedPartitions', 'Partitions this member owns in the partition table it holds.'),

  // ── cluster ───────────────────────────────────────────────────────────────────────────────────
  gauge('grid_cluster_size', 'clusterSize', 'Members in the member list this member holds (0 before it has joined a cluster).'),
  gauge('grid_member_list_version', 'membersVersion', 'Version of the member list this member holds.'),
  gauge('grid_partition_table_version', 'partitionTableVersion', 'Version of the partition table this member holds.'),
  gauge('grid_migration_queue_size', 'migrationQueueSize', 'Migrations planned and not yet done, as the master last published.'),
  gauge('grid_migrations_active', 'migrationsActive', 'Migrations this member takes part in now, as target or source.'),
  gauge('grid_backup_acks_pending', 'pendingBackupAcks', 'Writes on this member waiting for their backups to acknowledge.'),
  gauge('grid_cluster_safe', 'clusterSafe', '1 when this member is cluster-safe (GET /grid/health/cluster-safe answers 200), else 0.'),
  stateGauge('grid_node_state', NODE_STATES, (s) => s.nodeState, 'State of this member: 1 for the current state, 0 for the others.'),
  stateGauge('grid_cluster_state', CLUSTER_STATES, (s) => s.clusterState, 'State of the cluster as this member sees it: 1 for the current state, 0 for the others.'),

  counter('grid_replication_backups_sent_total', 'replicationBackupsSent', 'Backup operations sent by this member as owner.'),
  counter('grid_replication_backup_ack_timeouts_total', 'replicationBackupAckTimeouts', 'Writes whose backups did not acknowledge in time.'),
  counter('grid_replication_resyncs_requested_total', 'replicationResyncsRequested', 'Resynchronisations of a backup replica requested by this member.'),
  counter('grid_replication_transfers_sent_total', 'replicationTransfersSent', 'Partition copies sent by this member (migrations, resyncs).'),
  counter('grid_replication_transfers_received_total', 'replicationTransfersReceived', 'Partition copies received and installed by this member.'),
  counter('grid_replication_transfers_failed_total', 'replicationTransfersFailed', 'Partition copies sent by this member that were not acknowledged.'),
  counter('grid_replication_unconfirmed_dropped_total', 'replicationUnconfirmedDropped', 'Backup operations not kept for a later resend because too many were waiting for confirmation.'),
  counter('grid_replication_buffered_dropped_total', 'replicationBufferedDropped', 'Buffered backup writes dropped because the copy that followed them was of a later life of the partition, below their version.'),
  counter('grid_migrations_started_total', 'migrationMigrationsStarted', 'Partition migrations started (counted on the master).'),
  counter('grid_migrations_committed_total', 'migrationMigrationsCommitted', 'Partition migrations committed (counted on the master).'),
  counter('grid_migrations_failed_total', 'migrationMigrationsFailed', 'Partition migrations that failed or timed out (counted on the master).'),
  counter('grid_promotions_total', 'migrationPromotions', 'Partitions whose replicas moved up after a member left, a backup becoming owner where the owner left (counted on the master).'),
  counter('grid_invocations_forwarded_total', 'invocationForwarded', 'Data calls this member forwarded to the owner of their partition.'),
  counter('grid_invocation_retries_total', 'invocationRetries', 'Retries of data calls (owner moved, unreachable or not ready).'),
  counter('grid_invocation_timeouts_total', 'invocationTimeouts', 'Data calls that timed out.'),
  counter('grid_invocations_indeterminate_total', 'invocationIndeterminate', 'Forwarded queue calls that ended with an unknown outcome (503 ERR_CLUSTER_INDETERMINATE: no answer in time, or the owner left).'),
  counter('grid_membership_views_published_total', 'membershipViewsPublished', 'Member-list views published by this member as master.'),
  counter('grid_membership_members_removed_total', 'membershipMembersRemoved', 'Members removed from the list by this member as master.'),
  counter('grid_membership_claims_total', 'membershipClaims', 'Mastership claims made by this member.'),
  counter('grid_membership_merges_total', 'membershipMerges', 'Split-brain merges this member went through.'),
  counter('grid_membership_clusters_founded_total', 'membershipClustersFounded', 'Clusters this member founded as the first member.'),
  counter('grid_membership_restarts_detected_total', 'membershipRestartsDetected', 'Restarted members (a new process at a listed address) detected by this member.'),
  counter('grid_membership_left_cluster_total', 'membershipLeftCluster', 'Times this member left its cluster (removed by the master, or merging into another).'),
  counter('grid_membership_refusal_suspicions_total', 'membershipRefusalSuspicions', 'Members this member suspected because their reconnects were refused (grid.connection.monitor.max.faults).'),
  counter('grid_membership_stalls_total', 'membershipStalls', 'Times this member noticed it had stood still for more than a heartbeat interval (GC pause, SIGSTOP, a starved host); the silence of others during a stall is not held against them.'),
  counter('grid_membership_stale_probe_answers_total', 'membershipStaleProbeAnswers', 'Split-brain probe answers this master ignored: to an earlier probe of that address, or back later than half a probe interval.'),
  counter('grid_membership_unasked_views_total', 'membershipUnaskedViews', 'Views naming this member that it did not adopt while joining: their master had not answered its join request since it left a cluster.'),
  counter('grid_merge_replayed_total', 'mergeReplayed', 'Entries, items and polls this member handed back to the cluster after a split, through a call that succeeded (docs/cluster.md, "Handing data back").'),
  counter('grid_merge_replay_failed_total', 'mergeReplayFailed', 'Hand-backs whose call failed for good (a refusal other than 503).'),
  counter('grid_merge_replay_skipped_total', 'mergeReplaySkipped', 'Removals and clears made while cut off, which are not merged.'),
  counter('grid_merge_replay_stored_total', 'mergeReplayStored', 'Hand-backs stored: the merge policy took the merging entry, or the item was appended.'),
  counter('grid_merge_replay_kept_total', 'mergeReplayKept', 'Hand-backs not stored: the cluster\'s entry stayed, or the queue already held the item or was full.'),
  counter('grid_merge_replay_discarded_total', 'mergeReplayDiscarded', 'Entries dropped by DiscardMergePolicy, never sent.'),
  counter('grid_merge_replay_retried_total', 'mergeReplayRetried', 'Hand-backs whose call failed transiently (owner unreachable in time, 503) and went again.'),
  gauge('grid_persistence_log_bytes', 'persistenceLogBytes', 'Bytes of this member\'s persistence log (every segment; 0 without persistence).'),
  gauge('grid_persistence_log_segments', 'persistenceLogSegments', 'Segments of this member\'s persistence log.'),
  gauge('grid_persistence_recovering', 'persistenceRecovering', '1 while this member reads its log or waits in a whole-cluster recovery, else 0.'),
  counter('grid_persistence_records_written_total', 'persistenceRecordsWritten', 'Log records appended by this member (owner and backup changes of persistent maps and queues).'),
  counter('grid_persistence_write_failures_total', 'persistenceWriteFailures', 'Log records that could not be written or synced (their operation got an error).'),
  counter('grid_persistence_compaction_passes_total', 'persistenceCompactionPasses', 'Compaction passes started over this member\'s log.'),
  counter('grid_persistence_compaction_runs_total', 'persistenceCompactionRuns', 'Runs of segments rewritten by compaction.'),
  counter('grid_persistence_compaction_reclaimed_bytes_total', 'persistenceCompactionReclaimedBytes', 'Log bytes freed by compaction.'),

  // ── HTTP ──────────────────────────────────────────────────────────────────────────────────────
  {
    name: 'grid_http_requests_total',
    type: 'counter',
    labels: ['kind', 'status_class'],
    help: 'REST requests answered, by endpoint kind and status class (2xx, 3xx, 4xx, 5xx).',
    jsonKeys: ['status2xx', 'status4xx', 'status5xx'],
    read: (s) =>
      s.runtime.requestKinds.flatMap((k) =>
        s.runtime.statusClasses.map((cls, i) => ({ labels: [['kind', k.kind], ['status_class', cls]] as Labels, value: k.byStatusClass[i] ?? 0 })),
      ),
  },
  {
    name: 'grid_http_request_duration_seconds',
    type: 'histogram',
    labels: ['kind'],
    help: 'Time from a REST request\'s arrival to its answer being handed to the socket, by endpoint kind (a waiting poll counts its wait).',
    jsonKeys: [],
    read: (s) =>
      s.runtime.requestKinds.map((k) => ({
        labels: [['kind', k.kind]] as Labels,
        bounds: s.runtime.latencyBoundsSeconds,
        cumulative: k.cumulativeBuckets,
        sum: k.sumSeconds,
        count: k.count,
      })),
  },
  counter('grid_http_requests_received_total', 'requests', 'REST requests received (answered or not yet, malformed ones excluded).'),
  counter('grid_http_client_errors_total', 'httpClientErrors', 'Malformed HTTP requests (answered 400, 408 or 431 and closed).'),
  gauge('grid_http_connections', 'httpConnections', 'Open HTTP connections to this member.'),
  counter('grid_connections_accepted_total', 'connectionsAccepted', 'Connections accepted on this member\'s ports (before the protocol is known).'),
  {
    name: 'grid_connections_refused_total',
    type: 'counter',
    labels: ['reason'],
    help: 'Connections closed before any protocol was served: unknown_protocol, tls_on_plain_port, sniff_timeout (nothing sent in time), protocol_off (a protocol this port does not serve).',
    jsonKeys: ['connectionsRefused', ...REFUSAL_REASONS.map(([, key]) => key)],
    read: (s) =>
      REFUSAL_REASONS.filter(([, key]) => s.flat[key] !== undefined).map(([reason, key]) => ({ labels: [['reason', reason]] as Labels, value: s.flat[key] as number })),
  },
  counter('grid_tls_handshakes_failed_total', 'tlsHandshakesFailed', 'TLS handshakes that failed on a TLS port.'),

  // ── client protocol ───────────────────────────────────────────────────────────────────────────
  gauge('grid_client_connections', 'clientConnections', 'Client-protocol connections of this member (authenticated or not).'),
  counter('grid_client_authentications_total', 'clientAuthentications', 'Client-protocol authentications that succeeded.'),
  counter('grid_client_authentications_refused_total', 'clientAuthenticationsRefused', 'Client-protocol authentications refused (cluster name, credentials, serialization version, not joined).'),
  counter('grid_client_calls_total', 'clientCalls', 'Client-protocol messages after authentication, every service.'),
  counter('grid_client_map_calls_total', 'clientCallsMap', 'Client-protocol map calls.'),
  counter('grid_client_queue_calls_total', 'clientCallsQueue', 'Client-protocol queue calls.'),
  counter('grid_client_other_calls_total', 'clientCallsClient', 'Client-protocol calls of the client service (ping, statistics, proxies, listeners) and of services not served.'),
  counter('grid_client_errors_total', 'clientErrors', 'Client-protocol calls answered with an error response.'),
  counter('grid_client_connections_closed_total', 'clientConnectionsClosed', 'Client-protocol connections the member closed: bad framing, idle, unauthenticated, over the limit.'),

  // ── member protocol ───────────────────────────────────────────────────────────────────────────
  gauge('grid_member_connections', 'memberConnections', 'Member-protocol connections of this member, handshaking ones included.'),
  gauge('grid_member_bytes_queued', 'memberBytesQueued', 'Bytes waiting to be written to other members.'),
  counter('grid_member_dials_total', 'memberDials', 'Member-protocol connections this member dialled.'),
  counter('grid_member_dials_failed_total', 'memberDialsFailed', 'Dials to other members that failed.'),
  counter('grid_member_handshakes_accepted_total', 'memberHandshakesAccepted', 'Member-protocol handshakes that succeeded.'),
  counter('grid_member_handshakes_refused_total', 'memberHandshakesRefused', 'Inbound member-protocol handshakes this member refused.'),
  counter('grid_member_handshakes_refused_by_peer_total', 'memberHandshakesRefusedByPeer', 'Handshakes of this member that a peer refused.'),
  counter('grid_member_frames_rejected_total', 'memberFramesRejected', 'Malformed or oversized member-protocol frames; each closed its connection.'),
  counter('grid_member_messages_sent_total', 'memberMessagesSent', 'Member-protocol messages written.'),
  counter('grid_member_messages_received_total', 'memberMessagesReceived', 'Member-protocol messages received.'),
  counter('grid_member_sends_dropped_total', 'memberSendsDropped', 'Member-protocol messages refused at send (write queue full, address backing off, frame too large).'),
  counter('grid_member_queued_dropped_total', 'memberQueuedDropped', 'Member-protocol messages accepted but lost because their connection closed first.'),
  counter('grid_member_duplicates_retired_total', 'memberDuplicatesRetired', 'Member-protocol connections retired because another one to the same member was kept.'),

  // ── WAN ───────────────────────────────────────────────────────────────────────────────────────
  counter('grid_cp_calls_total', 'cpCalls', 'CP calls this member received (REST and clients) and routed to their group\'s leader, plus the METADATA calls it made itself.'),
  counter('grid_cp_call_failures_total', 'cpCallFailures', 'CP calls that ended without an answer: no leader within grid.cp.call.timeout.millis, an indeterminate outcome, an unknown group.'),
  counter('grid_cp_raft_messages_received_total', 'cpRaftMessagesIn', 'Raft messages this member received for the CP groups it holds.'),
  counter('grid_cp_raft_messages_sent_total', 'cpRaftMessagesOut', 'Raft messages this member sent for the CP groups it holds.'),
  {
    name: 'grid_cp_call_duration_seconds',
    type: 'histogram',
    labels: ['structure', 'outcome'],
    help: 'CP calls routed through this member, from its receiving them to their outcome, by structure and outcome (a latch await counts its wait).',
    jsonKeys: [],
    read: (s) =>
      s.cpCalls.map((c) => ({
        labels: [['structure', c.structure], ['outcome', c.outcome]] as Labels,
        bounds: CP_LATENCY_BOUNDS_SECONDS,
        cumulative: c.cumulativeBuckets,
        sum: c.sumSeconds,
        count: c.count,
      })),
  },
  {
    name: 'grid_cp_group_role',
    type: 'gauge',
    labels: ['group', 'role'],
    help: 'Role of this member in a CP group it holds: 1 for the current role, 0 for the others.',
    jsonKeys: [],
    read: (s) => s.cp.flatMap((g) => (['leader', 'follower', 'candidate'] as const).map((r) => ({ labels: [['group', g.group], ['role', r]] as Labels, value: g.role === r ? 1 : 0 }))),
  },
  cpGauge('grid_cp_group_term', (g) => g.term, 'The Raft term of this member\'s replica of the group.'),
  cpGauge('grid_cp_group_commit_index', (g) => g.commitIndex, 'The highest log index this replica knows to be committed.'),
  cpGauge('grid_cp_group_applied_index', (g) => g.appliedIndex, 'The highest log index this replica applied to its state machine.'),
  cpGauge('grid_cp_group_log_entries', (g) => g.logEntries, 'Log entries this replica holds after its snapshot.'),
  cpGauge('grid_cp_group_log_bytes', (g) => g.logBytes, 'Command bytes of the log entries this replica holds.'),
  cpGauge('grid_cp_group_snapshot_index', (g) => g.snapshotIndex, 'The log index of this replica\'s latest snapshot.'),
  cpCounter('grid_cp_group_leader_changes_total', (g) => g.leaderChanges, 'Leaders this replica has seen come in.'),
  cpCounter('grid_cp_group_elections_started_total', (g) => g.electionsStarted, 'Elections (and pre-votes) this replica started.'),
  cpCounter('grid_cp_group_append_batches_total', (g) => g.appendBatches, 'Append messages this replica sent as leader.'),
  cpCounter('grid_cp_group_append_entries_total', (g) => g.appendEntries, 'Log entries this replica sent in appends as leader.'),
  cpCounter('grid_cp_group_refused_writes_total', (g) => g.refusedWrites, 'Writes this replica refused: not the leader, back-pressure, a membership change or transfer under way.'),
  cpGauge('grid_cp_group_sessions', (g) => g.sessions, 'CP sessions open in the group (as this replica has applied them).'),
  cpGauge('grid_cp_group_waiting_calls', (g) => g.waitingCalls, 'Calls waiting in the group\'s state machine (latch awaits).'),
  wanGauge('grid_wan_queued_events', (w) => w.queued, 'Write events queued for a WAN publisher in partitions this member owns (queue-capacity bounds it).'),
  wanGauge('grid_wan_backup_queued_events', (w) => w.backupQueued, 'Write events held in this member\'s backup WAN queues (partitions another member owns).'),
  wanCounter('grid_wan_sent_events_total', (w) => w.sent, 'Events and sync entries sent to the target by this member, resends included.'),
  wanCounter('grid_wan_acked_events_total', (w) => w.acked, 'Events and sync entries the target acknowledged.'),
  wanCounter('grid_wan_dropped_events_total', (w) => w.dropped, 'Events not queued because the queue was full (DISCARD_AFTER_MUTATION, or a publisher not throwing in its state).'),
  wanCounter('grid_wan_resent_events_total', (w) => w.resent, 'Events sent again after a timeout, a refusal or a lost connection.'),
  wanGauge('grid_wan_lag_seconds', (w) => w.lagMs / 1000, 'Age of the oldest event queued on this member for the publisher, 0 when its queues are empty.'),
  wanCounter('grid_wan_sent_bytes_total', (w) => w.bytesSent, 'Member-protocol frame bytes this member sent to the publisher\'s target cluster (batches, Merkle reads).'),
  wanCounter('grid_wan_received_bytes_total', (w) => w.bytesReceived, 'Member-protocol frame bytes this member received from the publisher\'s target cluster (acknowledgements, Merkle answers).'),
  wanGauge('grid_wan_syncs_running', (w) => w.syncsRunning, 'Syncs and consistency checks of the publisher that have not ended, as this member knows them.'),
  {
    name: 'grid_wan_publisher_state',
    type: 'gauge',
    labels: ['replication', 'publisher', 'state'],
    help: 'State of a WAN publisher on this member: 1 for the current state, 0 for the others.',
    jsonKeys: [],
    read: (s) => s.wan.flatMap((w) => ['REPLICATING', 'PAUSED', 'STOPPED'].map((state) => ({ labels: [['replication', w.replication], ['publisher', w.publisher], ['state', state]] as Labels, value: w.state === state ? 1 : 0 }))),
  },

  // ── process ───────────────────────────────────────────────────────────────────────────────────
  gauge('grid_process_heap_used_bytes', 'heapUsedBytes', 'V8 heap in use.'),
  gauge('grid_process_heap_total_bytes', 'heapTotalBytes', 'V8 heap reserved.'),
  gauge('grid_process_resident_memory_bytes', 'residentMemoryBytes', 'Resident set size of the process.'),
  gauge('grid_process_external_memory_bytes', 'externalMemoryBytes', 'Memory of objects outside the V8 heap (Buffers), as Node.js reports it.'),
  gauge('grid_event_loop_delay_p50_seconds', 'eventLoopDelayP50Seconds', 'Median event-loop delay over the last completed 10-second window.'),
  gauge('grid_event_loop_delay_p99_seconds', 'eventLoopDelayP99Seconds', '99th percentile of the event-loop delay over the last completed 10-second window.'),
  gauge('grid_event_loop_delay_max_seconds', 'eventLoopDelayMaxSeconds', 'Longest event-loop delay over the last completed 10-second window.'),
  {
    name: 'grid_gc_collections_total',
    type: 'counter',
    labels: ['kind'],
    help: 'Garbage collections by kind (major, minor, incremental, weakcb).',
    jsonKeys: [],
    read: (s) => s.runtime.gc.map((g) => ({ labels: [['kind', g.kind]] as Labels, value: g.count })),
  },
  {
    name: 'grid_gc_pause_seconds_total',
    type: 'counter',
    labels: ['kind'],
    help: 'Time spent in garbage collection by kind (major, minor, incremental, weakcb).',
    jsonKeys: [],
    read: (s) => s.runtime.gc.map((g) => ({ labels: [['kind', g.kind]] as Labels, value: g.pauseSeconds })),
  },
];

/** The families of one snapshot, ready for the encoder. */
export function metricFamilies(s: MetricsSnapshot): Family[] {
  return METRIC_FAMILIES.map((spec): Family => {
    const samples = spec.read(s);
    return spec.type === 'histogram'
      ? { name: spec.name, help: spec.help, type: 'histogram', samples: samples as readonly HistogramSample[] }
      : { name: spec.name, help: spec.help, type: spec.type, samples: samples as readonly ScalarSample[] };
  });
}

/** The Prometheus text (0.0.4) of one snapshot; every sample carries `member`. */
export function prometheusText(s: MetricsSnapshot): string {
  return encodeExposition(metricFamilies(s), [[MEMBER_LABEL, s.member]]);
}

/**
 * The JSON form: every scalar figure at the top level under its long-standing key (numbers), then
 * the states and the per-structure figures as nested objects.
 */
export function metricsJson(s: MetricsSnapshot): Record<string, unknown> {
  const classes = s.runtime.statusClasses;
  return {
    ...s.flat,
    nodeState: s.nodeState,
    clusterState: s.clusterState,
    // fromEntries defines own properties, so a map named `__proto__` is reported like any other.
    perMap: Object.fromEntries(s.maps.map((m) => [m.name, { owned: m.owned, backup: m.backup }])),
    perQueue: Object.fromEntries(s.queues.map((q) => [q.name, { owned: q.owned, backup: q.backup, waitingPolls: q.waitingPolls }])),
    requestsByKind: Object.fromEntries(
      s.runtime.requestKinds.map((k) => [k.kind, { ...Object.fromEntries(classes.map((c, i) => [c, k.byStatusClass[i] ?? 0])), count: k.count, sumSeconds: k.sumSeconds }]),
    ),
    gc: Object.fromEntries(s.runtime.gc.map((g) => [g.kind, { count: g.count, pauseSeconds: g.pauseSeconds }])),
    cpGroups: Object.fromEntries(s.cp.map((g) => [g.group, { ...g, group: undefined }])),
    cpCallsByStructure: Object.fromEntries(s.cpCalls.map((c) => [`${c.structure}/${c.outcome}`, { count: c.count, sumSeconds: c.sumSeconds }])),
    wan: Object.fromEntries(
      s.wan.map((w) => [
        `${w.replication}/${w.publisher}`,
        { state: w.state, queued: w.queued, backupQueued: w.backupQueued, sent: w.sent, acked: w.acked, dropped: w.dropped, resent: w.resent, lagMs: w.lagMs, syncsRunning: w.syncsRunning, bytesSent: w.bytesSent, bytesReceived: w.bytesReceived },
      ]),
    ),
  };
}
