// Packages the bundle leaves in node_modules and loads only when needed, as ES modules:
// @hpcc-js/wasm-graphviz (SVG) and terminal-kit (`runner watch`). The bundle runs as `node:vm`
// scripts (src/load-bundle.ts), where an import() needs a host callback that Node 20 offers only
// behind an experimental warning; the loader hands over its own import() instead (the same package,
// so the same node_modules). Run from source (the tests), the caller's own import() is used.
import { HOST_IMPORT } from "./bundle-keys.js";

type HostImport = (specifier: string) => Promise<unknown>;

/** The module `specifier` names, through the loader's dynamic import when there is one, else through `direct`, the caller's own. */
export function importExternal<T>(specifier: string, direct: () => Promise<T>): Promise<T> {
  const host = (globalThis as { [HOST_IMPORT]?: HostImport })[HOST_IMPORT];
  return host ? (host(specifier) as Promise<T>) : direct();
}
