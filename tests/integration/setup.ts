import { afterAll } from "vitest";
import { dropTestDatabases } from "../db";

// Registered before the file's own hooks, so it runs after them: bridges are closed by then
// (and DROP … WITH (FORCE) ends whatever connection a test left open).
afterAll(dropTestDatabases, 60_000);
