import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", "**/*.generated.ts", "test/fixtures/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", Buffer: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // Commands orchestrate and print; git's commands live in adapters, each behind a name (src/adapters/git/git.ts, worktrees.ts, …).
    files: ["src/cli/**/*.ts", "src/mcp/**/*.ts", "src/run/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "CallExpression[callee.property.name='raw']", message: "no raw git here: add a named function to an adapter" },
      ],
    },
  },
  {
    // CommonJS configuration files (dependency-cruiser reads its config as CommonJS).
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable", require: "readonly" } },
  },
  {
    // src/agents/ (what each agent CLI is: argv, events, limits) is pure like core/.
    files: ["src/core/**/*.ts", "src/agents/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: ["node:fs", "node:fs/promises", "node:child_process", "fs", "child_process", "simple-git", "execa", "node:os", "node:process"],
          patterns: [{ group: ["**/adapters/**", "**/cli/**", "**/machines/**"], message: "core and agents are pure: no adapters, CLI or machine" }],
        },
      ],
      "no-restricted-globals": ["error", "Date", "process", "setTimeout", "setInterval"],
      "no-restricted-properties": ["error", { object: "Math", property: "random" }],
    },
  },
);
