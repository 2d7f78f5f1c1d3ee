/**
 * Scores `query` as a subsequence of `candidate` (case-insensitive), preferring
 * matches in the file name, at word starts and in runs. Returns -1 when it
 * doesn't match. Small and dependency-free, like fzf's v1 heuristic.
 */
export function fuzzyScore(query: string, candidate: string): number {
  if (!query) return 0;
  const q = query.toLowerCase();
  const c = candidate.toLowerCase();
  const nameStart = c.lastIndexOf("/") + 1;
  let score = 0;
  let ci = 0;
  let run = 0;
  for (let qi = 0; qi < q.length; qi++) {
    const found = c.indexOf(q[qi], ci);
    if (found === -1) return -1;
    const boundary = found === 0 || "/._- ".includes(c[found - 1]);
    run = found === ci && qi > 0 ? run + 1 : 0;
    score += 1 + run * 2 + (boundary ? 3 : 0) + (found >= nameStart ? 2 : 0);
    ci = found + 1;
  }
  if (c.slice(nameStart).startsWith(q)) score += 10;
  return score - candidate.length * 0.01;
}

export function fuzzyFilter(query: string, candidates: readonly string[], limit: number): string[] {
  const scored: { path: string; score: number }[] = [];
  for (const path of candidates) {
    const score = fuzzyScore(query, path);
    if (score >= 0) scored.push({ path, score });
  }
  scored.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((entry) => entry.path);
}
