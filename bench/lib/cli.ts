import { pathToFileURL } from "node:url";

/** True when `url` (a bench file's import.meta.url) is the script node was started with. */
export function isMain(url: string): boolean {
  return !!process.argv[1] && url === pathToFileURL(process.argv[1]).href;
}

/** The one machine-readable line a benchmark prints last. */
export function printJsonLine(result: object): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
