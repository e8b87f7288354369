// The commands of grid-admin, one table entry each: its synopsis and help, its own switches, how
// many positional arguments it takes, the REST call it makes (rest.md §5-§7) and how a successful
// answer reads as text. No I/O: a command turns arguments into an AdminCall, and the answer is
// interpreted by answer.ts.
//
// Extension point: WAN commands (rest.md §8: `wan pause-publisher REPLICATION PUBLISHER`, `wan sync
// ...`, `wan add-config FILE`) and persistence commands (`force-start`, `partial-start`, `backup`,
// `backup-interrupt`) are further entries of COMMANDS, written like the ones below: `plan` returns
// the POST with its positional parameters after the credentials (auth 'body'; WAN bodies keep empty
// positions), `render` reads the `message` of the member's answer. The parser, help, credentials,
// transport and exit statuses need no change. A command that reads a file (a WAN configuration)
// should name it in a field of AdminCall read by the entry point, as --password-file is, so that
// this module stays free of I/O.
import { suggest } from '../config/did-you-mean.js';
import { LOG_LEVELS } from '../util/logger.js';
import { UsageError } from './outcome.js';

/** A switch of one command (`shutdown --cluster`). Commands take no valued options yet. */
export interface SwitchSpec {
  readonly name: string;
  readonly help: string;
}

/** What a successful answer holds, for `render`. */
export interface AnswerView {
  readonly status: number;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  readonly value: unknown;
  readonly body: string;
}

/**
 * How the call carries credentials: 'body' = POST with `p1&p2&params` (rest.md §7); 'basic-with-user'
 * = a GET that requires credentials when security is on, sent in `Authorization: Basic` only when a
 * user is given (the cluster name is not a credential of GETs); 'none' = never.
 */
export type AuthMode = 'body' | 'basic-with-user' | 'none';

export interface AdminCall {
  readonly method: 'GET' | 'POST';
  /** Path and nothing else; every segment is a fixed literal or percent-encoded (a CP group name, a UUID). */
  readonly path: string;
  readonly auth: AuthMode;
  /** Parameters after the credentials (only with auth 'body'), not yet encoded. */
  readonly params: readonly string[];
  /** Text for stdout when the call succeeded; throws AnswerShapeError on an answer it cannot read. */
  readonly render: (answer: AnswerView) => string;
  /** Explanations of statuses that carry no message (503 of `health ready` = not ready). */
  readonly statusMessages?: Readonly<Record<number, string>>;
}

export interface CommandInput {
  readonly positionals: readonly string[];
  readonly switches: ReadonlySet<string>;
}

export interface CommandSpec {
  readonly name: string;
  /** Arguments after the name, for usage lines: `<active|no_migration|frozen|passive>`. */
  readonly synopsis: string;
  readonly summary: string;
  /** Paragraphs of the command's --help. */
  readonly details: string;
  readonly switches: readonly SwitchSpec[];
  readonly positionalsMin: number;
  /** Upper bound on positional arguments (finite: a limit on everything). */
  readonly positionalsMax: number;
  /** Throws UsageError for arguments the command cannot take. */
  readonly plan: (input: CommandInput) => AdminCall;
}

/** The member answered 2xx with something this command cannot read. */
export class AnswerShapeError extends Error {
  constructor(expected: string) {
    super(`expected ${expected}`);
    this.name = 'AnswerShapeError';
  }
}

function objectOf(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AnswerShapeError('a JSON object');
  return v as Record<string, unknown>;
}

function stringField(v: unknown, field: string): string {
  const f = objectOf(v)[field];
  if (typeof f !== 'string') throw new AnswerShapeError(`a string "${field}"`);
  return f;
}

function scalar(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new AnswerShapeError('a JSON string or number');
}

function stringList(v: unknown, field: string): string[] {
  const f = objectOf(v)[field];
  if (!Array.isArray(f) || !f.every((x) => typeof x === 'string')) throw new AnswerShapeError(`a list of strings "${field}"`);
  return f as string[];
}

/** `did you mean` for a value out of a fixed list; null when nothing is close. */
function closest(word: string, candidates: readonly string[]): string | null {
  const s = suggest(word, candidates);
  return s === null ? null : `did you mean '${s}'?`;
}

