-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "runner" TEXT;

-- CreateTable
CREATE TABLE "Runner" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "enrollHash" TEXT,
    "enrollExpiresAt" TIMESTAMP(3),
    "credentialHash" TEXT,
    "allowedRoots" TEXT NOT NULL DEFAULT '[]',
    "roots" TEXT NOT NULL DEFAULT '[]',
    "lastSeenAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Runner_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Runner_name_key" ON "Runner"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Runner_enrollHash_key" ON "Runner"("enrollHash");

-- CreateIndex
CREATE UNIQUE INDEX "Runner_credentialHash_key" ON "Runner"("credentialHash");
