/** @type {import('next').NextConfig} */
const nextConfig = {
  // Tests build into their own folder so parallel builds don't collide.
  distDir: process.env.WORLDLINE_NEXT_DIST ?? ".next",
  reactStrictMode: true,
  poweredByHeader: false,
  // `npm test` runs tsc and eslint over the whole tree; the build skips them to start fast.
  typescript: { ignoreBuildErrors: true },
  devIndicators: false,
  experimental: {
    // Rendered pages stay in memory: an installed package's folder may be read-only and is never
    // written at run time; Next would otherwise cache them under .next/server/route-cache.
    isrFlushToDisk: false,
  },
};

export default nextConfig;
