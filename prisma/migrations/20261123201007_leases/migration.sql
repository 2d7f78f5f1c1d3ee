-- AlterTable
ALTER TABLE "Turn" ADD COLUMN "ownerId" TEXT;

-- AlterTable
ALTER TABLE "Approval" ADD COLUMN "ownerId" TEXT;

-- CreateTable
CREATE TABLE "Owner" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "kind" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "heartbeatAt" DATETIME NOT NULL,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "Owner_heartbeatAt_idx" ON "Owner"("heartbeatAt");

-- CreateIndex
CREATE INDEX "Turn_status_idx" ON "Turn"("status");
