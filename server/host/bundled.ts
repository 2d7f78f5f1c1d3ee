import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** Programs that ship with Worldline, which a host runs from its own install (a runner's differs from its hub's). */
export const BUNDLED_PROGRAMS = ["typescript-language-server"] as const;
export type BundledProgram = (typeof BUNDLED_PROGRAMS)[number];

const SCRIPTS: Record<BundledProgram, () => string> = {
  "typescript-language-server": () => require.resolve("typescript-language-server/lib/cli.mjs"),
};

/** How this machine starts a bundled program: its own Node running its own copy of the script. */
export function bundledCommand(program: BundledProgram, args: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [SCRIPTS[program](), ...args] };
}
