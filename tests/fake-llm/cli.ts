// Runs the fake LLM standalone, for tests in another process (Playwright, ACP subprocesses):
//   npx tsx tests/fake-llm/cli.ts [--port N] [--host H] [--models a,b] [--lenient]
// Prints "fake-llm ready: <url>" once listening; script it through /__admin/*.
// A test that must stop it should spawn `node --import tsx tests/fake-llm/cli.ts`: npx does
// not forward SIGTERM to its child, so killing an npx process leaves the server running.
import { parseArgs } from "node:util";
import { startFakeLlm } from "./server.ts";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    host: { type: "string" },
    models: { type: "string" },
    // Strict by default (consecutive same-role messages get a 400); --lenient accepts them.
    lenient: { type: "boolean" },
  },
});

const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !Number.isInteger(port)) {
  process.stderr.write(`fake-llm: invalid --port ${values.port}\n`);
  process.exit(2);
}

const fake = await startFakeLlm({
  port,
  host: values.host,
  models: values.models?.split(",").filter(Boolean),
  strict: !values.lenient,
});
process.stdout.write(`fake-llm ready: ${fake.url}\n`);

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void fake.close().finally(() => process.exit(0));
  });
}
