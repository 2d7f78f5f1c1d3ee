import type { ApprovalDecision } from "../tools/types";
import type { RunState, Wait } from "./run-state";
import type { StepResult } from "./stream-step";
import { callSignature, StepTools, type CallResult } from "./tool-runner";
import type { ApprovalGate, GateOutcome } from "./tools-port";
import type { TurnRun } from "./turn-run";

/** What a call that was running when its bridge stopped tells the model. */
const RESTARTED_OUTPUT =
  "The bridge restarted while this call ran, so it did not finish. Check what it did before running it again.";

/** The waited-on step of a turn taken over, finished: its calls' results, or the budget's answer. */
export type ResumedStep =
  { kind: "tools"; result: StepResult; results: CallResult[] } | { kind: "budget"; allowed: boolean };

/**
 * Finishes the step a turn was waiting in when its bridge stopped (server/agent/run-state.ts),
 * on the bridge that took it over: it waits on the same requests, then a call that was allowed
 * runs (a rejected one gets its rejection), a call waiting on a password runs again and gets the
 * password given now, a call that had finished keeps its result, and one that was running
 * when the bridge stopped is reported unfinished. The loop records the step and goes on.
 */
export async function resumeStep(run: TurnRun, state: RunState): Promise<ResumedStep> {
  const rejoin = (wait: Wait): Promise<GateOutcome | null> =>
    run.gate.rejoin
      ? run.gate.rejoin({
          approvalId: wait.approvalId,
          sessionId: run.sessionId,
          turnId: run.emit.turnId,
          kind: wait.kind === "password" ? "password" : "tool",
          scope: wait.kind === "tool" ? wait.scope : null,
          signal: run.signal,
        })
      : Promise.resolve(null);
  if (!state.message) {
    const wait = state.waits.find((candidate) => candidate.kind === "budget");
    const outcome = wait ? await rejoin(wait) : null;
    const allowed = Boolean(outcome && "decision" in outcome && outcome.decision !== "reject");
    if (allowed && wait) await run.budget?.raise(wait.raise);
    return { kind: "budget", allowed };
  }
  const calls = state.message.tool_calls ?? [];
  const waits = new Map<string, Promise<GateOutcome | null>>();
  const passwords = new Set<string>();
  for (const wait of state.waits) {
    if (wait.kind === "budget") continue;
    waits.set(wait.callId, rejoin(wait));
    if (wait.kind === "password") passwords.add(wait.callId);
  }
  const tools = new StepTools({ ...run, gate: resumedGate(run.gate, waits, passwords) }, new Set(waits.keys()));
  const waiting = new Set(calls.filter((call) => waits.has(call.id)).map(callSignature));
  for (const call of calls) {
    const done = state.results[call.id];
    if (done) tools.settle(call, done);
    else if (!waits.has(call.id) && !waiting.has(callSignature(call))) {
      const result = { output: RESTARTED_OUTPUT, isError: true };
      run.emit.event({
        type: "tool.state",
        payload: { turnId: run.emit.turnId, toolCallId: call.id, state: "error", output: result.output, isError: true },
      });
      tools.settle(call, result);
    }
  }
  const results = await tools.results(calls);
  const result: StepResult = {
    message: state.message,
    toolCalls: calls,
    outputTokens: 0,
    seconds: 0,
    stop: "completed",
    cutCalls: [],
    attempts: 1,
  };
  return { kind: "tools", result, results };
}

/**
 * The gate of a resumed step: a call that waited on a person gets that person's answer now; one
 * that waited on a password had been allowed already, and gets the password given now.
 */
function resumedGate(
  gate: ApprovalGate,
  waits: ReadonlyMap<string, Promise<GateOutcome | null>>,
  passwords: ReadonlySet<string>,
): ApprovalGate {
  return {
    ...gate,
    async check(request): Promise<ApprovalDecision> {
      const waited = waits.get(request.toolCallId);
      if (!waited) return gate.check(request);
      if (passwords.has(request.toolCallId))
        return { approved: true, decidedBy: "allowed before the bridge restarted" };
      const outcome = await waited;
      if (!outcome || !("decision" in outcome)) return { approved: false, decidedBy: "cancelled before a decision" };
      const decidedBy = outcome.decidedBy ?? "unknown";
      if (outcome.decision === "reject") return { approved: false, feedback: outcome.feedback || undefined, decidedBy };
      return { approved: true, decidedBy };
    },
    async askPassword(request) {
      if (!passwords.has(request.toolCallId)) return gate.askPassword ? gate.askPassword(request) : null;
      const outcome = await waits.get(request.toolCallId);
      return outcome && "password" in outcome ? outcome.password : null;
    },
  };
}
