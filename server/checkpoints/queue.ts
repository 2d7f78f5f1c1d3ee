/**
 * One promise chain per shadow repository: git's index is a single file, and two
 * snapshots interleaving their status/update-index/write-tree calls would corrupt
 * each other's view of it. Keyed by git dir, so two ShadowRepo objects on one workspace
 * (two sessions) still take turns.
 */
const tails = new Map<string, Promise<unknown>>();

export function serialize<T>(key: string, operation: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  // A failed operation must not poison the queue for the next one.
  const result = previous.catch(() => undefined).then(operation);
  // The tail only orders operations; each caller gets its own result or error.
  const tail = result.catch(() => undefined);
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return result;
}
