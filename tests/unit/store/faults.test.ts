import { describe, expect, it } from "vitest";
import { storeFault } from "../../../server/store";

/** Shapes of errors Prisma 6.19 raises through its driver adapters (what the fault suite met). */
const adapterError = (cause: Record<string, unknown>) => ({
  code: "P2010",
  message: "Raw query failed.",
  meta: { driverAdapterError: { name: "DriverAdapterError", message: String(cause.kind), cause } },
});

describe("storeFault", () => {
  it("tells an unreachable database, a full disk and a lock apart", () => {
    expect(storeFault(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5999"), { code: "ECONNREFUSED" }))).toBe(
      "store:unavailable",
    );
    expect(
      storeFault(
        adapterError({
          originalCode: "57P01",
          originalMessage: "terminating connection due to administrator command",
          kind: "postgres",
        }),
      ),
    ).toBe("store:unavailable");
    expect(
      storeFault({ code: "P2028", message: "Transaction API error: Unable to start a transaction in the given time." }),
    ).toBe("store:unavailable");
    expect(storeFault(adapterError({ originalCode: "SQLITE_FULL", originalMessage: "database or disk is full" }))).toBe(
      "disk:full",
    );
    expect(
      storeFault(
        adapterError({ originalCode: "53100", originalMessage: "could not extend file: No space left on device" }),
      ),
    ).toBe("disk:full");
    expect(
      storeFault(
        adapterError({ originalCode: "SQLITE_BUSY", originalMessage: "database is locked", kind: "SocketTimeout" }),
      ),
    ).toBe("store:locked");
  });

  it("leaves errors retrying cannot fix to their callers", () => {
    expect(
      storeFault(adapterError({ kind: "UniqueConstraintViolation", originalCode: "SQLITE_CONSTRAINT_UNIQUE" })),
    ).toBeNull();
    expect(storeFault(adapterError({ kind: "ForeignKeyConstraintViolation", originalCode: "23503" }))).toBeNull();
    expect(storeFault(new TypeError("cannot read properties of undefined"))).toBeNull();
  });
});
