// Packages the bundle (dist/runner.cjs) leaves in node_modules and loads only when needed: yargs
// (help and usage errors) and @hpcc-js/wasm-graphviz (SVG). Both are ES modules only, so they are
// loaded with import(). bin/runner.js runs the bundle as a node:vm script, where import() needs a
// host callback that Node 20 offers only behind an experimental warning; the entry hands over its
// own import() instead (the same package, so the same node_modules). Run from source (the tests),
// or as modules, this falls back to import() here.

/** The key under which bin/runner.js puts its `(specifier) => import(specifier)`. */
export const HOST_IMPORT = Symbol.for("runner.hostImport");

type HostImport = (specifier: string) => Promise<unknown>;

export async function importYargs(): Promise<typeof import("yargs")> {
  const host = (globalThis as { [HOST_IMPORT]?: HostImport })[HOST_IMPORT];
  return (host ? host("yargs") : import("yargs")) as Promise<typeof import("yargs")>;
}

export async function importGraphviz(): Promise<typeof import("@hpcc-js/wasm-graphviz")> {
  const host = (globalThis as { [HOST_IMPORT]?: HostImport })[HOST_IMPORT];
  return (host ? host("@hpcc-js/wasm-graphviz") : import("@hpcc-js/wasm-graphviz")) as Promise<typeof import("@hpcc-js/wasm-graphviz")>;
}
