/**
 * `key`'s entry in `entries`, else `create()`'s, kept as the most recently used; past `max`
 * entries the least recently used is dropped (a Map keeps insertion order).
 */
export function keptIn<K, V>(entries: Map<K, V>, key: K, create: () => V, max: number): V {
  let value = entries.get(key);
  if (value === undefined) value = create();
  else entries.delete(key); // re-inserted below: now the most recently used
  entries.set(key, value);
  if (entries.size > max) entries.delete(entries.keys().next().value as K);
  return value;
}
