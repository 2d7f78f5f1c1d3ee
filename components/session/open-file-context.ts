"use client";

import { createContext, useContext } from "react";

/** Opens a workspace file in the editor at a line (a diagnostic in a tool card); absent outside the session page. */
export const OpenFileContext = createContext<((path: string, line?: number) => void) | null>(null);

export function useOpenFile(): ((path: string, line?: number) => void) | null {
  return useContext(OpenFileContext);
}
