import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ShadowRepo } from "../../../server/checkpoints";
import { WorkspaceHosts, type WorkspaceHost } from "../../../server/host";
import { thisMachine } from "../../../server/main";

const dirs: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}
afterAll(() => Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true }))));

describe("workspace hosts", () => {
  it("gives sessions on this machine the local host, whose facets are this machine's services", async () => {
    const home = await tempDir("wl-host-home-");
    const workspace = await tempDir("wl-host-ws-");
    await fs.writeFile(path.join(workspace, "AGENTS.md"), "Run the checks.");
    await fs.mkdir(path.join(workspace, ".worldline", "skills", "lint"), { recursive: true });
    await fs.writeFile(
      path.join(workspace, ".worldline", "skills", "lint", "SKILL.md"),
      "---\nname: lint\ndescription: Lint it.\n---\n",
    );
    const { files, host } = thisMachine(home);
    const asked: string[] = [];
    const hosts = new WorkspaceHosts(host, (runner) => {
      asked.push(runner);
      return { runner } as unknown as WorkspaceHost;
    });
    try {
      for (const runner of [null, undefined, ""]) expect(hosts.of(runner)).toBe(host);
      expect(asked).toEqual([]);
      expect(hosts.of("box").runner).toBe("box");
      expect(asked).toEqual(["box"]);

      const local = hosts.of(null);
      expect(local.runner).toBeNull();
      // The IDE's file views are the one WorkspaceFiles whose watcher feeds `files.changed`.
      expect(local.files).toBe(files);
      expect((await local.files.read(workspace, "AGENTS.md")).content).toBe("Run the checks.");
      // Snapshots: this machine's shadow repository in WORLDLINE_HOME, opened once per workspace.
      const repo = await local.snapshots(workspace);
      expect(repo).toBeInstanceOf(ShadowRepo);
      expect(await local.snapshots(workspace)).toBe(repo);
      expect((await repo.snapshot()).commit).toMatch(/^[0-9a-f]{40}$/);
      expect(await local.checkWorkspace(workspace)).toBe(workspace);
      await expect(local.checkWorkspace(path.join(workspace, "AGENTS.md"))).rejects.toThrow(/is a file/);
      const prompt = await local.workspacePrompt(workspace);
      expect(prompt.agentsMd).toEqual([{ path: "AGENTS.md", text: "Run the checks." }]);
      expect(prompt.listing).toContain("AGENTS.md");
      expect((await local.workspaceSkills(workspace)).map((skill) => skill.name)).toEqual(["lint"]);
    } finally {
      files.close();
    }
  });

  it("refuses a runner's session where no runners are served", () => {
    const hosts = new WorkspaceHosts(thisMachine(os.tmpdir()).host);
    expect(() => hosts.of("box")).toThrow(/serves no runner "box"/);
  });
});
