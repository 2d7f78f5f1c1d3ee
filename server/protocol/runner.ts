import * as z from "zod";
import { FileContent, FileTreeListing, GitMarker } from "./ide";
import { PreviewOperations, PreviewResults } from "./runner-preview";
import { WorkspaceOperations, WorkspaceResults } from "./runner-workspace";

/**
 * Between a hub and a runner (`worldline runner`), over the runner's outbound socket.io
 * connection on the hub's `/runner.io` path. The hub sends `runner.request`s (one workspace
 * operation each) and the runner answers each with one `runner.response`; a started command
 * streams `runner.output` and ends with one `runner.exit`. Both sides parse everything they
 * receive with these schemas and refuse the rest.
 */

/** The socket.io path runners connect to, apart from the UI's `/socket.io/`. */
export const RUNNER_SOCKET_PATH = "/runner.io/";

/** A runner's name: what `runners add` was given and what sessions refer to. */
export const RunnerName = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,62}$/i,
    "letters, digits, '.', '_' and '-', up to 63, starting with a letter or digit",
  );

const AbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => value.startsWith("/") && !value.includes("\0"), "an absolute path without NUL bytes");

/** What a runner sends when it connects (socket.io `auth`): an enrollment token the first time, its credential after. */
export const RunnerHello = z
  .object({
    name: RunnerName.optional(),
    token: z.string().min(1).max(200).optional(),
    credential: z.string().min(1).max(200).optional(),
    roots: z.array(AbsolutePath).min(1).max(64),
    /** Random per runner process: a new one after a reconnect means the old process and its commands are gone. */
    instance: z.string().min(8).max(64),
    version: z.string().max(64),
  })
  .strict()
  .refine((hello) => Boolean(hello.token) !== Boolean(hello.credential), "exactly one of token and credential");
export type RunnerHello = z.infer<typeof RunnerHello>;

/** The hub's first message: the runner's name and, after an enrollment, the credential to keep. */
export const RunnerWelcome = z.object({ name: RunnerName, credential: z.string().optional() }).strict();
export type RunnerWelcome = z.infer<typeof RunnerWelcome>;

const ResolvedPathShape = z.object({
  input: z.string(),
  real: AbsolutePath,
  display: z.string(),
  inside: z.boolean(),
  sensitive: z.string().optional(),
  hardLinks: z.number().int().optional(),
});

const SearchRequestShape = z.object({
  pattern: z.string().min(1).max(10_000),
  root: AbsolutePath,
  ignoreCase: z.boolean(),
  contextLines: z.number().int().min(0).max(100),
  include: z.array(z.string().max(1000)).max(100),
  exclude: z.array(z.string().max(1000)).max(100),
  maxMatches: z.number().int().min(1).max(100_000),
});

