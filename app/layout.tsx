import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { PwaRegister } from "@/components/attention/pwa-register";
import { AppNav } from "@/components/shell/app-nav";
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

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        {/* With credentials: the bridge answers only requests that carry its cookie. */}
        <link rel="manifest" href="/manifest.webmanifest" crossOrigin="use-credentials" />
      </head>
      <body className="flex h-full flex-col font-sans antialiased">
        <PwaRegister />
        <AppNav />
        <main className="min-h-0 flex-1">{children}</main>
      </body>
    </html>
  );
}
