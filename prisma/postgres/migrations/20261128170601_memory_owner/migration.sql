-- AlterTable
ALTER TABLE "Memory" ADD COLUMN     "ownerId" TEXT;

-- CreateIndex
CREATE INDEX "Memory_ownerId_idx" ON "Memory"("ownerId");