export const CLUSTER_STATES = ['active', 'no_migration', 'frozen', 'passive'] as const;
export const HEALTH_CHECKS = ['node-state', 'cluster-state', 'cluster-safe', 'migration-queue-size', 'cluster-size', 'ready'] as const;
const MANAGEMENT = '/grid/rest/management/cluster';

/** Members given as arguments, each possibly a list itself (`a,b` or `"a b"`), split as the member splits them. */
export function splitMembers(args: readonly string[]): string[] {
  return args.flatMap((a) => a.split(/[,; ]+/)).filter((m) => m !== '');
}

const state: CommandSpec = {
  name: 'state',
  synopsis: '',
  summary: 'Print the cluster state (POST management/cluster/state).',
  details: 'Prints the state of the cluster as the member sees it: active, no_migration, frozen, passive or in_transition.',
  switches: [],
  positionalsMin: 0,
  positionalsMax: 0,
  plan: () => ({
    method: 'POST',
    path: `${MANAGEMENT}/state`,
    auth: 'body',
    params: [],
    render: (a) => `cluster state: ${stringField(a.value, 'state')}`,
  }),
};

const changeState: CommandSpec = {
  name: 'change-state',
  synopsis: `<${CLUSTER_STATES.join('|')}>`,
  summary: 'Change the cluster state on every member (POST management/cluster/changeState).',
  details:
    'Changes the state of the whole cluster in two phases. passive refuses data writes; frozen and no_migration stop partition moves. ' +
    'Asking for the state the cluster is already in is refused (exit 1), as the member answers {"status":"fail"}. Needs the CLUSTER_WRITE group.',
  switches: [],
  positionalsMin: 1,
  positionalsMax: 1,
  plan: ({ positionals }) => {
    const requested = (positionals[0] as string).toLowerCase();
    if (!(CLUSTER_STATES as readonly string[]).includes(requested)) {
      throw new UsageError(`unknown cluster state '${positionals[0]}'; expected one of ${CLUSTER_STATES.join(', ')}`, closest(requested, CLUSTER_STATES));
    }
    return {
      method: 'POST',
      path: `${MANAGEMENT}/changeState`,
      auth: 'body',
      params: [requested],
      render: (a) => `cluster state changed to ${stringField(a.value, 'state')}`,
    };
  },
};

const shutdown: CommandSpec = {
  name: 'shutdown',
  synopsis: '--cluster | --member',
  summary: 'Shut down the whole cluster or the one member called (POST clusterShutdown / memberShutdown).',
  details:
    'One of --cluster or --member is required, so that a cluster is never stopped by a forgotten flag. --cluster turns the cluster PASSIVE, then ' +
    'every member stops gracefully; --member makes the member called hand its partitions off, then stop. The member answers before it stops. ' +
    'Needs the CLUSTER_WRITE group.',
  switches: [
    { name: 'cluster', help: 'Shut down every member of the cluster (clusterShutdown).' },
    { name: 'member', help: 'Shut down only the member at --address (memberShutdown).' },
  ],
  positionalsMin: 0,
  positionalsMax: 0,
  plan: ({ switches }) => {
    const cluster = switches.has('cluster');
    const member = switches.has('member');
    if (cluster === member) {
      throw new UsageError(
        cluster ? 'shutdown takes --cluster or --member, not both' : 'shutdown needs --cluster (every member) or --member (the member at --address)',
      );
    }
    return {
      method: 'POST',
      path: `${MANAGEMENT}/${cluster ? 'clusterShutdown' : 'memberShutdown'}`,
      auth: 'body',
      params: [],
      render: (a) => {
        if (stringField(a.value, 'status') !== 'success') throw new AnswerShapeError('"status":"success"');
        return cluster ? 'cluster shutdown started: the cluster turns passive and every member stops' : 'member shutdown started: the member hands its partitions off and stops';
      },
    };
  },
};

const version: CommandSpec = {
  name: 'version',
  synopsis: '',
  summary: 'Print the cluster version (GET management/cluster/version).',
  details: 'Prints the version the cluster runs (major.minor). Each member\'s own version is listed by the cluster command.',
  switches: [],
  positionalsMin: 0,
  positionalsMax: 0,
  plan: () => ({
    method: 'GET',
    path: `${MANAGEMENT}/version`,
    auth: 'none',
    params: [],
    render: (a) => `cluster version: ${stringField(a.value, 'version')}`,
  }),
};

