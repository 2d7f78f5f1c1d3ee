import { spawn } from "node:child_process";

/**
 * `--open`: the URL in the user's browser. $BROWSER wins (as for Jupyter, Python's webbrowser and
 * git), then the system's opener. A browser that cannot be started is a line on stderr, not a
 * failure: the URL is printed anyway.
 */
export function openBrowser(url: string, log: (line: string) => void): void {
  const [command, args] = opener(url);
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", (error) => log(`could not open a browser (${command}: ${error.message}); open the URL above.`));
    child.unref();
  } catch (error) {
    log(`could not open a browser (${command}: ${(error as Error).message}); open the URL above.`);
  }
}

function opener(url: string): [string, string[]] {
  const browser = process.env.BROWSER?.trim();
  if (browser) return [browser, [url]];
  if (process.platform === "darwin") return ["open", [url]];
  // `start` is a cmd builtin; its first quoted argument is a window title.
  if (process.platform === "win32") return ["cmd", ["/c", "start", '""', url.replace(/&/g, "^&")]];
  return ["xdg-open", [url]];
}
