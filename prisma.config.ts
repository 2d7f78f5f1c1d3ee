import path from "node:path";
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

// JS engine mode: the schema engine runs as WebAssembly from the npm package,
// so generate/migrate work offline (no engine download). The database used by
// the CLI is only for `migrate diff`/`db push` during development; the bridge
// opens its own file under WORLDLINE_HOME.
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  adapter: async () =>
    new PrismaBetterSQLite3({ url: `file:${path.resolve(process.env.WORLDLINE_DB ?? "prisma/dev.db")}` }),
});