/** One workspace operation; `runner.request` carries one. */
export const RunnerOperation = z.discriminatedUnion("op", [
  z.object({ op: z.literal("resolve"), workspace: AbsolutePath, input: z.string().max(4096) }),
  z.object({ op: z.literal("stat"), path: AbsolutePath }),
  z.object({ op: z.literal("readText"), path: AbsolutePath }),
  /** `resolve`, then a page of the file it names (read_file): one round trip instead of two. */
  z.object({
    op: z.literal("resolvePage"),
    workspace: AbsolutePath,
    input: z.string().max(4096),
    offset: z.number().int().min(1),
    limit: z.number().int().min(1).max(100_000),
    maxLineChars: z.number().int().min(1).max(100_000),
  }),
  z.object({ op: z.literal("writeResolved"), resolved: ResolvedPathShape, content: z.string() }),
  z.object({ op: z.literal("readDir"), path: AbsolutePath }),
  z.object({ op: z.literal("search"), request: SearchRequestShape }),
  z.object({ op: z.literal("glob"), root: AbsolutePath, pattern: z.string().min(1).max(4096) }),
  z.object({
    op: z.literal("exec"),
    processId: z.string().min(1).max(64),
    command: z.string().min(1).max(1_000_000),
    cwd: AbsolutePath,
    env: z.record(z.string(), z.string().max(100_000)),
    stdin: z.string().max(100_000).optional(),
  }),
  z.object({
    op: z.literal("stop"),
    processId: z.string().min(1).max(64),
    graceMs: z.number().int().min(0).optional(),
  }),
  /** Stops a running search or glob the hub no longer waits for. */
  z.object({ op: z.literal("cancel"), requestId: z.string().min(1).max(64) }),
  z.object({ op: z.literal("workspacePrompt"), workspace: AbsolutePath }),
  /**
   * A folder a session may use: an existing directory under a root, as its real path. In the runner's
   * own forks folder only with `made` (a fork or worktree the runner made for this session), never the folder itself.
   */
  z.object({ op: z.literal("checkWorkspace"), path: z.string().min(1).max(4096), made: z.boolean().optional() }),
  /** The folder picker: sub-folders of a folder under a root (the first root without a path). */
  z.object({ op: z.literal("listFolders"), path: AbsolutePath.optional() }),
  /**
   * Where the runner makes worktrees for worktree sessions (server/worktrees): its own
   * `<WORLDLINE_HOME>/worktrees`, served beside its roots like its forks folder, as its real path.
   */
  z.object({ op: z.literal("worktreesFolder") }),
  // The IDE's file tree, editor, @-mentions and git markers (server/files), on the runner's copy.
  z.object({
    op: z.literal("files.list"),
    root: AbsolutePath,
    dir: z.string().max(4096),
    // Git-ignored entries listed and marked (the tree's "show ignored files"); an older runner ignores it.
    ignored: z.boolean().optional(),
  }),
  z.object({ op: z.literal("files.read"), root: AbsolutePath, path: z.string().min(1).max(4096) }),
  z.object({
    op: z.literal("files.write"),
    root: AbsolutePath,
    path: z.string().min(1).max(4096),
    content: z.string(),
    baseHash: z.string().max(128).nullable().optional(),
    force: z.boolean().optional(),
  }),
  z.object({
    op: z.literal("files.search"),
    root: AbsolutePath,
    query: z.string().max(1000),
    limit: z.number().int().min(1).max(1000),
  }),
  z.object({ op: z.literal("files.gitStatus"), root: AbsolutePath }),
  // A terminal's shell on the runner: its output comes back as `runner.pty_data`, its end as `runner.pty_exit`.
  z.object({
    op: z.literal("pty.open"),
    ptyId: z.string().min(1).max(64),
    cwd: AbsolutePath,
    cols: z.number().int().min(1).max(1000),
    rows: z.number().int().min(1).max(1000),
    env: z.record(z.string(), z.string().max(10_000)),
    /** The login shell's arguments (`-l -c <line>`: a worktree's setup, the terminal ending with it); absent: `-l`. */
    args: z.array(z.string().max(100_000)).max(8).optional(),
  }),
  z.object({ op: z.literal("pty.input"), ptyId: z.string().min(1).max(64), data: z.string().max(4 * 1024 * 1024) }),
  z.object({
    op: z.literal("pty.resize"),
    ptyId: z.string().min(1).max(64),
    cols: z.number().int().min(1).max(1000),
    rows: z.number().int().min(1).max(1000),
  }),
  z.object({ op: z.literal("pty.flow"), ptyId: z.string().min(1).max(64), paused: z.boolean() }),
  z.object({ op: z.literal("pty.kill"), ptyId: z.string().min(1).max(64) }),
  // Checkpoints, skills and stdio programs on the runner (runner-workspace.ts).
  ...WorkspaceOperations,
  // Ports and preview streams of a runner session's dev servers (runner-preview.ts).
  ...PreviewOperations,
]);
export type RunnerOperation = z.infer<typeof RunnerOperation>;
export type RunnerOp = RunnerOperation["op"];

/**
 * In team mode, the hub bridge a request comes from (its owner id): the runner puts it on the answer
 * and on the output of what the request started, and the bridge holding the runner's socket passes
 * those on to it (server/runners/relay.ts). Absent: the bridge the runner is connected to.
 */
