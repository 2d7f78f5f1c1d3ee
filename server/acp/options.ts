import type * as acp from "@agentclientprotocol/sdk";

/** The ACP modes of a Worldline session. */
export type ModeId = "default" | "plan" | "yolo";

export const MODES: acp.SessionMode[] = [
  { id: "default", name: "Default", description: "Asks before edits and commands that change things." },
  { id: "plan", name: "Plan", description: "Investigates and proposes a plan; makes no changes." },
  { id: "yolo", name: "YOLO", description: "Approves everything inside the workspace without asking." },
];

export function isModeId(value: string): value is ModeId {
  return MODES.some((mode) => mode.id === value);
}

export function modeState(current: ModeId): acp.SessionModeState {
  return { currentModeId: current, availableModes: MODES };
}

/** A session's ACP mode: plan mode (the session's `mode`) wins over its yolo flag. */
export function modeOf(session: { mode: string; yolo: boolean }): ModeId {
  if (session.mode === "plan") return "plan";
  return session.yolo ? "yolo" : "default";
}

/** The models a client can pick: the configured one, the session's own, and any picked before. */
export function modelChoices(
  configured: string | undefined,
  current: string | undefined,
  extra: Iterable<string> = [],
): string[] {
  const all = new Set<string>();
  for (const model of [configured, current, ...extra]) if (model) all.add(model);
  return [...all];
}

export function configOptions(current: string | undefined, choices: string[]): acp.SessionConfigOption[] {
  if (!current) return [];
  return [
    {
      id: "model",
      name: "Model",
      category: "model",
      type: "select",
      currentValue: current,
      options: choices.map((model) => ({ value: model, name: model })),
    },
  ];
}

/** The legacy `models` block of session/new (clients that still send session/set_model read it). */
export function legacyModels(current: string | undefined, choices: string[]) {
  if (!current) return undefined;
  return { currentModelId: current, availableModels: choices.map((model) => ({ modelId: model, name: model })) };
}

export const AVAILABLE_COMMANDS: acp.AvailableCommand[] = [
  { name: "compact", description: "Summarise older messages to free context", input: { hint: "optional focus" } },
  { name: "yolo", description: "Toggle approving everything inside the workspace" },
  { name: "plan", description: "Toggle plan mode: read, search and propose a plan before changing anything" },
];
