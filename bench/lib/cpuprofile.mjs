// Summarizes a V8 .cpuprofile (node --cpu-prof): self time by function and by module, and the
// total time spent under each module (inclusive), so start-up cost per dependency shows.
import { readFileSync } from "node:fs";

/** The module a script URL belongs to: an npm package, a file of dist/, a node: builtin. */
export function moduleOf(url) {
  if (!url) return "(native / V8)";
  if (url.startsWith("node:")) return "node:internal";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "/node_modules/".length).split("/");
    return `npm:${rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const dist = url.indexOf("/dist/");
  if (dist >= 0) return url.slice(dist + 1);
  const bin = url.indexOf("/bin/");
  if (bin >= 0) return url.slice(bin + 1);
  return url.replace(/^file:\/\//, "");
}

export function summarizeProfile(file, top = 25) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const fnSelf = new Map();
  const modSelf = new Map();
  const modInclusive = new Map();
  for (const [id, ms] of self) {
    const node = byId.get(id);
    const cf = node.callFrame;
    const mod = moduleOf(cf.url);
    const fnKey = `${cf.functionName || "(anonymous)"} ${mod}:${cf.lineNumber + 1}`;
    fnSelf.set(fnKey, (fnSelf.get(fnKey) ?? 0) + ms);
    modSelf.set(mod, (modSelf.get(mod) ?? 0) + ms);
    // Inclusive: each module on the stack once.
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const m = moduleOf(byId.get(at).callFrame.url);
      if (!seen.has(m)) {
        seen.add(m);
        modInclusive.set(m, (modInclusive.get(m) ?? 0) + ms);
      }
    }
  }
  const sorted = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Number(ms.toFixed(1)) }));
  return {
    totalMs: Number(totalMs.toFixed(1)),
    bySelfFunction: sorted(fnSelf),
    bySelfModule: sorted(modSelf),
    byInclusiveModule: sorted(modInclusive),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = summarizeProfile(process.argv[2], Number(process.argv[3] ?? 25));
  console.log(`total ${out.totalMs} ms`);
  for (const section of ["bySelfModule", "byInclusiveModule", "bySelfFunction"]) {
    console.log(`\n${section}`);
    for (const row of out[section]) console.log(`${String(row.ms).padStart(9)}  ${row.name}`);
  }
}
