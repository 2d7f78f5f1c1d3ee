-- CreateTable
CREATE TABLE "Worktree" (
    "sessionId" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "branch" TEXT NOT NULL,
    "base" TEXT NOT NULL,
    "repo" TEXT NOT NULL,
    "mergedSha" TEXT,
    "pushedSha" TEXT,
    "archiveSnapshot" TEXT,
    "setup" TEXT,
    "changedFiles" INTEGER NOT NULL DEFAULT 0,
    "additions" INTEGER NOT NULL DEFAULT 0,
    "deletions" INTEGER NOT NULL DEFAULT 0,
    "changesAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Worktree_pkey" PRIMARY KEY ("sessionId")
);

-- CreateIndex
CREATE INDEX "Worktree_repo_idx" ON "Worktree"("repo");

-- AddForeignKey
ALTER TABLE "Worktree" ADD CONSTRAINT "Worktree_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session"("id") ON DELETE CASCADE ON UPDATE CASCADE;
