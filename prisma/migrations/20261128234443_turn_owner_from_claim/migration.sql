-- AlterTable (SQLite 3.35+ drops a column in place; the column is in no index)
ALTER TABLE "Turn" DROP COLUMN "ownerId";
