// Checks the admin CLI's core (src/admin/, without its HTTP client) through runAdmin with a fake
// exchange and fake files: argument parsing (options anywhere, `--x=v`, `--`, addresses, timeouts)
// and every usage error (exit 2, nothing sent, did-you-mean hints); the request each command makes
// (method, path, percent-encoded `p1&p2&params` body, Basic header only where rest.md §7 needs
// it); credentials from flags, the environment and a password file, and that the password never
// appears in anything printed; how answers read (text, --json, refusals with the member's message
// and exit 1, no answer with exit 3); help for everything.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs, parseAddress, generalHelp } from '../../src/admin/args.js';
import { COMMANDS } from '../../src/admin/commands.js';
import { runAdmin, INSECURE_WARNING, type AdminIo } from '../../src/admin/run.js';
import type { HttpAnswer, TransportFailure } from '../../src/admin/answer.js';
import type { HttpRequestPlan } from '../../src/admin/request.js';
import type { Target } from '../../src/admin/transport.js';
import type { Outcome } from '../../src/admin/outcome.js';

interface Sent {
  readonly target: Target;
  readonly plan: HttpRequestPlan;
}

interface Fake {
  readonly sent: Sent[];
  readonly io: AdminIo;
}

const json = (status: number, body: unknown): HttpAnswer => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const empty = (status: number, headers: Record<string, string> = {}): HttpAnswer => ({ status, headers, body: '' });

