import { showShortcuts } from "@/components/shared/shortcuts";
import * as z from "zod";
import { CheckpointView, ForkResult, RewindResult, SessionSummary, SettingsView } from "@/server/protocol";
import { api, BridgeError, command } from "@/components/transport/client";

export interface SlashContext {
  sessionId: string;
  workspace: string;
  yolo: boolean;
  /** Plan mode is on. */
  plan?: boolean;
  navigate: (href: string) => void;
  say: (text: string, level?: "info" | "error") => void;
}

export const SLASH_COMMANDS: { name: string; args?: string; help: string }[] = [
  { name: "compact", args: "[focus]", help: "Summarise older messages to free context" },
  { name: "clear", help: "Start a fresh session on this folder" },
  { name: "yolo", help: "Toggle auto-approval of actions inside the workspace" },
  { name: "plan", args: "[prompt]", help: "Toggle plan mode (read and propose a plan first); with a prompt: plan it" },
  { name: "model", args: "[name]", help: "Show or set this session's model" },
  { name: "undo", help: "Rewind files and conversation to before the last turn" },
  { name: "fork", help: "Fork this session at its latest checkpoint" },
  { name: "help", help: "List commands and shortcuts" },
];

/** Runs a `/command`. Returns false when the text isn't a known command (it is then sent as a prompt). */
export async function runSlashCommand(text: string, ctx: SlashContext): Promise<boolean> {
  const match = /^\/(\w+)\s*([\s\S]*)$/.exec(text.trim());
  if (!match || !SLASH_COMMANDS.some((c) => c.name === match[1])) return false;
  const [, name, rest] = match;
  const arg = rest.trim();
  const session = `/api/v1/sessions/${encodeURIComponent(ctx.sessionId)}`;
  try {
    switch (name) {
      case "compact":
        await command("session.compact", { sessionId: ctx.sessionId, ...(arg ? { focus: arg } : {}) });
        ctx.say("Compacting the conversation…");
        return true;
      case "clear": {
        const created = await api("/api/v1/sessions", SessionSummary, {
          method: "POST",
          body: { workspace: ctx.workspace },
        });
        ctx.navigate(`/s/${created.id}`);
        return true;
      }
      case "yolo":
        await api(session, SessionSummary, { method: "PATCH", body: { yolo: !ctx.yolo } });
        ctx.say(
          !ctx.yolo
            ? "Yolo on: actions inside the workspace are approved automatically."
            : "Yolo off: risky actions ask first.",
        );
        return true;
      case "plan":
        // `/plan <prompt>` plans that prompt; `/plan` alone toggles.
        await api(session, SessionSummary, { method: "PATCH", body: { mode: arg || !ctx.plan ? "plan" : "default" } });
        if (arg) await command("turn.prompt", { sessionId: ctx.sessionId, text: arg });
        else
          ctx.say(
            ctx.plan
              ? "Plan mode off: the agent may change things again."
              : "Plan mode on: the agent reads and proposes a plan before changing anything.",
          );
        return true;
      case "model":
        if (!arg) {
          const settings = await api("/api/v1/settings", SettingsView);
          const models = settings.providers.flatMap((p) => p.models.map((m) => `${m.id} (${p.name})`));
          ctx.say(
            `Default: ${settings.envModel ?? settings.defaultModel?.model ?? "none"}. Available: ${models.join(", ") || "none — add one in Settings"}. Use /model <name>.`,
          );
          return true;
        }
        await api(session, SessionSummary, { method: "PATCH", body: { model: arg } });
        ctx.say(`This session now uses ${arg}.`);
        return true;
      case "undo":
      case "fork": {
        const checkpoints = await api(`${session}/checkpoints`, z.array(CheckpointView));
        const target = name === "undo" ? turnStart(checkpoints) : checkpoints.at(-1);
        if (!target) return (ctx.say("There is no checkpoint yet: nothing to " + name + "."), true);
        if (name === "undo") {
          await api(`${session}/rewind`, RewindResult, { method: "POST", body: { checkpoint: target.id } });
          ctx.say(`Rewound to before turn ${target.turn}.`);
        } else {
          const fork = await api(`${session}/fork`, ForkResult, {
            method: "POST",
            body: { checkpoint: target.id },
          });
          ctx.navigate(`/s/${fork.id}`);
        }
        return true;
      }
      case "help":
        // One list of shortcuts and commands for the whole app: the dialog `?` opens too.
        showShortcuts();
        return true;
    }
  } catch (error) {
    if (error instanceof BridgeError && error.status === 404 && (name === "undo" || name === "fork")) {
      ctx.say(`/${name} needs checkpoints, which this bridge doesn't offer yet.`, "error");
      return true;
    }
    ctx.say(`/${name} failed: ${error instanceof Error ? error.message : String(error)}`, "error");
  }
  return true;
}

/** The first checkpoint of the latest turn: rewinding there undoes that whole turn. */
function turnStart(checkpoints: CheckpointView[]): CheckpointView | undefined {
  const last = checkpoints.at(-1);
  if (!last) return undefined;
  return checkpoints.find((c) => c.turn === last.turn);
}
