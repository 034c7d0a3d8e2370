#!/usr/bin/env node
// Thin entry: run the CLI and exit with its code (0 ok, 1 refused or bad input, 2 internal error, 3 stopped early).
import { main } from "../dist/src/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
