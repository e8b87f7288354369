// Checks src/http/router.ts: static > parametric > tail precedence with backtracking, per-method
// matching, 405 with an ordered Allow list, HEAD falling back to GET, tail parameters matching the
// rest of the path after their `/` (one or more segments, never a path that ends before the `/`:
// the regression where `GET /grid/rest/maps` answered 405 Allow: HEAD instead of 404), decoded
// segments that contain "/", and assertions on bad registrations. Each test builds a small router
// whose handlers are strings, then calls find() with split segments; the last test uses the
// member's own table (routes.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router, type RouteMatch } from '../../src/http/router.js';
import { splitTarget } from '../../src/http/path.js';
import { buildRoutes } from '../../src/http/routes.js';
import { AssertionError } from '../../src/util/assert.js';

const seg = (target: string): string[] => splitTarget(target).segments;

function found<H, M>(m: RouteMatch<H, M>): Extract<RouteMatch<H, M>, { kind: 'found' }> {
  assert.equal(m.kind, 'found', JSON.stringify(m));
  return m as Extract<RouteMatch<H, M>, { kind: 'found' }>;
}

test('static beats parametric beats tail', () => {
  const r = new Router<string>()
    .on(['GET'], '/a/static', 'static')
    .on(['GET'], '/a/:p', 'param')
    .on(['GET'], '/a/*rest', 'tail');
  assert.equal(found(r.find('GET', seg('/a/static'))).handler, 'static');
  assert.deepEqual(found(r.find('GET', seg('/a/other'))).params, { p: 'other' });
  const t = found(r.find('GET', seg('/a/x/y')));
  assert.equal(t.handler, 'tail');
  assert.deepEqual(t.tail, ['x', 'y']);
  assert.deepEqual(t.params, { rest: 'x/y' });
});

test('backtracking: a dead end under a static child falls back to the parameter, then the tail', () => {
  const r = new Router<string>()
    .on(['GET'], '/grid/rest/queues/size/x', 'static-deep')
    .on(['GET'], '/grid/rest/queues/:name/size', 'size')
    .on(['GET'], '/grid/rest/queues/:name/:timeout', 'poll')
    .on(['GET'], '/grid/rest/*rest', 'catch-all');
  assert.equal(found(r.find('GET', seg('/grid/rest/queues/size/size'))).handler, 'size');
  assert.deepEqual(found(r.find('GET', seg('/grid/rest/queues/size/10'))).params, { name: 'size', timeout: '10' });
  assert.equal(found(r.find('GET', seg('/grid/rest/queues/size/x'))).handler, 'static-deep');
  const c = found(r.find('GET', seg('/grid/rest/queues/q/1/2')));
  assert.equal(c.handler, 'catch-all');
  assert.deepEqual(c.tail, ['queues', 'q', '1', '2']);
});

test('parameter names are per route; values are not leaked between attempts', () => {
  const r = new Router<string>()
    .on(['GET'], '/q/:name/size', 'size')
    .on(['POST'], '/q/:queue/:value', 'offer');
  assert.deepEqual(found(r.find('GET', seg('/q/a/size'))).params, { name: 'a' });
  assert.deepEqual(found(r.find('POST', seg('/q/a/size'))).params, { queue: 'a', value: 'size' });
});

test('matching is per method: a route for another method does not hide this one', () => {
  const r = new Router<string>().on(['GET'], '/a/b', 'get-static').on(['POST'], '/a/:p', 'post-param');
  assert.equal(found(r.find('POST', seg('/a/b'))).handler, 'post-param');
  assert.equal(found(r.find('GET', seg('/a/b'))).handler, 'get-static');
});

