// The scripted session: a real bridge (in this process) talking to the fake LLM over HTTP, driven
// through the runtime for 10+ turns with tools, parallel tools, a stored memory, an AGENTS.md that is edited,
// a new top-level file written mid-session, steering and a queued prompt; then optionally /compact and a
// D-Mail. Every request the fake LLM receives is recorded, so tests and the bench can render them through
// real chat templates (tests/support/chat-templates.ts).
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { PromptOptions } from "../../server/agent";
import { loadConfig } from "../../server/config";
import { startBridge, type Bridge } from "../../server/main";
import { startFakeLlm, type FakeLlm, type RecordedRequest, type ScriptedResponse } from "../fake-llm/server";
import type { RecordedBody } from "./chat-templates";

/** One model answer of a turn's step; a function sees the request it answers (for a D-Mail's checkpoint). */
type Step = ScriptedResponse | ((request: RecordedRequest) => ScriptedResponse);

interface ScriptedTurn {
  prompt: string;
  options?: PromptOptions;
  steps: Step[];
  /** Runs before the turn starts (edits in the workspace, as a user in an editor would). */
  before?: (workspace: string) => Promise<void>;
  /** A message sent while the turn runs, when its step `at` is requested. */
  steer?: { at: number; text: string };
  /** A prompt sent while this turn runs: it waits in the queue and runs right after. */
  queued?: ScriptedTurn;
}

export interface SessionRecording {
  /** Every request, in order, with what it was for. */
  requests: { kind: "main" | "side"; phase: "cache" | "resets"; body: RecordedBody }[];
  /** The session's main-conversation requests of the cache phase: one append-only chain. */
  chain: RecordedBody[];
  sessionId: string;
  outcomes: string[];
}

const AGENTS_MD = "# Project rules\n\nUse two-space indentation. Run `pnpm test` before you finish.\n";
const AGENTS_MD_EDITED = `${AGENTS_MD}Never edit generated files under dist/.\n`;

/** The main conversation's system prompt starts so (server/agent/system-prompt.ts); side calls have their own. */
const MAIN_PROMPT_START = "You are Worldline";

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

/** Ten-plus turns whose every request should extend the previous one. */
function cacheTurns(): ScriptedTurn[] {
  return [
    {
      prompt: "Look around the project and tell me what it is.",
      steps: [
        {
          reasoning: "I should look at the files.",
          toolCalls: [call("list_dir", {}), call("read_file", { path: "AGENTS.md" })],
        },
        { text: "A small TypeScript project with one module, src/app.ts." },
      ],
    },
    {
      prompt: "Which package manager should I use here?",
      steps: [{ text: "pnpm: it is what you prefer." }],
    },
    {
      prompt: "Add a notes.md file at the top level with a heading.",
      steps: [call1("write_file", { path: "notes.md", content: "# Notes\n" }), { text: "Created notes.md." }],
    },
    {
      prompt: "Plan a small refactor of src/app.ts in three steps.",
      steps: [
        call1("todo", {
          todos: [
            { title: "Read src/app.ts", status: "in_progress" },
            { title: "Extract the greeting", status: "pending" },
            { title: "Run the tests", status: "pending" },
          ],
        }),
        { text: "Planned three steps." },
      ],
    },
    {
      prompt: "Find the TODO comments and the TypeScript files.",
      steps: [
        { toolCalls: [call("grep", { pattern: "TODO" }), call("glob", { pattern: "**/*.ts" })] },
        { reasoning: "One TODO in app.ts.", text: "One TODO, in src/app.ts." },
      ],
    },
    {
      prompt: "I updated the project rules. Read src/app.ts again and follow them.",
      before: (workspace) => fs.writeFile(path.join(workspace, "AGENTS.md"), AGENTS_MD_EDITED),
      steps: [call1("read_file", { path: "src/app.ts" }), { text: "Read it; I will leave dist/ alone." }],
    },
    {
      prompt: "Run the tests.",
      steer: { at: 0, text: "Also tell me whether the tree is clean." },
      steps: [call1("shell", { command: "echo 'tests passed'" }), { text: "Tests passed and the tree is clean." }],
    },
    {
      prompt: "Summarise the work so far.",
      steps: [{ text: "We looked around, added notes.md, planned a refactor and ran the tests." }],
      queued: {
        prompt: "Then list the top-level files.",
        steps: [call1("list_dir", {}), { text: "AGENTS.md, notes.md, package.json, src/." }],
      },
    },
    {
      prompt: "Create src/util.ts with a helper.",
      steps: [
        call1("write_file", { path: "src/util.ts", content: "export const twice = (n: number) => n * 2;\n" }),
        { text: "Created src/util.ts." },
      ],
    },
    {
      prompt: "Mark the first step of the plan done.",
      steps: [
        call1("todo", {
          todos: [
            { title: "Read src/app.ts", status: "done" },
            { title: "Extract the greeting", status: "in_progress" },
            { title: "Run the tests", status: "pending" },
          ],
        }),
        { text: "Done." },
      ],
    },
    {
      prompt: "Thanks. Anything else I should know?",
      steps: [{ text: "No, that is all for now." }],
    },
  ];
}

