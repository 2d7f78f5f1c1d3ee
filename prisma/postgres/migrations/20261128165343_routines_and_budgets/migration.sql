-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "budgetStepUsd" DOUBLE PRECISION,
ADD COLUMN     "budgetTokens" INTEGER,
ADD COLUMN     "budgetUsd" DOUBLE PRECISION;

-- AlterTable
ALTER TABLE "User" ADD COLUMN     "budgetUsd" DOUBLE PRECISION;

-- CreateTable
CREATE TABLE "Routine" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "runner" TEXT,
    "isolation" TEXT NOT NULL DEFAULT 'worktree',
    "model" TEXT,
    "mode" TEXT NOT NULL DEFAULT 'default',
    "schedule" TEXT,
    "budgetUsd" DOUBLE PRECISION,
    "tokenHash" TEXT NOT NULL,
    "ownerId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Routine_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RoutineRun" (
    "id" TEXT NOT NULL,
    "routineId" TEXT NOT NULL,
    "sessionId" TEXT,
    "trigger" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "input" TEXT,
    "activeKey" TEXT,
    "queuedKey" TEXT,
    "slotKey" TEXT,
    "error" TEXT,
    "costUsd" DOUBLE PRECISION,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "RoutineRun_pkey" PRIMARY KEY ("id")
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

-- AddForeignKey
ALTER TABLE "RoutineRun" ADD CONSTRAINT "RoutineRun_routineId_fkey" FOREIGN KEY ("routineId") REFERENCES "Routine"("id") ON DELETE CASCADE ON UPDATE CASCADE;
