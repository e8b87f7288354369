// The cluster's event timeline as the parts that make events see it (spec/console.md "Timeline";
// the ring that keeps them and the REST view that merges them live in src/console/). A part records
// what happened to the cluster, in a sentence an operator reads, through an EventSink the
// composition root passes in; the parts never import the console.

/** What happened (spec/console.md, `GET /grid/rest/events`). */
export type EventKind =
  | 'member-joined'
  | 'member-left'
  | 'member-suspected'
  | 'master-changed'
  | 'state-changed'
  | 'migration-started'
  | 'migration-finished'
  | 'split-brain-merge'
  | 'wan-sync'
  | 'wan-consistency-check'
  | 'recovery'
  | 'cp-leader-changed'
  | 'management-call'
  | 'login'
  | 'logout'
  | 'login-refused';

export const EVENT_KINDS: readonly EventKind[] = [
  'member-joined',
  'member-left',
  'member-suspected',
  'master-changed',
  'state-changed',
  'migration-started',
  'migration-finished',
  'split-brain-merge',
  'wan-sync',
  'wan-consistency-check',
  'recovery',
  'cp-leader-changed',
  'management-call',
  'login',
  'logout',
  'login-refused',
];

export interface EventDetails {
  /** The member it happened to (a UUID); default the member recording it. */
  readonly member?: string;
  /** Who asked for it (a user and address, for management calls and logins). */
  readonly actor?: string;
}

export interface EventSink {
  record(kind: EventKind, message: string, details?: EventDetails): void;
}

/** Records nothing (a part used without a timeline: unit tests, tools). */
export const NO_EVENTS: EventSink = { record: () => {} };
