// The nemesis's CP workload (issue #29, part 6): paced client loops beside the AP ones
// (workload.ts PacedLoops: every member in turn, skipping one only while the nemesis has it killed
// or stopped), sending CP calls over REST and recording every call as
// an operation of the linearizability checker (tests/harness/linearizability.ts):
//   register  AtomicLong nemesis-cas-<j>: get, set(v) and compareAndSet(e, u) with small values
//             (Jepsen's CAS register), so reads, failed CASes and writes interleave;
//   ref       AtomicReference nemesis-ref-<j>: get and set of a unique value;
//   ids       AtomicLong nemesis-ids: incrementAndGet; acknowledged ids must be unique and rise in
//             real time (an id answered before another call began is smaller than its id).
// A 200 (204 for a null reference) is an answer. A write without an answer (503 after the call
// timeout, 500, a socket error or the deadline) may or may not have taken effect: it is an
// operation without an output, which the checker lets take effect at any point after its call or
// never. A read without an answer changed nothing and is left out. Any other status is a failure
// of the run (a call the member should have accepted).
import type { KeepAliveClient } from '../../tests/harness/cluster.js';
import { PacedLoops } from './workload.js';
import { SeededRandom } from '../../src/util/prng.js';
import { atomicLongModel, atomicRefModel, checkHistory } from '../../tests/harness/linearizability.js';
import type { LongInput, LongOutput, Operation, RefInput, RefOutput, Verdict } from '../../tests/harness/linearizability.js';

export const CAS_OBJECTS = 4;
export const REF_OBJECTS = 2;
export const IDS_OBJECT = 'nemesis-ids';

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
}

export interface CpVerdict {
  readonly counts: CpCounts;
  readonly checked: number;
  readonly registerVerdict: Verdict;
  readonly refVerdict: Verdict;
  readonly idProblems: readonly string[];
  readonly problems: readonly string[];
  readonly checkSeconds: number;
}

export class CpWorkload extends PacedLoops {
  readonly longOps: Operation<LongInput, LongOutput>[] = [];
  readonly refOps: Operation<RefInput, RefOutput>[] = [];
  readonly idCalls: IdCall[] = [];
  readonly counts: CpCounts = { acknowledged: 0, indeterminate: 0, readsUnanswered: 0, wrong: 0 };
  readonly wrongAnswers: string[] = [];
  constructor(readonly options: CpWorkloadOptions) {
    super(options);
  }

  protected async step(i: number, _member: number, c: KeepAliveClient, seq: number, rnd: SeededRandom): Promise<void> {
    const r = rnd.next();
    if (r < 0.5) await this.register(c, i, `nemesis-cas-${rnd.nextInt(CAS_OBJECTS)}`, rnd);
    else if (r < 0.75) await this.ref(c, i, `nemesis-ref-${rnd.nextInt(REF_OBJECTS)}`, rnd.next() < 0.5 ? null : `v-${i}-${seq}`);
    else await this.id(c, i);
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
    const problems: string[] = [];
    const say = (what: string, v: Verdict): void => {
      if (v.result === 'illegal') problems.push(`${what} history of ${v.object} is not linearizable: ${v.detail}`);
      if (v.result === 'unknown') problems.push(`${what} history of ${v.object} could not be decided within ${deadlineMs} ms (a failure to look into, not a pass)`);
    };
    say('AtomicLong CAS-register', registerVerdict);
    say('AtomicReference', refVerdict);
    problems.push(...idProblems);
    if (this.counts.wrong > 0) problems.push(`${this.counts.wrong} CP answer(s) a member should not have given, e.g. ${this.wrongAnswers.slice(0, 3).join(' | ')}`);
    const checked = longOps.length + refOps.length + this.idCalls.filter((c) => c.id !== null).length;
    return { counts: this.counts, checked, registerVerdict, refVerdict, idProblems, problems, checkSeconds: (Date.now() - t0) / 1000 };
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
