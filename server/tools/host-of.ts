import { localHost, type WorkspaceHost } from "../host";
import type { ToolContext } from "./types";

/** The host a tool call works on: the session's (a runner's) or, by default, this machine. */
export function hostOf(ctx: ToolContext): WorkspaceHost {
  return ctx.host ?? localHost;
}
