import * as z from "zod";
import {
  ApprovalView,
  BoardCard,
  ChangeStat,
  SessionIsolation,
  SessionState,
  SessionSummary,
  WorktreeInfo,
} from "@/server/protocol";
import { api, BridgeError } from "@/components/transport/client";

/** The fleet's routes as the board calls them, each answer checked against its shape. */

/** A session as `GET /sessions` lists it, with the fleet's fields (older bridges leave them out). */
const FleetSession = SessionSummary.extend({
  worktree: WorktreeInfo.nullable().optional(),
  state: SessionState.optional(),
  changes: ChangeStat.nullable().optional(),
});
type FleetSession = z.infer<typeof FleetSession>;

const Committed = z.object({ sha: z.string(), message: z.string() });
const Merged = z.object({ sha: z.string() });
const Pushed = z.object({ remote: z.string(), branch: z.string(), compare_url: z.string().nullable() });
export type Pushed = z.infer<typeof Pushed>;
export type MergeStrategy = "squash" | "merge";

const sessionPath = (id: string) => `/api/v1/sessions/${encodeURIComponent(id)}`;

/** Every session of the deployment as a card; `archived` adds the archived ones. */
export async function listCards(archived: boolean): Promise<BoardCard[]> {
  const sessions = await api(`/api/v1/sessions${archived ? "?archived=1" : ""}`, z.array(FleetSession));
  return sessions.map(cardOf);
}

/** A card from a session's JSON: what the list knows (the live feed adds the activity and the approval). */
function cardOf(session: FleetSession): BoardCard {
  const worktree = session.worktree ?? null;
  return {
    id: session.id,
    title: session.title,
    workspace: session.workspace,
    runner: session.runner ?? null,
    group: worktree?.repo ?? session.workspace,
    state: session.state ?? (session.archived ? "archived" : session.status === "running" ? "running" : "idle"),
    worktree,
    changes: session.changes ?? null,
    cost_usd: session.cost_usd ?? null,
    budget_usd: session.budget_usd ?? null,
    turn_started_at: null,
    updated_at: session.updated_at,
    last_activity: null,
    approval: null,
  };
}

export interface NewSession {
  workspace: string;
  isolation: SessionIsolation;
  title?: string;
  model?: string;
  runner?: string;
}

export async function createSession(body: NewSession): Promise<{ id: string }> {
  return api("/api/v1/sessions", z.object({ id: z.string() }), { method: "POST", body });
}

/** `message` empty: the model writes it from the diff. */
export async function commitSession(id: string, message: string): Promise<z.infer<typeof Committed>> {
  const body = message.trim() ? { message: message.trim() } : {};
  return api(`${sessionPath(id)}/commit`, Committed, { method: "POST", body });
}

export async function mergeSession(id: string, strategy: MergeStrategy): Promise<z.infer<typeof Merged>> {
  return api(`${sessionPath(id)}/merge`, Merged, { method: "POST", body: { strategy } });
}

export async function pushSession(id: string, remote: string): Promise<Pushed> {
  const body = remote.trim() ? { remote: remote.trim() } : {};
  return api(`${sessionPath(id)}/push`, Pushed, { method: "POST", body });
}

/** Asks the session's agent to bring the base into its worktree and resolve the conflict. */
export async function resolveConflict(id: string): Promise<void> {
  await api(`${sessionPath(id)}/resolve`, z.unknown(), { method: "POST", body: {} });
}

export async function archiveSession(card: BoardCard, force: boolean): Promise<void> {
  // A session without a worktree has nothing to remove: archiving only files it away.
  if (!card.worktree)
    return void (await api(sessionPath(card.id), z.unknown(), { method: "PATCH", body: { archived: true } }));
  await api(`${sessionPath(card.id)}/archive`, z.unknown(), { method: "POST", body: force ? { force: true } : {} });
}

export async function restoreSession(card: BoardCard): Promise<void> {
  if (!card.worktree)
    return void (await api(sessionPath(card.id), z.unknown(), { method: "PATCH", body: { archived: false } }));
  await api(`${sessionPath(card.id)}/restore`, z.unknown(), { method: "POST", body: {} });
}

export async function decideApproval(approvalId: string, decision: "allow_once" | "reject"): Promise<void> {
  await api(`/api/v1/approvals/${encodeURIComponent(approvalId)}`, ApprovalView, {
    method: "POST",
    body: { decision },
  });
}

/** The conflicting paths of a 409 `merge:conflict` (beside the message, or in its details). */
export function conflictPaths(error: unknown): string[] | null {
  if (!(error instanceof BridgeError) || error.code !== "merge:conflict") return null;
  const paths = (error.details as { paths?: unknown } | undefined)?.paths;
  return Array.isArray(paths) ? paths.map(String) : [];
}

/** One line per thing an archive would lose, from a 409 `worktree:unmerged`'s details, whatever their shape. */
export function wouldLose(error: unknown): string[] | null {
  if (!(error instanceof BridgeError) || error.code !== "worktree:unmerged") return null;
  const details = error.details;
  if (!details || typeof details !== "object") return [];
  return Object.entries(details).flatMap(([key, value]) => {
    const label = LOSS_LABELS[key] ?? key.replace(/_/g, " ");
    if (Array.isArray(value)) return value.map((item) => `${label}: ${describe(item)}`);
    if (value === null || value === false || value === 0) return [];
    return [`${label}: ${describe(value)}`];
  });
}

/** How each kind of work an archive would lose reads in its list (the rest by their own names). */
const LOSS_LABELS: Record<string, string> = { commits: "commit", files: "uncommitted" };

function describe(value: unknown): string {
  if (typeof value !== "object" || value === null) return String(value);
  const fields = value as Record<string, unknown>;
  const sha = typeof fields.sha === "string" ? fields.sha.slice(0, 10) : fields.sha;
  const parts = [sha, fields.subject ?? fields.message, fields.status, fields.path].filter(
    (part) => typeof part === "string" || typeof part === "number",
  );
  return parts.length ? parts.join(" ") : JSON.stringify(value);
}
