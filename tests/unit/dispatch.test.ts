// Checks the order of checks in the dispatcher without sockets: REST off (403 + close) → path
// decoding (400) → group (403 naming the group) → route (404 / 405 with Allow), and that handler
// errors become the right shape: data calls empty body + Grid-Error, other calls JSON, unexpected
// exceptions 500 without a stack.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher, type Prepared } from '../../src/http/dispatch.js';
import { GridError } from '../../src/util/errors.js';
import { buildRoutes } from '../../src/http/routes.js';
import type { MemberApi } from '../../src/member/member-api.js';
import type { EndpointGroup } from '../../src/config/types.js';
import type { HttpRequest } from '../../src/http/request.js';

function fakeApi(options: { rest?: boolean; healthWithoutRest?: boolean; groups?: EndpointGroup[]; getThrows?: unknown } = {}): MemberApi {
  const groups = new Set(options.groups ?? ['CLUSTER_READ', 'HEALTH_CHECK', 'DATA']);
  const api: Partial<MemberApi> = {
    restEnabled: () => options.rest ?? true,
    healthCheckWithoutRest: () => options.healthWithoutRest ?? false,
    groupEnabled: (g) => groups.has(g),
    securityEnabled: () => false,
    mapGet: async () => {
      if (options.getThrows !== undefined) throw options.getThrows;
      return null;
    },
    instanceName: () => 'grid-test',
  };
  return api as MemberApi;
}

function dispatcher(api: MemberApi, errors: unknown[] = []): Dispatcher {
  return new Dispatcher(buildRoutes(), api, { internalError: (e) => errors.push(e) });
}

function reply(p: Prepared): Extract<Prepared, { kind: 'reply' }>['reply'] {
  assert.equal(p.kind, 'reply');
  return (p as Extract<Prepared, { kind: 'reply' }>).reply;
}

function request(p: Prepared, method: string): HttpRequest {
  assert.equal(p.kind, 'route');
  const r = p as Extract<Prepared, { kind: 'route' }>;
  return { method, segments: r.segments, params: r.params, tail: r.tail, header: () => undefined, body: null, remoteAddress: '127.0.0.1', client: { isGone: () => false, onGone: () => () => {} } };
}

test('REST off answers 403 and closes, whatever the path', () => {
  const d = dispatcher(fakeApi({ rest: false }));
  for (const target of ['/grid/rest/maps/m/k', '/nothing', '/grid/health']) {
    const r = reply(d.prepare('GET', target));
    assert.equal(r.status, 403);
    assert.equal(r.close, true);
    assert.equal(r.body, '{"status":"fail","message":"REST API is not enabled on this member"}');
  }
});

test('REST off with grid.http.healthcheck.enabled: /grid/health and below are routed, nothing else', () => {
  const d = dispatcher(fakeApi({ rest: false, healthWithoutRest: true }));
  for (const target of ['/grid/health', '/grid/health/ready', '/grid/health?x=1', '/grid/health/node-state']) {
    const p = d.prepare('GET', target);
    assert.equal(p.kind, 'route', target);
  }
  assert.equal(reply(d.prepare('GET', '/grid/health/nope')).status, 404);
  for (const target of ['/grid/healthx', '/grid/rest/cluster', '/grid/rest/maps/m/k', '/grid/health%2F']) {
    const r = reply(d.prepare('GET', target));
    assert.equal(r.status, 403, target);
    assert.equal(r.close, true);
  }
});

test('disabled group: 403 naming the group', () => {
  const d = dispatcher(fakeApi({ groups: ['CLUSTER_READ'] }));
  const r = reply(d.prepare('POST', '/grid/rest/maps/m/k'));
  assert.equal(r.status, 403);
  assert.equal(r.body, '{"status":"fail","message":"REST endpoint group DATA is not enabled"}');
});

test('bad escape: 400; on a data path with Grid-Error and no body', () => {
  const d = dispatcher(fakeApi());
  const data = reply(d.prepare('GET', '/grid/rest/maps/m/%zz'));
  assert.equal(data.status, 400);
  assert.equal(data.body, undefined);
  assert.match(String(data.headers?.['grid-error']), /malformed/);
  const other = reply(d.prepare('GET', '/grid/rest/instance%zz'));
  assert.equal(other.status, 400);
  assert.match(String(other.body), /"status":"fail"/);
});

test('unknown path 404, wrong method 405 with Allow', () => {
  const d = dispatcher(fakeApi());
  assert.equal(reply(d.prepare('GET', '/grid/rest/undefined')).status, 404);
  assert.equal(reply(d.prepare('GET', '/grid/health/nope')).status, 404);
  const r = reply(d.prepare('DELETE', '/grid/rest/instance'));
  assert.equal(r.status, 405);
  assert.equal(r.headers?.allow, 'GET, HEAD');
});

test('handler errors: data calls empty + Grid-Error, unexpected ones 500 and logged', async () => {
  const errors: unknown[] = [];
  const d = dispatcher(fakeApi({ getThrows: new Error('boom at /secret/path') }), errors);
  const p = d.prepare('GET', '/grid/rest/maps/m/k');
  const r = await d.run(p as Extract<Prepared, { kind: 'route' }>, request(p, 'GET'));
  assert.equal(r.status, 500);
  assert.equal(r.body, undefined);
  assert.equal(r.headers?.['grid-error'], 'internal error');
  assert.equal(errors.length, 1);
  const missing = d.prepare('POST', '/grid/rest/maps/m/');
  const r2 = await d.run(missing as Extract<Prepared, { kind: 'route' }>, request(missing, 'POST'));
  assert.equal(r2.status, 400);
  assert.equal(r2.headers?.['grid-error'], 'missing key');
});

