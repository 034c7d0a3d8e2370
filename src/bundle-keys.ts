// The keys under which the bundle's loader (src/load-bundle.ts, dist/load.mjs) hands the bundle what
// a `node:vm` script lacks; the bundle's code reads them from globalThis, since it cannot import the
// loader that compiles it. From source (the tests) nothing is there, and the callers do without.

/** The loader's own dynamic import, for the ES modules in node_modules (src/external-import.ts). */
export const HOST_IMPORT = Symbol.for("runner.hostImport");

/** Writes now the code cache of what this process or thread compiled without one (the audit's thread, which is ended rather than exits). */
export const SAVE_CODE_CACHE = Symbol.for("runner.saveCodeCache");
