// The nemesis's CP workload (issue #29, part 6): paced client loops beside the AP ones
// (workload.ts PacedLoops: every member in turn, skipping one only while the nemesis has it killed
// or stopped), sending CP calls over REST and recording every call as
// an operation of the linearizability checker (tests/harness/linearizability.ts):
//   register  AtomicLong nemesis-cas-<j>: get, set(v) and compareAndSet(e, u) with small values
//             (Jepsen's CAS register), so reads, failed CASes and writes interleave;
//   ref       AtomicReference nemesis-ref-<j>: get and set of a unique value;
//   ids       AtomicLong nemesis-ids: incrementAndGet; acknowledged ids must be unique and rise in
//             real time (an id answered before another call began is smaller than its id);
//   lock      FencedLock nemesis-lock through a REST session per loop: tryLock without waiting,
//             then unlock with the fence; checked as a mutex whose fences rise across owners (the
//             owner is the session). After a call without an answer the loop reads the lock's
//             owner (not part of the history) to know whether it holds it, once the member that
//             took the call can no longer be retrying it: a tryLock that does not wait leaves no
//             waiter behind that could be granted later;
//   semaphore Semaphore nemesis-sem of 2 permits (init once): tryAcquire 1 without waiting, then
//             release 1; checked as a counting semaphore (never three holders, a release only of a
//             permit held). After a call without an answer the loop releases: 200 or 409 says which.
// A session that expires under a client (404) ends its owner's history: if one does, the lock and
// semaphore checks are not made and the report says so (they would need the expiry's moment).
// A 200 (204 for a null reference) is an answer. A write without an answer (503 after the call
// timeout, 500, a socket error or the deadline) may or may not have taken effect: it is an
// operation without an output, which the checker lets take effect at any point after its call or
// never. A read without an answer changed nothing and is left out. Any other status is a failure
// of the run (a call the member should have accepted).
import type { KeepAliveClient } from '../../tests/harness/cluster.js';
import { PacedLoops } from './workload.js';
import { SeededRandom } from '../../src/util/prng.js';
import { atomicLongModel, atomicRefModel, checkHistory, lockModel, semaphoreModel } from '../../tests/harness/linearizability.js';
import type { LockInput, LockOutput, LongInput, LongOutput, Operation, RefInput, RefOutput, SemaphoreInput, SemaphoreOutput, Verdict } from '../../tests/harness/linearizability.js';

export const CAS_OBJECTS = 4;
export const REF_OBJECTS = 2;
export const IDS_OBJECT = 'nemesis-ids';
export const LOCK_OBJECT = 'nemesis-lock';
export const SEMAPHORE_OBJECT = 'nemesis-sem';
export const SEMAPHORE_PERMITS = 2;
/**
 * A lock call without an answer may still be applied while the member that took it retries it (up
 * to grid.cp.call.timeout.millis, 10 s): the loop reads the owner only after that, or a late grant
 * would look like a second, re-entrant acquisition of the session's own lock.
 */
const LOCK_PROBE_AFTER_MS = 15_000;

/** One loop's CP session and what it holds (null fence: not holding; 'unknown': to find out). */
interface Holder {
  session: number;
  lock: number | null | 'unknown';
  /** When the lock call without an answer was given up (its owner is read only after LOCK_PROBE_AFTER_MS). */
  unknownSinceMs: number;
  /** Permits held: 0, 1, or -1 when a call without an answer left it unknown (release finds out). */
  permits: number;
}

export interface CpWorkloadOptions {
  readonly hosts: readonly string[];
  readonly port: number;
  readonly clients: number;
  /** Calls per second over all CP loops. */
  readonly rate: number;
  readonly seeds: readonly number[];
  readonly requestDeadlineMs: number;
}

interface IdCall {
  readonly client: number;
  readonly callMs: number;
  returnMs: number;
  id: bigint | null;
}

export interface CpCounts {
  acknowledged: number;
  /** Writes without an answer (may or may not have applied). */
  indeterminate: number;
  /** Reads without an answer (left out: they changed nothing). */
  readsUnanswered: number;
  /** Answers the member should not have given (4xx): each is a failure. */
  wrong: number;
  /** Sessions that expired under a loop (404): the lock and semaphore checks are then not made. */
  sessionsLost: number;
}

