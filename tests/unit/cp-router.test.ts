// The CP call router (src/cp/router.ts) against a scripted host on virtual time: it follows a
// not-leader hint at once, backs off when there is no leader, retries an indeterminate write with
// the same call (the invocation UUID is inside it) unless fail-on-indeterminate is set for a call
// that is not idempotent, moves on when a target does not answer, and gives up with 'timeout'
// after the call timeout, never with a value it did not get.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CpRouter } from '../../src/cp/router.js';
import type { AttemptAnswer, RouteOutcome, RouterHost } from '../../src/cp/router.js';

type Script = (address: string, n: number) => AttemptAnswer<string> | null;

function setup(script: Script, failOnIndeterminate = false): { router: CpRouter<string, string>; run: () => RouteOutcome<string> | undefined; attempts: string[]; clock: { now: number } } {
  const clock = { now: 0 };
  const timers: { at: number; fn: () => void; live: boolean }[] = [];
  const attempts: string[] = [];
  const host: RouterHost<string, string> = {
    groupMembers: (g) => (g === 'default' ? ['a', 'b', 'c'] : null),
    localLeader: () => null,
    attempt: (address, _g, _call, answer) => {
      attempts.push(address);
      const a = script(address, attempts.length);
      if (a !== null) {
        const t = { at: clock.now + 1, fn: () => answer(a), live: true };
        timers.push(t);
      }
    },
    schedule: (fn, ms) => {
      const t = { at: clock.now + ms, fn, live: true };
      timers.push(t);
      return { cancel: () => void (t.live = false) };
    },
    monotonicMs: () => clock.now,
    random: () => 0,
  };
  const router = new CpRouter({ callTimeoutMs: 10_000, attemptTimeoutMs: 1000, backoffMs: 100, failOnIndeterminate }, host);
  const run = (): RouteOutcome<string> | undefined => {
    let out: RouteOutcome<string> | undefined;
    router.route('default', 'call', false, (o) => (out = o));
    for (let i = 0; i < 100_000 && out === undefined; i++) {
      timers.sort((x, y) => x.at - y.at);
      const t = timers.shift();
      if (t === undefined) break;
      clock.now = Math.max(clock.now, t.at);
      if (t.live) t.fn();
    }
    return out;
  };
  return { router, run, attempts, clock };
}

test('a not-leader answer with a hint is followed at once, and the leader is remembered', () => {
  const { router, run, attempts } = setup((addr) => (addr === 'c' ? { ok: true, value: 'v', index: 7 } : { ok: false, failure: 'not-leader', leader: 'c' }));
  assert.deepEqual(run(), { ok: true, value: 'v', index: 7 });
  assert.deepEqual(attempts, ['a', 'c']);
  router.route('default', 'again', false, () => {});
  assert.equal(attempts.at(-1), 'c', 'the next call goes to the known leader first');
});

test('no leader: it backs off and tries the members in turn', () => {
  const { run, attempts, clock } = setup((addr, n) => (n >= 4 && addr === 'b' ? { ok: true, value: 'v', index: 1 } : { ok: false, failure: 'not-leader', leader: null }));
  assert.equal(run()?.ok, true);
  assert.ok(attempts.length >= 4);
  assert.ok(clock.now >= 300, 'with a back-off between tries');
});

test('an indeterminate outcome is retried (same call, same invocation), unless the user asked to fail on it', () => {
  const script: Script = (_a, n) => (n === 1 ? { ok: false, failure: 'indeterminate', leader: 'b' } : { ok: true, value: 'once', index: 3 });
  assert.deepEqual(setup(script).run(), { ok: true, value: 'once', index: 3 });
  assert.deepEqual(setup(script, true).run(), { ok: false, failure: 'indeterminate' });
});

test('a target that never answers is left for another member', () => {
  const { run, attempts } = setup((addr) => (addr === 'a' ? null : { ok: true, value: 'v', index: 2 }));
  assert.equal(run()?.ok, true);
  assert.deepEqual(attempts.slice(0, 2), ['a', 'b']);
});

test('the call timeout ends it with timeout, not a value', () => {
  const { run, clock } = setup(() => null);
  assert.deepEqual(run(), { ok: false, failure: 'timeout' });
  assert.ok(clock.now >= 10_000 && clock.now < 11_000);
});

test('an unknown group answers no-group at once', () => {
  const { router } = setup(() => null);
  let out: RouteOutcome<string> | undefined;
  router.route('nope', 'c', false, (o) => (out = o));
  assert.deepEqual(out, { ok: false, failure: 'no-group' });
});
