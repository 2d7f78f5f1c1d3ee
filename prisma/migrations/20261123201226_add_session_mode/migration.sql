-- AlterTable (a plain ADD COLUMN instead of the generated table rebuild, so it cannot drop Session columns another migration adds)
ALTER TABLE "Session" ADD COLUMN "mode" TEXT NOT NULL DEFAULT 'default';