export interface CpVerdict {
  readonly counts: CpCounts;
  readonly checked: number;
  readonly registerVerdict: Verdict;
  readonly refVerdict: Verdict;
  readonly lockVerdict: Verdict | null;
  readonly semaphoreVerdict: Verdict | null;
  readonly idProblems: readonly string[];
  readonly problems: readonly string[];
  readonly checkSeconds: number;
}

export class CpWorkload extends PacedLoops {
  readonly longOps: Operation<LongInput, LongOutput>[] = [];
  readonly refOps: Operation<RefInput, RefOutput>[] = [];
  readonly idCalls: IdCall[] = [];
  readonly lockOps: Operation<LockInput, LockOutput>[] = [];
  readonly semOps: Operation<SemaphoreInput, SemaphoreOutput>[] = [];
  readonly counts: CpCounts = { acknowledged: 0, indeterminate: 0, readsUnanswered: 0, wrong: 0, sessionsLost: 0 };
  private readonly holders = new Map<number, Holder>();
  private semaphoreReady = false;
  readonly wrongAnswers: string[] = [];
  constructor(readonly options: CpWorkloadOptions) {
    super(options);
  }

  protected async step(i: number, _member: number, c: KeepAliveClient, seq: number, rnd: SeededRandom): Promise<void> {
    const r = rnd.next();
    if (r < 0.35) await this.register(c, i, `nemesis-cas-${rnd.nextInt(CAS_OBJECTS)}`, rnd);
    else if (r < 0.5) await this.ref(c, i, `nemesis-ref-${rnd.nextInt(REF_OBJECTS)}`, rnd.next() < 0.5 ? null : `v-${i}-${seq}`);
    else if (r < 0.6) await this.id(c, i);
    else if (r < 0.8) await this.lock(c, i);
    else await this.semaphore(c, i);
  }

  /** This loop's session (made on first use, and again after one expired); null while none could be made. */
  private async holder(c: KeepAliveClient, loop: number): Promise<Holder | null> {
    const h = this.holders.get(loop);
    if (h !== undefined && h.session > 0) return h;
    const r = await this.call(c, 'POST', '/grid/rest/cp/sessions/default', null);
    if (r === null || r.status >= 500) return null;
    const m = r.status === 201 ? /"sessionId":(\d+)/.exec(r.text) : null;
    if (m === null) return void this.wrong('create session', r), null;
    const made: Holder = { session: Number(m[1]), lock: null, unknownSinceMs: 0, permits: 0 };
    this.holders.set(loop, made);
    return made;
  }

  /** A 404 on a session-bound call: the session is gone (expired or closed) under this loop. */
  private lost(h: Holder): void {
    this.counts.sessionsLost++;
    h.session = 0;
    h.lock = null;
    h.permits = 0;
  }