/** Turns that start a new prefix on purpose: a compaction and a D-Mail (template coverage, not reuse). */
function resetTurns(): ScriptedTurn[] {
  return [
    { prompt: "/compact keep the plan", options: { compact: { focus: "keep the plan" } }, steps: [] },
    { prompt: "What was the plan again?", steps: [{ text: "Read, extract the greeting, run the tests." }] },
    {
      prompt: "Try a risky idea, then think better of it.",
      steps: [
        call1("shell", { command: "echo risky" }),
        (request) => call1("send_dmail", { checkpoint_id: lastCheckpoint(request), message: "The risky idea fails." }),
        { text: "I took the safe path." },
      ],
    },
    { prompt: "Good. One last question: are we done?", steps: [{ text: "Yes." }] },
  ];
}

/**
 * A conversation without tool messages (for templates without tool support, Gemma 3): steering during an
 * answer, a failed turn, a queued prompt and /compact.
 */
function chatTurns(): ScriptedTurn[] {
  return [
    { prompt: "Hello! Who are you?", steps: [{ text: "Worldline, a coding agent." }] },
    {
      prompt: "Explain what a prefix cache is.",
      steer: { at: 0, text: "Keep it to one sentence, please." },
      steps: [
        { text: "A prefix cache keeps the processed start of a prompt so the next request can skip it.", delayMs: 5 },
        { text: "It reuses the shared start of prompts." },
      ],
    },
    {
      prompt: "This one fails at the provider.",
      steps: [{ status: 400, body: { error: { message: "The provider had a bad day." } } }],
    },
    { prompt: "Try again, please.", steps: [{ text: "Working now." }] },
    {
      prompt: "Count to two.",
      steps: [{ text: "One, two." }],
      queued: { prompt: "And to three?", steps: [{ text: "One, two, three." }] },
    },
    { prompt: "/compact", steps: [] },
    { prompt: "Still there?", steps: [{ text: "Yes." }] },
  ];
}

function call1(name: string, args: Record<string, unknown>): ScriptedResponse {
  return { toolCalls: [call(name, args)] };
}

/** The newest checkpoint number the model can see in a request (markers travel inside messages). */
function lastCheckpoint(request: RecordedRequest): number {
  const text = JSON.stringify(request.body.messages);
  const numbers = [...text.matchAll(/CHECKPOINT (\d+)/g)].map((match) => Number(match[1]));
  if (numbers.length === 0) throw new Error("no checkpoint marker in the request");
  return numbers[numbers.length - 2] ?? numbers[0];
}

/**
 * Runs the scripted session on a fresh bridge and workspace. `resets` adds the compaction and D-Mail turns
 * after the cache phase; `chat` runs the conversation without tool messages instead. `fake` lets a caller
 * pass its own fake LLM (strict mode, prefix cache); one is started
 * and closed otherwise.
 */
