// Which configuration a map or queue name uses: the exact name, else the best wildcard pattern (one
// `*`; the pattern whose literal parts are longest wins), else `default`. A pattern `pre*suf` matches
// a name that starts with `pre`, ends with `suf` and is at least as long as both together (the two
// literal parts never overlap; the reference lets them overlap, which makes `ab*ba` match "aba").
// Two patterns with the same score that can match a common name are a configuration error found at
// load time (findPatternTies), so the lookup itself never has to break a tie.
import { assert } from '../util/assert.js';
import type { MapConfig, QueueConfig } from './types.js';

export function resolveMapConfig(maps: readonly MapConfig[], name: string): MapConfig {
  return resolveByName(maps, name);
}

/** Queues are configured by the part of the name before `@` (`name@key` partitions by `key`). */
export function resolveQueueConfig(queues: readonly QueueConfig[], name: string): QueueConfig {
  return resolveByName(queues, configNameOf(name));
}

export function configNameOf(name: string): string {
  const at = name.indexOf('@');
  return at < 0 ? name : name.slice(0, at);
}

export function resolveByName<T extends { readonly name: string }>(configs: readonly T[], name: string): T {
  let best: T | undefined;
  let bestScore = -1;
  let fallback: T | undefined;
  for (const c of configs) {
    if (c.name === name) return c;
    if (c.name === 'default') fallback = c;
    const score = patternScore(c.name, name);
    if (score > bestScore) {
      best = c;
      bestScore = score;
    }
  }
  const found = best ?? fallback;
  assert(found !== undefined, 'a default configuration always exists');
  return found;
}

/** The number of literal characters of `pattern` if it is a wildcard pattern matching `name`, else -1. */
export function patternScore(pattern: string, name: string): number {
  const star = pattern.indexOf('*');
  if (star < 0) return -1;
  const prefix = pattern.slice(0, star);
  const suffix = pattern.slice(star + 1);
  if (name.length < prefix.length + suffix.length) return -1;
  return name.startsWith(prefix) && name.endsWith(suffix) ? prefix.length + suffix.length : -1;
}

/**
 * Pairs of patterns that tie: same number of literal characters and some name matches both. With
 * non-overlapping literal parts, a common name exists exactly when one prefix is a prefix of the
 * other and one suffix is a suffix of the other (the longer prefix + the longer suffix matches both).
 */
export function findPatternTies(names: readonly string[]): [string, string][] {
  // Only patterns of equal length can tie, so compare within groups of equal length.
  const byLength = new Map<number, string[]>();
  for (const n of names) {
    if (!n.includes('*')) continue;
    const group = byLength.get(n.length);
    if (group === undefined) byLength.set(n.length, [n]);
    else group.push(n);
  }
  const ties: [string, string][] = [];
  for (const group of byLength.values()) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const a = group[i] ?? '';
        const b = group[j] ?? '';
        if (a !== b && canShareName(a, b)) ties.push([a, b]);
      }
    }
  }
  return ties;
}

function canShareName(a: string, b: string): boolean {
  const [ap, as] = splitPattern(a);
  const [bp, bs] = splitPattern(b);
  const prefixesAgree = ap.startsWith(bp) || bp.startsWith(ap);
  const suffixesAgree = as.endsWith(bs) || bs.endsWith(as);
  return prefixesAgree && suffixesAgree;
}

function splitPattern(p: string): [string, string] {
  const star = p.indexOf('*');
  return [p.slice(0, star), p.slice(star + 1)];
}
