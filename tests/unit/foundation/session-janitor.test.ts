import { describe, expect, it, vi } from "vitest";
import { SessionJanitor } from "../../../server/sessions";

describe("SessionJanitor", () => {
  it("frees idle sessions nobody watches, and keeps watched ones", async () => {
    const forgotten: string[] = [];
    const janitor = new SessionJanitor({
      resources: [{ name: "state", forget: (id, why) => void forgotten.push(`${id}:${why}`) }],
      idleSessions: () => ["idle-unwatched", "idle-watched"],
      watched: (id) => id === "idle-watched",
    });
    expect(await janitor.sweep()).toEqual(["idle-unwatched"]);
    expect(forgotten).toEqual(["idle-unwatched:idle"]);
  });

  it("asks every resource to forget a deleted session even when one fails, and logs the failure", async () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const forgotten: string[] = [];
    const janitor = new SessionJanitor({
      resources: [
        {
          name: "broken",
          forget: () => {
            throw new Error("boom");
          },
        },
        { name: "fine", forget: (id, why) => void forgotten.push(`${id}:${why}`) },
      ],
      idleSessions: () => [],
      watched: () => false,
    });
    await janitor.forget("s1", "deleted");
    expect(forgotten).toEqual(["s1:deleted"]);
    expect(error).toHaveBeenCalledWith(expect.stringContaining("freeing broken of session s1 failed: boom"));
    error.mockRestore();
  });
});
