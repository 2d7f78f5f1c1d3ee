-- AlterTable
ALTER TABLE "AuditCommand" ADD COLUMN "decidedBy" TEXT;