test('regression: /grid/rest/maps and /grid/rest/queues without "/" are 404 (not 405 Allow: HEAD); the keyless calls of rest.md §4 keep their answers', async () => {
  const cleared: string[] = [];
  const offered: string[] = [];
  const api = {
    ...fakeApi(),
    mapClear: async (map: string) => void cleared.push(map),
    queueOffer: async (name: string, value: Buffer) => {
      offered.push(`${name}=${value.toString()}`);
      return true;
    },
  } as unknown as MemberApi;
  const d = dispatcher(api);
  for (const method of ['GET', 'HEAD', 'POST', 'DELETE']) {
    for (const target of ['/grid/rest/maps', '/grid/rest/queues']) {
      const r = reply(d.prepare(method, target));
      assert.equal(r.status, 404, `${method} ${target}`);
      assert.equal(r.headers?.allow, undefined);
    }
  }
  const run = async (method: string, target: string, body: Buffer | null = null): Promise<{ status: number; error: unknown }> => {
    const p = d.prepare(method, target);
    const r = await d.run(p as Extract<Prepared, { kind: 'route' }>, { ...request(p, method), body });
    return { status: r.status, error: r.headers?.['grid-error'] };
  };
  for (const target of ['/grid/rest/maps/m', '/grid/rest/maps/m/', '/grid/rest/maps/']) {
    assert.deepEqual(await run('GET', target), { status: 400, error: 'missing key' }, `GET ${target}`);
    assert.deepEqual(await run('POST', target), { status: 400, error: 'missing key' }, `POST ${target}`);
  }
  assert.deepEqual(await run('DELETE', '/grid/rest/maps/m'), { status: 200, error: undefined });
  assert.deepEqual(await run('DELETE', '/grid/rest/maps/n/'), { status: 200, error: undefined });
  assert.deepEqual(cleared, ['m', 'n']);
  assert.equal((await run('HEAD', '/grid/rest/maps/')).status, 200);
  assert.deepEqual(await run('POST', '/grid/rest/queues/q', Buffer.from('item')), { status: 200, error: undefined });
  assert.deepEqual(offered, ['q=item']);
  assert.deepEqual(await run('POST', '/grid/rest/queues/'), { status: 400, error: 'missing queue name' });
});

test('a routed info call runs its handler', async () => {
  const d = dispatcher(fakeApi());
  const p = d.prepare('GET', '/grid/rest/instance?x=1');
  const r = await d.run(p as Extract<Prepared, { kind: 'route' }>, request(p, 'GET'));
  assert.equal(r.status, 200);
  assert.equal(r.body, '{"name":"grid-test"}');
});

// rest.md §2: HEAD is classified like GET, and answers what GET answers before any handler runs.
// Every registered pattern is made concrete and cut at every depth, with and without a trailing `/`,
// an extra segment and a query; with every group off and with every group on, HEAD and GET must
// reach the same decision (the same refusal, or both a route). Regression: HEAD /grid/rest/maps with
// DATA off once answered 200 (a tail route matched fewer segments than the group table counts).
test('HEAD and GET reach the same decision on every edge of every route, groups off and on', () => {
  const routes = buildRoutes();
  const paths = new Set<string>(['/', '/grid', '/grid/', '/grid/rest', '/grid/rest/']);
  for (const { pattern } of routes.list()) {
    const segments = pattern.replace(/:[A-Za-z]+/g, 'x').replace(/\*[A-Za-z]+/g, 'k').split('/');
    for (let i = 2; i <= segments.length; i++) {
      const path = segments.slice(0, i).join('/');
      for (const variant of [path, `${path}/`, `${path}/extra`, `${path}?q=1`]) paths.add(variant);
    }
  }
  const decision = (p: Prepared): string => (p.kind === 'reply' ? `${p.reply.status} ${String(p.reply.body ?? '')}` : 'route');
  for (const on of [false, true]) {
    const api = { restEnabled: () => true, groupEnabled: () => on } as Partial<MemberApi> as MemberApi;
    const d = new Dispatcher(routes, api, { internalError: () => {} });
    for (const path of paths) {
      assert.equal(decision(d.prepare('HEAD', path)), decision(d.prepare('GET', path)), `groups ${on ? 'on' : 'off'}: HEAD vs GET ${path}`);
    }
  }
  const dataOff = dispatcher(fakeApi({ groups: ['CLUSTER_READ', 'HEALTH_CHECK'] }));
  assert.equal(reply(dataOff.prepare('HEAD', '/grid/rest/maps')).status, 404);
  assert.equal(reply(dataOff.prepare('HEAD', '/grid/rest/maps/')).status, 403);
});

test('an error found before routing answers like the path: data paths with Grid-Error, others JSON', () => {
  const d = dispatcher(fakeApi());
  const e = new GridError('ERR_HTTP_TRANSFER_CODING', 'transfer coding \'gzip\' is not supported (only chunked)');
  const data = d.requestError('POST', '/grid/rest/maps/m/k', e);
  assert.equal(data.status, 501);
  assert.equal(data.body ?? '', '');
  assert.equal(data.headers?.['grid-error'], e.message);
  const queue = d.requestError('POST', '/grid/rest/queues/q', e);
  assert.equal(queue.headers?.['grid-error'], e.message);
  const mgmt = d.requestError('POST', '/grid/rest/management/cluster/state', e);
  assert.equal(mgmt.status, 501);
  assert.equal(mgmt.body, JSON.stringify({ status: 'fail', message: e.message }));
});
