// A real browser for tests: puppeteer-core driving the Chromium that the @sparticuz/chromium npm
// package ships in its tarball (bin/chromium.br), so `npm ci` alone installs it — nothing is
// downloaded at run time and no system browser is used. The binary is decompressed once per package
// version into node_modules/.cache (the package's own executablePath() would share /tmp/chromium
// with every other project on the machine, whatever its version, and trusts a half-written file).
// Pages are opened from file:// with every other request aborted and recorded.
import chromiumPackage from "@sparticuz/chromium";
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import { createBrotliDecompress } from "node:zlib";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { PROJECT_ROOT } from "./sandbox.js";

/** The installed @sparticuz/chromium package folder. */
function chromiumPackageDir(): string {
  // Its exports hide package.json; its main entry sits at build/cjs/index.cjs.
  const entry = createRequire(import.meta.url).resolve("@sparticuz/chromium");
  return path.resolve(path.dirname(entry), "..", "..");
}

/** The Chromium binary from the package's tarball, decompressed on first use (atomically). */
export async function chromiumExecutable(): Promise<string> {
  const dir = chromiumPackageDir();
  const version = (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string }).version;
  const target = path.join(PROJECT_ROOT, "node_modules", ".cache", "runner-test-chromium", version, "chromium");
  if (existsSync(target)) return target;
  const source = path.join(dir, "bin", "chromium.br");
  if (!existsSync(source)) throw new Error(`${source} is missing: @sparticuz/chromium ships Chromium for x64 Linux in its tarball; run npm ci.`);
  mkdirSync(path.dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.tmp`;
  try {
    await pipeline(createReadStream(source), createBrotliDecompress(), createWriteStream(partial, { mode: 0o755 }));
    renameSync(partial, target);
  } finally {
    rmSync(partial, { force: true });
  }
  return target;
}

/**
 * Flags: the package's own list (`chromium.args`) without the ones that weaken the page's security
 * (web security, insecure content) or need its unpacked GPU libraries; no sandbox, as tests run as
 * root here; no name resolves, so nothing can reach the network even past request interception.
 */
function launchArgs(): string[] {
  const unwanted = /^--(disable-web-security|allow-running-insecure-content|use-gl|use-angle|enable-unsafe-swiftshader|headless)/;
  const kept = chromiumPackage.args.filter((arg) => !unwanted.test(arg));
  return [
    ...kept,
    "--disable-gpu",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ];
}

export interface LaunchedBrowser {
  browser: Browser;
  /** Milliseconds from the call to a connected browser (decompressing on first use included). */
  startMs: number;
}

export async function launchBrowser(): Promise<LaunchedBrowser> {
  const started = performance.now();
  const executablePath = await chromiumExecutable();
  const browser = await puppeteer.launch({
    executablePath,
    args: launchArgs(),
    headless: "shell",
    pipe: true, // DevTools over a pipe: no debugging port is opened
    defaultViewport: { width: 1280, height: 900 },
    protocolTimeout: 60_000,
  });
  return { browser, startMs: Math.round(performance.now() - started) };
}

export interface OpenedPage {
  page: Page;
  url: string;
  /** Every request the page made, the file itself included. */
  requests: string[];
  /** Requests that were aborted: anything but the file. */
  blocked: string[];
  consoleErrors: string[];
  pageErrors: string[];
}

/** Opens a local file; every request but the file itself is aborted and recorded. */
export async function openFile(browser: Browser, file: string, options: { javaScript?: boolean } = {}): Promise<OpenedPage> {
  const page = await browser.newPage();
  const url = pathToFileURL(file).href;
  const opened: OpenedPage = { page, url, requests: [], blocked: [], consoleErrors: [], pageErrors: [] };
  await page.setJavaScriptEnabled(options.javaScript ?? true);
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    opened.requests.push(request.url());
    if (request.url() === url) void request.continue();
    else {
      opened.blocked.push(request.url());
      void request.abort("blockedbyclient");
    }
  });
  page.on("console", (message) => {
    if (message.type() === "error") opened.consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => opened.pageErrors.push(String(error)));
  await page.goto(url, { waitUntil: "load" });
  return opened;
}
