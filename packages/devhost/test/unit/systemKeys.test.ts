import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DURABLE_KEY_NAME, keyMatches, loadSystemKey } from "../../src/startup/systemKeys";

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "system-keys-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => dirs.splice(0).forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

describe("loadSystemKey", () => {
  it("creates a random key at the first start and keeps it in secrets/host.json, readable by the owner only", () => {
    const dir = tempDir();
    const key = loadSystemKey(dir, DURABLE_KEY_NAME);
    expect(key).toMatch(/^[\w-]{43}$/);
    const file = path.join(dir, "secrets", "host.json");
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({
      systemKeys: [{ name: DURABLE_KEY_NAME, value: key }],
    });
    expect(fs.statSync(file).mode & 0o077).toBe(0);
    expect(loadSystemKey(dir, DURABLE_KEY_NAME)).toBe(key);
    expect(loadSystemKey(tempDir(), DURABLE_KEY_NAME)).not.toBe(key);
  });

  it("keeps the other keys of the file, and refuses a file that is not one", () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, "secrets"));
    const file = path.join(dir, "secrets", "host.json");
    fs.writeFileSync(file, JSON.stringify({ systemKeys: [{ name: "other", value: "o" }] }));
    const key = loadSystemKey(dir, DURABLE_KEY_NAME);
    expect(JSON.parse(fs.readFileSync(file, "utf8")).systemKeys).toEqual([
      { name: "other", value: "o" },
      { name: DURABLE_KEY_NAME, value: key },
    ]);
    fs.writeFileSync(file, "[1, 2]");
    expect(() => loadSystemKey(dir, DURABLE_KEY_NAME)).toThrow(
      /secrets[/\\]host\.json: not the devhost's secrets file/,
    );
  });
});

describe("keyMatches", () => {
  it("matches the key itself only", () => {
    expect(keyMatches("abc", "abc")).toBe(true);
    for (const other of [undefined, "", "ab", "abcd", "ABC"]) expect(keyMatches(other, "abc")).toBe(false);
  });
});
