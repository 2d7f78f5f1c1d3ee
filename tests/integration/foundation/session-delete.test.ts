import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";

let bridge: TestBridge;

beforeAll(async () => {
  bridge = await startTestBridge();
});

afterAll(async () => {
  await bridge?.stop();
});

function alive(pid: number): boolean {
  return fs.existsSync(`/proc/${pid}`) && !/^\S+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
}

describe("deleting a session", () => {
  it("kills its terminals, and a later lookup of it does not break the bridge's shutdown", async () => {
    const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
    const { id } = (await created.json()) as { id: string };
    const terminal = await bridge.services.ptys.create(id);
    const pid = bridge.services.ptys.get(id, terminal.terminalId).pid;
    expect(alive(pid)).toBe(true);

    expect((await bridge.api(`/api/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(200);
    expect(bridge.services.ptys.list(id)).toEqual([]);
    await waitFor(() => !alive(pid), 5_000, "the terminal's shell to exit");
  });

  it("lets a terminal that outlived its session's log close without an error", async () => {
    const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
    const { id } = (await created.json()) as { id: string };
    await bridge.services.ptys.create(id);
    // Removed behind the terminal's back (e.g. by another process), then looked up: its log is released.
    await bridge.services.sessions.remove(id);
    expect((await bridge.api(`/api/v1/sessions/${id}`)).status).toBe(404);
    expect(bridge.services.log.isOpen(id)).toBe(false);
    await bridge.services.ptys.closeSession(id);
    expect(bridge.services.ptys.list(id)).toEqual([]);
  });
});
