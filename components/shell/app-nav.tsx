"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { PendingBadge } from "@/components/approvals/pending-badge";
import { TabBadge } from "@/components/attention/tab-badge";
import { showShortcuts } from "./shortcuts";
import { PersonMenu } from "@/components/people/person-menu";

const LINKS = [
  { href: "/board", label: "Board" },
  { href: "/", label: "Sessions" },
  { href: "/approvals", label: "Approvals" },
  { href: "/routines", label: "Routines" },
  { href: "/memory", label: "Memory" },
  { href: "/settings", label: "Settings" },
];

export function AppNav() {
  const pathname = usePathname();
  // Before signing in on a hub there is nothing to navigate to (and the badges would be refused).
  if (pathname === "/signin") return null;
  return (
    <nav
      className="flex h-9 shrink-0 items-center gap-1 border-b border-border bg-panel px-3 max-md:h-[44px] max-md:px-1"
      aria-label="Main"
    >
      <TabBadge />
      <Link href="/" className="mr-3 font-semibold tracking-tight text-fg max-md:mr-1 max-md:hidden">
        Worldline
      </Link>
      {LINKS.map((link) => {
        const active = link.href === "/" ? pathname === "/" : pathname.startsWith(link.href);
        return (
          <Link
            key={link.href}
            href={link.href}
            data-testid={`nav-${link.label.toLowerCase()}`}
            aria-current={active ? "page" : undefined}
            className={`flex items-center rounded px-2 py-1 max-md:min-h-[44px] max-md:px-1.5 ${active ? "bg-raised text-fg" : "text-muted hover:text-fg"}`}
          >
            {link.label}
            {link.href === "/approvals" ? <PendingBadge /> : null}
          </Link>
        );
      })}
      <button
        type="button"
        className="ml-auto rounded px-2 py-1 text-muted hover:bg-raised hover:text-fg max-md:min-h-[44px] max-md:min-w-[44px]"
        onClick={showShortcuts}
        aria-label="Keyboard shortcuts"
        aria-keyshortcuts="?"
        title="Keyboard shortcuts (?)"
        data-testid="show-shortcuts"
      >
        ?
      </button>
      <PersonMenu />
    </nav>
  );
}
