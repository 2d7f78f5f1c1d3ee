import * as z from "zod";

/**
 * Terminal messages between tabs and the bridge. Output travels as binary
 * (`pty.data`: terminal id + raw bytes), everything else as validated JSON.
 */

/** A viewer acknowledges output in steps of this many bytes: VS Code's CharCountAckSize; one ack per few KB keeps the ack traffic negligible. */
export const PTY_ACK_EVERY_BYTES = 5_000;

const CommandId = z.string().min(8).max(64);
const SessionId = z.string().min(1).max(64);
const TerminalId = z.string().min(1).max(64);
const Cols = z.number().int().min(2).max(1_000);
const Rows = z.number().int().min(1).max(500);
const Title = z.string().trim().min(1).max(80);

export const TerminalInfo = z.object({
  terminalId: z.string(),
  sessionId: z.string(),
  title: z.string(),
  pid: z.number().int(),
  cols: z.number().int(),
  rows: z.number().int(),
  viewers: z.number().int(),
  createdAt: z.string(),
});
export type TerminalInfo = z.infer<typeof TerminalInfo>;

export const ptyCommands = {
  /** Lists a session's terminals and subscribes the tab to `pty.terminals` updates. */
  "pty.list": z.object({ sessionId: SessionId }).strict(),
  "pty.create": z
    .object({
      commandId: CommandId,
      sessionId: SessionId,
      title: Title.optional(),
      cols: Cols.optional(),
      rows: Rows.optional(),
    })
    .strict(),
  "pty.rename": z.object({ commandId: CommandId, sessionId: SessionId, terminalId: TerminalId, title: Title }).strict(),
  "pty.close": z.object({ commandId: CommandId, sessionId: SessionId, terminalId: TerminalId }).strict(),
  /** Starts viewing: a `pty.snapshot` of the current screen comes first, then `pty.data`. */
  "pty.attach": z
    .object({ sessionId: SessionId, terminalId: TerminalId, cols: Cols.optional(), rows: Rows.optional() })
    .strict(),
  "pty.detach": z.object({ terminalId: TerminalId }).strict(),
  "pty.input": z
    .object({
      sessionId: SessionId,
      terminalId: TerminalId,
      data: z
        .string()
        .min(1)
        .max(64 * 1024),
    })
    .strict(),
  "pty.resize": z.object({ sessionId: SessionId, terminalId: TerminalId, cols: Cols, rows: Rows }).strict(),
  /** Bytes of `pty.data` the viewer has parsed (from xterm's write callback). */
  "pty.ack": z
    .object({
      terminalId: TerminalId,
      bytes: z
        .number()
        .int()
        .min(1)
        .max(64 * 1024 * 1024),
    })
    .strict(),
  /** Runs a line in the session's active terminal (opening one if none): the chat's shell mode. */
  "pty.run": z
    .object({
      commandId: CommandId,
      sessionId: SessionId,
      line: z
        .string()
        .min(1)
        .max(16 * 1024),
    })
    .strict(),
} as const;

export const PtySnapshot = z.object({
  terminalId: z.string(),
  data: z.string(),
  cols: z.number().int(),
  rows: z.number().int(),
});
export type PtySnapshot = z.infer<typeof PtySnapshot>;

/** Messages from the bridge; `pty.data` is `(terminalId: string, bytes: Uint8Array)` and not JSON. */
export const ptyMessages = {
  "pty.snapshot": PtySnapshot,
  "pty.resync": z.object({ terminalId: z.string() }),
  "pty.exit": z.object({ terminalId: z.string(), exitCode: z.number().nullable() }),
  "pty.terminals": z.object({ sessionId: z.string(), terminals: z.array(TerminalInfo) }),
} as const;

/** socket.io delivers binary as Buffer in Node and as ArrayBuffer in browsers. */
export const PtyDataArgs = z.tuple([z.string(), z.union([z.instanceof(Uint8Array), z.instanceof(ArrayBuffer)])]);
