import type { MetadataRoute } from "next";

/** The installable web app (phones: "Add to Home screen"); icons are PNGs rendered from public/icons/icon.svg. */
export default function manifest(): MetadataRoute.Manifest {
  return {
    name: "Worldline",
    short_name: "Worldline",
    description: "A coding agent on your own machine",
    start_url: "/",
    scope: "/",
    display: "standalone",
    background_color: "#0d1014",
    theme_color: "#12161b",
    icons: [
      { src: "/icons/icon-192.png", sizes: "192x192", type: "image/png", purpose: "any" },
      { src: "/icons/icon-512.png", sizes: "512x512", type: "image/png", purpose: "any" },
      { src: "/icons/icon-maskable-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" },
    ],
  };
}
