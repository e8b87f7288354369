// "Did you mean ...?" hints for unknown names. The distance is Levenshtein's with adjacent
// transpositions counted as one edit (optimal string alignment), because swapped letters
// (`--prot`) are the most common typo. Comparison ignores case. A candidate is offered only when it
// is close relative to the length of the word, so short unrelated names are not suggested.

/** The closest candidate within reach, or null. Ties go to the candidate listed first. */
export function suggest(word: string, candidates: Iterable<string>): string | null {
  const w = word.toLowerCase();
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    const reach = maxDistance(Math.max(w.length, c.length));
    // The length gap is a lower bound on the distance: skip hopeless (and huge) inputs cheaply.
    if (Math.abs(w.length - c.length) > reach) continue;
    const d = distance(w, c, reach);
    if (d <= reach && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** How many edits still look like a typo: 1 for short names, about a third of longer ones. */
function maxDistance(length: number): number {
  return Math.max(1, Math.floor(length / 3));
}

/** Optimal string alignment distance; returns a value above `cap` as soon as the answer must exceed it. */
export function distance(a: string, b: string, cap = Infinity): number {
  let before: number[] = [];
  let previous: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (before[j - 2] ?? 0) + 1);
      current.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > cap) return rowMin;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}
