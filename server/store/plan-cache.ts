import type { GetPrismaClientConfig, PrismaClientOptions } from "@prisma/client/runtime/client";
import { keptIn } from "./lru";

type CompilerRuntime = Awaited<ReturnType<NonNullable<GetPrismaClientConfig["compilerWasm"]>["getRuntime"]>>;
type CompilerClass = CompilerRuntime["QueryCompiler"];

/** Plans kept per client, the least recently used dropped first. */
const MAX_PLANS = 500;
/** A longer request carries data (an event's payload, a history entry) and seldom comes again: compiled each time. */
const MAX_REQUEST_CHARS = 2048;

/**
 * Prisma's client compiles every query to a plan, in WebAssembly on the main thread, before it
 * runs it: 0.3–1 ms each, about half of a query's cost. The same request (values included)
 * compiles to the same plan, and what varies per run (`now()`, generated ids) is evaluated when
 * the plan runs. So a turn's reads of its session (its owner, budgets, memories, settings) compile
 * once, and each later prompt of the session reuses their plans (the bench's
 * `ttft_overhead_p50_ms`, bench/README.md). The option is the client's own hook for
 * overriding its generated config.
 */
export function withPlanCache<T extends object>(options: T): T {
  const internal: PrismaClientOptions["__internal"] = { configOverride: cachePlans };
  // The generated client's options type leaves the runtime's `__internal` out; the runtime reads it.
  return { ...options, __internal: internal };
}

function cachePlans(config: GetPrismaClientConfig): GetPrismaClientConfig {
  const wasm = config.compilerWasm;
  if (!wasm) return config;
  const getRuntime = async () => {
    const runtime = await wasm.getRuntime();
    // Every export stays: the loader passes the module as the WebAssembly instance's imports.
    return { ...runtime, QueryCompiler: caching(runtime.QueryCompiler) };
  };
  return { ...config, compilerWasm: { ...wasm, getRuntime } };
}

function caching(Compiler: CompilerClass): CompilerClass {
  return class CachingCompiler {
    private readonly inner: InstanceType<CompilerClass>;
    private readonly plans = new Map<string, object>();

    constructor(options: ConstructorParameters<CompilerClass>[0]) {
      this.inner = new Compiler(options);
    }

    compile(request: string): object {
      const raw = rawRequest(request);
      if (raw) {
        const plan = this.kept(raw.key, request);
        if (isRawPlan(plan, raw.values.length)) return { ...plan, args: { ...plan.args, args: raw.values } };
        this.plans.delete(raw.key); // not the plan this module knows: compiled per request
        return this.inner.compile(request);
      }
      if (request.length > MAX_REQUEST_CHARS) return this.inner.compile(request);
      return this.kept(request, request);
    }

    /** The plan kept under `key`, else `request`'s, compiled and kept. */
    private kept(key: string, request: string): object {
      return keptIn(this.plans, key, () => this.inner.compile(request), MAX_PLANS);
    }

    compileBatch(request: string) {
      return this.inner.compileBatch(request);
    }

    free(): void {
      this.plans.clear();
      this.inner.free();
    }
  };
}

/** A raw statement's request (`$queryRaw`, `$executeRaw` and their Unsafe forms), as the client sends it. */
interface RawRequest {
  action: string;
  query: { arguments: { query: string; parameters: string }; selection: object };
}

/** A raw statement's plan: its SQL, its values as sent, and their types. */
interface RawPlan {
  type: string;
  args: { type: "rawSql"; sql: string; args: unknown[]; argTypes: unknown[] };
}

/**
 * A raw statement's plan is its SQL with its values and their types, and its values differ on
 * nearly every run (ids, seqs, dates, payloads): compiled per request, each run of one cost
 * 0.14–0.21 ms. So its plan is kept per (SQL, each value's kind), and a run with other values of
 * the same kinds gets that plan with its own values. A value is sent as JSON, a date, bytes or a
 * bigint as `{prisma__type, prisma__value}`, and the plan holds `prisma__value`. A kind the
 * compiler might tell apart by value is kept apart here (an integer inside 32 bits or not), and a
 * request with any other value among its values (a list, an object, another tag) is compiled as
 * any other. A test runs every kind with a kept plan and compiled for itself alone, on both
 * databases, and compares the answers.
 */
function rawRequest(request: string): { key: string; values: unknown[] } | undefined {
  if (!request.startsWith('{"action":"queryRaw"') && !request.startsWith('{"action":"executeRaw"')) return undefined;
  const { action, query } = JSON.parse(request) as RawRequest;
  const parameters = JSON.parse(query.arguments.parameters) as unknown;
  if (!Array.isArray(parameters)) return undefined;
  const kinds: string[] = [];
  const values: unknown[] = [];
  for (const parameter of parameters) {
    const kind = kindOf(parameter);
    if (!kind) return undefined;
    kinds.push(kind);
    values.push(kind.startsWith("tag:") ? (parameter as { prisma__value: unknown }).prisma__value : parameter);
  }
  return { key: `${action}\u0000${query.arguments.query}\u0000${kinds.join(",")}`, values };
}

/** The tagged values whose plan holds their `prisma__value` as it was sent (the test's kinds). */
const TAGS = new Set(["date", "bytes", "bigint"]);

function kindOf(value: unknown): string | undefined {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return typeof value;
    case "number":
      if (!Number.isInteger(value)) return "float";
      return value >= -(2 ** 31) && value < 2 ** 31 ? "int32" : "integer";
    case "object": {
      const tag = (value as { prisma__type?: unknown }).prisma__type;
      return typeof tag === "string" && TAGS.has(tag) && Object.keys(value).length === 2 ? `tag:${tag}` : undefined;
    }
    default:
      return undefined;
  }
}

function isRawPlan(plan: object, values: number): plan is RawPlan {
  const args = (plan as Partial<RawPlan>).args;
  return args?.type === "rawSql" && Array.isArray(args.args) && args.args.length === values;
}