const nodes: CommandSpec = {
  name: 'nodes',
  synopsis: '',
  summary: 'Print the member list, product and runtime version (POST management/cluster/nodes).',
  details: 'Prints the member\'s answer as it is: the members of the cluster (this one marked "this"), the product version and the Node.js version.',
  switches: [],
  positionalsMin: 0,
  positionalsMax: 0,
  plan: () => ({
    method: 'POST',
    path: `${MANAGEMENT}/nodes`,
    auth: 'body',
    params: [],
    render: (a) => stringField(a.value, 'response'),
  }),
};

function renderHealth(a: AnswerView): string {
  const h = objectOf(a.value);
  const rows: [string, string][] = [
    ['node state', scalar(h.nodeState)],
    ['cluster state', scalar(h.clusterState)],
    ['cluster safe', scalar(h.clusterSafe)],
    ['migration queue size', scalar(h.migrationQueueSize)],
    ['cluster size', scalar(h.clusterSize)],
  ];
  return rows.map(([k, v]) => `${(k + ':').padEnd(22)}${v}`).join('\n');
}

const health: CommandSpec = {
  name: 'health',
  synopsis: `[${HEALTH_CHECKS.join('|')}]`,
  summary: 'Print the member\'s health (GET /grid/health), or one check of it.',
  details:
    'Without an argument prints node state, cluster state, cluster safety, migration queue size and cluster size. With one, calls ' +
    '/grid/health/<check>: ready and cluster-safe exit 0 when the answer is 200 and 1 when it is 503, so they can be used in scripts ' +
    '(grid-admin health ready && ...). cluster-state needs --user and --password when security is on. Needs the HEALTH_CHECK group.',
  switches: [],
  positionalsMin: 0,
  positionalsMax: 1,
  plan: ({ positionals }) => {
    const check = positionals[0];
    if (check === undefined) return { method: 'GET', path: '/grid/health', auth: 'none', params: [], render: renderHealth };
    const lower = check.toLowerCase();
    if (!(HEALTH_CHECKS as readonly string[]).includes(lower)) {
      throw new UsageError(`unknown health check '${check}'; expected one of ${HEALTH_CHECKS.join(', ')}`, closest(lower, HEALTH_CHECKS));
    }
    const path = `/grid/health/${lower}`;
    const auth: AuthMode = lower === 'cluster-state' ? 'basic-with-user' : 'none';
    if (lower === 'ready') return { method: 'GET', path, auth, params: [], render: () => 'ready', statusMessages: { 503: 'not ready: the member has not joined a cluster yet, or is shutting down' } };
    if (lower === 'cluster-safe') return { method: 'GET', path, auth, params: [], render: () => 'cluster safe', statusMessages: { 503: 'not safe: replicas are not in sync or migrations are running' } };
    const statusMessages = lower === 'node-state' ? { 503: 'the member is shut down' } : {};
    return { method: 'GET', path, auth, params: [], render: (a) => scalar(a.value), statusMessages };
  },
};

const logLevel: CommandSpec = {
  name: 'log-level',
  synopsis: `[LEVEL | --reset]`,
  summary: 'Print, set or reset the member\'s run-time log level (GET/POST log-level, POST log-level/reset).',
  details:
    `Without an argument prints the level set at run time ("not set" until one is). With LEVEL (${LOG_LEVELS.join(', ')}; any case) sets it; ` +
    '--reset goes back to the configured level. This member only. Reading needs --user and --password when security is on; setting and ' +
    'resetting need the CLUSTER_WRITE group.',
  switches: [{ name: 'reset', help: 'Reset the level to the one configured at start-up.' }],
  positionalsMin: 0,
  positionalsMax: 1,
  plan: ({ positionals, switches }) => {
    const level = positionals[0];
    if (switches.has('reset')) {
      if (level !== undefined) throw new UsageError('log-level takes LEVEL or --reset, not both');
      return { method: 'POST', path: '/grid/rest/log-level/reset', auth: 'body', params: [], render: () => 'log level reset to the configured level' };
    }
    if (level === undefined) {
      return {
        method: 'GET',
        path: '/grid/rest/log-level',
        auth: 'basic-with-user',
        params: [],
        render: (a) => {
          const v = objectOf(a.value).logLevel;
          if (v === null) return 'log level: not set (the configured level applies)';
          return `log level: ${scalar(v)}`;
        },
      };
    }
    const upper = level.toUpperCase();
    if (!(LOG_LEVELS as readonly string[]).includes(upper)) {
      throw new UsageError(`unknown log level '${level}'; expected one of ${LOG_LEVELS.join(', ')}`, closest(upper, LOG_LEVELS));
    }
    return { method: 'POST', path: '/grid/rest/log-level', auth: 'body', params: [upper], render: () => `log level set to ${upper}` };
  },
};