export async function runScriptedSession(
  options: { resets?: boolean; chat?: boolean; fake?: FakeLlm; env?: Record<string, string> } = {},
): Promise<SessionRecording> {
  const fake = options.fake ?? (await startFakeLlm());
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-scripted-home-"));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-scripted-ws-")));
  await fs.writeFile(path.join(workspace, "AGENTS.md"), AGENTS_MD);
  await fs.writeFile(path.join(workspace, "package.json"), '{ "name": "demo", "private": true }\n');
  await fs.mkdir(path.join(workspace, "src"));
  await fs.writeFile(path.join(workspace, "src", "app.ts"), "// TODO: greet by name\nexport const hi = 'hi';\n");

  let bridge: Bridge | undefined;
  const recording: SessionRecording = { requests: [], chain: [], sessionId: "", outcomes: [] };
  let phase: "cache" | "resets" = "cache";
  const pending: Step[] = [];
  let steer: { at: number; text: string } | undefined;
  let mainInTurn = 0;
  const previousResponder = fake.onRequest;
  fake.onRequest = (request) => {
    const body = request.body as RecordedBody;
    const system = body.messages?.[0];
    const main = system?.role === "system" && String(system.content).startsWith(MAIN_PROMPT_START);
    recording.requests.push({ kind: main ? "main" : "side", phase, body });
    if (!main) return sideAnswer(body);
    if (phase === "cache") recording.chain.push(body);
    if (steer && mainInTurn === steer.at) {
      void bridge!.services.runtime.steer(recording.sessionId, steer.text);
      steer = undefined;
    }
    mainInTurn += 1;
    const step = pending.shift() ?? { text: "(unscripted)" };
    return typeof step === "function" ? step(request) : step;
  };

  try {
    const config = loadConfig({
      PORT: "0",
      WORLDLINE_HOME: home,
      WORLDLINE_TOKEN: "scripted-session-token-0123",
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "test-key",
      WORLDLINE_MODEL: "fake-model",
      ...options.env,
    });
    bridge = await startBridge({ config, ui: false, retry: { maxRetries: 1, baseDelayMs: 10, maxDelayMs: 100 } });
    const { services } = bridge;
    await services.memory!.add({
      text: "The user prefers pnpm over npm for package management.",
      type: "preference",
      scope: "workspace",
      workspace,
      importance: 4,
    });
    const session = await services.sessions.create({ workspace, yolo: true });
    recording.sessionId = session.id;

    const run = async (turn: ScriptedTurn) => {
      await turn.before?.(workspace);
      pending.push(...turn.steps, ...(turn.queued?.steps ?? []));
      steer = turn.steer;
      mainInTurn = 0;
      const started = await services.runtime.prompt(session.id, turn.prompt, turn.options);
      const queued = turn.queued ? await services.runtime.prompt(session.id, turn.queued.prompt) : undefined;
      recording.outcomes.push((await started.done).outcome);
      if (queued) recording.outcomes.push((await queued.done).outcome);
    };
    for (const turn of options.chat ? chatTurns() : cacheTurns()) await run(turn);
    if (options.resets) {
      phase = "resets";
      for (const turn of resetTurns()) await run(turn);
    }
  } finally {
    fake.onRequest = previousResponder;
    await bridge?.close();
    if (!options.fake) await fake.close();
    await fs.rm(home, { recursive: true, force: true });
    await fs.rm(workspace, { recursive: true, force: true });
  }
  return recording;
}

/** Answers for calls that are not the conversation itself: compaction summaries, memory decisions, subagents. */
function sideAnswer(body: RecordedBody): ScriptedResponse {
  const system = String(body.messages?.[0]?.content ?? "");
  if (system.startsWith("You compact")) return { text: "SUMMARY: a refactor of src/app.ts is planned in three steps." };
  if (system.includes("worth remembering")) return { text: '{"store": false, "reason": "nothing durable"}' };
  return { text: "ok" };
}
