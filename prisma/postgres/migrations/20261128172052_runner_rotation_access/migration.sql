-- AlterTable
ALTER TABLE "Runner" ADD COLUMN     "access" TEXT NOT NULL DEFAULT '{}',
ADD COLUMN     "duplicateAt" TIMESTAMP(3),
ADD COLUMN     "previousCredentialHash" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "Runner_previousCredentialHash_key" ON "Runner"("previousCredentialHash");
