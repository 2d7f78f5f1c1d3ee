import { promises as fs } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { classifyCommand, createShellTool, TaskRegistry, type Tool } from "../../../server/tools";
import { groupMembers } from "../../../server/processes";
import { createTaskOutputTool, createTaskStopTool } from "../../../server/tools/shell/task-tools";
import { SHELL_OUTPUT_MAX_CHARS } from "../../../server/tools/shell/shell-tool";
import { fakeCtx, makeWorkspace, write } from "../../unit/tools/support";
import { waitFor } from "../../support/wait";

let env: Awaited<ReturnType<typeof makeWorkspace>>;
let tasks: TaskRegistry;
let shell: Tool;
beforeEach(async () => {
  env = await makeWorkspace();
  tasks = new TaskRegistry();
  shell = createShellTool({ tasks, killGraceMs: 300 });
});
afterEach(async () => {
  await tasks.stopAll();
  await env.cleanup();
});

/** The shell's own pid, printed first by the command; it leads the process group. */
const groupOf = (output: string) => Number(/^(\d+)/.exec(output)?.[1]);

describe("shell", () => {
  it("runs bash in the workspace with stdout and stderr merged and the exit code reported", async () => {
    const result = await shell.run({ command: "pwd; echo out; echo err >&2; exit 0" }, fakeCtx(env.ws));
    expect(result).toEqual({ isError: false, output: `${env.ws}\nout\nerr\n[exit code: 0]` });
  });

  it("reports a failing exit code as an error result", async () => {
    const result = await shell.run({ command: "echo nope; exit 3" }, fakeCtx(env.ws));
    expect(result).toEqual({ isError: true, output: "nope\n[exit code: 3]" });
  });

  it("closes stdin so commands that read it do not hang", async () => {
    expect((await shell.run({ command: "cat" }, fakeCtx(env.ws))).output).toBe("(no output)\n[exit code: 0]");
  });

  it("keeps the beginning and end of huge output with a truncation note", async () => {
    const result = await shell.run(
      { command: "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST" },
      fakeCtx(env.ws),
    );
    expect(result.output.length).toBeLessThan(SHELL_OUTPUT_MAX_CHARS + 200);
    expect(result.output).toMatch(/^FIRST\n/);
    expect(result.output).toMatch(/\[output truncated: \d+ more characters\]/);
    expect(result.output).toMatch(/LAST\n\[exit code: 0\]$/);
  });

  it("streams output chunks through ctx.emit", async () => {
    const ctx = fakeCtx(env.ws);
    await shell.run({ command: "echo streamed" }, ctx);
    expect(ctx.progress).toContainEqual({ kind: "output", text: "streamed\n" });
  });

  // The test's timeout is the bound: a kill that waited for `sleep 1000` would miss it.
  it("kills `sleep 1000 & sleep 1000` completely on timeout", async () => {
    const result = await shell.run(
      { command: "echo $$; sleep 1000 & sleep 1000", timeout_seconds: 1 },
      fakeCtx(env.ws),
    );
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/\[timed out after 1s; the command and every process it started were killed\]/);
    const pgid = groupOf(result.output);
    expect(pgid).toBeGreaterThan(0);
    expect(await groupMembers(pgid)).toEqual([]);
  }, 5_000);

  it("escalates to SIGKILL for processes that ignore SIGTERM", async () => {
    const result = await shell.run(
      { command: "trap '' TERM; echo $$; sleep 1000 & sleep 1000; echo survived", timeout_seconds: 0.5 },
      fakeCtx(env.ws),
    );
    const pgid = groupOf(result.output);
    expect(result.output).not.toContain("survived");
    expect(result.output).toMatch(/\[killed by SIGKILL\]$/);
    expect(await groupMembers(pgid)).toEqual([]);
  });

  it("does not wait forever for a grandchild that keeps the pipe open after the shell exits", async () => {
    const result = await shell.run({ command: "echo $$; (sleep 1000 &); echo done" }, fakeCtx(env.ws));
    expect(result.output).toContain("done");
    expect(result.output).toMatch(/processes the command left running in the background were stopped/);
    expect(await groupMembers(groupOf(result.output))).toEqual([]);
  }, 5_000);

  it("kills the whole group when the call is cancelled", async () => {
    const controller = new AbortController();
    const pending = shell.run(
      { command: "echo $$; sleep 1000 & sleep 1000" },
      fakeCtx(env.ws, { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 400);
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/\[cancelled; the command and every process it started were killed\]/);
    expect(await groupMembers(groupOf(result.output))).toEqual([]);
  });

  it("caps the timeout at the configured maximum and rejects larger values", async () => {
    const limited = createShellTool({ tasks, maxTimeoutMs: 2_000, defaultTimeoutMs: 1_000 });
    expect((await limited.run({ command: "true", timeout_seconds: 5 }, fakeCtx(env.ws))).output).toMatch(
      /Invalid arguments for shell/,
    );
    const result = await limited.run({ command: "sleep 30" }, fakeCtx(env.ws));
    expect(result.output).toMatch(/timed out after 1s/);
  });

  it("writes a redacted audit record with risk, action type, exit code and duration", async () => {
    const ctx = fakeCtx(env.ws);
    await shell.run({ command: "sleep 0.2; echo token=abcdef123456 > /dev/null; exit 4" }, ctx);
    expect(ctx.audits).toHaveLength(1);
    const [record] = ctx.audits;
    expect(record).toMatchObject({
      cwd: env.ws,
      approved: true,
      exitCode: 4,
      riskLevel: (await classifyCommand("sleep 0.2; echo token=abcdef123456 > /dev/null; exit 4")).risk,
    });
    expect(record.command).not.toContain("abcdef123456");
    expect(record.command).toContain("[REDACTED]");
    expect(record.durationMs).toBeGreaterThanOrEqual(200);
    expect(record.durationMs).toBeLessThan(30_000);
  });

  it("hides secret environment values from the output the model reads", async () => {
    const withSecret = createShellTool({ tasks, env: { MY_SERVICE_API_KEY: "very-secret-value-123" } });
    expect((await withSecret.run({ command: "echo key is $MY_SERVICE_API_KEY" }, fakeCtx(env.ws))).output).toBe(
      "key is [REDACTED]\n[exit code: 0]",
    );
  });
});

