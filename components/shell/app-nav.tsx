"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { PendingBadge } from "@/components/approvals/pending-badge";
import { TabBadge } from "@/components/attention/tab-badge";
import { PersonMenu } from "@/components/people/person-menu";

const LINKS = [
  { href: "/", label: "Sessions" },
  { href: "/approvals", label: "Approvals" },
  { href: "/memory", label: "Memory" },
  { href: "/settings", label: "Settings" },
];

export function AppNav() {
  const pathname = usePathname();
  // Before signing in on a hub there is nothing to navigate to (and the badges would be refused).
  if (pathname === "/signin") return null;
  return (
    <nav className="flex h-9 shrink-0 items-center gap-1 border-b border-border bg-panel px-3" aria-label="Main">
      <TabBadge />
      <Link href="/" className="mr-3 font-semibold tracking-tight text-fg">
        Worldline
      </Link>
      {LINKS.map((link) => {
        const active = link.href === "/" ? pathname === "/" : pathname.startsWith(link.href);
        return (
          <Link
            key={link.href}
            href={link.href}
            data-testid={`nav-${link.label.toLowerCase()}`}
            className={`rounded px-2 py-1 ${active ? "bg-raised text-fg" : "text-muted hover:text-fg"}`}
          >
            {link.label}
            {link.href === "/approvals" ? <PendingBadge /> : null}
          </Link>
        );
      })}
      <PersonMenu />
    </nav>
  );
}