  private async lock(c: KeepAliveClient, loop: number): Promise<void> {
    const h = await this.holder(c, loop);
    if (h === null) return;
    const base = `/grid/rest/cp/locks/${LOCK_OBJECT}`;
    if (h.lock === 'unknown') {
      if (Date.now() - h.unknownSinceMs < LOCK_PROBE_AFTER_MS) return;
      // A call without an answer: read who holds it (a linearizable read, not part of the history).
      const r = await this.call(c, 'GET', base, null);
      if (r === null || r.status >= 500) return;
      const m = r.status === 200 ? /"fence":(\d+),"lockCount":(\d+),"sessionId":(-?\d+)/.exec(r.text) : null;
      if (m === null) return this.wrong(`get ${LOCK_OBJECT}`, r);
      h.lock = Number(m[3]) === h.session && Number(m[2]) > 0 ? Number(m[1]) : null;
      return;
    }
    const callMs = Date.now();
    if (h.lock === null) {
      const input: LockInput = { op: 'lock', client: h.session, wait: false };
      const r = await this.call(c, 'POST', `${base}/lock`, `${h.session}&0`);
      if (r === null || r.status >= 500) {
        this.counts.indeterminate++;
        this.lockOps.push({ object: LOCK_OBJECT, client: h.session, input, output: undefined, callMs, returnMs: Infinity });
        h.lock = 'unknown';
        h.unknownSinceMs = Date.now();
        return;
      }
      if (r.status === 404) return this.lost(h);
      const m = r.status === 200 ? /^\{"fence":(\d+)\}$/.exec(r.text) : null;
      if (m === null && r.status !== 204) return this.wrong(`lock ${LOCK_OBJECT}`, r);
      const fence = m === null ? 0 : Number(m[1]);
      this.counts.acknowledged++;
      this.lockOps.push({ object: LOCK_OBJECT, client: h.session, input, output: { fence }, callMs, returnMs: Date.now() });
      h.lock = fence > 0 ? fence : null;
      return;
    }
    const input: LockInput = { op: 'unlock', client: h.session };
    const r = await this.call(c, 'POST', `${base}/unlock`, `${h.session}&${h.lock}`);
    if (r === null || r.status >= 500) {
      this.counts.indeterminate++;
      this.lockOps.push({ object: LOCK_OBJECT, client: h.session, input, output: undefined, callMs, returnMs: Infinity });
      // Unlock again: 200 if the first did not apply, 409 if it did.
      return;
    }
    if (r.status === 404) return this.lost(h);
    if (r.status !== 200 && r.status !== 409) return this.wrong(`unlock ${LOCK_OBJECT}`, r);
    this.counts.acknowledged++;
    this.lockOps.push({ object: LOCK_OBJECT, client: h.session, input, output: { ok: r.status === 200 }, callMs, returnMs: Date.now() });
    h.lock = null;
  }

  private async semaphore(c: KeepAliveClient, loop: number): Promise<void> {
    const base = `/grid/rest/cp/semaphores/${SEMAPHORE_OBJECT}`;
    if (!this.semaphoreReady) {
      // init(2) before any acquire; true, or false if an earlier init without an answer applied.
      const r = await this.call(c, 'POST', `${base}/init`, String(SEMAPHORE_PERMITS));
      if (r === null || r.status >= 500) return;
      if (r.status !== 200) return this.wrong(`init ${SEMAPHORE_OBJECT}`, r);
      this.semaphoreReady = true;
      return;
    }
    const h = await this.holder(c, loop);
    if (h === null) return;
    const callMs = Date.now();
    if (h.permits === 0) {
      const input: SemaphoreInput = { op: 'acquire', client: h.session };
      const r = await this.call(c, 'POST', `${base}/acquire`, `${h.session}&1&0`);
      if (r === null || r.status >= 500) {
        this.counts.indeterminate++;
        this.semOps.push({ object: SEMAPHORE_OBJECT, client: h.session, input, output: undefined, callMs, returnMs: Infinity });
        h.permits = -1;
        return;
      }
      if (r.status === 404) return this.lost(h);
      if (r.status !== 200 && r.status !== 204) return this.wrong(`acquire ${SEMAPHORE_OBJECT}`, r);
      this.counts.acknowledged++;
      this.semOps.push({ object: SEMAPHORE_OBJECT, client: h.session, input, output: { acquired: r.status === 200 }, callMs, returnMs: Date.now() });
      h.permits = r.status === 200 ? 1 : 0;
      return;
    }
    const input: SemaphoreInput = { op: 'release', client: h.session };
    const r = await this.call(c, 'POST', `${base}/release`, `${h.session}&1`);
    if (r === null || r.status >= 500) {
      this.counts.indeterminate++;
      this.semOps.push({ object: SEMAPHORE_OBJECT, client: h.session, input, output: undefined, callMs, returnMs: Infinity });
      h.permits = -1;
      return;
    }
    if (r.status === 404) return this.lost(h);
    if (r.status !== 200 && r.status !== 409) return this.wrong(`release ${SEMAPHORE_OBJECT}`, r);
    this.counts.acknowledged++;
    this.semOps.push({ object: SEMAPHORE_OBJECT, client: h.session, input, output: { ok: r.status === 200 }, callMs, returnMs: Date.now() });
    h.permits = 0;
  }

  private async call(c: KeepAliveClient, method: string, path: string, body: string | null): Promise<{ status: number; text: string } | null> {
    try {
      const res = await c.request(method, path, body === null ? {} : { body, headers: { 'Content-Type': 'text/plain' } });
      return { status: res.status, text: res.text() };
    } catch {
      return null;
    }
  }

