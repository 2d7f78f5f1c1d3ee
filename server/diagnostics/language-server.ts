import { PassThrough, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node.js";
import {
  DiagnosticSeverity,
  type Diagnostic,
  type InitializeParams,
  type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol";
import type { StdioProcess, StdioSpec, ToolHost } from "../host";
import type { FileDiagnostic } from "../tools";

/** How a language server is started, and which files it handles. */
export interface ServerSpec {
  language: string;
  command: string;
  args: string[];
  /** Ships with Worldline: the host runs its own copy (a runner's install is not where the hub's is). */
  bundled?: StdioSpec["bundled"];
  /** LSP language ids by file extension. */
  languageIds: Record<string, string>;
  initializationOptions?: unknown;
  /**
   * Asks for a file's errors instead of waiting for the server to publish them: a server that
   * publishes only when a file's errors change (typescript-language-server) never answers an
   * edit that leaves a clean file clean.
   */
  pull?: (request: (method: string, params: unknown) => Promise<unknown>, uri: string) => Promise<FileDiagnostic[]>;
}

/** Time the server has to answer `initialize` before it counts as failed to start. */
const INITIALIZE_LIMIT_MS = 60_000;

/**
 * One language server over LSP (vscode-jsonrpc on the program's stdio, started through the
 * host's stdio seam): opens files, sends their new text, and waits for the diagnostics the
 * server publishes for that text.
 */
export class LanguageServer {
  /** Why it stopped working (exited, failed to start); undefined while it works. */
  failure: string | undefined;
  private readonly connection: MessageConnection;
  private readonly versions = new Map<string, number>();
  private readonly waiting = new Map<string, { version: number; resolve: (diagnostics: Diagnostic[]) => void }[]>();
  private readonly latest = new Map<string, FileDiagnostic[]>();
  readonly ready: Promise<void>;
  private process: StdioProcess | undefined;
  private stderrTail = "";

  private constructor(
    readonly spec: ServerSpec,
    private readonly root: string,
    input: PassThrough,
    output: Writable,
    started: Promise<StdioProcess>,
  ) {
    const connection = createMessageConnection(new StreamMessageReader(input), new StreamMessageWriter(output));
    this.connection = connection;
    connection.onNotification(
      "textDocument/publishDiagnostics",
      ({ uri, diagnostics, version }: PublishDiagnosticsParams) => {
        if (!this.spec.pull) this.latest.set(uri, errorsOf(diagnostics));
        const waiters = this.waiting.get(uri) ?? [];
        // A server that names the version answers for that text; one that does not answers for the latest.
        const current = this.versions.get(uri) ?? 0;
        const answered = waiters.filter((waiter) => (version ?? current) >= waiter.version);
        this.waiting.set(
          uri,
          waiters.filter((waiter) => !answered.includes(waiter)),
        );
        for (const waiter of answered) waiter.resolve(diagnostics);
      },
    );
    connection.onError(([error]) => (this.failure ??= `its messages could not be read: ${error.message}`));
    // Requests the server makes of its client (configuration, progress): answered empty.
    connection.onRequest(() => null);
    connection.listen();
    this.ready = (async () => {
      this.process = await started;
      await withLimit(
        connection.sendRequest("initialize", {
          processId: process.pid,
          rootUri: pathToFileURL(root).href,
          workspaceFolders: [{ uri: pathToFileURL(root).href, name: "workspace" }],
          capabilities: {
            textDocument: {
              publishDiagnostics: { versionSupport: true },
              synchronization: { dynamicRegistration: false, didSave: false },
            },
            workspace: { configuration: false, workspaceFolders: true },
          },
          initializationOptions: spec.initializationOptions,
        } satisfies InitializeParams),
        INITIALIZE_LIMIT_MS,
        "it did not answer initialize",
      );
      await connection.sendNotification("initialized", {});
    })();
    this.ready.catch((error: unknown) => (this.failure ??= `it failed to start: ${(error as Error).message}`));
  }

  /** Starts the server in `root` on `host` (initialization goes on in the background: await `ready`). */
  static start(host: ToolHost, root: string, spec: ServerSpec): LanguageServer {
    const input = new PassThrough();
    let server: LanguageServer | undefined;
    const pending: string[] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const text = chunk.toString("utf8");
        if (server?.process) server.process.write(text);
        else pending.push(text);
        done();
      },
    });
    const started = host
      .spawnStdio({
        command: spec.command,
        args: spec.args,
        ...(spec.bundled ? { bundled: spec.bundled } : {}),
        cwd: root,
        env: {},
        inherit: "all",
        onStdout: (chunk) => input.write(chunk),
        onStderr: (chunk) => {
          if (server) server.stderrTail = (server.stderrTail + chunk).slice(-500);
        },
        onExit: (exit, lost) => {
          if (!server) return;
          const tail = server.stderrTail.trim();
          server.failure ??=
            lost?.message ??
            `it exited (code ${exit.code ?? exit.signal})${tail ? `: ${tail.split("\n").at(-1)}` : ""}`;
          for (const waiters of server.waiting.values()) for (const waiter of waiters) waiter.resolve([]);
          server.waiting.clear();
          server.connection.dispose();
        },
      })
      .then((process) => {
        for (const text of pending.splice(0)) process.write(text);
        return process;
      });
    server = new LanguageServer(spec, root, input, output, started);
    return server;
  }

  handles(file: string): boolean {
    return languageIdOf(this.spec, file) !== undefined;
  }

  /**
   * Sends the file's new text and resolves with its errors once the server published them for it;
   * undefined when `limitMs` passes first (the caller's edit does not wait longer).
   */
  async errorsAfterChange(file: string, text: string, limitMs: number): Promise<FileDiagnostic[] | undefined> {
    const uri = pathToFileURL(file).href;
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    const published = new Promise<Diagnostic[]>((resolve) => {
      const waiters = this.waiting.get(uri) ?? [];
      waiters.push({ version, resolve });
      this.waiting.set(uri, waiters);
    });
    const sent = (async () => {
      await this.ready;
      if (version === 1) {
        const languageId = languageIdOf(this.spec, file) ?? "plaintext";
        await this.connection.sendNotification("textDocument/didOpen", {
          textDocument: { uri, languageId, version, text },
        });
      } else {
        await this.connection.sendNotification("textDocument/didChange", {
          textDocument: { uri, version },
          contentChanges: [{ text }],
        });
      }
      if (this.spec.pull) {
        const request = (method: string, params: unknown) => this.connection.sendRequest(method, params);
        return this.spec.pull(request, uri);
      }
      return errorsOf(await published);
    })();
    // Kept for the editor even when it comes after the edit stopped waiting (a server warming up).
    sent.then((errors) => this.latest.set(uri, errors)).catch(() => undefined); // a failure shows in `failure`
    const result = await Promise.race([sent, delay(limitMs).then(() => undefined)]);
    return this.failure ? undefined : result;
  }

  /** The errors the server last published for a file (the editor's squiggles). */
  lastErrors(file: string): FileDiagnostic[] | undefined {
    return this.latest.get(pathToFileURL(file).href);
  }

  async stop(): Promise<void> {
    this.failure ??= "it was stopped";
    try {
      await withLimit(this.connection.sendRequest("shutdown"), 2_000, "no answer to shutdown");
      await this.connection.sendNotification("exit");
    } catch {
      // It is stopped below either way.
    }
    this.connection.dispose();
    await this.process?.stop();
  }
}

/** The file's errors (not warnings or hints), lines and columns from 1. */
function errorsOf(diagnostics: Diagnostic[]): FileDiagnostic[] {
  return diagnostics
    .filter((diagnostic) => (diagnostic.severity ?? DiagnosticSeverity.Error) === DiagnosticSeverity.Error)
    .map((diagnostic) => ({
      line: diagnostic.range.start.line + 1,
      column: diagnostic.range.start.character + 1,
      message: typeof diagnostic.message === "string" ? diagnostic.message : diagnostic.message.value,
      ...(diagnostic.source ? { source: diagnostic.source } : {}),
      ...(diagnostic.code !== undefined ? { code: String(diagnostic.code) } : {}),
    }));
}

function languageIdOf(spec: ServerSpec, file: string): string | undefined {
  const dot = file.lastIndexOf(".");
  return dot < 0 ? undefined : spec.languageIds[file.slice(dot).toLowerCase()];
}

function withLimit<T>(promise: Promise<T>, ms: number, why: string): Promise<T> {
  return Promise.race([promise, delay(ms).then(() => Promise.reject(new Error(why)))]);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
