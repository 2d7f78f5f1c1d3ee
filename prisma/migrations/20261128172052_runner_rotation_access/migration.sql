-- AlterTable
ALTER TABLE "Runner" ADD COLUMN "previousCredentialHash" TEXT;
ALTER TABLE "Runner" ADD COLUMN "access" TEXT NOT NULL DEFAULT '{}';
ALTER TABLE "Runner" ADD COLUMN "duplicateAt" DATETIME;

-- CreateIndex
CREATE UNIQUE INDEX "Runner_previousCredentialHash_key" ON "Runner"("previousCredentialHash");
