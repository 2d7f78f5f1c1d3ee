import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers";
import { startChildBridge, type ChildBridge } from "./child-bridge";

let child: ChildBridge | undefined;

afterAll(async () => {
  child?.child.kill("SIGKILL");
  await child?.exited;
});

describe("process-wide error policy", () => {
  it("logs an unhandled rejection and an uncaught exception with context, keeps serving, and counts them in health", async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-policy-"));
    child = await startChildBridge({ home, llmUrl: "http://127.0.0.1:9", env: { ENTRY_FAULTS: "1" } });
    const health = await waitFor(
      async () => {
        const body = (await (await child!.api("/api/v1/health")).json()) as {
          errors: { unhandled_rejections: number; uncaught_exceptions: number };
        };
        return body.errors.unhandled_rejections >= 1 && body.errors.uncaught_exceptions >= 1 ? body : undefined;
      },
      15_000,
      "both faults counted",
    );
    expect(health.errors).toEqual({ unhandled_rejections: 1, uncaught_exceptions: 1 });
    expect(child.stderr()).toMatch(/unhandled rejection #1 \(still serving\):[\s\S]*a promise nobody awaited/);
    expect(child.stderr()).toMatch(
      /uncaught exception #1 from uncaughtException \(still serving\):[\s\S]*a throw in a timer/,
    );
    // Still serving: an authenticated request works after both.
    expect((await child.api("/api/v1/sessions")).status).toBe(200);
  }, 90_000);
});
