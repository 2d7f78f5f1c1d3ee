-- CreateTable
CREATE TABLE "SignInAttempt" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "count" INTEGER NOT NULL,
    "since" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "SignInAttempt_since_idx" ON "SignInAttempt"("since");
