-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "mode" TEXT NOT NULL DEFAULT 'default';
