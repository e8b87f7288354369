// A trie router over decoded path segments (from path.ts splitTarget). Each trie node has static
// children (exact segment), at most one parametric child (`:name`, exactly one segment, possibly
// empty) and at most one tail child (`*name`, the rest of the path after the `/` written before it:
// one or more remaining segments, possibly the single empty one of a trailing `/`; last in a
// pattern). A tail never matches a path that ends before that `/`: `/maps/*any` matches `/maps/`
// and `/maps/m/k` but not `/maps`. A route that also serves the shorter path registers it itself.
//
// Invariants:
// - Precedence at every depth: static, then parametric, then tail, with full backtracking: a deeper
//   failure under a static child falls back to the parametric child, then to the tail.
// - Matching is per method: a route for another method never hides one for this method. HEAD first
//   looks for an explicit HEAD route (anywhere, by the precedence above); only when none matches does
//   it take the GET route, so a GET fallback never shadows an explicit HEAD route.
// - When no route matches for the method but some route matches the path, the answer is
//   method-not-allowed with `allow` = every method that would match this path (HEAD whenever GET),
//   ordered GET, HEAD, POST, PUT, DELETE, then the others alphabetically.
// - find() never throws and allocates only the result, its params object and the tail slice.
// - Registration mistakes (bad pattern, duplicate route) are programmer errors: assert, at start-up.
import { assert } from '../util/assert.js';
import { joinTail } from './path.js';

export type RouteMatch<H, M = undefined> =
  | {
      readonly kind: 'found';
      readonly handler: H;
      readonly meta: M;
      /** The pattern as registered, e.g. '/grid/rest/maps/:name/*key' (for logs and metrics). */
      readonly pattern: string;
      /** `:name` → its segment; `*name` → joinTail(tail) (joined with `/`, one trailing '' dropped). */
      readonly params: Record<string, string>;
      /** The segments matched by a tail parameter (at least one, possibly ''; [] when the route has none). */
      readonly tail: readonly string[];
    }
  | { readonly kind: 'method-not-allowed'; readonly allow: readonly string[] }
  | { readonly kind: 'not-found' };

export interface RouteInfo<M> {
  readonly method: string;
  readonly pattern: string;
  readonly meta: M;
}

interface Route<H, M> {
  readonly method: string;
  readonly pattern: string;
  readonly handler: H;
  readonly meta: M;
  /** Names of the `:params` in order of depth. */
  readonly paramNames: readonly string[];
  readonly tailName: string | null;
}

class TrieNode<H, M> {
  statics: Map<string, TrieNode<H, M>> | null = null;
  /**
   * The static children as parallel arrays while there are few: the segments a request brings are
   * new strings, and comparing a few of them costs less than hashing them for a Map lookup.
   */
  staticNames: string[] | null = null;
  staticNodes: TrieNode<H, M>[] | null = null;
  param: TrieNode<H, M> | null = null;
  tail: TrieNode<H, M> | null = null;
  /** method → route; null while no route ends at this node. */
  routes: Map<string, Route<H, M>> | null = null;
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const NO_TAIL: readonly string[] = Object.freeze([]);
const NOT_FOUND = Object.freeze({ kind: 'not-found' as const });

export class Router<H, M = undefined> {
  private readonly root = new TrieNode<H, M>();
  private readonly all: Route<H, M>[] = [];
  // Scratch state of one find(): find is synchronous, so one set per router is enough.
  private values: string[] = [];
  private valueCount = 0;
  private tailStart = -1;

  /** Registers `handler` for each method at `pattern` ('/static/:param/*tail'). */
  on(methods: readonly string[], pattern: string, handler: H, ...meta: undefined extends M ? [meta?: M] : [meta: M]): this {
    assert(methods.length > 0, `route ${pattern}: no methods`);
    assert(pattern.charCodeAt(0) === 0x2f, `route ${pattern}: a pattern starts with "/"`);
    const parts = pattern.slice(1).split('/');
    const paramNames: string[] = [];
    let tailName: string | null = null;
    let node = this.root;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      if (part.startsWith(':')) {
        const name = checkName(part.slice(1), pattern, paramNames);
        paramNames.push(name);
        node = node.param ??= new TrieNode();
      } else if (part.startsWith('*')) {
        assert(i === parts.length - 1, `route ${pattern}: a tail parameter must be the last segment`);
        tailName = checkName(part.slice(1), pattern, paramNames);
        node = node.tail ??= new TrieNode();
      } else {
        node.statics ??= new Map();
        let child = node.statics.get(part);
        if (child === undefined) {
          node.statics.set(part, (child = new TrieNode()));
          const few = node.statics.size <= STATIC_SCAN_MAX;
          node.staticNames = few ? [...node.statics.keys()] : null;
          node.staticNodes = few ? [...node.statics.values()] : null;
        }
        node = child;
      }
    }
    node.routes ??= new Map();
    for (const method of methods) {
      assert(TOKEN.test(method), `route ${pattern}: "${method}" is not an HTTP method token`);
      assert(!node.routes.has(method), `route ${method} ${pattern}: registered twice (or clashes with an equivalent pattern)`);
      const route: Route<H, M> = { method, pattern, handler, meta: meta[0] as M, paramNames, tailName };
      node.routes.set(method, route);
      this.all.push(route);
    }
    if (paramNames.length > this.values.length) this.values = new Array<string>(paramNames.length).fill('');
    return this;
  }

