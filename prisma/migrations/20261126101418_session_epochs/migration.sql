-- AlterTable
ALTER TABLE "Session" ADD COLUMN "epoch" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Session" ADD COLUMN "claimOwnerId" TEXT;
ALTER TABLE "Session" ADD COLUMN "nextCheckpoint" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Turn" ADD COLUMN "epoch" INTEGER NOT NULL DEFAULT 0;

-- Seed the checkpoint counter from the checkpoints already taken.
UPDATE "Session" SET "nextCheckpoint" = (SELECT COALESCE(MAX("number") + 1, 0) FROM "Checkpoint" WHERE "Checkpoint"."sessionId" = "Session"."id");
