import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { emitCommand, readSse, uniqueId, waitFor } from "../helpers";
import { collectChanges, startApprovalBridge, toolMessages, type ApprovalBridge } from "./support";

let fake: FakeLlm;
let bridge: ApprovalBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  fake.reset();
  bridge = await startApprovalBridge(fake.url);
});
afterEach(async () => {
  await bridge.stop();
});

const shell = (command: string) => ({ toolCalls: [{ name: "shell", arguments: { command } }] });

describe("the approval queue", () => {
  it("holds a shell command until approved from any tab; the first decision wins, the second gets 409, every tab hears it", async () => {
    const sessionId = await bridge.createSession();
    const [tabA, tabB] = [await bridge.socket(), await bridge.socket()];
    const [changesA, changesB] = [collectChanges(tabA), collectChanges(tabB)];
    await emitCommand(tabA, "approvals.subscribe", {});
    await emitCommand(tabB, "approvals.subscribe", {});
    fake.script(shell("touch made.txt"), { text: "Made it." });

    await emitCommand(tabA, "turn.prompt", { commandId: uniqueId(), sessionId, text: "make a file" });
    const request = await waitFor(async () => (await bridge.pending())[0], 10_000, "the request");
    expect(request).toMatchObject({
      session_id: sessionId,
      tool: "shell",
      args: { command: "touch made.txt" },
      risk_level: "medium",
      status: "pending",
      kind: "tool",
      scope: "touch*",
    });
    expect(request.task_id).toBeTruthy();
    expect(request.description).toContain("touch made.txt");
    expect(fs.existsSync(path.join(bridge.workspace, "made.txt"))).toBe(false);
    await waitFor(() => changesA.length > 0 && changesB.length > 0, 5_000, "requested broadcast");
    expect(changesB[0]).toMatchObject({ change: "requested", approval: { approval_id: request.approval_id } });
    const events = await bridge.events(sessionId);
    expect(events.some((e) => e.type === "turn.stage" && e.payload.stage === "waiting_for_approval")).toBe(true);

    // Two deciders race: one over the socket, one over HTTP.
    const [socketAck, httpResponse] = await Promise.all([
      tabB.timeout(10_000).emitWithAck("approval.decide", {
        commandId: uniqueId(),
        approvalId: request.approval_id,
        decision: "allow_once",
      }),
      bridge.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "reject" } }),
    ]);
    const socketWon = (socketAck as { ok: boolean }).ok;
    const httpWon = httpResponse.status === 200;
    expect(socketWon !== httpWon).toBe(true);
    if (!httpWon) {
      expect(httpResponse.status).toBe(409);
      expect(((await httpResponse.json()) as { error: { code: string } }).error.code).toBe("approval:already_decided");
    } else {
      expect((socketAck as { error: { code: string } }).error.code).toBe("approval:already_decided");
    }
    // A third, later decision is refused too.
    const late = await bridge.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "allow_once" } });
    expect(late.status).toBe(409);

    await waitFor(
      () => changesA.some((c) => c.change === "decided") && changesB.some((c) => c.change === "decided"),
      5_000,
      "decided broadcast",
    );
    const done = await bridge.turnCompleted(sessionId);
    expect(done.outcome).toBe(socketWon ? "completed" : "rejected");
    expect(fs.existsSync(path.join(bridge.workspace, "made.txt"))).toBe(socketWon);
    const decided = (await bridge.events(sessionId)).filter((e) => e.type === "approval.decided");
    expect(decided).toHaveLength(1);
    expect(await bridge.pending()).toEqual([]);
  });

  it("allow for this session records the program and subcommand: `git stash list` passes again, `git push` still asks", async () => {
    const sessionId = await bridge.createSession();
    const socket = await bridge.socket();
    fake.script(shell("git stash list"), shell("git stash list"), shell("git push origin main"), { text: "unused" });
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "stash and push" });

    const first = await waitFor(async () => (await bridge.pending())[0]);
    expect(first.scope).toBe("git stash*");
    await emitCommand(socket, "approval.decide", {
      commandId: uniqueId(),
      approvalId: first.approval_id,
      decision: "allow_session",
    });

    const second = await waitFor(async () => (await bridge.pending())[0], 10_000, "the git push request");
    expect(second.args).toEqual({ command: "git push origin main" });
    const rules = (await (await bridge.api(`/api/v1/rules?session_id=${sessionId}`)).json()) as {
      scope: string;
      pattern: string;
      action: string;
      tool: string;
    }[];
    expect(rules).toEqual([
      expect.objectContaining({ scope: "session", tool: "shell", pattern: "git stash*", action: "allow" }),
    ]);

    // Rejected without feedback: the turn ends.
    const response = await bridge.api(`/api/v1/approvals/${second.approval_id}`, { body: { decision: "reject" } });
    expect(response.status).toBe(200);
    expect((await bridge.turnCompleted(sessionId)).outcome).toBe("rejected");
    const requested = (await bridge.events(sessionId)).filter((e) => e.type === "approval.requested");
    expect(requested).toHaveLength(2);
    expect(fake.requests).toHaveLength(3);
  });

  it("a rejection with feedback reaches the model, which continues", async () => {
    const sessionId = await bridge.createSession();
    const socket = await bridge.socket();
    fake.script(shell("touch nope.txt"), { text: "OK, I will not." });
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "touch it" });
    const request = await waitFor(async () => (await bridge.pending())[0]);
    await emitCommand(socket, "approval.decide", {
      commandId: uniqueId(),
      approvalId: request.approval_id,
      decision: "reject",
      feedback: "Use a file called yes.txt instead",
    });
    expect((await bridge.turnCompleted(sessionId)).outcome).toBe("completed");
    expect(fake.requests).toHaveLength(2);
    expect(toolMessages(fake.requests[1].body).join("\n")).toContain("Use a file called yes.txt instead");
    expect(fs.existsSync(path.join(bridge.workspace, "nope.txt"))).toBe(false);
    const history = (await (await bridge.api("/api/v1/approvals?status=decided")).json()) as {
      status: string;
      feedback: string;
      decided_by: string;
    }[];
    expect(history[0]).toMatchObject({
      status: "rejected",
      feedback: "Use a file called yes.txt instead",
      decided_by: "web",
    });
  });

  it("a deny rule beats yolo and a session allow rule", async () => {
    const sessionId = await bridge.createSession({ yolo: true });
    const deny = await bridge.api("/api/v1/rules", {
      body: { tool: "shell", pattern: "touch*", action: "deny", scope: "global" },
    });
    expect(deny.status).toBe(201);
    const allow = await bridge.api("/api/v1/rules", {
      body: { tool: "shell", pattern: "touch*", action: "allow", scope: "session", session_id: sessionId },
    });
    expect(allow.status).toBe(201);
    const socket = await bridge.socket();
    fake.script(shell("touch denied.txt"), shell("mkdir yolo-dir"), { text: "done" });
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "go" });
    expect((await bridge.turnCompleted(sessionId)).outcome).toBe("completed");
    expect(fs.existsSync(path.join(bridge.workspace, "denied.txt"))).toBe(false);
    // Yolo still approves what no rule denies.
    expect(fs.existsSync(path.join(bridge.workspace, "yolo-dir"))).toBe(true);
    expect(toolMessages(fake.requests[1].body).join("\n")).toContain("deny rule");
    expect(await bridge.pending()).toEqual([]);

    // Rules are listed and deletable.
    const { id } = (await deny.json()) as { id: string };
    expect((await bridge.api(`/api/v1/rules/${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await bridge.api(`/api/v1/rules/${id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("cancelling the turn while a request waits marks it cancelled", async () => {
    const sessionId = await bridge.createSession();
    const socket = await bridge.socket();
    fake.script(shell("touch later.txt"));
    await emitCommand(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "go" });
    const request = await waitFor(async () => (await bridge.pending())[0]);
    await emitCommand(socket, "turn.cancel", { commandId: uniqueId(), sessionId });
    expect((await bridge.turnCompleted(sessionId)).outcome).toBe("cancelled");
    const view = (await (await bridge.api(`/api/v1/approvals/${request.approval_id}`)).json()) as { status: string };
    expect(view.status).toBe("cancelled");
    const late = await bridge.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "allow_once" } });
    expect(late.status).toBe(409);
  });
});

