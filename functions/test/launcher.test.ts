import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { firestoreEmulatorBinary, launcherManifest, manifestLine } from "../../cli/src/lib/launcher";

describe("Firestore emulator launcher", () => {
  it("wraps manifest lines at 72 bytes with one-space continuations", () => {
    const line = manifestLine("Class-Path", "file:///" + "x".repeat(150));
    const lines = line.split("\r\n").filter((l) => l !== "");
    for (const l of lines) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(72);
    expect(lines.slice(1).every((l) => l.startsWith(" "))).toBe(true);
    expect(lines.map((l, i) => (i === 0 ? l : l.slice(1))).join("")).toBe("Class-Path: file:///" + "x".repeat(150));
  });

  it("names the emulator's main class and the installed jar", () => {
    const manifest = launcherManifest("/opt/emu/cloud-firestore-emulator.jar");
    expect(manifest).toContain("Main-Class: com.google.cloud.datastore.emulator.firestore.CloudFirestore\r\n");
    expect(manifest).toContain("Class-Path: file:///opt/emu/cloud-firestore-emulator.jar\r\n");
  });

  it("writes a jar whose only entry is that manifest", () => {
    const dir = mkdtempSync(join(tmpdir(), "launcher-"));
    const installed = __filename; // any existing file stands in for the installed jar
    const jar = firestoreEmulatorBinary(dir, {}, installed);
    expect(jar).toBe(join(dir, "firestore-emulator-launcher.jar"));
    const bytes = readFileSync(jar!);
    expect(bytes.readUInt32LE(0)).toBe(0x04034b50);
    const nameLength = bytes.readUInt16LE(26);
    expect(bytes.subarray(30, 30 + nameLength).toString()).toBe("META-INF/MANIFEST.MF");
    const size = bytes.readUInt32LE(18);
    const data = bytes.subarray(30 + nameLength, 30 + nameLength + size).toString();
    expect(data).toBe(launcherManifest(installed));
    expect(() => inflateRawSync(bytes)).toThrow(); // stored, not deflated: nothing to inflate
  });

  it("leaves an explicit FIRESTORE_EMULATOR_BINARY_PATH alone, and does nothing without the installed jar", () => {
    const dir = mkdtempSync(join(tmpdir(), "launcher-"));
    expect(firestoreEmulatorBinary(dir, { FIRESTORE_EMULATOR_BINARY_PATH: "/x/emu.jar" }, __filename)).toBe("/x/emu.jar");
    expect(firestoreEmulatorBinary(dir, {}, "/nonexistent/emulator.jar")).toBeUndefined();
  });
});