describe("shell with sudo", () => {
  const password = "correct horse";
  let sudoShell: Tool;
  beforeEach(async () => {
    // A stand-in sudo on PATH: it accepts only `-S -p ''`, reads the password from stdin,
    // and (like a careless program) prints it, so the test also proves the output is scrubbed.
    const bin = path.join(env.root, "bin");
    await write(
      path.join(bin, "sudo"),
      `#!/bin/bash\n[ "$1" = "-S" ] || { echo "sudo: a terminal is required" >&2; exit 1; }\nshift; [ "$1" = "-p" ] && shift 2\nIFS= read -r pw\necho "fake sudo got: $pw" >&2\n[ "$pw" = "${password}" ] || { echo "Sorry, try again." >&2; exit 1; }\n"$@"\n`,
    );
    await fs.chmod(path.join(bin, "sudo"), 0o755);
    sudoShell = createShellTool({ tasks, env: { PATH: `${bin}:${process.env.PATH}` } });
  });

  it("asks for the password after approval and feeds it to sudo -S, never showing or auditing it", async () => {
    const ctx = fakeCtx(env.ws, { password });
    const result = await sudoShell.run({ command: "sudo echo elevated" }, ctx);
    expect(ctx.passwordPrompts).toEqual(["Password for sudo, to run: sudo echo elevated"]);
    expect(result.output).toContain("elevated");
    expect(result.output).toContain("fake sudo got: [REDACTED]");
    expect(result.isError).toBe(false);
    const everything = JSON.stringify([result, ctx.audits, ctx.progress]);
    expect(everything).not.toContain(password);
    expect(ctx.audits[0]).toMatchObject({ command: "sudo echo elevated", riskLevel: "high", actionType: "privileged" });
  });

  it("does not run the command when the user gives no password", async () => {
    const ctx = fakeCtx(env.ws, { password: null });
    const result = await sudoShell.run({ command: "sudo touch made-it" }, ctx);
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toMatch(/did not give the sudo password/);
    await expect(fs.access(path.join(env.ws, "made-it"))).rejects.toThrow();
    expect(ctx.audits).toEqual([]);
  });

  it("refuses sudo when nobody can be asked for a password", async () => {
    const result = await sudoShell.run({ command: "sudo ls" }, fakeCtx(env.ws));
    expect(result.output).toMatch(/no one to ask for the password/);
  });
});

