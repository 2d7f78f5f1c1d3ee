import { localHost, type ToolHost } from "../host";
import type { ToolContext } from "./types";

/** The host a tool call works on: the session's (a runner's) or, by default, this machine. */
export function hostOf(ctx: ToolContext): ToolHost {
  return ctx.host ?? localHost;
}