const Route = z.string().min(1).max(64);

export const RunnerRequest = z
  .object({
    id: z.string().min(1).max(64),
    /**
     * With `sessionId`: the epoch of the session's claim the sending bridge holds (server/leases). A
     * runner refuses a request whose epoch is below one it has already seen for that session.
     * Requests not made under a claim (terminals, the file views) carry no sessionId and are not fenced.
     */
    epoch: z.number().int().min(0),
    sessionId: z.string().max(64).optional(),
    route: Route.optional(),
    operation: RunnerOperation,
  })
  .strict();
export type RunnerRequest = z.infer<typeof RunnerRequest>;

export const RunnerFailure = z.object({
  code: z.string().max(100),
  message: z.string().max(10_000),
  /** What the error carries for the UI (a conflict's current hash). */
  details: z.unknown().optional(),
});

export const RunnerResponse = z.union([
  z
    .object({ id: z.string().min(1).max(64), ok: z.literal(true), result: z.unknown(), route: Route.optional() })
    .strict(),
  z
    .object({ id: z.string().min(1).max(64), ok: z.literal(false), error: RunnerFailure, route: Route.optional() })
    .strict(),
]);
export type RunnerResponse = z.infer<typeof RunnerResponse>;

export const RunnerOutput = z
  .object({
    processId: z.string().min(1).max(64),
    chunk: z.string(),
    /** A stdio program's stderr (runner-workspace.ts); absent: its stdout, or a command's output. */
    stream: z.literal("stderr").optional(),
    route: Route.optional(),
  })
  .strict();
export const RunnerExit = z
  .object({
    processId: z.string().min(1).max(64),
    route: Route.optional(),
    code: z.number().int().nullable(),
    signal: z.string().max(32).nullable(),
    leftoversStopped: z.boolean(),
  })
  .strict();

/** Something changed under a folder the file tree listed on the runner (its WorkspaceFiles watcher). */
export const RunnerFilesChanged = z
  .object({ root: AbsolutePath, paths: z.array(z.string().max(4096)).max(10_000) })
  .strict();

/** A terminal's output, as the runner read it from its pty (raw bytes). */
export const RunnerPtyData = z
  .object({ ptyId: z.string().min(1).max(64), data: z.instanceof(Uint8Array), route: Route.optional() })
  .strict();
export const RunnerPtyExit = z
  .object({ ptyId: z.string().min(1).max(64), exitCode: z.number().int().nullable(), route: Route.optional() })
  .strict();

/** What a runner sends its hub besides `runner.welcome`; each is parsed with its schema above. */
export const RunnerFrameEvent = z.enum([
  "runner.response",
  "runner.output",
  "runner.exit",
  "runner.pty_data",
  "runner.pty_exit",
  "runner.files_changed",
  "runner.stream_data",
  "runner.stream_end",
]);
export type RunnerFrameEvent = z.infer<typeof RunnerFrameEvent>;

const TextPageShape = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("missing") }),
  z.object({ kind: z.literal("directory") }),
  z.object({ kind: z.literal("binary"), size: z.number() }),
  z.object({
    kind: z.literal("page"),
    lines: z.array(z.string()),
    totalLines: z.number().int(),
    note: z.string().optional(),
  }),
]);
const FileStatShape = z.object({ type: z.enum(["file", "dir", "other"]), size: z.number(), mtimeMs: z.number() });
const SearchLineShape = z.object({ number: z.number().int(), text: z.string(), isMatch: z.boolean() });

