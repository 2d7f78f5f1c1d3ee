import * as z from "zod";
import { SkillView } from "./memory";

/**
 * The hub ↔ runner operations for what a workspace holds beyond files and commands
 * (server/protocol/runner.ts gathers them with the rest): the checkpoints' shadow repository
 * and the files it reads and writes, workspace skills, and programs talking over stdio
 * (MCP servers, external ACP agents), whose output comes back as `runner.output` (with
 * `stream: "stderr"` for stderr) and whose end as `runner.exit`.
 */

const Path = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => value.startsWith("/") && !value.includes("\0"), "an absolute path without NUL bytes");
/** A path inside the workspace, as git names it. */
const RelativePath = z.string().min(1).max(4096);
const Commit = z.string().regex(/^[0-9a-f]{7,64}$/i);
const Id = z.string().min(1).max(64);
const Bytes = z.custom<Uint8Array>((value) => value instanceof Uint8Array, "bytes");

const FileChangeShape = z.object({
  path: z.string(),
  status: z.enum(["added", "modified", "deleted", "renamed"]),
  additions: z.number().int(),
  deletions: z.number().int(),
  oldPath: z.string().optional(),
  binary: z.boolean().optional(),
});
const SkippedShape = z.object({ path: z.string(), reason: z.string() });
const WrittenShape = z.object({ written: z.array(z.string()), deleted: z.array(z.string()) });

export const WorkspaceOperations = [
  z.object({
    op: z.literal("snapshots.snapshot"),
    workspace: Path,
    message: z.string().max(1000),
    changes: z.boolean().default(true),
  }),
  z.object({ op: z.literal("snapshots.diff"), workspace: Path, from: Commit, to: Commit.optional() }),
  z.object({ op: z.literal("snapshots.changedSince"), workspace: Path, commit: Commit }),
  z.object({
    op: z.literal("snapshots.restore"),
    workspace: Path,
    target: Commit,
    baseline: Commit.optional(),
    force: z.boolean().optional(),
    message: z.string().max(1000).optional(),
    current: Commit.optional(),
  }),
  z.object({ op: z.literal("snapshots.fileAt"), workspace: Path, commit: Commit, path: RelativePath }),
  z.object({ op: z.literal("snapshots.readNow"), workspace: Path, path: RelativePath }),
  z.object({
    op: z.literal("snapshots.revert"),
    workspace: Path,
    spec: z.object({
      path: RelativePath,
      oldPath: RelativePath.optional(),
      status: FileChangeShape.shape.status,
      hunkText: z.string().optional(),
      base: Bytes.optional(),
    }),
    dryRun: z.boolean(),
  }),
  z.object({
    op: z.literal("snapshots.fork"),
    workspace: Path,
    target: Commit,
    name: z.string().min(1).max(128),
    worktree: z.boolean(),
  }),
  /** The workspace's own skills (`.worldline/skills`, …); the hub adds those of its home. */
  z.object({ op: z.literal("skills.list"), workspace: Path }),
  /** A program with piped stdin, stdout and stderr (an MCP server, an external agent), in a folder under a root. */
  z.object({
    op: z.literal("stdio.open"),
    processId: Id,
    command: z.string().min(1).max(100_000),
    args: z.array(z.string().max(100_000)).max(1000),
    cwd: Path,
    env: z.record(z.string(), z.string().max(100_000)),
    inherit: z.enum(["all", "basic"]),
    /** A program that ships with Worldline: the runner runs its own copy (server/host/bundled.ts) with `args`. */
    bundled: z.enum(["typescript-language-server"]).optional(),
  }),
  z.object({ op: z.literal("stdio.write"), processId: Id, data: z.string().max(16 * 1024 * 1024) }),
  z.object({ op: z.literal("stdio.stop"), processId: Id }),
] as const;

export const WorkspaceResults = {
  "snapshots.snapshot": z.object({
    commit: Commit,
    changed: z.array(FileChangeShape),
    skipped: z.array(SkippedShape),
  }),
  "snapshots.diff": z.object({
    files: z.array(FileChangeShape),
    patch: z.string(),
    truncated: z.boolean(),
    skipped: z.array(SkippedShape),
  }),
  "snapshots.changedSince": z.array(z.string()),
  "snapshots.restore": WrittenShape.extend({
    before: Commit,
    untouched: z.array(z.string()),
    after: Commit.optional(),
  }),
  "snapshots.fileAt": Bytes.nullable(),
  "snapshots.readNow": Bytes.nullable(),
  "snapshots.revert": WrittenShape,
  "snapshots.fork": z.object({ workspace: Path }),
  "skills.list": z.array(SkillView),
  "stdio.open": z.object({ pid: z.number().int() }),
  "stdio.write": z.null(),
  "stdio.stop": z.null(),
};

/** Workspace operations a hub may resend after a drop that must not happen twice (see server/runner/serve.ts). */
export const WORKSPACE_ONCE_ONLY = [
  "snapshots.restore",
  "snapshots.revert",
  "snapshots.fork",
  "stdio.open",
  "stdio.write",
  "stdio.stop",
] as const;
