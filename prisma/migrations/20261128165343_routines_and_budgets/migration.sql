-- AlterTable
ALTER TABLE "Session" ADD COLUMN "budgetStepUsd" REAL;
ALTER TABLE "Session" ADD COLUMN "budgetTokens" INTEGER;
ALTER TABLE "Session" ADD COLUMN "budgetUsd" REAL;

-- AlterTable
ALTER TABLE "User" ADD COLUMN "budgetUsd" REAL;

-- CreateTable
CREATE TABLE "Routine" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "runner" TEXT,
    "isolation" TEXT NOT NULL DEFAULT 'worktree',
    "model" TEXT,
    "mode" TEXT NOT NULL DEFAULT 'default',
    "schedule" TEXT,
    "budgetUsd" REAL,
    "tokenHash" TEXT NOT NULL,
    "ownerId" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "RoutineRun" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "routineId" TEXT NOT NULL,
    "sessionId" TEXT,
    "trigger" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "input" TEXT,
    "activeKey" TEXT,
    "queuedKey" TEXT,
    "slotKey" TEXT,
    "error" TEXT,
    "costUsd" REAL,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" DATETIME,
    CONSTRAINT "RoutineRun_routineId_fkey" FOREIGN KEY ("routineId") REFERENCES "Routine" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "Routine_tokenHash_key" ON "Routine"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "RoutineRun_activeKey_key" ON "RoutineRun"("activeKey");

-- CreateIndex
CREATE UNIQUE INDEX "RoutineRun_queuedKey_key" ON "RoutineRun"("queuedKey");

-- CreateIndex
CREATE UNIQUE INDEX "RoutineRun_slotKey_key" ON "RoutineRun"("slotKey");

-- CreateIndex
CREATE INDEX "RoutineRun_routineId_startedAt_idx" ON "RoutineRun"("routineId", "startedAt");
