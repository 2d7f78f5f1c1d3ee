"use client";

import Link from "next/link";
import { useEffect } from "react";
import { usePathname } from "next/navigation";
import { PendingBadge } from "@/components/approvals/pending-badge";
import { TabBadge } from "@/components/attention/tab-badge";
import { showShortcuts } from "@/components/shared/shortcuts";
import { onMenuKeyDown, usePopover } from "@/components/shared/use-popover";
import { PersonMenu } from "@/components/people/person-menu";

/** `more`: on a phone these sit behind "More", so the bar fits 390 px with 44 px targets. */
const LINKS = [
  { href: "/board", label: "Board", more: false },
  { href: "/", label: "Sessions", more: false },
  { href: "/approvals", label: "Approvals", more: false },
  { href: "/routines", label: "Routines", more: true },
  { href: "/memory", label: "Memory", more: true },
  { href: "/settings", label: "Settings", more: true },
];

function isActive(href: string, pathname: string): boolean {
  return href === "/" ? pathname === "/" : pathname.startsWith(href);
}

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
        const active = isActive(link.href, pathname);
        return (
          <Link
            key={link.href}
            href={link.href}
            data-testid={`nav-${link.label.toLowerCase()}`}
            aria-current={active ? "page" : undefined}
            className={`flex items-center rounded px-2 py-1 max-md:min-h-[44px] max-md:px-1.5 ${link.more ? "max-md:hidden" : ""} ${active ? "bg-raised text-fg" : "text-muted hover:text-fg"}`}
          >
            {link.label}
            {link.href === "/approvals" ? <PendingBadge /> : null}
          </Link>
        );
      })}
      <MoreLinks pathname={pathname} />
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

/** A phone's "More": the links the bar has no room for, a menu that closes on navigation. */
function MoreLinks({ pathname }: { pathname: string }) {
  const { open, toggle, setOpen, root, panel, trigger } = usePopover();
  useEffect(() => setOpen(false), [pathname, setOpen]);
  const current = LINKS.some((link) => link.more && isActive(link.href, pathname));
  return (
    <div ref={root} className="relative md:hidden">
      <button
        ref={trigger}
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={toggle}
        data-testid="nav-more"
        className={`flex min-h-[44px] min-w-[44px] items-center justify-center rounded px-1.5 ${current ? "bg-raised text-fg" : "text-muted hover:text-fg"}`}
      >
        More
      </button>
      {open ? (
        <div
          ref={panel as React.RefObject<HTMLDivElement>}
          role="menu"
          aria-label="More pages"
          onKeyDown={onMenuKeyDown}
          className="absolute left-0 top-full z-50 min-w-[10rem] rounded border border-border bg-panel py-1 shadow-lg"
        >
          {LINKS.filter((link) => link.more).map((link) => (
            <Link
              key={link.href}
              href={link.href}
              role="menuitem"
              data-testid={`nav-more-${link.label.toLowerCase()}`}
              aria-current={isActive(link.href, pathname) ? "page" : undefined}
              className="flex min-h-[44px] items-center px-3 text-fg hover:bg-raised focus:bg-raised"
            >
              {link.label}
            </Link>
          ))}
        </div>
      ) : null}
    </div>
  );
}