const memberList: CommandSpec = {
  name: 'member-list',
  synopsis: '[MEMBER...]',
  summary: 'Print the member\'s tcp-ip join member list, or replace it on every member (GET/POST config/tcp-ip/member-list).',
  details:
    'Without arguments prints the tcp-ip member list, one address a line. With members (host, host:port or host:p1-p2; as separate ' +
    'arguments or separated by commas) replaces the list on every member of the cluster (the member called sends it to the ' +
    'others). The member refuses both when tcp-ip join is off. Replacing needs the CLUSTER_WRITE group.',
  switches: [],
  positionalsMin: 0,
  positionalsMax: 1000,
  plan: ({ positionals }) => {
    const render = (a: AnswerView): string => stringList(a.value, 'member-list').join('\n');
    if (positionals.length === 0) return { method: 'GET', path: '/grid/rest/config/tcp-ip/member-list', auth: 'none', params: [], render };
    const members = splitMembers(positionals);
    if (members.length === 0) throw new UsageError('member-list was given no member (only separators)');
    return { method: 'POST', path: '/grid/rest/config/tcp-ip/member-list', auth: 'body', params: [members.join(',')], render };
  },
};

function renderCluster(a: AnswerView): string {
  const c = objectOf(a.value);
  if (!Array.isArray(c.members)) throw new AnswerShapeError('a list "members"');
  const lines = c.members.map((m: unknown) => {
    const o = objectOf(m);
    const marks = [o.localMember === true ? 'this' : '', o.liteMember === true ? 'lite' : ''].filter((x) => x !== '').join(', ');
    return `${scalar(o.address)}  ${scalar(o.uuid)}  ${scalar(o.memberVersion)}${marks === '' ? '' : `  (${marks})`}`;
  });
  return [`members: ${c.members.length}`, ...lines, `connections: ${scalar(c.connectionCount)} REST, ${scalar(c.allConnectionCount)} in all`].join('\n');
}

const cluster: CommandSpec = {
  name: 'cluster',
  synopsis: '',
  summary: 'Print the members of the cluster (GET /grid/rest/cluster).',
  details: 'Prints each member in cluster order (master first): address, UUID, version, and whether it is the member called or a lite member; then the member\'s connection counts.',
  switches: [],
  positionalsMin: 0,
  positionalsMax: 0,
  plan: () => ({ method: 'GET', path: '/grid/rest/cluster', auth: 'none', params: [], render: renderCluster }),
};

const CP = '/grid/rest/cp-subsystem';
const CP_ACTIONS = ['groups', 'group', 'sessions', 'members', 'local', 'promote', 'remove-member', 'remove-group', 'close-session', 'reset'] as const;

function listOf(v: unknown): Record<string, unknown>[] {
  if (!Array.isArray(v)) throw new AnswerShapeError('a JSON list');
  return v.map(objectOf);
}

function renderCpMember(o: Record<string, unknown>): string {
  return `${scalar(o.address)}  ${scalar(o.uuid)}`;
}

