export function cachedPrefix(tarball: string): string;
export function keepInstall(tarball: string, prefix: string): string;
