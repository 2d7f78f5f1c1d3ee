-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "workspaceId" TEXT NOT NULL,
    "title" TEXT NOT NULL DEFAULT 'New session',
    "model" TEXT,
    "yolo" BOOLEAN NOT NULL DEFAULT false,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL DEFAULT 'idle',
    "parentId" TEXT,
    "forkCheckpointId" TEXT,
    "todos" TEXT NOT NULL DEFAULT '[]',
    "agentCommand" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "mode" TEXT NOT NULL DEFAULT 'default',
    CONSTRAINT "Session_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Session" ("agentCommand", "archived", "createdAt", "forkCheckpointId", "id", "model", "parentId", "status", "title", "todos", "updatedAt", "workspaceId", "yolo") SELECT "agentCommand", "archived", "createdAt", "forkCheckpointId", "id", "model", "parentId", "status", "title", "todos", "updatedAt", "workspaceId", "yolo" FROM "Session";
DROP TABLE "Session";
ALTER TABLE "new_Session" RENAME TO "Session";
CREATE INDEX "Session_workspaceId_updatedAt_idx" ON "Session"("workspaceId", "updatedAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
