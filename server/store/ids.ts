import { randomBytes } from "node:crypto";

/** 36^4: the counter's range in four base-36 digits. */
const COUNTER_RANGE = 1_679_616;
let counter = randomBytes(4).readUInt32BE(0) % COUNTER_RANGE;

/**
 * A row id for raw inserts, shaped like the cuid()s Prisma makes (25 characters: "c", the time,
 * a counter, randomness), so rows written either way look alike and sort roughly by creation.
 */
export function newId(): string {
  counter = (counter + 1) % COUNTER_RANGE;
  const time = Date.now().toString(36).padStart(8, "0").slice(-8);
  const count = counter.toString(36).padStart(4, "0");
  const random = BigInt(`0x${randomBytes(8).toString("hex")}`)
    .toString(36)
    .padStart(12, "0")
    .slice(-12);
  return `c${time}${count}${random}`;
}
