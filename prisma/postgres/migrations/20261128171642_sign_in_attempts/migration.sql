-- CreateTable
CREATE TABLE "SignInAttempt" (
    "name" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "since" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SignInAttempt_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "SignInAttempt_since_idx" ON "SignInAttempt"("since");
