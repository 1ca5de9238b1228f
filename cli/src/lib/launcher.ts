// Builds the Firestore emulator launcher jar (docs/development.md, "Requirements"): firebase-tools starts
// a local emulator with `java -jar $FIRESTORE_EMULATOR_BINARY_PATH`, but the jar installed by the Debian
// package google-cloud-cli-firestore-emulator has no Main-Class. The launcher is a jar holding only a manifest
// that names the main class and puts the installed jar on the class path. Written with a tiny zip writer
// so no JDK tool is needed.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { crc32 } from "node:zlib";

export const INSTALLED_FIRESTORE_JAR =
  "/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar";
export const FIRESTORE_MAIN_CLASS = "com.google.cloud.datastore.emulator.firestore.CloudFirestore";

/** Manifest lines are at most 72 bytes; longer ones continue on lines that start with one space. */
export function manifestLine(name: string, value: string): string {
  const bytes = Buffer.from(`${name}: ${value}`, "utf8");
  const parts: Buffer[] = [bytes.subarray(0, 72)];
  for (let i = 72; i < bytes.length; i += 71) parts.push(Buffer.concat([Buffer.from(" "), bytes.subarray(i, i + 71)]));
  return parts.map((p) => `${p.toString("utf8")}\r\n`).join("");
}

export function launcherManifest(installedJar: string): string {
  return (
    manifestLine("Manifest-Version", "1.0") +
    manifestLine("Main-Class", FIRESTORE_MAIN_CLASS) +
    manifestLine("Class-Path", pathToFileURL(installedJar).href) +
    "\r\n"
  );
}

/** A zip archive with stored (uncompressed) entries: enough for a manifest-only jar. */
export function zipStored(entries: { name: string; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  const dosTime = 0; // 00:00:00
  const dosDate = (2020 - 1980) << 9 | (1 << 5) | 1; // 2020-01-01: fixed, so the file is reproducible
  for (const { name, data } of entries) {
    const nameBytes = Buffer.from(name, "utf8");
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(10, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // flags: UTF-8 names
    local.writeUInt16LE(0, 8); // method: stored
    local.writeUInt16LE(dosTime, 10);
    local.writeUInt16LE(dosDate, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(10, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(dosTime, 12);
    central.writeUInt16LE(dosDate, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

/**
 * Decides the Firestore emulator binary: an explicit FIRESTORE_EMULATOR_BINARY_PATH wins; otherwise, if
 * the Debian-installed jar exists, a launcher is written to `cacheDir` and its path returned; otherwise
 * undefined (firebase-tools downloads its own emulator as usual).
 */
export function firestoreEmulatorBinary(
  cacheDir: string,
  env: NodeJS.ProcessEnv = process.env,
  installedJar = INSTALLED_FIRESTORE_JAR,
): string | undefined {
  const explicit = env.FIRESTORE_EMULATOR_BINARY_PATH;
  if (explicit !== undefined && explicit !== "") return explicit;
  if (!existsSync(installedJar)) return undefined;
  const launcher = join(cacheDir, "firestore-emulator-launcher.jar");
  const jar = zipStored([{ name: "META-INF/MANIFEST.MF", data: Buffer.from(launcherManifest(installedJar)) }]);
  // Another suite (npm start, the benchmark) may be starting a JVM from this file right now: leave an
  // identical file alone, and replace a different one atomically (write aside, then rename).
  if (existsSync(launcher) && readFileSync(launcher).equals(jar)) return launcher;
  mkdirSync(dirname(launcher), { recursive: true });
  const temporary = `${launcher}.${process.pid}.tmp`;
  writeFileSync(temporary, jar);
  renameSync(temporary, launcher);
  return launcher;
}
