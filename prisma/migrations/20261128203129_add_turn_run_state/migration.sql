-- AlterTable
ALTER TABLE "Turn" ADD COLUMN "runState" TEXT;
