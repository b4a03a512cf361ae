/**
 * Headless Chromium for the browser tests: the system's own build (Debian's `chromium` package), driven by
 * playwright-core through executablePath, so that no test downloads a browser.
 */
import fs from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** CHROMIUM_PATH if set, else the first system Chromium found; undefined when there is none. */
export const chromiumPath: string | undefined = [process.env.CHROMIUM_PATH, ...CANDIDATES].find(
  (candidate): candidate is string => !!candidate && fs.existsSync(candidate),
);

/** Why the browser tests are skipped, shown in the test name when they are. */
export const NO_CHROMIUM =
  "skipped: no Chromium executable (apt-get install -y chromium, or set CHROMIUM_PATH)";

export function launchChromium(): Promise<Browser> {
  if (!chromiumPath) throw new Error(NO_CHROMIUM);
  return chromium.launch({ executablePath: chromiumPath, headless: true });
}

/**
 * A Vitest fixture, file-scoped where it is used (`browser: [chromiumFixture, { scope: "file" }]`): Chromium,
 * launched when a test first needs it, closed once the tests that share it are done.
 */
export async function chromiumFixture({}: object, use: (browser: Browser) => Promise<void>): Promise<void> {
  const browser = await launchChromium();
  await use(browser);
  await browser.close();
}
