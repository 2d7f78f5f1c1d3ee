import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinTools } from "../../../server/tools";
import { FETCH_MAX_BYTES } from "../../../server/tools/fetch-url";
import { fakeCtx } from "../../unit/tools/support";

let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    switch (req.url) {
      case "/page":
        res.setHeader("content-type", "text/html; charset=utf-8");
        res.end(`<!doctype html><html><head><title>Docs &amp; Guide</title><style>body{color:red}</style><script>var secret = 1;</script></head>
          <body><nav><a href="#top">skip</a></nav><h1>Install</h1><p>Run <code>npm i</code> &mdash; then <a href="https://example.com/next">continue</a>.</p>
          <ul><li>one</li><li>two</li></ul></body></html>`);
        return;
      case "/json":
        res.setHeader("content-type", "application/json");
        res.end('{"ok":true}');
        return;
      case "/huge":
        res.setHeader("content-type", "text/plain");
        res.end("z".repeat(FETCH_MAX_BYTES + 1000));
        return;
      case "/slow":
        res.setHeader("content-type", "text/plain");
        res.write("partial");
        return; // never ends
      case "/image":
        res.setHeader("content-type", "image/png");
        res.end(Buffer.from([0x89, 0x50]));
        return;
      default:
        res.statusCode = 404;
        res.setHeader("content-type", "text/plain");
        res.end("not here");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const fetchUrl = builtinTools().find((t) => t.name === "fetch_url")!;
const run = (args: Record<string, unknown>) => fetchUrl.run(args, fakeCtx("/tmp"));

describe("fetch_url", () => {
  it("extracts readable text from HTML, dropping scripts and styles and keeping links", async () => {
    const result = await run({ url: `${base}/page` });
    expect(result.isError).toBe(false);
    expect(result.output).toContain("HTTP 200 (text/html)");
    expect(result.output).toContain("Docs & Guide");
    expect(result.output).toContain("Install");
    expect(result.output).toContain("Run npm i — then [continue](https://example.com/next).");
    expect(result.output).toContain("- one\n- two");
    expect(result.output).not.toContain("secret");
    expect(result.output).not.toContain("color:red");
  });

  it("returns the raw body when asked", async () => {
    expect((await run({ url: `${base}/page`, raw: true })).output).toContain("<h1>Install</h1>");
  });

  it("returns JSON as text", async () => {
    expect((await run({ url: `${base}/json` })).output).toContain('{"ok":true}');
  });

  it("stops reading at the size limit with a note", async () => {
    const result = await run({ url: `${base}/huge` });
    expect(result.output).toContain(`[response cut at ${FETCH_MAX_BYTES} bytes]`);
    expect(result.output).toMatch(/\[output truncated: \d+ more characters\]/);
  });

  // The test's timeout is the bound: a fetch that waited for the slow server would miss it.
  it("gives up after the time limit", async () => {
    const result = await run({ url: `${base}/slow`, timeout_seconds: 0.5 });
    expect(result).toMatchObject({ isError: true });
    expect(result.output).toMatch(/timed out after 0.5s/);
  });

  it("refuses binary content types and reports HTTP errors as errors", async () => {
    expect((await run({ url: `${base}/image` })).output).toMatch(/only returns text/);
    const missing = await run({ url: `${base}/missing` });
    expect(missing.isError).toBe(true);
    expect(missing.output).toContain("HTTP 404");
  });

  it("refuses non-http URLs and asks for approval scoped to the origin", async () => {
    expect((await run({ url: "file:///etc/passwd" })).output).toMatch(/Only http and https/);
    expect(await fetchUrl.needsApproval({ url: `${base}/page?q=1` }, fakeCtx("/tmp"))).toMatchObject({
      level: "ask",
      scope: `${base}/*`,
    });
  });
});