  /** A 4xx, or a 200 whose body does not read: the member answered what it should not have. */
  private wrong(what: string, r: { status: number; text: string }): void {
    this.counts.wrong++;
    if (this.wrongAnswers.length < 20) this.wrongAnswers.push(`${what}: ${r.status} ${r.text.slice(0, 200)}`);
  }

  private async register(c: KeepAliveClient, client: number, object: string, rnd: SeededRandom): Promise<void> {
    const base = `/grid/rest/cp/atomiclongs/${object}`;
    const pick = rnd.next();
    const callMs = Date.now();
    if (pick < 0.4) {
      const r = await this.call(c, 'GET', base, null);
      const v = r?.status === 200 ? /^\{"value":(-?\d+)\}$/.exec(r.text) : null;
      if (r === null || r.status >= 500) return void this.counts.readsUnanswered++;
      if (v === null) return this.wrong(`get ${object}`, r);
      this.counts.acknowledged++;
      this.longOps.push({ object, client, input: { op: 'get' }, output: { value: BigInt(v[1] as string) }, callMs, returnMs: Date.now() });
      return;
    }
    const input: LongInput = pick < 0.6 ? { op: 'set', value: BigInt(rnd.nextInt(5)) } : { op: 'compareAndSet', expected: BigInt(rnd.nextInt(5)), updated: BigInt(rnd.nextInt(5)) };
    const r = input.op === 'set' ? await this.call(c, 'POST', base, String(input.value)) : await this.call(c, 'POST', `${base}/compareAndSet`, `${input.expected}&${input.updated}`);
    if (r === null || r.status >= 500) {
      this.counts.indeterminate++;
      this.longOps.push({ object, client, input, output: undefined, callMs, returnMs: Infinity });
      return;
    }
    const returnMs = Date.now();
    if (input.op === 'set') {
      if (r.status !== 200) return this.wrong(`set ${object}`, r);
      this.counts.acknowledged++;
      this.longOps.push({ object, client, input, output: { value: input.value }, callMs, returnMs });
      return;
    }
    const m = r.status === 200 ? /^\{"result":(true|false),"value":(-?\d+)\}$/.exec(r.text) : null;
    if (m === null) return this.wrong(`compareAndSet ${object}`, r);
    this.counts.acknowledged++;
    this.longOps.push({ object, client, input, output: { result: m[1] === 'true' }, callMs, returnMs });
  }

  private async ref(c: KeepAliveClient, client: number, object: string, value: string | null): Promise<void> {
    const path = `/grid/rest/cp/atomicrefs/${object}`;
    const callMs = Date.now();
    if (value === null) {
      const r = await this.call(c, 'GET', path, null);
      if (r === null || r.status >= 500) return void this.counts.readsUnanswered++;
      if (r.status !== 200 && r.status !== 204) return this.wrong(`get ${object}`, r);
      this.counts.acknowledged++;
      this.refOps.push({ object, client, input: { op: 'get' }, output: { value: r.status === 204 ? null : r.text }, callMs, returnMs: Date.now() });
      return;
    }
    const input: RefInput = { op: 'set', value };
    const r = await this.call(c, 'POST', path, value);
    if (r === null || r.status >= 500) {
      this.counts.indeterminate++;
      this.refOps.push({ object, client, input, output: undefined, callMs, returnMs: Infinity });
      return;
    }
    if (r.status !== 200) return this.wrong(`set ${object}`, r);
    this.counts.acknowledged++;
    this.refOps.push({ object, client, input, output: { value: null }, callMs, returnMs: Date.now() });
  }

  private async id(c: KeepAliveClient, client: number): Promise<void> {
    const call: IdCall = { client, callMs: Date.now(), returnMs: Infinity, id: null };
    this.idCalls.push(call);
    const r = await this.call(c, 'POST', `/grid/rest/cp/atomiclongs/${IDS_OBJECT}/incrementAndGet`, null);
    if (r === null || r.status >= 500) return void this.counts.indeterminate++;
    const m = r.status === 200 ? /^\{"value":(-?\d+)\}$/.exec(r.text) : null;
    if (m === null) return this.wrong('incrementAndGet', r);
    this.counts.acknowledged++;
    call.returnMs = Date.now();
    call.id = BigInt(m[1] as string);
  }

