/** Types of hermetic-home.mjs (plain JS so vitest.config.ts can load it before any transform). */
export function useHermeticHome(): string;
