// Packages the bundle (dist/runner.cjs) leaves in node_modules and loads only when needed: yargs
// (help and usage errors) and @hpcc-js/wasm-graphviz (SVG). Both are ES modules only, so they are
// loaded with import(). bin/runner.js runs the bundle as a node:vm script, where import() needs a
// host callback that Node 20 offers only behind an experimental warning; the entry hands over its
// own import() instead (the same package, so the same node_modules). Run from source (the tests),
// or as modules, the caller's own import() is used.

/** The key under which bin/load-cli.js puts its dynamic import. */
export const HOST_IMPORT = Symbol.for("runner.hostImport");

type HostImport = (specifier: string) => Promise<unknown>;

/** The module `specifier` names, through the entry's dynamic import when there is one, else through `direct`, the caller's own. */
export function importExternal<T>(specifier: string, direct: () => Promise<T>): Promise<T> {
  const host = (globalThis as { [HOST_IMPORT]?: HostImport })[HOST_IMPORT];
  return host ? (host(specifier) as Promise<T>) : direct();
}