function fake(answer: HttpAnswer | TransportFailure = json(200, { status: 'success', state: 'active' }), files: Record<string, string> = {}): Fake {
  const sent: Sent[] = [];
  return {
    sent,
    io: {
      readFile: (file) => {
        const text = files[file];
        if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file, open '${file}'`), { code: 'ENOENT' });
        return Buffer.from(text);
      },
      exchange: (target, plan) => {
        sent.push({ target, plan });
        return Promise.resolve('status' in answer ? { ok: true, answer } : { ok: false, failure: answer });
      },
    },
  };
}

async function run(argv: string[], answer?: HttpAnswer | TransportFailure, env: Record<string, string> = {}, files: Record<string, string> = {}): Promise<Outcome & { sent: Sent[] }> {
  const f = fake(answer, files);
  const outcome = await runAdmin(argv, env, f.io);
  return { ...outcome, sent: f.sent };
}

async function usage(argv: string[], pattern: RegExp, env: Record<string, string> = {}, files: Record<string, string> = {}): Promise<Outcome> {
  const r = await run(argv, undefined, env, files);
  assert.equal(r.exitCode, 2, `${argv.join(' ')}: exit 2, got ${r.exitCode}; stderr ${r.stderr}`);
  assert.equal(r.sent.length, 0, 'nothing is sent on a usage error');
  assert.match(r.stderr, pattern);
  assert.match(r.stderr, /run 'grid-admin .*--help' for usage/);
  return r;
}

describe('parsing', () => {
  test('defaults: 127.0.0.1:5701, 30 s, text, HTTP, cluster name dev', async () => {
    const r = await run(['state']);
    assert.equal(r.exitCode, 0);
    const [s] = r.sent;
    assert.ok(s !== undefined);
    assert.deepEqual({ host: s.target.host, port: s.target.port, tls: s.target.tls, timeoutMs: s.target.timeoutMs }, { host: '127.0.0.1', port: 5701, tls: null, timeoutMs: 30_000 });
    assert.equal(s.plan.body, 'dev&');
    assert.equal(r.stdout, 'cluster state: active\n');
  });

  test('options go anywhere, as --x v or --x=v; -- ends the options', async () => {
    const a = parseArgs(['--address', 'h:1', 'state', '--timeout=2.5', '--json']);
    assert.equal(a.kind, 'run');
    if (a.kind !== 'run') return;
    assert.deepEqual(a.options.address, { host: 'h', port: 1, display: 'h:1' });
    assert.equal(a.options.timeoutMs, 2500);
    assert.equal(a.options.json, true);
    const b = parseArgs(['member-list', '--', '--not-an-option']);
    assert.ok(b.kind === 'run' && b.positionals[0] === '--not-an-option');
  });

  test('addresses: host, host:port, [v6]:port, and the refused forms', () => {
    assert.deepEqual(parseAddress('db1'), { host: 'db1', port: 5701, display: 'db1:5701' });
    assert.deepEqual(parseAddress('10.0.0.1:5702'), { host: '10.0.0.1', port: 5702, display: '10.0.0.1:5702' });
    assert.deepEqual(parseAddress('[::1]:5703'), { host: '::1', port: 5703, display: '[::1]:5703' });
    assert.deepEqual(parseAddress('[::1]'), { host: '::1', port: 5701, display: '[::1]:5701' });
    for (const bad of ['', ':5701', '::1', 'h:0', 'h:65536', 'h:x', 'h:', 'a b:1', 'h/x:1']) assert.throws(() => parseAddress(bad), /--address/, bad);
  });

  test('every usage error of the command line exits 2 with a reason and sends nothing', async () => {
    await usage([], /no command given/);
    await usage(['stat'], /unknown command 'stat'\nhint: did you mean 'state'\?/);
    await usage(['frobnicate'], /unknown command 'frobnicate'\nhint: commands: state, change-state/);
    await usage(['state', '--adress', 'x'], /unknown option '--adress'\nhint: did you mean '--address'\?/);
    await usage(['state', '--jsno'], /did you mean '--json'/);
    await usage(['state', '-x'], /unknown option '-x'/);
    await usage(['--reset', 'log-level'], /option '--reset' belongs to the command log-level/);
    await usage(['state', '--reset'], /belongs to the command log-level, not to state/);
    await usage(['state', '--address'], /--address needs a value/);
    await usage(['state', '--address', 'a:1', '--address', 'b:1'], /--address is given twice/);
    await usage(['state', '--json', '--json'], /--json is given twice/);
    await usage(['state', '--json=yes'], /--json takes no value/);
    await usage(['state', '--address', '::1'], /IPv6 address needs brackets\nhint: --address \[::1\]:5701/);
    await usage(['state', '--timeout', '0'], /--timeout '0'/);
    await usage(['state', '--timeout', '-1'], /--timeout '-1'/);
    await usage(['state', '--timeout', 'soon'], /--timeout 'soon'/);
    await usage(['state', '--timeout', '86401'], /at most 86400/);
    await usage(['state', '--ca', 'ca.pem'], /--ca is for HTTPS\nhint: add --https/);
    await usage(['state', '--insecure'], /--insecure is for HTTPS/);
    await usage(['state', '--https', '--cert', 'c.pem'], /--cert and --key go together/);
    await usage(['state', '--user', 'u', '--cluster-name', 'c'], /--user and --cluster-name exclude each other/);
    await usage(['state', '--password', 'p', '--password-file', 'f'], /--password and --password-file exclude each other/);
    await usage(['state', '--cluster-name', ''], /--cluster-name must not be empty/);
    await usage(['state', 'extra'], /state takes no argument \(got 'extra'\)/);
    await usage(['health', 'ready', 'now'], /health takes at most 1 argument/);
    await usage(['change-state'], /change-state needs <active\|no_migration\|frozen\|passive>/);
    await usage(['help', 'nope'], /unknown command 'nope'/);
    await usage(['help', 'state', 'more'], /unexpected argument 'more'/);
  });

  test("every usage error of a command's arguments exits 2, with the command's help named", async () => {
    const r = await usage(['change-state', 'frozn'], /unknown cluster state 'frozn'; expected one of active, no_migration, frozen, passive\nhint: did you mean 'frozen'\?/);
    assert.match(r.stderr, /run 'grid-admin change-state --help'/);
    await usage(['change-state', 'in_transition'], /unknown cluster state 'in_transition'/);
    await usage(['shutdown'], /shutdown needs --cluster \(every member\) or --member/);
    await usage(['shutdown', '--cluster', '--member'], /--cluster or --member, not both/);
    await usage(['health', 'redy'], /unknown health check 'redy'.*\nhint: did you mean 'ready'\?/);
    await usage(['log-level', 'fien'], /unknown log level 'fien'; expected one of OFF, SEVERE.*\nhint: did you mean 'FINE'\?/);
    await usage(['log-level', 'FINE', '--reset'], /LEVEL or --reset, not both/);
    await usage(['member-list', ',', ';'], /no member/);
  });

  test('--json with a usage error also prints a JSON object on stdout', async () => {
    const r = await usage(['--json', 'stat'], /unknown command/);
    assert.deepEqual(JSON.parse(r.stdout), { status: 'fail', exitCode: 2, error: 'usage', message: "unknown command 'stat'" });
  });
});

describe('help', () => {
  test('--help, -h and help list every command and option and the exit statuses; exit 0, nothing sent', async () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['--address', 'x:1', '--help']]) {
      const r = await run(argv);
      assert.equal(r.exitCode, 0);
      assert.equal(r.sent.length, 0);
      assert.equal(r.stdout, generalHelp());
    }
    const text = generalHelp();
    for (const c of COMMANDS) assert.match(text, new RegExp(`\\n  ${c.name} +\\S`), c.name);
    for (const o of ['address', 'cluster-name', 'user', 'password', 'password-file', 'https', 'ca', 'cert', 'key', 'insecure', 'timeout', 'json', 'help']) assert.match(text, new RegExp(`--${o}\\b`));
    for (const s of ['0', '1', '2', '3', '4']) assert.match(text, new RegExp(`\\n  ${s}  `));
    assert.match(text, /DANGEROUS/);
  });

  test('each command has its own help: COMMAND --help and help COMMAND, listing its switches', async () => {
    for (const c of COMMANDS) {
      const a = await run([c.name, '--help']);
      const b = await run(['help', c.name]);
      assert.equal(a.exitCode, 0);
      assert.equal(a.stdout, b.stdout);
      assert.match(a.stdout, new RegExp(`^Usage: grid-admin \\[OPTIONS\\] ${c.name}`));
      for (const s of c.switches) assert.match(a.stdout, new RegExp(`--${s.name} `));
    }
    // Help wins over arguments the command would refuse.
    assert.equal((await run(['shutdown', '--help'])).exitCode, 0);
    assert.equal((await run(['change-state', 'nonsense', '--help'])).exitCode, 0);
  });
});

describe('requests', () => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const cases: [string[], 'GET' | 'POST', string, string | null][] = [
    [['state'], 'POST', '/grid/rest/management/cluster/state', 'dev&'],
    [['change-state', 'FROZEN'], 'POST', '/grid/rest/management/cluster/changeState', 'dev&&frozen'],
    [['change-state', 'no_migration'], 'POST', '/grid/rest/management/cluster/changeState', 'dev&&no_migration'],
    [['shutdown', '--cluster'], 'POST', '/grid/rest/management/cluster/clusterShutdown', 'dev&'],
    [['shutdown', '--member'], 'POST', '/grid/rest/management/cluster/memberShutdown', 'dev&'],
    [['version'], 'GET', '/grid/rest/management/cluster/version', null],
    [['nodes'], 'POST', '/grid/rest/management/cluster/nodes', 'dev&'],
    [['health'], 'GET', '/grid/health', null],
    [['health', 'ready'], 'GET', '/grid/health/ready', null],
    [['health', 'Node-State'], 'GET', '/grid/health/node-state', null],
    [['health', 'cluster-state'], 'GET', '/grid/health/cluster-state', null],
    [['health', 'cluster-safe'], 'GET', '/grid/health/cluster-safe', null],
    [['health', 'migration-queue-size'], 'GET', '/grid/health/migration-queue-size', null],
    [['health', 'cluster-size'], 'GET', '/grid/health/cluster-size', null],
    [['log-level'], 'GET', '/grid/rest/log-level', null],
    [['log-level', 'finest'], 'POST', '/grid/rest/log-level', 'dev&&FINEST'],
    [['log-level', '--reset'], 'POST', '/grid/rest/log-level/reset', 'dev&'],
    [['member-list'], 'GET', '/grid/rest/config/tcp-ip/member-list', null],
    [['member-list', '10.0.0.1:5701', '10.0.0.2;10.0.0.3 10.0.0.4,10.0.0.5:5701-5703'], 'POST', '/grid/rest/config/tcp-ip/member-list', 'dev&&10.0.0.1%3A5701%2C10.0.0.2%2C10.0.0.3%2C10.0.0.4%2C10.0.0.5%3A5701-5703'],
    [['cluster'], 'GET', '/grid/rest/cluster', null],
    [['cp', 'groups'], 'GET', '/grid/rest/cp-subsystem/groups', null],
    [['cp', 'group', 'orders@x/y'], 'GET', '/grid/rest/cp-subsystem/groups/orders%40x%2Fy', null],
    [['cp', 'sessions', 'default'], 'GET', '/grid/rest/cp-subsystem/groups/default/sessions', null],
    [['cp', 'members'], 'GET', '/grid/rest/cp-subsystem/members', null],
    [['cp', 'local'], 'GET', '/grid/rest/cp-subsystem/members/local', null],
    [['cp', 'promote'], 'POST', '/grid/rest/cp-subsystem/members', 'dev&'],
    [['cp', 'remove-member', '6f1c3a52-1d7e-4c1e-9b55-0a1f2e3d4c5b'], 'POST', '/grid/rest/cp-subsystem/members/6f1c3a52-1d7e-4c1e-9b55-0a1f2e3d4c5b/remove', 'dev&'],
    [['cp', 'remove-group', 'orders'], 'POST', '/grid/rest/cp-subsystem/groups/orders/remove', 'dev&'],
    [['cp', 'close-session', 'default', '12'], 'POST', '/grid/rest/cp-subsystem/groups/default/sessions/12/remove', 'dev&'],
    [['cp', 'reset'], 'POST', '/grid/rest/cp-subsystem/reset', 'dev&'],
  ];
  for (const [argv, method, path, body] of cases) {
    test(`${argv.join(' ')} → ${method} ${path}`, async () => {
      const r = await run(argv);
      assert.equal(r.sent.length, 1);
      const plan = (r.sent[0] as Sent).plan;
      assert.equal(plan.method, method);
      assert.equal(plan.path, path);
      assert.equal(plan.body, body);
      assert.equal(plan.headers.accept, 'application/json');
      assert.equal(plan.headers.connection, 'close');
      if (body === null) {
        assert.equal(plan.headers['content-type'], undefined);
        assert.equal(plan.headers['content-length'], undefined);
      } else {
        assert.equal(plan.headers['content-type'], form['content-type']);
        assert.equal(plan.headers['content-length'], String(Buffer.byteLength(body)));
      }
      assert.equal(plan.headers.authorization, undefined, 'no Basic header without a user');
    });
  }

  test('--https with --ca, --cert, --key passes the files read; --insecure turns verification off and warns on stderr', async () => {
    const files = { 'ca.pem': 'CA', 'c.pem': 'CERT', 'k.pem': 'KEY' };
    const r = await run(['state', '--https', '--ca', 'ca.pem', '--cert', 'c.pem', '--key', 'k.pem'], undefined, {}, files);
    assert.equal(r.exitCode, 0);
    const tls = (r.sent[0] as Sent).target.tls;
    assert.deepEqual(tls && { ca: tls.ca?.toString(), cert: tls.cert?.toString(), key: tls.key?.toString(), verify: tls.verify }, { ca: 'CA', cert: 'CERT', key: 'KEY', verify: true });
    assert.equal(r.stderr, '');
    const i = await run(['state', '--https', '--insecure']);
    assert.equal(i.exitCode, 0);
    assert.equal((i.sent[0] as Sent).target.tls?.verify, false);
    assert.ok(i.stderr.startsWith(INSECURE_WARNING));
    const plain = await run(['state', '--https']);
    assert.deepEqual((plain.sent[0] as Sent).target.tls, { ca: null, cert: null, key: null, verify: true });
  });

  test('an unreadable --ca, --cert, --key or --password-file is a usage error naming it', async () => {
    await usage(['state', '--https', '--ca', 'missing.pem'], /cannot read --ca 'missing.pem': ENOENT/);
    await usage(['state', '--https', '--cert', 'c', '--key', 'k'], /cannot read --cert 'c'/, {}, { k: 'KEY' });
    await usage(['state', '--https', '--cert', 'c', '--key', 'k'], /cannot read --key 'k'/, {}, { c: 'CERT' });
    await usage(['state', '--password-file', '/nope'], /cannot read --password-file '\/nope'/);
  });
});

describe('credentials', () => {
  const body = async (argv: string[], env: Record<string, string> = {}, files: Record<string, string> = {}): Promise<string | null> => {
    const r = await run(argv, undefined, env, files);
    assert.equal(r.exitCode, 0, r.stderr);
    return (r.sent[0] as Sent).plan.body;
  };

  test('cluster name: flag, then GRID_ADMIN_CLUSTER_NAME, then dev; a password given with it rides along as p2', async () => {
    assert.equal(await body(['state']), 'dev&');
    assert.equal(await body(['state'], { GRID_ADMIN_CLUSTER_NAME: 'prod' }), 'prod&');
    assert.equal(await body(['state', '--cluster-name', 'blue'], { GRID_ADMIN_CLUSTER_NAME: 'prod' }), 'blue&');
    assert.equal(await body(['state', '--password', 'x']), 'dev&x');
  });

  test('user and password: flags, env, password file (first line only); a user from a flag beats an env cluster name and vice versa', async () => {
    assert.equal(await body(['state', '--user', 'admin', '--password', 'pw']), 'admin&pw');
    assert.equal(await body(['state'], { GRID_ADMIN_USER: 'admin', GRID_ADMIN_PASSWORD: 'envpw' }), 'admin&envpw');
    assert.equal(await body(['state', '--user', 'root'], { GRID_ADMIN_USER: 'admin', GRID_ADMIN_PASSWORD: 'envpw' }), 'root&envpw');
    assert.equal(await body(['state', '--user', 'admin', '--password-file', 'pw.txt'], { GRID_ADMIN_PASSWORD: 'envpw' }, { 'pw.txt': 'filepw\r\nsecond line\n' }), 'admin&filepw');
    assert.equal(await body(['state', '--user', 'admin', '--password-file', 'pw.txt'], {}, { 'pw.txt': 'no-newline' }), 'admin&no-newline');
    assert.equal(await body(['state', '--user', 'admin', '--password', ''], {}), 'admin&');
    assert.equal(await body(['state', '--cluster-name', 'blue'], { GRID_ADMIN_USER: 'admin', GRID_ADMIN_PASSWORD: 'envpw' }), 'blue&envpw');
    assert.equal(await body(['state'], { GRID_ADMIN_USER: '', GRID_ADMIN_CLUSTER_NAME: '' }), 'dev&');
  });

  test('a user without any password is a usage error that suggests the safe sources', async () => {
    await usage(['state', '--user', 'admin'], /user 'admin' needs a password\nhint: --password-file FILE, or \$GRID_ADMIN_PASSWORD/);
    await usage(['state'], /needs a password/, { GRID_ADMIN_USER: 'admin' });
  });

  test('every body parameter is percent-encoded once (&, +, %, space, =, non-ASCII)', async () => {
    assert.equal(await body(['state', '--user', 'a&b', '--password', 'p+q%r s=t&ü']), 'a%26b&p%2Bq%25r%20s%3Dt%26%C3%BC');
    assert.equal(await body(['change-state', 'passive', '--cluster-name', 'my cluster&co']), 'my%20cluster%26co&&passive');
  });

  test('GETs that need credentials with security on send Basic only when a user is given; other GETs never', async () => {
    const auth = async (argv: string[]): Promise<string | undefined> => (((await run([...argv, '--user', 'admin', '--password', 'pw:ü'])).sent[0] as Sent).plan.headers.authorization);
    const basic = `Basic ${Buffer.from('admin:pw:ü').toString('base64')}`;
    assert.equal(await auth(['log-level']), basic);
    assert.equal(await auth(['health', 'cluster-state']), basic);
    for (const argv of [['health'], ['health', 'ready'], ['version'], ['cluster'], ['member-list'], ['state'], ['log-level', 'FINE']]) {
      assert.equal(await auth(argv), undefined, argv.join(' '));
    }
  });

  test('the password appears in nothing printed, whatever happens', async () => {
    const secret = 'S3cret-pw-xyz';
    const answers: (HttpAnswer | TransportFailure)[] = [
      json(200, { status: 'success', state: 'active' }),
      json(403, { status: 'fail', message: 'unauthenticated' }),
      empty(404),
      { status: 200, headers: {}, body: 'garbage' },
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5701', timedOut: false },
    ];
    for (const a of answers) {
      for (const extra of [[], ['--json']]) {
        const r = await run(['state', '--user', 'admin', '--password', secret, ...extra], a);
        assert.equal(`${r.stdout}${r.stderr}`.includes(secret), false);
        const f = await run(['state', '--user', 'admin', '--password-file', 'f', ...extra], a, {}, { f: secret });
        assert.equal(`${f.stdout}${f.stderr}`.includes(secret), false);
      }
    }
    const u = await run(['state', '--user', 'admin', '--password', secret, '--timeout', 'x']);
    assert.equal(`${u.stdout}${u.stderr}`.includes(secret), false);
  });
});

describe('answers', () => {
  const ok = async (argv: string[], answer: HttpAnswer, stdout: string): Promise<void> => {
    const r = await run(argv, answer);
    assert.deepEqual({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }, { exitCode: 0, stdout, stderr: '' });
  };

  test('successes read as text', async () => {
    await ok(['state'], json(200, { status: 'success', state: 'frozen' }), 'cluster state: frozen\n');
    await ok(['change-state', 'frozen'], json(200, { status: 'success', state: 'frozen' }), 'cluster state changed to frozen\n');
    await ok(['shutdown', '--cluster'], json(200, { status: 'success' }), 'cluster shutdown started: the cluster turns passive and every member stops\n');
    await ok(['shutdown', '--member'], json(200, { status: 'success' }), 'member shutdown started: the member hands its partitions off and stops\n');
    await ok(['version'], json(200, { status: 'success', version: '0.1' }), 'cluster version: 0.1\n');
    await ok(['nodes'], json(200, { status: 'success', response: '[Member [h]:1 - u this]\nGrid 0.1.0\nNode.js 20' }), '[Member [h]:1 - u this]\nGrid 0.1.0\nNode.js 20\n');
    await ok(['health'], json(200, { nodeState: 'ACTIVE', clusterState: 'PASSIVE', clusterSafe: false, migrationQueueSize: 3, clusterSize: 2 }),
      'node state:           ACTIVE\ncluster state:        PASSIVE\ncluster safe:         false\nmigration queue size: 3\ncluster size:         2\n');
    await ok(['health', 'ready'], empty(200), 'ready\n');
    await ok(['health', 'cluster-safe'], empty(200), 'cluster safe\n');
    await ok(['health', 'node-state'], json(200, 'ACTIVE'), 'ACTIVE\n');
    await ok(['health', 'cluster-size'], json(200, 3), '3\n');
    await ok(['log-level'], json(200, { logLevel: null }), 'log level: not set (the configured level applies)\n');
    await ok(['log-level'], json(200, { logLevel: 'FINE' }), 'log level: FINE\n');
    await ok(['log-level', 'fine'], json(200, { status: 'success', message: 'log level is changed' }), 'log level set to FINE\n');
    await ok(['log-level', '--reset'], json(200, { status: 'success', message: 'log level is reset' }), 'log level reset to the configured level\n');
    await ok(['member-list'], json(200, { status: 'success', 'member-list': ['a:1', 'b:2'] }), 'a:1\nb:2\n');
    await ok(['member-list', 'a:1'], json(200, { status: 'success', message: 'm', 'member-list': ['a:1'] }), 'a:1\n');
    await ok(['cluster'], json(200, { members: [
      { address: '[10.0.0.1]:5701', liteMember: false, localMember: true, uuid: 'u1', memberVersion: '0.1.0' },
      { address: '[10.0.0.2]:5701', liteMember: true, localMember: false, uuid: 'u2', memberVersion: '0.1.0' },
    ], connectionCount: 1, allConnectionCount: 3 }), 'members: 2\n[10.0.0.1]:5701  u1  0.1.0  (this)\n[10.0.0.2]:5701  u2  0.1.0  (lite)\nconnections: 1 REST, 3 in all\n');
  });

  test('--json prints the member\'s body as it came, or {"status":"success","httpStatus":N} for an empty one', async () => {
    const body = { status: 'success', state: 'active' };
    await ok(['--json', 'state'], json(200, body), JSON.stringify(body) + '\n');
    await ok(['health', 'node-state', '--json'], json(200, 'ACTIVE'), '"ACTIVE"\n');
    await ok(['health', 'ready', '--json'], empty(200), '{"status":"success","httpStatus":200}\n');
  });

  test('refusals exit 1 with the member\'s message on stderr, and a hint where one helps', async () => {
    const refused = async (argv: string[], answer: HttpAnswer, stderr: RegExp): Promise<Outcome> => {
      const r = await run(argv, answer);
      assert.equal(r.exitCode, 1, `${argv.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, stderr);
      return r;
    };
    await refused(['state', '--cluster-name', 'blue'], json(403, { status: 'fail', message: 'unauthenticated' }),
      /^grid-admin: state refused by 127\.0\.0\.1:5701: unauthenticated \(HTTP 403 Forbidden\)\nhint: the member refused cluster name 'blue'/);
    await refused(['state', '--user', 'admin', '--password', 'x'], json(403, { status: 'fail', message: 'unauthenticated' }), /refused user 'admin'/);
    await refused(['change-state', 'frozen'], json(403, { status: 'fail', message: 'REST endpoint group CLUSTER_WRITE is not enabled' }),
      /REST endpoint group CLUSTER_WRITE is not enabled \(HTTP 403 Forbidden\)\nhint: enable the group on the member: <endpoint-group name="CLUSTER_WRITE" enabled="true"\/>.*--rest-groups CLUSTER_WRITE/);
    await refused(['state'], json(403, { status: 'fail', message: 'REST API is not enabled on this member' }), /hint: enable REST on the member/);
    await refused(['change-state', 'active'], json(200, { status: 'fail', state: 'active' }), /change-state refused by .*: the cluster is already active \(HTTP 200 OK\)/);
    await refused(['change-state', 'passive'], json(409, { status: 'fail', message: 'migrations did not drain' }), /migrations did not drain \(HTTP 409 Conflict\)/);
    await refused(['log-level', 'FINE'], json(400, { status: 'fail', message: 'This endpoint expects at least 3 parameters' }), /expects at least 3 parameters \(HTTP 400 Bad Request\)/);
    await refused(['member-list'], json(400, { status: 'fail', message: 'TCP-IP join mechanism is not enabled in the cluster.' }), /TCP-IP join mechanism is not enabled/);
    await refused(['health', 'ready'], empty(503), /health refused by .*: not ready: the member has not joined a cluster yet, or is shutting down \(HTTP 503 Service Unavailable\)/);
    await refused(['health', 'cluster-safe'], empty(503), /not safe/);
    await refused(['health', 'node-state'], empty(503), /the member is shut down/);
    await refused(['cluster'], empty(404), /no such endpoint on this member \(HTTP 404 Not Found\)\nhint: is the address that of a Grid member/);
    await refused(['state'], empty(405), /HTTP 405 Method Not Allowed/);
    await refused(['state'], empty(500, { 'grid-error': 'boom' }), /: boom \(HTTP 500 Internal Server Error\)/);
    await refused(['state'], empty(418), /: HTTP 418 \(HTTP 418\)/);
  });

  test('with --json a refusal prints the member\'s JSON body, or an object describing it', async () => {
    const a = await run(['--json', 'state'], json(403, { status: 'fail', message: 'unauthenticated' }));
    assert.equal(a.exitCode, 1);
    assert.equal(a.stdout, '{"status":"fail","message":"unauthenticated"}\n');
    assert.match(a.stderr, /unauthenticated/);
    const b = await run(['--json', 'health', 'ready'], empty(503));
    assert.equal(b.exitCode, 1);
    assert.deepEqual(JSON.parse(b.stdout), { status: 'fail', httpStatus: 503, message: 'not ready: the member has not joined a cluster yet, or is shutting down' });
  });

  test('an answer the command cannot read is exit 1, quoting it', async () => {
    for (const [argv, answer] of [
      [['state'], { status: 200, headers: {}, body: '<html>hi</html>' }],
      [['state'], json(200, { status: 'success' })],
      [['cluster'], json(200, { members: 'none' })],
      [['health'], json(200, [1, 2])],
      [['member-list'], json(200, { 'member-list': [1] })],
      [['shutdown', '--member'], json(200, { status: 'maybe' })],
    ] as [string[], HttpAnswer][]) {
      const r = await run(argv, answer);
      assert.equal(r.exitCode, 1, argv.join(' '));
      assert.match(r.stderr, /answered HTTP 200 OK with an unexpected answer \(expected /);
      const j = await run([...argv, '--json'], answer);
      assert.equal(j.exitCode, 1);
      assert.equal((JSON.parse(j.stdout) as { status: string }).status, 'fail');
    }
  });

  test('no answer is exit 3, with a hint by cause; --json describes it', async () => {
    const failed = async (argv: string[], f: TransportFailure, stderr: RegExp): Promise<Outcome> => {
      const r = await run(argv, f);
      assert.equal(r.exitCode, 3);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, stderr);
      return r;
    };
    await failed(['state', '--address', 'db:1'], { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.0.0.1:1', timedOut: false },
      /^grid-admin: state: db:1: cannot reach the member: connect ECONNREFUSED 10\.0\.0\.1:1\nhint: nothing listens there/);
    await failed(['state'], { code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND x', timedOut: false }, /does not resolve/);
    await failed(['state'], { code: null, message: 'no complete answer within 30 s', timedOut: true }, /no answer: no complete answer within 30 s\nhint: the member did not answer in time/);
    await failed(['state'], { code: 'ECONNRESET', message: 'socket hang up', timedOut: false }, /if the member speaks TLS, add --https/);
    await failed(['state', '--https'], { code: 'EPROTO', message: 'wrong version number', timedOut: false }, /drop --https/);
    await failed(['state', '--https'], { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', message: 'unable to verify', timedOut: false }, /--ca FILE/);
    await failed(['state', '--https'], { code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: 'altname', timedOut: false }, /does not name this address/);
    await failed(['state'], { code: 'EWHATEVER', message: 'odd', timedOut: false }, /cannot reach the member: odd\n$/);
    const j = await run(['state', '--json'], { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED', timedOut: false });
    assert.deepEqual(JSON.parse(j.stdout), { status: 'fail', exitCode: 3, error: 'connection', code: 'ECONNREFUSED', message: 'cannot reach the member: connect ECONNREFUSED' });
    const t = await run(['state', '--json'], { code: null, message: 'late', timedOut: true });
    assert.equal((JSON.parse(t.stdout) as { error: string }).error, 'timeout');
  });
});
