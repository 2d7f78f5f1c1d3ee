-- AlterTable
ALTER TABLE "Turn" DROP COLUMN "ownerId";