const cp: CommandSpec = {
  name: 'cp',
  synopsis: `<${CP_ACTIONS.join('|')}> [ARG...]`,
  summary: 'The CP subsystem\'s management calls (GET/POST cp-subsystem/...; spec/cp.md).',
  details:
    'cp groups: every CP group (name, id, seed). cp group NAME: its members, leader, term and commit index. cp sessions GROUP: its ' +
    'sessions. cp members: the CP members. cp local: this member as a CP member. cp promote: make the member called a CP member. ' +
    'cp remove-member UUID: remove a CP member that left the cluster. cp remove-group NAME: forget a group that lost its majority ' +
    '(its state is gone). cp close-session GROUP ID: close a session, releasing what it holds. cp reset: wipe every CP group and ' +
    'structure and run discovery again (on the master only). The calls that change something need the CP group and credentials.',
  switches: [],
  positionalsMin: 1,
  positionalsMax: 3,
  plan: ({ positionals }) => {
    const [action, a, b] = positionals as [string, string | undefined, string | undefined];
    const need = (n: number, what: string): void => {
      if (positionals.length - 1 !== n) throw new UsageError(`cp ${action} takes ${what}`);
    };
    const seg = (x: string | undefined): string => encodeURIComponent(x as string);
    const ok = (message: string) => (): string => message;
    switch (action) {
      case 'groups':
        need(0, 'no argument');
        return { method: 'GET', path: `${CP}/groups`, auth: 'basic-with-user', params: [], render: (x) => listOf(x.value).map((g) => `${scalar(g.name)}  id ${scalar(g.id)}  seed ${scalar(g.seed)}`).join('\n') };
      case 'group':
        need(1, 'a group name');
        return {
          method: 'GET',
          path: `${CP}/groups/${seg(a)}`,
          auth: 'basic-with-user',
          params: [],
          render: (x) => {
            const g = objectOf(x.value);
            const leader = g.leader === null ? 'none' : renderCpMember(objectOf(g.leader));
            const members = listOf(g.members).map((m) => `  ${renderCpMember(m)}`);
            return [`${a as string}: ${scalar(g.status)}, term ${scalar(g.term)}, commit index ${scalar(g.commitIndex)}`, `leader: ${leader}`, 'members:', ...members].join('\n');
          },
        };
      case 'sessions':
        need(1, 'a group name');
        return {
          method: 'GET',
          path: `${CP}/groups/${seg(a)}/sessions`,
          auth: 'basic-with-user',
          params: [],
          render: (x) => {
            const l = listOf(x.value);
            return l.length === 0 ? 'no sessions' : l.map((o) => `${scalar(o.id)}  ${scalar(o.endpointType)} ${scalar(o.endpointName)} at ${scalar(o.endpoint)}  expires ${new Date(Number(o.expirationTime)).toISOString()}`).join('\n');
          },
        };
      case 'members':
        need(0, 'no argument');
        return { method: 'GET', path: `${CP}/members`, auth: 'basic-with-user', params: [], render: (x) => listOf(x.value).map(renderCpMember).join('\n') };
      case 'local':
        need(0, 'no argument');
        return { method: 'GET', path: `${CP}/members/local`, auth: 'basic-with-user', params: [], render: (x) => renderCpMember(objectOf(x.value)) };
      case 'promote':
        need(0, 'no argument');
        return { method: 'POST', path: `${CP}/members`, auth: 'body', params: [], render: (x) => `CP member ${stringField(x.value, 'uuid')}` };
      case 'remove-member':
        need(1, 'the UUID of a CP member');
        return { method: 'POST', path: `${CP}/members/${seg(a)}/remove`, auth: 'body', params: [], render: ok(`CP member ${a as string} removed`) };
      case 'remove-group':
        need(1, 'a group name');
        return { method: 'POST', path: `${CP}/groups/${seg(a)}/remove`, auth: 'body', params: [], render: ok(`CP group ${a as string} removed`) };
      case 'close-session':
        need(2, 'a group name and a session id');
        return { method: 'POST', path: `${CP}/groups/${seg(a)}/sessions/${seg(b)}/remove`, auth: 'body', params: [], render: ok(`CP session ${b as string} closed`) };
      case 'reset':
        need(0, 'no argument');
        return { method: 'POST', path: `${CP}/reset`, auth: 'body', params: [], render: (x) => `CP subsystem reset (seed ${scalar(objectOf(x.value).seed)})` };
      default:
        throw new UsageError(`unknown cp action '${action}'; expected one of ${CP_ACTIONS.join(', ')}`, closest(action, CP_ACTIONS));
    }
  },
};

/** Every command, in the order help lists them. WAN and persistence commands go here (see the top of the file). */
export const COMMANDS: readonly CommandSpec[] = [state, changeState, shutdown, version, nodes, health, logLevel, memberList, cluster, cp];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
