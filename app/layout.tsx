import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AppNav } from "@/components/shell/app-nav";
import "./globals.css";

export const metadata: Metadata = { title: "Worldline", description: "A coding agent on your own machine" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="flex h-full flex-col font-sans antialiased">
        <AppNav />
        <main className="min-h-0 flex-1">{children}</main>
      </body>
    </html>
  );
}
