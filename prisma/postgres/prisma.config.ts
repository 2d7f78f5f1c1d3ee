import path from "node:path";
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

// The PostgreSQL twin's CLI config (generate and migrate diff; see prisma/README.md). The adapter
// is only there to keep the CLI in its JavaScript engine mode, which needs no download.
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join(import.meta.dirname, "schema.prisma"),
  adapter: async () =>
    new PrismaPg({ connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" }),
});
