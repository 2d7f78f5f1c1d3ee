import type { GetPrismaClientConfig, PrismaClientOptions } from "@prisma/client/runtime/client";

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
      if (request.length > MAX_REQUEST_CHARS) return this.inner.compile(request);
      let plan = this.plans.get(request);
      if (plan)
        this.plans.delete(request); // re-inserted below: now the most recently used
      else plan = this.inner.compile(request);
      this.plans.set(request, plan);
      if (this.plans.size > MAX_PLANS) this.plans.delete(this.plans.keys().next().value as string);
      return plan;
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
