"use client";

import { useEffect, useState } from "react";
import { DirectoryListing } from "@/server/protocol";
import { api } from "@/components/transport/client";

/** Typing in a folder field pauses this long before the bridge is asked what the folder holds. */
const CHECK_DEBOUNCE_MS = 300;

/**
 * Whether a folder on this machine is the top of a git repository (it holds `.git`): a cheap
 * look at its listing, to default a new session to its own worktree. `null` while unknown, for a
 * runner's folder, or for a folder deeper inside a repository (the bridge then decides on create).
 */
export function useIsRepo(folder: string, runner: string): boolean | null {
  const [isRepo, setIsRepo] = useState<boolean | null>(null);
  useEffect(() => {
    setIsRepo(null);
    const path = folder.trim();
    if (!path || runner) return;
    const timer = setTimeout(() => {
      api(`/api/v1/fs/directories?path=${encodeURIComponent(path)}`, DirectoryListing).then(
        (listing) => setIsRepo(listing.entries.some((entry) => entry.name === ".git")),
        () => setIsRepo(null),
      );
    }, CHECK_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [folder, runner]);
  return isRepo;
}
