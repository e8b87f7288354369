// The reads after the heal: every write-once key and register key through every member, the queue
// drained through the members, and the partition owners. A read that fails (503, deadline) is retried
// a few times before it counts as unreadable, because a member may still be finishing a hand-back.
import { KeepAliveClient, forEachConcurrent } from '../../tests/harness/cluster.js';
import type { Delivery, ReadResult } from './analysis.js';
import { QUEUE, type Fleet } from './fleet.js';

const READ_TRIES = 4;
const READ_RETRY_MS = 1000;
const WORKERS_PER_MEMBER = 8;

async function readKey(client: KeepAliveClient, map: string, key: string): Promise<ReadResult> {
  let detail = '';
  for (let attempt = 0; attempt < READ_TRIES; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, READ_RETRY_MS));
    try {
      const r = await client.request('GET', `/grid/rest/maps/${map}/${encodeURIComponent(key)}`);
      if (r.status === 200) return { kind: 'value', value: r.text() };
      if (r.status === 204) return { kind: 'absent' };
      detail = `${r.statusLine} ${r.headers['grid-error'] ?? ''}`.trim();
    } catch (e) {
      detail = (e as Error).message;
    }
  }
  return { kind: 'error', detail };
}

/** Reads every key of `map` through every member: result.get(key)[member]. */
export async function readThroughEveryMember(fleet: Fleet, map: string, keys: readonly string[]): Promise<Map<string, ReadResult[]>> {
  const out = new Map<string, ReadResult[]>();
  for (const k of keys) out.set(k, new Array<ReadResult>(fleet.members.length));
  await Promise.all(
    fleet.members.map(async (m) => {
      const clients = Array.from({ length: WORKERS_PER_MEMBER }, () => new KeepAliveClient(m.port, 20_000, m.host));
      try {
        await forEachConcurrent(keys, WORKERS_PER_MEMBER, async (key, w) => {
          out.get(key)![m.index] = await readKey(clients[w]!, map, key);
        });
      } finally {
        for (const c of clients) c.close();
      }
    }),
  );
  return out;
}

/**
 * Polls the queue empty through every member (polls with timeout 0, several pollers per member);
 * done when every member in turn answers 204. Errors are retried until `deadlineMs`; then it throws.
 */
export async function drainQueue(fleet: Fleet, deadlineMs: number): Promise<Delivery[]> {
  const drained: Delivery[] = [];
  const end = Date.now() + deadlineMs;
  const poll = async (client: KeepAliveClient, member: number): Promise<'item' | 'empty' | 'error'> => {
    const sentMs = Date.now();
    try {
      const r = await client.request('DELETE', `/grid/rest/queues/${QUEUE}/0`);
      if (r.status === 200) {
        drained.push({ item: r.text(), sentMs, endMs: Date.now(), member, duringRun: false });
        return 'item';
      }
      return r.status === 204 ? 'empty' : 'error';
    } catch {
      return 'error';
    }
  };
  const clients = fleet.members.map((m) => Array.from({ length: 4 }, () => new KeepAliveClient(m.port, 20_000, m.host)));
  try {
    for (;;) {
      // Parallel pollers until each has seen the queue empty twice in a row.
      await Promise.all(
        fleet.members.flatMap((m) =>
          clients[m.index]!.map(async (c) => {
            let empties = 0;
            while (empties < 2 && Date.now() < end) {
              const r = await poll(c, m.index);
              empties = r === 'empty' ? empties + 1 : 0;
              if (r === 'error') await new Promise((res) => setTimeout(res, 200));
            }
          }),
        ),
      );
      // Then every member must agree it is empty.
      let allEmpty = true;
      for (const m of fleet.members) if ((await poll(clients[m.index]![0]!, m.index)) !== 'empty') allEmpty = false;
      if (allEmpty) return drained;
      if (Date.now() >= end) throw new Error(`the queue was not drained within ${deadlineMs} ms (${drained.length} item(s) so far)`);
    }
  } finally {
    for (const row of clients) for (const c of row) c.close();
  }
}

export interface OwnershipReport {
  readonly owned: number;
  readonly partitionCount: number;
  readonly tableVersions: readonly number[];
  readonly problem: string | null;
}

/** Every partition has exactly one owner: the members' owned counts add up to the partition count, on one table version. */
export async function checkOwnership(fleet: Fleet, partitionCount: number): Promise<OwnershipReport> {
  const metrics = await Promise.all(fleet.members.map((m) => m.metrics()));
  const owned = metrics.reduce((sum, x) => sum + (x.ownedPartitions ?? 0), 0);
  const tableVersions = metrics.map((x) => x.partitionTableVersion ?? -1);
  let problem: string | null = null;
  if (new Set(tableVersions).size !== 1) problem = `members hold different partition tables (versions ${tableVersions.join(', ')})`;
  else if (owned !== partitionCount) problem = `${owned} partitions have an owner, of ${partitionCount} (owned per member: ${metrics.map((x) => x.ownedPartitions).join(', ')})`;
  return { owned, partitionCount, tableVersions, problem };
}