describe("background tasks", () => {
  let taskOutput: Tool;
  let taskStop: Tool;
  beforeEach(() => {
    taskOutput = createTaskOutputTool(tasks);
    taskStop = createTaskStopTool(tasks);
  });

  const taskIdOf = (output: string) => /(task_[0-9a-f]+)/.exec(output)?.[1] ?? "";

  it("returns a task id at once and lets the model read output as it comes", async () => {
    const ctx = fakeCtx(env.ws);
    const started = await shell.run({ command: "echo start; sleep 0.3; echo end; exit 2", background: true }, ctx);
    expect(started.output).toMatch(/^Started background task task_[0-9a-f]+/);
    const id = taskIdOf(started.output);
    const first = await taskOutput.run({ task_id: id, wait_seconds: 10 }, ctx);
    expect(first.output).toMatch(new RegExp(`^${id}: exited with code 2 — echo start`));
    expect(first.output).toContain("start\nend");
    expect((await taskOutput.run({ task_id: id }, ctx)).output).toMatch(/\(no new output\)$/);
    expect(ctx.audits).toMatchObject([{ exitCode: 2, approved: true }]);
  });

  it("stops a task and everything it started", async () => {
    const ctx = fakeCtx(env.ws);
    const id = taskIdOf(
      (await shell.run({ command: "echo $$; sleep 1000 & sleep 1000", background: true }, ctx)).output,
    );
    const pgid = Number(
      await waitFor(
        async () => /^(\d+)$/m.exec((await taskOutput.run({ task_id: id }, ctx)).output)?.[1],
        5_000,
        "the task's pid",
      ),
    );
    await waitFor(async () => (await groupMembers(pgid)).length === 3, 5_000, "the shell and both sleeps running");
    const stopped = await taskStop.run({ task_id: id }, ctx);
    expect(stopped.output).toMatch(new RegExp(`^${id}: stopped`));
    expect(await groupMembers(pgid)).toEqual([]);
  });

  it("keeps running after the turn's signal aborts", async () => {
    const controller = new AbortController();
    const ctx = fakeCtx(env.ws, { signal: controller.signal });
    const id = taskIdOf((await shell.run({ command: "sleep 1000", background: true }, ctx)).output);
    controller.abort();
    expect((await taskOutput.run({ task_id: id }, fakeCtx(env.ws))).output).toMatch(/running for/);
  });

  it("hides tasks from other sessions and lists the known ones", async () => {
    const id = taskIdOf((await shell.run({ command: "sleep 1000", background: true }, fakeCtx(env.ws))).output);
    const other = await taskOutput.run({ task_id: id }, fakeCtx(env.ws, { sessionId: "other" }));
    expect(other).toMatchObject({
      isError: true,
      output: `No background task ${id}. There are no background tasks in this session.`,
    });
    expect((await taskOutput.run({ task_id: "task_nope" }, fakeCtx(env.ws))).output).toContain(
      `Known tasks: ${id} (running)`,
    );
  });
});
