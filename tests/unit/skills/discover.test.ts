import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listSkills, loadSkill, parseFrontMatter, parseSkillCommand, skillSummaries } from "../../../server/skills";
import { hold } from "../../support/wait";

async function writeSkill(root: string, dir: string, text: string) {
  await fs.mkdir(path.join(root, dir), { recursive: true });
  await fs.writeFile(path.join(root, dir, "SKILL.md"), text);
}

describe("skills", () => {
  it("parses name and description from front matter, quoted or folded", () => {
    expect(parseFrontMatter('---\nname: "pdf"\ndescription: Fill PDF forms.\nlicense: MIT\n---\nbody')).toEqual({
      name: "pdf",
      description: "Fill PDF forms.",
      license: "MIT",
    });
    // YAML's own rules (the `yaml` package): a literal block keeps its lines, a folded one joins them.
    expect(parseFrontMatter("---\nname: x\ndescription: |\n  two\n  lines\n---\n").description).toBe("two\nlines");
    expect(parseFrontMatter("---\nname: x\ndescription: >\n  two\n  lines\n---\n").description).toBe("two lines");
    expect(parseFrontMatter("---\nname: 'it''s' # a comment\n---\n").name).toBe("it's");
    expect(parseFrontMatter("---\nname: [unclosed\n---\nbody")).toEqual({});
    expect(parseFrontMatter("no front matter")).toEqual({});
  });

  it("finds skills in the workspace folders before the home, the first of a name winning", async () => {
    const workspace = await fs.mkdtemp(path.join(os.tmpdir(), "wl-skills-ws-"));
    const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-skills-home-"));
    await writeSkill(
      workspace,
      ".agents/skills/lint",
      "---\nname: lint\ndescription: Workspace lint.\n---\nRun biome.",
    );
    await writeSkill(workspace, ".worldline/skills/test", "---\ndescription: Run the tests.\n---\n");
    await writeSkill(home, "skills/lint", "---\nname: lint\ndescription: Home lint.\n---\n");
    await writeSkill(home, "skills/empty-folder-name", "# Heading only\n");
    await fs.mkdir(path.join(workspace, ".claude/skills/not-a-skill"), { recursive: true });

    const skills = await listSkills({ workspace, home });
    expect(skills.map((s) => [s.name, s.description, s.source])).toEqual([
      ["test", "Run the tests.", "workspace"],
      ["lint", "Workspace lint.", "workspace"],
      ["empty-folder-name", "Heading only", "home"],
    ]);
    expect(skillSummaries(skills)).toBe(
      "- test: Run the tests.\n- lint: Workspace lint.\n- empty-folder-name: Heading only",
    );
    expect((await loadSkill({ workspace, home }, "lint"))?.text).toContain("Run biome.");
    expect(await loadSkill({ workspace, home }, "nope")).toBeUndefined();
    expect(await listSkills({ home: path.join(home, "missing") })).toEqual([]);
  });

  it("sees a skill edited, added to an existing folder or removed at the next scan", async () => {
    const workspace = await fs.mkdtemp(path.join(os.tmpdir(), "wl-skills-ws-"));
    const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-skills-home-"));
    await writeSkill(workspace, ".worldline/skills/a", "---\ndescription: First.\n---\n");
    await fs.mkdir(path.join(workspace, ".worldline/skills/b"), { recursive: true });
    await hold(150, "past the racy window (RACY_MS, 100 ms): only then is the parse cached by stat");
    expect((await listSkills({ workspace, home })).map((s) => s.description)).toEqual(["First."]);
    // Same size, new text: the stat (mtime/ctime) tells it apart.
    await fs.writeFile(path.join(workspace, ".worldline/skills/a/SKILL.md"), "---\ndescription: Fresh.\n---\n");
    await fs.writeFile(path.join(workspace, ".worldline/skills/b/SKILL.md"), "---\ndescription: Second.\n---\n");
    expect((await listSkills({ workspace, home })).map((s) => s.description)).toEqual(["Fresh.", "Second."]);
    await fs.rm(path.join(workspace, ".worldline/skills/a"), { recursive: true });
    expect((await listSkills({ workspace, home })).map((s) => s.name)).toEqual(["b"]);
  });

  it("reads /skill:<name> at the start of a prompt", () => {
    expect(parseSkillCommand("/skill:deploy to staging")).toEqual({ name: "deploy", rest: "to staging" });
    expect(parseSkillCommand("/skill:pdf")).toEqual({ name: "pdf", rest: "" });
    expect(parseSkillCommand("please /skill:pdf")).toBeUndefined();
  });
});
