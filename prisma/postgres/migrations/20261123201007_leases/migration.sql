-- AlterTable
ALTER TABLE "Turn" ADD COLUMN     "ownerId" TEXT;

-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "ownerId" TEXT;

-- CreateTable
CREATE TABLE "Owner" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "heartbeatAt" TIMESTAMP(3) NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Owner_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Owner_heartbeatAt_idx" ON "Owner"("heartbeatAt");

-- CreateIndex
CREATE INDEX "Turn_status_idx" ON "Turn"("status");
