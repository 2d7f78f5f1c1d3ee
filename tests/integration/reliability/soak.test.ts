import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { emitCommand, startTestBridge, uniqueId, waitFor, type TestBridge } from "../helpers";
import { markerScanner, PtyViewer } from "../pty/pty-client";

/**
 * A long session: many turns (each a tool call and a long answer, with a tab
 * watching) and a lot of terminal output (a viewer acknowledging it). The heap
 * after a full GC must stay within a fixed bound of where it was after warm-up.
 *
 * `npm test` runs a short version; `npm run test:soak` runs the long one
 * (SOAK_TURNS=600 SOAK_TERMINAL_MB=300), see README "Testing" and SECURITY.md.
 */
const TURNS = Number(process.env.SOAK_TURNS ?? 60);
const TERMINAL_MB = Number(process.env.SOAK_TERMINAL_MB ?? 20);
const WARMUP_TURNS = 10;
/**
 * Allowed heap growth after warm-up: V8's own noise after a full GC, plus the per-session context
 * growing a little per turn (a few KB of messages). A bound per turn, so 400 KB leaked per turn fails
 * at 60 turns as at 600 (a flat 25 MB let it through at 60).
 */
const HEAP_NOISE_MB = 4;
const MAX_GROWTH_KB_PER_TURN = 40;
const MAX_HEAP_GROWTH_MB = HEAP_NOISE_MB + (TURNS * MAX_GROWTH_KB_PER_TURN) / 1024;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

let fake: FakeLlm;
let bridge: TestBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  // A huge window: compaction (an extra model call) would take the scripted answers out of order.
  bridge = await startTestBridge({ llmUrl: fake.url, env: { WORLDLINE_CONTEXT_WINDOW: "1000000000" } });
});

afterAll(async () => {
  await bridge.stop();
  await fake.close();
});

describe("soak", () => {
  it(`keeps memory bounded over ${TURNS} turns and ${TERMINAL_MB} MB of terminal output`, async () => {
    const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace, yolo: true } });
    const { id: sessionId } = (await created.json()) as { id: string };
    const socket = await bridge.socket();
    let frames = 0;
    socket.onAny(() => (frames += 1));
    await emitCommand(socket, "session.subscribe", { sessionId, afterSeq: 0 });
    const answer = "All good. ".repeat(200);

    const runTurns = async (count: number) => {
      for (let i = 0; i < count; i++) {
        fake.script(
          { toolCalls: [{ name: "shell", arguments: { command: `echo turn-${i}; seq 1 200` } }] },
          { text: answer },
        );
        const started = await bridge.services.runtime.prompt(sessionId, `turn ${i}`);
        const result = await started.done;
        expect({
          turn: i,
          outcome: result.outcome,
          message: "message" in result ? result.message : undefined,
        }).toMatchObject({ turn: i, outcome: "completed" });
        // The fake LLM lives in this process and records every request and caches its prompt (each holds
        // the whole history): not the bridge's memory.
        fake.requests.length = 0;
        fake.clearCache();
      }
    };

    const t0 = Date.now();
    await runTurns(WARMUP_TURNS);
    const baseline = heapMb();
    await runTurns(TURNS);
    const afterTurns = heapMb();

    // Terminal output with a viewer that acknowledges what it receives.
    await emitCommand(socket, "pty.list", { sessionId });
    const terminal = (await emitCommand(socket, "pty.create", { commandId: uniqueId(), sessionId })) as {
      terminalId: string;
    };
    const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { xterm: false, keepBytes: false });
    await viewer.attach();
    // The marker may share a chunk with the prompt after it: scan whole chunks, not a short tail.
    const sawMarker = markerScanner("SOAK-42");
    let flooded = false;
    viewer.onData((chunk) => (flooded ||= sawMarker(chunk)));
    viewer.input(`head -c ${TERMINAL_MB * 1024 * 1024} /dev/zero | tr '\\0' 'x' | fold -w 120; echo SOAK-$((40+2))\r`);
    await waitFor(() => flooded, 600_000, "the terminal flood");
    viewer.dispose();
    await bridge.services.ptys.closeAll();
    const afterTerminal = heapMb();

    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    console.info(
      `[reliability/soak] ${TURNS} turns + ${TERMINAL_MB} MB terminal in ${seconds}s; heap MB: baseline ${baseline.toFixed(1)}, after turns ${afterTurns.toFixed(1)}, after terminal ${afterTerminal.toFixed(1)}; socket frames ${frames}; rss ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB`,
    );
    expect(viewer.received).toBeGreaterThan(TERMINAL_MB * 1024 * 1024);
    expect(afterTurns - baseline).toBeLessThan(MAX_HEAP_GROWTH_MB);
    expect(afterTerminal - baseline).toBeLessThan(MAX_HEAP_GROWTH_MB);
  }, 1_800_000);
});