describe("the HTTP/SSE flow", () => {
  it("chat/stream ends at tool_approval_requested; continue/stream applies the decision and streams the rest of the turn", async () => {
    fake.script(shell("touch via-sse.txt"), { text: "All done." });
    const first = await bridge.api("/api/v1/chat/stream", {
      body: { message: "make it", workspace: bridge.workspace },
    });
    const events = await readSse(first);
    const last = events.at(-1)!;
    expect(last.event).toBe("tool_approval_requested");
    expect(last.data).toMatchObject({
      tool: "shell",
      args: { command: "touch via-sse.txt" },
      risk_level: "medium",
      status: "waiting_for_approval",
    });
    expect(events.some((e) => e.event === "runtime_status" && e.data.stage === "waiting_for_approval")).toBe(true);
    const taskId = last.data.task_id as string;
    const approvalId = last.data.approval_id as string;

    const resumed = await readSse(
      await bridge.api(`/api/v1/tasks/${taskId}/continue/stream`, { body: { approval_id: approvalId } }),
    );
    const names = resumed.map((e) => e.event);
    expect(names).toContain("tool_call_finished");
    expect(names.at(-1)).toBe("done");
    expect(
      resumed
        .filter((e) => e.event === "content_delta")
        .map((e) => e.data.delta)
        .join(""),
    ).toBe("All done.");
    expect(resumed.every((e) => e.data.task_id === taskId)).toBe(true);
    expect(fs.existsSync(path.join(bridge.workspace, "via-sse.txt"))).toBe(true);

    // Resuming again replays the same tail; deciding again is a conflict.
    const again = await readSse(
      await bridge.api(`/api/v1/tasks/${taskId}/continue/stream`, { body: { approval_id: approvalId } }),
    );
    expect(again.map((e) => e.event)).toEqual(names);
    const conflict = await bridge.api(`/api/v1/tasks/${taskId}/continue/stream`, {
      body: { approval_id: approvalId, decision: "reject" },
    });
    expect(conflict.status).toBe(409);

    const taskEvents = (await (await bridge.api(`/api/v1/tasks/${taskId}/events`)).json()) as { type: string }[];
    expect(taskEvents.map((e) => e.type)).toContain("approval.decided");
    expect((await bridge.api("/api/v1/tasks/nope/events")).status).toBe(404);
  });

  it("sudo asks for the password through the queue; the password reaches no event, row or model request", async () => {
    const secret = "hunter2-not-logged";
    fake.script(shell("sudo true"), { text: "finished" });
    const first = await readSse(
      await bridge.api("/api/v1/chat/stream", { body: { message: "sudo it", workspace: bridge.workspace } }),
    );
    const approval = first.at(-1)!;
    expect(approval.event).toBe("tool_approval_requested");
    expect(approval.data.risk_level).toBe("high");
    const taskId = approval.data.task_id as string;

    const second = await readSse(
      await bridge.api(`/api/v1/tasks/${taskId}/continue/stream`, { body: { approval_id: approval.data.approval_id } }),
    );
    const password = second.at(-1)!;
    expect(password.event).toBe("tool_password_requested");
    expect(password.data.status).toBe("waiting_for_password");
    const wrongEndpoint = await bridge.api(`/api/v1/tasks/${taskId}/continue/stream`, {
      body: { approval_id: password.data.approval_id },
    });
    expect(wrongEndpoint.status).toBe(400);

    const third = await readSse(
      await bridge.api(`/api/v1/tasks/${taskId}/password/stream`, {
        body: { approval_id: password.data.approval_id, password: secret },
      }),
    );
    expect(third.at(-1)!.event).toBe("done");
    const sessionId = third.at(-1)!.data.session_id as string;
    const everything = JSON.stringify([
      await bridge.events(sessionId),
      await (await bridge.api("/api/v1/approvals?status=all")).json(),
      fake.requests.map((r) => r.body),
      third,
    ]);
    expect(everything).not.toContain(secret);
  });
});