/** What each operation answers, checked by the hub before a tool sees it. */
export const RunnerResults = {
  resolve: ResolvedPathShape,
  stat: FileStatShape.nullable(),
  /** null: no such file. */
  readText: z.string().nullable(),
  resolvePage: z.object({ resolved: ResolvedPathShape, page: TextPageShape }),
  writeResolved: z.null(),
  readDir: z.array(
    z.object({
      name: z.string(),
      type: z.enum(["file", "dir", "symlink", "other"]),
      size: z.number().optional(),
      linkTarget: z.string().optional(),
    }),
  ),
  search: z.object({
    files: z.array(z.object({ absolute: AbsolutePath, lines: z.array(SearchLineShape) })),
    matchCount: z.number().int(),
    truncated: z.boolean(),
  }),
  glob: z.array(z.object({ absolute: AbsolutePath, mtimeMs: z.number() })),
  exec: z.object({ pid: z.number().int() }),
  stop: z.null(),
  cancel: z.null(),
  workspacePrompt: z.object({
    template: z.string().optional(),
    listing: z.string(),
    agentsMd: z.array(z.object({ path: z.string(), text: z.string() })),
  }),
  checkWorkspace: z.object({ path: AbsolutePath }),
  worktreesFolder: z.object({ path: AbsolutePath }),
  listFolders: z.object({
    path: AbsolutePath,
    parent: AbsolutePath.nullable(),
    entries: z.array(z.object({ name: z.string(), path: AbsolutePath })),
  }),
  "files.list": FileTreeListing,
  "files.read": FileContent,
  "files.write": z.object({ path: z.string(), hash: z.string(), mtimeMs: z.number() }),
  "files.search": z.object({ files: z.array(z.string()), truncated: z.boolean() }),
  "files.gitStatus": z.record(z.string(), GitMarker).nullable(),
  "pty.open": z.object({ pid: z.number().int() }),
  "pty.input": z.null(),
  "pty.resize": z.null(),
  "pty.flow": z.null(),
  "pty.kill": z.null(),
  ...WorkspaceResults,
  ...PreviewResults,
} satisfies Record<RunnerOp, z.ZodType>;
export type RunnerResult<O extends RunnerOp> = z.infer<(typeof RunnerResults)[O]>;

/** `GET /api/v1/runners`: one entry per enrolled, unrevoked runner. */
/** Who may use a runner (start sessions on it, list its folders); empty or absent lists: everyone who may use runners. */
export const RunnerAccess = z
  .object({
    roles: z
      .array(z.enum(["admin", "member", "viewer"]))
      .max(3)
      .optional(),
    people: z.array(z.string().min(1).max(64)).max(1000).optional(),
  })
  .strict();
export type RunnerAccess = z.infer<typeof RunnerAccess>;

export const RunnerView = z.object({
  name: z.string(),
  connected: z.boolean(),
  roots: z.array(z.string()),
  last_seen: z.string().nullable(),
  /** Who may use it (admins always may). */
  access: RunnerAccess.optional(),
  /** The last time a second connection with its credential was refused while it was connected (SECURITY.md): revoke and re-enroll it. */
  duplicate_at: z.string().nullable().optional(),
});
export type RunnerView = z.infer<typeof RunnerView>;

/** `GET /api/v1/runners`: every enrolled runner (empty on a bridge without runners). */
export const RunnerList = z.array(RunnerView);

/** `POST /api/v1/runners`: the one-time enrollment token, shown once. */
export const AddedRunner = z.object({ name: z.string(), token: z.string() });

/** `PATCH /api/v1/runners/:name`: a new name, and/or who may use it. */
export const UpdateRunnerBody = z
  .object({ name: RunnerName.optional(), access: RunnerAccess.optional() })
  .strict()
  .refine((body) => body.name !== undefined || body.access !== undefined, "Give a name or an access.");

/** `DELETE /api/v1/runners/:name`. */
export const RevokedRunner = z.object({ revoked: z.literal(true) });

/** `POST /api/v1/runners`: enroll a runner (the Settings page's "Add runner"). */
export const AddRunnerBody = z
  .object({
    name: RunnerName,
    roots: z.array(AbsolutePath).max(64).optional().describe("Pin the folders it may serve; empty = what it offers"),
  })
  .strict();
export type AddRunnerBody = z.infer<typeof AddRunnerBody>;

export const FolderQuery = z.object({ path: AbsolutePath.optional() });
