import * as z from "zod";

/** A hooks file a session's turns read: `GET /api/v1/sessions/:id/hooks`. */
export const HooksFileView = z.object({
  file: z.string(),
  sha256: z.string(),
  /** The home folder's file is trusted by its owner; a workspace's, once a person trusted this content. */
  trusted: z.boolean(),
  /** Which folder it belongs to: a workspace file asks for trust, the home file does not. */
  source: z.enum(["workspace", "home"]),
  /** Events it has hooks for. */
  events: z.array(z.string()),
  /** The commands it would run, for the person deciding to trust it. */
  commands: z.array(z.object({ event: z.string(), matcher: z.string(), command: z.string() })),
  /** Why none of its hooks run (it does not parse, or names an unknown event). */
  error: z.string().optional(),
});
export type HooksFileView = z.infer<typeof HooksFileView>;

/** `POST /api/v1/hooks/trust`: a person trusts one content of one file (a changed file asks again). */
export const TrustHooksBody = z.object({
  file: z.string().min(1).max(4_096),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lower-case hex"),
});
export type TrustHooksBody = z.infer<typeof TrustHooksBody>;