  /** Finds the route for a method and decoded segments (as splitTarget returns them). */
  find(method: string, segments: readonly string[]): RouteMatch<H, M> {
    this.valueCount = 0;
    this.tailStart = -1;
    let route = this.match(this.root, segments, 0, method);
    if (route === null && method === 'HEAD') {
      this.valueCount = 0;
      this.tailStart = -1;
      route = this.match(this.root, segments, 0, 'GET');
    }
    if (route !== null) return this.found(route, segments);
    const methods = new Set<string>();
    this.collect(this.root, segments, 0, methods);
    if (methods.size === 0) return NOT_FOUND;
    return { kind: 'method-not-allowed', allow: orderMethods(methods) };
  }

  /** Every registered route, in registration order (for docs and tests). */
  list(): RouteInfo<M>[] {
    return this.all.map((r) => ({ method: r.method, pattern: r.pattern, meta: r.meta }));
  }

  private match(node: TrieNode<H, M>, segs: readonly string[], i: number, method: string): Route<H, M> | null {
    if (i === segs.length) {
      const here = node.routes?.get(method);
      if (here !== undefined) return here;
    } else {
      const seg = segs[i] as string;
      const child = staticChild(node, seg);
      if (child !== undefined) {
        const r = this.match(child, segs, i + 1, method);
        if (r !== null) return r;
      }
      if (node.param !== null) {
        const n = this.valueCount;
        this.values[n] = seg;
        this.valueCount = n + 1;
        const r = this.match(node.param, segs, i + 1, method);
        if (r !== null) return r;
        this.valueCount = n;
      }
      // Only here, with a segment left: a path that ends at this node has no `/` for the tail.
      const tailRoute = node.tail?.routes?.get(method);
      if (tailRoute !== undefined) {
        this.tailStart = i;
        return tailRoute;
      }
    }
    return null;
  }

  // Explores every branch that matches the path (any method) and gathers the methods: the 405 answer.
  private collect(node: TrieNode<H, M>, segs: readonly string[], i: number, out: Set<string>): void {
    if (i === segs.length) {
      if (node.routes !== null) for (const m of node.routes.keys()) out.add(m);
    } else {
      const child = node.statics?.get(segs[i] as string);
      if (child !== undefined) this.collect(child, segs, i + 1, out);
      if (node.param !== null) this.collect(node.param, segs, i + 1, out);
      if (node.tail?.routes != null) for (const m of node.tail.routes.keys()) out.add(m);
    }
  }

  private found(route: Route<H, M>, segs: readonly string[]): RouteMatch<H, M> {
    const params: Record<string, string> = {};
    const names = route.paramNames;
    for (let k = 0; k < names.length; k++) params[names[k] as string] = this.values[k] as string;
    let tail = NO_TAIL;
    if (route.tailName !== null) {
      params[route.tailName] = joinTail(segs, this.tailStart);
      if (this.tailStart < segs.length) tail = segs.slice(this.tailStart);
    }
    return { kind: 'found', handler: route.handler, meta: route.meta, pattern: route.pattern, params, tail };
  }
}

/** Static children compared one by one up to this many; a Map lookup beyond. */
const STATIC_SCAN_MAX = 16;

function staticChild<H, M>(node: TrieNode<H, M>, seg: string): TrieNode<H, M> | undefined {
  const names = node.staticNames;
  if (names === null) return node.statics?.get(seg);
  for (let k = 0; k < names.length; k++) if (names[k] === seg) return (node.staticNodes as TrieNode<H, M>[])[k];
  return undefined;
}

function checkName(name: string, pattern: string, taken: readonly string[]): string {
  assert(NAME.test(name) && name !== '__proto__', `route ${pattern}: "${name}" is not a valid parameter name`);
  assert(!taken.includes(name), `route ${pattern}: parameter "${name}" appears twice`);
  return name;
}

function orderMethods(methods: Set<string>): readonly string[] {
  if (methods.has('GET')) methods.add('HEAD');
  const known = METHOD_ORDER.filter((m) => methods.has(m));
  const others = [...methods].filter((m) => !METHOD_ORDER.includes(m)).sort();
  return known.concat(others);
}