  /** The checks of the whole history (the checker's time bound: `deadlineMs` per kind). */
  verdict(deadlineMs: number): CpVerdict {
    const t0 = Date.now();
    // set answers carry no value: the model's set accepts any output, so give none for acknowledged ones too.
    const longOps = this.longOps.map((o) => (o.input.op === 'set' && o.output !== undefined ? { ...o, output: undefined, returnMs: o.returnMs } : o));
    const registerVerdict = checkHistory(atomicLongModel, longOps, deadlineMs);
    const refOps = this.refOps.map((o) => (o.input.op === 'set' && o.output !== undefined ? { ...o, output: undefined } : o));
    const refVerdict = checkHistory(atomicRefModel, refOps, deadlineMs);
    const idProblems = checkIds(this.idCalls);
    // A session lost under a loop released what it held at a moment the history does not have.
    const blockingChecked = this.counts.sessionsLost === 0;
    const lockVerdict = blockingChecked ? checkHistory(lockModel, this.lockOps, deadlineMs) : null;
    const semaphoreVerdict = blockingChecked ? checkHistory(semaphoreModel(SEMAPHORE_PERMITS), this.semOps, deadlineMs) : null;
    const problems: string[] = [];
    const say = (what: string, v: Verdict): void => {
      if (v.result === 'illegal') problems.push(`${what} history of ${v.object} is not linearizable: ${v.detail}`);
      if (v.result === 'unknown') problems.push(`${what} history of ${v.object} could not be decided within ${deadlineMs} ms (a failure to look into, not a pass)`);
    };
    say('AtomicLong CAS-register', registerVerdict);
    say('AtomicReference', refVerdict);
    if (lockVerdict !== null) say('FencedLock (mutex, rising fences)', lockVerdict);
    if (semaphoreVerdict !== null) say(`Semaphore (${SEMAPHORE_PERMITS} permits)`, semaphoreVerdict);
    problems.push(...idProblems);
    if (this.counts.wrong > 0) problems.push(`${this.counts.wrong} CP answer(s) a member should not have given, e.g. ${this.wrongAnswers.slice(0, 3).join(' | ')}`);
    const checked = longOps.length + refOps.length + this.idCalls.filter((c) => c.id !== null).length + (blockingChecked ? this.lockOps.length + this.semOps.length : 0);
    return { counts: this.counts, checked, registerVerdict, refVerdict, lockVerdict, semaphoreVerdict, idProblems, problems, checkSeconds: (Date.now() - t0) / 1000 };
  }
}

/**
 * Unique ids from incrementAndGet: no id answered twice, and an id answered before another call
 * began is smaller than that call's id (a counter's linearizability, checked without a search).
 */
export function checkIds(calls: readonly IdCall[]): string[] {
  const answered = calls.filter((c): c is IdCall & { id: bigint } => c.id !== null);
  const problems: string[] = [];
  const seen = new Map<bigint, IdCall>();
  for (const c of answered) {
    const other = seen.get(c.id);
    if (other !== undefined && problems.length < 10) problems.push(`id ${c.id} answered twice (clients ${other.client} and ${c.client})`);
    seen.set(c.id, c);
  }
  const byReturn = [...answered].sort((a, b) => a.returnMs - b.returnMs);
  const byCall = [...answered].sort((a, b) => a.callMs - b.callMs);
  let j = 0;
  let maxBefore: IdCall | null = null;
  for (const c of byCall) {
    while (j < byReturn.length && (byReturn[j] as IdCall).returnMs < c.callMs) {
      const r = byReturn[j] as IdCall & { id: bigint };
      if (maxBefore === null || r.id > (maxBefore.id as bigint)) maxBefore = r;
      j++;
    }
    if (maxBefore !== null && c.id <= (maxBefore.id as bigint) && problems.length < 20) {
      problems.push(`id ${c.id} (client ${c.client}, called at ${c.callMs}) is not above id ${maxBefore.id} answered at ${maxBefore.returnMs}, before that call began`);
    }
  }
  return problems;
}
