import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { PwaRegister } from "@/components/attention/pwa-register";
import { AppNav } from "@/components/shell/app-nav";
import { ShortcutsDialog } from "@/components/shell/shortcuts-dialog";
import "./globals.css";

export const metadata: Metadata = {
  title: "Worldline",
  description: "A coding agent on your own machine",
  icons: { icon: "/icons/icon-192.png", apple: "/icons/apple-touch-icon.png" },
  appleWebApp: { capable: true, title: "Worldline", statusBarStyle: "black-translucent" },
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  viewportFit: "cover",
  themeColor: "#12161b",
};

/**
 * Applies the theme kept with the IDE layout (use-layout.ts) before the first paint, on every
 * page: the light theme is not only the session's, and no page flashes dark first.
 */
const THEME_SCRIPT = `try{var t=JSON.parse(localStorage.getItem("worldline.layout")||"{}").theme;if(t==="light"||t==="dark")document.documentElement.dataset.theme=t}catch(e){}`;

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    // The theme script sets data-theme before React hydrates.
    <html lang="en" suppressHydrationWarning>
      <head>
        <script dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
        {/* With credentials: the bridge answers only requests that carry its cookie. */}
        <link rel="manifest" href="/manifest.webmanifest" crossOrigin="use-credentials" />
      </head>
      <body className="flex h-full flex-col font-sans antialiased">
        <a
          href="#main"
          className="sr-only z-50 rounded bg-accent px-3 py-2 font-medium text-bg focus:not-sr-only focus:absolute focus:left-2 focus:top-2"
          data-testid="skip-link"
        >
          Skip to content
        </a>
        <PwaRegister />
        <AppNav />
        <main id="main" tabIndex={-1} className="min-h-0 flex-1 outline-none">
          {children}
        </main>
        <ShortcutsDialog />
      </body>
    </html>
  );
}
