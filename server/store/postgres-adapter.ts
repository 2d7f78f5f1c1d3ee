import { PrismaPg } from "@prisma/adapter-pg";

type Adapter = Awaited<ReturnType<PrismaPg["connect"]>>;
type Query = Parameters<Adapter["queryRaw"]>[0];

/** U+0000 → U+FFFD, the character Unicode has for "something unrepresentable was here". */
const NUL = /\0/g;
const REPLACEMENT = "\uFFFD";

function clean(value: unknown): unknown {
  if (typeof value === "string") return value.includes("\0") ? value.replace(NUL, REPLACEMENT) : value;
  if (Array.isArray(value))
    return value.some((item) => typeof item === "string" && item.includes("\0")) ? value.map(clean) : value;
  return value;
}

function cleanQuery(query: Query): Query {
  return query.args.some((arg) => clean(arg) !== arg) ? { ...query, args: query.args.map(clean) } : query;
}

/** The queryable (connection or transaction) with every bound value passed through `clean`. */
function withoutNul<T extends object>(queryable: T): T {
  return new Proxy(queryable, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (property === "queryRaw" || property === "executeRaw")
        return (query: Query) => value.call(target, cleanQuery(query));
      if (property === "startTransaction")
        return async (...args: unknown[]) => withoutNul((await value.apply(target, args)) as object);
      return value.bind(target);
    },
  });
}

/**
 * Prisma's PostgreSQL adapter, except that text bound to a statement has no NUL characters:
 * PostgreSQL's text cannot hold U+0000 (SQLite's can) and refuses the whole statement, so an id
 * or a title with a NUL in it (from a client, or a fuzzer) was a 500 instead of a "not found" or
 * a stored title. Such text is stored with U+FFFD in place of each NUL; ids never contain either.
 */
export function postgresAdapter(connectionString: string): PrismaPg {
  const factory = new PrismaPg({ connectionString });
  const connect = factory.connect.bind(factory);
  factory.connect = async () => withoutNul(await connect());
  return factory;
}
