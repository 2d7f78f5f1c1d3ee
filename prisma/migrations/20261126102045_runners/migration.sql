-- AlterTable
ALTER TABLE "Session" ADD COLUMN "runner" TEXT;

-- CreateTable
CREATE TABLE "Runner" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "enrollHash" TEXT,
    "enrollExpiresAt" DATETIME,
    "credentialHash" TEXT,
    "allowedRoots" TEXT NOT NULL DEFAULT '[]',
    "roots" TEXT NOT NULL DEFAULT '[]',
    "lastSeenAt" DATETIME,
    "revokedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE UNIQUE INDEX "Runner_name_key" ON "Runner"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Runner_enrollHash_key" ON "Runner"("enrollHash");

-- CreateIndex
CREATE UNIQUE INDEX "Runner_credentialHash_key" ON "Runner"("credentialHash");
