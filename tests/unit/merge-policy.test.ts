// Checks the merge policies of src/data/merge-policy.ts as pure functions: for every policy, the
// outcome with no existing entry, and with an existing entry whose compared statistic is lower,
// equal (ties go to the merging entry) and higher, while every other statistic points the other way
// (so a policy that read the wrong field fails); ExpirationTime with "never expires" (Infinity); the
// append-only wire codes; and expirationTimeMs of src/data/expiry.ts, which feeds ExpirationTime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MERGE_POLICIES } from '../../src/config/types.js';
import { MERGE_POLICY_CODES, MERGE_RULES, mergePolicyOfCode, mergeWinner, type MergePolicyName, type MergeStats } from '../../src/data/merge-policy.js';
import { expirationTimeMs } from '../../src/data/expiry.js';

const BASE: MergeStats = { updateTimeMs: 1000, lastAccessTimeMs: 1000, expirationTimeMs: 1000, hits: 1000 };
const FIELDS = ['updateTimeMs', 'lastAccessTimeMs', 'expirationTimeMs', 'hits'] as const;
type Field = (typeof FIELDS)[number];

/** The statistic each comparing policy reads. */
const COMPARED: Partial<Record<MergePolicyName, Field>> = {
  LatestUpdateMergePolicy: 'updateTimeMs',
  HigherHitsMergePolicy: 'hits',
  LatestAccessMergePolicy: 'lastAccessTimeMs',
  ExpirationTimeMergePolicy: 'expirationTimeMs',
};

/** Merging and existing stats where `field` of the merging entry is lower/equal/higher, and every other field goes the opposite way. */
function pair(field: Field, merging: 'lower' | 'equal' | 'higher'): { merging: MergeStats; existing: MergeStats } {
  const m: Record<Field, number> = { ...BASE };
  const e: Record<Field, number> = { ...BASE };
  for (const f of FIELDS) {
    if (f === field) {
      if (merging === 'lower') m[f] = 999;
      if (merging === 'higher') m[f] = 1001;
    } else if (merging === 'higher') {
      e[f] = 5000; // the other statistics favour the existing entry
    } else {
      m[f] = 5000; // ... or the merging one
    }
  }
  return { merging: m, existing: e };
}

test('every configurable policy has a rule, a distinct wire code and nothing else', () => {
  assert.deepEqual(Object.keys(MERGE_RULES).sort(), [...MERGE_POLICIES].sort());
  assert.deepEqual(Object.keys(MERGE_POLICY_CODES).sort(), [...MERGE_POLICIES].sort());
  // Append-only wire numbers: these exact values travel in MAP_MERGE calls.
  assert.deepEqual(MERGE_POLICY_CODES, {
    PassThroughMergePolicy: 1,
    PutIfAbsentMergePolicy: 2,
    LatestUpdateMergePolicy: 3,
    HigherHitsMergePolicy: 4,
    LatestAccessMergePolicy: 5,
    ExpirationTimeMergePolicy: 6,
    DiscardMergePolicy: 7,
  });
  for (const p of MERGE_POLICIES) assert.equal(mergePolicyOfCode(MERGE_POLICY_CODES[p]), p);
  for (const code of [0, 8, 255, -1, 1.5]) assert.equal(mergePolicyOfCode(code), null);
});

test('no existing entry: every policy stores the merging entry, except Discard, which stores nothing', () => {
  for (const p of MERGE_POLICIES) {
    assert.equal(mergeWinner(p, BASE, null), p === 'DiscardMergePolicy' ? 'existing' : 'merging', p);
    // Whatever the merging entry's statistics.
    assert.equal(mergeWinner(p, { updateTimeMs: 0, lastAccessTimeMs: 0, expirationTimeMs: 0, hits: 0 }, null), p === 'DiscardMergePolicy' ? 'existing' : 'merging', p);
  }
});

test('comparing policies: the merging entry wins when its statistic is higher or equal (ties to merging), loses when lower', () => {
  for (const [policy, field] of Object.entries(COMPARED) as [MergePolicyName, Field][]) {
    const lower = pair(field, 'lower');
    const equal = pair(field, 'equal');
    const higher = pair(field, 'higher');
    assert.equal(mergeWinner(policy, lower.merging, lower.existing), 'existing', `${policy}: lower ${field}`);
    assert.equal(mergeWinner(policy, equal.merging, equal.existing), 'merging', `${policy}: equal ${field}`);
    assert.equal(mergeWinner(policy, higher.merging, higher.existing), 'merging', `${policy}: higher ${field}`);
  }
});

test('PassThrough always takes the merging entry; PutIfAbsent and Discard always keep an existing one', () => {
  for (const field of FIELDS) {
    for (const dir of ['lower', 'equal', 'higher'] as const) {
      const { merging, existing } = pair(field, dir);
      assert.equal(mergeWinner('PassThroughMergePolicy', merging, existing), 'merging');
      assert.equal(mergeWinner('PutIfAbsentMergePolicy', merging, existing), 'existing');
      assert.equal(mergeWinner('DiscardMergePolicy', merging, existing), 'existing');
    }
  }
});

test('ExpirationTime: an entry that never expires (Infinity) beats one that does; two that never expire tie to merging', () => {
  const never = { ...BASE, expirationTimeMs: Infinity };
  assert.equal(mergeWinner('ExpirationTimeMergePolicy', never, BASE), 'merging');
  assert.equal(mergeWinner('ExpirationTimeMergePolicy', BASE, never), 'existing');
  assert.equal(mergeWinner('ExpirationTimeMergePolicy', never, never), 'merging');
});

test('expirationTimeMs: Infinity without TTL and max-idle, else the earlier of update + TTL and access + max-idle', () => {
  assert.equal(expirationTimeMs({ ttlMs: 0, maxIdleMs: 0 }, 100, 500), Infinity);
  assert.equal(expirationTimeMs({ ttlMs: 1000, maxIdleMs: 0 }, 100, 500), 1100);
  assert.equal(expirationTimeMs({ ttlMs: 0, maxIdleMs: 1000 }, 100, 500), 1500);
  assert.equal(expirationTimeMs({ ttlMs: 1000, maxIdleMs: 1000 }, 100, 500), 1100);
  assert.equal(expirationTimeMs({ ttlMs: 1000, maxIdleMs: 200 }, 100, 500), 700);
});
