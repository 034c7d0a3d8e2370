#!/usr/bin/env node
// Completes package-lock.json with the platform packages of rust-just (the `just` binary) that the
// registry this project is developed against does not serve: npm then leaves them out of the lock
// file, and `npm ci` refuses a lock that lacks an optional dependency. Entries carry os/cpu, so npm
// installs only the one for the machine. Run after `npm install`; a unit test checks the lock.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const file = path.join(root, "package-lock.json");
const lock = JSON.parse(readFileSync(file, "utf8"));

/** `rust-just-<os>-<cpu>` → npm's os / cpu names. */
export function platformOf(name) {
  const [, os, cpu] = /^rust-just-([a-z]+)-([a-z0-9]+)$/.exec(name) ?? [];
  return { os: os === "windows" ? "win32" : os, cpu: cpu === "armv7" ? "arm" : cpu };
}

const just = lock.packages["node_modules/rust-just"];
let added = 0;
for (const name of Object.keys(just.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const { os, cpu } = platformOf(name);
  lock.packages[key] = { version: just.optionalDependencies[name], cpu: [cpu], license: just.license ?? "CC0-1.0", optional: true, os: [os] };
  added++;
}
const [rootEntry, ...rest] = Object.entries(lock.packages);
lock.packages = Object.fromEntries([rootEntry, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform package entr${added === 1 ? "y" : "ies"} of rust-just added`);
