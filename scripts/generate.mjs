// `prepare` (every `npm install`): the Prisma clients for SQLite and PostgreSQL, generated side by side.
import { ensureGenerated } from "../bin/bundle.mjs";

await ensureGenerated((line) => process.stderr.write(`[generate] ${line}\n`), { force: true });
