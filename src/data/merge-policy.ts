// Merge policies: given an entry arriving from elsewhere (the smaller side of a healed split brain
// today, a WAN source later) and the entry this cluster holds for the same key, if any, which one
// stays. Pure functions of the two entries' statistics; the caller stores the winner.
//
// The rules are the reference's (SplitBrainMergePolicy.merge(merging, existing)):
//   PassThrough     the merging entry, always.
//   PutIfAbsent     the merging entry only when there is no existing one.
//   LatestUpdate    the merging entry when its last update time is >= the existing one's.
//   HigherHits      the merging entry when its hits are >= the existing one's.
//   LatestAccess    the merging entry when its last access time is >= the existing one's.
//   ExpirationTime  the merging entry when its expiration time is >= the existing one's
//                   (Infinity = never expires, so a never-expiring entry beats one that expires).
//   Discard         the existing entry, always; with none, nothing is stored.
// Ties go to the merging entry (the reference compares with >=). With no existing entry every
// policy but Discard takes the merging one (the reference keeps whichever side is not null).
// The outcome is never "remove": a merging entry always has a value, so at worst the existing
// entry (or its absence) is left as it was.
import type { MergePolicyName } from '../config/types.js';

export type { MergePolicyName } from '../config/types.js';

/** What a policy compares. Times are wall-clock ms; expirationTimeMs is Infinity for "never". */
export interface MergeStats {
  readonly updateTimeMs: number;
  readonly lastAccessTimeMs: number;
  readonly expirationTimeMs: number;
  readonly hits: number;
}

/** 'merging': store the merging entry. 'existing': leave the key as it is (holding the existing entry, or nothing). */
export type MergeWinner = 'merging' | 'existing';

export type MergeRule = (merging: MergeStats, existing: MergeStats | null) => MergeWinner;

/** Ties and a missing existing entry go to the merging side. */
function atLeast(stat: (s: MergeStats) => number): MergeRule {
  return (merging, existing) => (existing === null || stat(merging) >= stat(existing) ? 'merging' : 'existing');
}

export const MERGE_RULES: Readonly<Record<MergePolicyName, MergeRule>> = {
  PassThroughMergePolicy: () => 'merging',
  PutIfAbsentMergePolicy: (_merging, existing) => (existing === null ? 'merging' : 'existing'),
  LatestUpdateMergePolicy: atLeast((s) => s.updateTimeMs),
  HigherHitsMergePolicy: atLeast((s) => s.hits),
  LatestAccessMergePolicy: atLeast((s) => s.lastAccessTimeMs),
  ExpirationTimeMergePolicy: atLeast((s) => s.expirationTimeMs),
  DiscardMergePolicy: () => 'existing',
};

export function mergeWinner(policy: MergePolicyName, merging: MergeStats, existing: MergeStats | null): MergeWinner {
  return MERGE_RULES[policy](merging, existing);
}

/** Wire numbers of the policies (a MAP_MERGE call names one). Append-only. */
export const MERGE_POLICY_CODES: Readonly<Record<MergePolicyName, number>> = {
  PassThroughMergePolicy: 1,
  PutIfAbsentMergePolicy: 2,
  LatestUpdateMergePolicy: 3,
  HigherHitsMergePolicy: 4,
  LatestAccessMergePolicy: 5,
  ExpirationTimeMergePolicy: 6,
  DiscardMergePolicy: 7,
};

const POLICY_BY_CODE = new Map<number, MergePolicyName>(Object.entries(MERGE_POLICY_CODES).map(([name, code]) => [code, name as MergePolicyName]));

/** The policy a wire number names, or null for an unknown number. */
export function mergePolicyOfCode(code: number): MergePolicyName | null {
  return POLICY_BY_CODE.get(code) ?? null;
}
