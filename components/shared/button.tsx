import type { ButtonHTMLAttributes } from "react";

const LOOK = {
  /** The one action a form or dialog is for. */
  primary: "rounded bg-accent px-3 py-1 font-medium text-bg disabled:opacity-40",
  /** Another action beside it. */
  secondary: "rounded border border-border px-3 py-1 hover:bg-raised disabled:opacity-40",
  /** Cancel, close: present, but not drawing the eye. */
  quiet: "rounded px-3 py-1 text-muted hover:text-fg disabled:opacity-40",
} as const;

/** A button in one of the app's looks; `type` is "button" unless said (no accidental submits). */
export function Button({
  look = "secondary",
  className = "",
  type = "button",
  ...props
}: ButtonHTMLAttributes<HTMLButtonElement> & { look?: keyof typeof LOOK }) {
  return <button type={type} className={`${LOOK[look]} ${className}`.trim()} {...props} />;
}