test('405 lists every method that matches the path, in a stable order', () => {
  const r = new Router<string>()
    .on(['DELETE', 'POST', 'GET'], '/grid/rest/maps/:name/*key', 'map')
    .on(['PUT'], '/grid/rest/maps/:name/*key', 'put')
    .on(['PATCH', 'OPTIONS'], '/grid/rest/maps/x/y', 'odd');
  assert.deepEqual(r.find('TRACE', seg('/grid/rest/maps/m/k')), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'] });
  assert.deepEqual(r.find('TRACE', seg('/grid/rest/maps/x/y')), {
    kind: 'method-not-allowed',
    allow: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'],
  });
  const s = new Router<string>().on(['POST'], '/grid/rest/log-level', 'set');
  assert.deepEqual(s.find('GET', seg('/grid/rest/log-level')), { kind: 'method-not-allowed', allow: ['POST'] });
});

test('404 when no route matches the path for any method', () => {
  const r = new Router<string>().on(['GET'], '/grid/rest/cluster', 'cluster').on(['GET'], '/grid/health', 'health');
  assert.deepEqual(r.find('GET', seg('/grid/rest/clusterXYZ')), { kind: 'not-found' });
  assert.deepEqual(r.find('GET', seg('/grid/rest/cluster/')), { kind: 'not-found' }, 'a trailing slash is a different path');
  assert.deepEqual(r.find('GET', seg('/grid/rest')), { kind: 'not-found' });
  assert.deepEqual(r.find('GET', seg('/grid/health/nope')), { kind: 'not-found' });
  assert.deepEqual(r.find('GET', seg('/')), { kind: 'not-found' });
});

test('HEAD falls back to GET; an explicit HEAD route wins', () => {
  const r = new Router<string>().on(['GET'], '/grid/health', 'get-health').on(['GET'], '/x', 'get-x').on(['HEAD'], '/x', 'head-x');
  assert.equal(found(r.find('HEAD', seg('/grid/health'))).handler, 'get-health');
  assert.equal(found(r.find('HEAD', seg('/x'))).handler, 'head-x');
  const p = new Router<string>().on(['POST'], '/p', 'post');
  assert.deepEqual(p.find('HEAD', seg('/p')), { kind: 'method-not-allowed', allow: ['POST'] });
});

test('an explicit HEAD route anywhere on the path beats the GET fallback of a more specific route', () => {
  // The member's table: GET maps/:map/*key checks existence; HEAD on any map path answers 200 (rest.md §4.1).
  const r = new Router<string>().on(['GET'], '/grid/rest/maps/:map/*key', 'map-get').on(['HEAD'], '/grid/rest/maps/*any', 'data-head');
  const h = found(r.find('HEAD', seg('/grid/rest/maps/m/k')));
  assert.equal(h.handler, 'data-head');
  assert.deepEqual([h.params, h.tail], [{ any: 'm/k' }, ['m', 'k']]);
  assert.equal(found(r.find('GET', seg('/grid/rest/maps/m/k'))).handler, 'map-get');
  const onlyGet = new Router<string>().on(['GET'], '/a/:x', 'get');
  assert.deepEqual(found(onlyGet.find('HEAD', seg('/a/1'))).params, { x: '1' }, 'params are rebuilt for the GET pass');
});

test('tail parameters match the rest after their "/": one or more segments, the last possibly empty', () => {
  const r = new Router<string>().on(['GET', 'DELETE'], '/grid/rest/maps/:name/*key', 'map');
  assert.deepEqual(r.find('DELETE', seg('/grid/rest/maps/m')), { kind: 'not-found' }, 'no "/" after the name: the tail does not match');
  const empty = found(r.find('GET', seg('/grid/rest/maps/m/')));
  assert.deepEqual([empty.params, empty.tail], [{ name: 'm', key: '' }, ['']]);
  const trailing = found(r.find('GET', seg('/grid/rest/maps/m/k/')));
  assert.deepEqual([trailing.params, trailing.tail], [{ name: 'm', key: 'k' }, ['k', '']]);
  const deep = found(r.find('GET', seg('/grid/rest/maps/m/a/b//c')));
  assert.deepEqual(deep.params, { name: 'm', key: 'a/b//c' });
  assert.equal(deep.pattern, '/grid/rest/maps/:name/*key');
});

test('regression: a tail does not match a path that ends before its "/" (404, not 405 with Allow: HEAD)', () => {
  const r = new Router<string>().on(['HEAD'], '/grid/rest/maps/*any', 'data-head').on(['GET'], '/grid/rest/maps/:map/*key', 'map-get');
  assert.deepEqual(r.find('GET', seg('/grid/rest/maps')), { kind: 'not-found' });
  assert.deepEqual(r.find('HEAD', seg('/grid/rest/maps')), { kind: 'not-found' });
  // With the "/", the empty remainder is the tail's: HEAD matches, GET is a 405 naming HEAD (and GET's own route below).
  const h = found(r.find('HEAD', seg('/grid/rest/maps/')));
  assert.deepEqual([h.handler, h.params, h.tail], ['data-head', { any: '' }, ['']]);
  assert.deepEqual(r.find('GET', seg('/grid/rest/maps/m')), { kind: 'method-not-allowed', allow: ['HEAD'] });
  const withoutSlash = new Router<string>().on(['GET'], '/a/:x', 'one').on(['GET'], '/a/:x/*rest', 'more');
  assert.equal(found(withoutSlash.find('GET', seg('/a/1'))).handler, 'one', 'the shorter path is served by its own route');
  assert.deepEqual(found(withoutSlash.find('GET', seg('/a/1'))).tail, []);
  assert.equal(found(withoutSlash.find('GET', seg('/a/1/'))).handler, 'more');
});

test('the member table: /grid/rest/maps and /grid/rest/queues are 404; with "/" and a name they reach the data handlers', () => {
  const r = buildRoutes();
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE']) {
    assert.deepEqual(r.find(method, seg('/grid/rest/maps')), { kind: 'not-found' }, `${method} /grid/rest/maps`);
    assert.deepEqual(r.find(method, seg('/grid/rest/queues')), { kind: 'not-found' }, `${method} /grid/rest/queues`);
  }
  const handlerOf = (method: string, target: string): string => found(r.find(method, seg(target))).handler.handler.name;
  // rest.md §4.1: POST/GET on /maps/{m} and /maps/{m}/ are the handlers' 400 (missing key); DELETE clears the map.
  for (const target of ['/grid/rest/maps/m', '/grid/rest/maps/m/', '/grid/rest/maps/']) {
    assert.equal(handlerOf('GET', target), 'mapGet', target);
    assert.equal(handlerOf('POST', target), 'mapPut', target);
    assert.equal(handlerOf('DELETE', target), 'mapDelete', target);
    assert.equal(handlerOf('HEAD', target), 'dataHead', target);
  }
  assert.deepEqual(found(r.find('DELETE', seg('/grid/rest/maps/m'))).tail, [], 'no key: the handler clears the map');
  assert.deepEqual(found(r.find('GET', seg('/grid/rest/maps/m/a/b'))).tail, ['a', 'b']);
  // rest.md §4.2: POST /queues/{q} offers the body; POST /queues/ is the handler's 400 (missing name).
  for (const target of ['/grid/rest/queues/q', '/grid/rest/queues/']) assert.equal(handlerOf('POST', target), 'queueOffer', target);
  assert.equal(handlerOf('GET', '/grid/rest/queues/q/size'), 'queueGet');
  assert.equal(handlerOf('DELETE', '/grid/rest/queues/q'), 'queueDelete');
  assert.deepEqual(r.find('PATCH', seg('/grid/rest/maps/m')), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'] });
});

test('decoded segments that contain "/" stay one segment', () => {
  const r = new Router<string>().on(['GET'], '/grid/rest/maps/:name/*key', 'map').on(['GET'], '/grid/rest/queues/:name/size', 'size');
  assert.deepEqual(found(r.find('GET', seg('/grid/rest/maps/a%2Fb/c%2Fd/e'))).params, { name: 'a/b', key: 'c/d/e' });
  assert.deepEqual(found(r.find('GET', seg('/grid/rest/queues/x%2Fsize/size'))).params, { name: 'x/size' });
  assert.deepEqual(r.find('GET', seg('/grid/rest/queues/x/size%2F')), { kind: 'not-found' });
});

test('a parameter matches an empty segment (handlers decide: "missing name" is their 400)', () => {
  const r = new Router<string>().on(['POST'], '/grid/rest/queues/:name', 'offer');
  assert.deepEqual(found(r.find('POST', seg('/grid/rest/queues/'))).params, { name: '' });
});

test('meta is returned with the match; list() shows every route', () => {
  const r = new Router<string, { group: string }>()
    .on(['GET'], '/grid/health', 'h', { group: 'HEALTH_CHECK' })
    .on(['GET', 'POST'], '/grid/rest/maps/:name/*key', 'm', { group: 'DATA' });
  assert.deepEqual(found(r.find('HEAD', seg('/grid/health'))).meta, { group: 'HEALTH_CHECK' });
  assert.deepEqual(r.list().map((x) => `${x.method} ${x.pattern} ${x.meta.group}`), [
    'GET /grid/health HEALTH_CHECK',
    'GET /grid/rest/maps/:name/*key DATA',
    'POST /grid/rest/maps/:name/*key DATA',
  ]);
});

test('bad registrations are programmer errors', () => {
  const bad: [string[], string][] = [
    [[], '/a'],
    [['GET'], 'a'],
    [['GET'], '/a/*rest/b'],
    [['GET'], '/a/:'],
    [['GET'], '/a/:__proto__'],
    [['GET'], '/a/:x/:x'],
    [['G T'], '/a'],
  ];
  for (const [methods, pattern] of bad) {
    assert.throws(() => new Router<string>().on(methods, pattern, 'h'), AssertionError, pattern);
  }
  const r = new Router<string>().on(['GET'], '/a/:x', 'h');
  assert.throws(() => r.on(['GET'], '/a/:y', 'h2'), AssertionError, 'same shape, same method');
});
