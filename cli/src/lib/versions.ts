// Package versions as numbers: enough of semver for the versions npm installs (X.Y.Z, a prerelease
// ignored) and the ranges a package.json declares them by (X.Y.Z, ~X.Y.Z, ^X.Y.Z).

export function parseVersion(version: string): number[] {
  return version.replace(/^[~^=v]+/, "").split("-")[0]!.split(".").map((part) => Number(part) || 0);
}

/** Negative, 0 or positive as `version` is older than, equal to or newer than `other` ([major, minor, patch]). */
export function compareVersions(version: string, other: number[]): number {
  const parts = parseVersion(version);
  for (let i = 0; i < 3; i++) {
    const diff = (parts[i] ?? 0) - (other[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}
