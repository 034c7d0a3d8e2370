// The resources of `runner mcp`: the task tree and the goal as their files are, one iteration as
// `runner log --iteration N --json` tells it, and the files of an iteration's local log. The logs lie
// in the work tree, where the agent writes: a file there is read only when no folder on its way is a
// link, never through a link itself, never from a FIFO or device (src/adapters/files/safe-files.ts), so a
// link an agent planted cannot hand a file from outside the repository to the person's MCP client.
import path from "node:path";
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { findRun } from "../adapters/audit/resolve-run.js";
import { notRealFolder, readAgentFile } from "../adapters/files/safe-files.js";
import { sentence } from "../cli/refusal-words.js";
import { findProjectRoot, inProject } from "../cli/repo.js";
import { iterationDir, LAYOUT } from "../core/base/layout.js";
import { runIdProblem } from "../core/commit/run-id.js";
import { parseCommitSubject } from "../core/commit/commit-message.js";
import { RefusalError } from "../errors.js";

/** The files of an iteration's local log a client may read (CONTRACT §2). */
const LOG_FILES = ["meta.json", "prompt.md", "output.json", "executor.log", "guard.log", "diff.patch", "trees.json", "runner_error.log"] as const;

/** The most of a log file a resource holds; the rest is named, not sent (a client puts the text in front of a model). */
const LOG_FILE_LIMIT = 2 * 1024 * 1024;

const ITERATION_URI = "runner://runs/{run_id}/iterations/{iteration}";

const iterationUri = (runId: string, iteration: number) => `runner://runs/${runId}/iterations/${iteration}`;

/** A template variable as one value (a template variable may come as a list). */
function single(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? "";
}

function runIdOf(value: string | string[] | undefined): string {
  const runId = single(value);
  const problem = runIdProblem(runId);
  if (problem !== undefined) throw new RefusalError(sentence(problem));
  return runId;
}

function iterationOf(value: string | string[] | undefined): number {
  const text = single(value);
  const number = /^[0-9]{1,9}$/.test(text) ? Number(text) : 0;
  if (number < 1) throw new RefusalError(`"${text}" is not an iteration number; \`runner log\` lists the iterations (1, 2, …).`);
  return number;
}

/** The tree file or the goal, read as the agent's files are (it can write them during an iteration): no link, no FIFO. */
async function projectFile(folder: string, relative: string): Promise<string> {
  const root = findProjectRoot(folder);
  return agentFileText(
    inProject(root, relative),
    relative,
    `${relative} cannot be read in ${root}; \`runner validate\` says what is wrong with the runner's files.`,
  );
}

/** A file the agent can write, read without following a link or waiting on a FIFO; a refusal names `relative` where it is no regular file, `missing` where it is not there. */
function agentFileText(file: string, relative: string, missing: string): string {
  const read = readAgentFile(file);
  if (read.kind === "missing") throw new RefusalError(missing);
  if (read.kind === "not-regular") throw new RefusalError(`${relative} is not a regular file (a link, perhaps); it is not read.`);
  return read.text;
}

/** The text of a file of an iteration's local log, read without following a link anywhere below the repository's top. */
function readLogFile(root: string, runId: string, iteration: number, file: string): string {
  const folder = iterationDir(runId, iteration);
  const relative = `${folder}/${file}`;
  const missing = notRealFolder(root, path.join(root, folder));
  if (missing !== undefined)
    throw new RefusalError(`${missing} is not a folder here; the log of iteration ${iteration} of run ${runId} is local to the machine that ran it.`);
  const text = agentFileText(
    path.join(root, relative),
    relative,
    `${relative} does not exist; the iteration's log has ${LOG_FILES.join(", ")} where they apply.`,
  );
  if (text.length <= LOG_FILE_LIMIT) return text;
  return `${text.slice(0, LOG_FILE_LIMIT)}\n[runner mcp: ${text.length - LOG_FILE_LIMIT} more characters in ${relative}]\n`;
}

/** The current run's iterations, newest first, for a client's list of resources (none off a run branch). */
async function listIterations(folder: string): Promise<{ uri: string; name: string; mimeType: string }[]> {
  try {
    const run = await findRun(findProjectRoot(folder), undefined);
    if (!run) return [];
    // (the run's loop commits: their subjects name it)
    return run.loopCommits.flatMap((commit) => {
      const subject = parseCommitSubject(commit.subject);
      return subject
        ? [
            {
              uri: iterationUri(run.runId, subject.iteration),
              name: `iteration ${subject.iteration} of run ${run.runId}`,
              mimeType: "application/json",
            },
          ]
        : [];
    });
  } catch {
    return [];
  }
}

export function registerResources(server: McpServer, folder: string): void {
  server.registerResource(
    "tree",
    "runner://tree",
    { title: "The task tree", description: `${LAYOUT.tree} as it is on disk`, mimeType: "application/json" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "application/json", text: await projectFile(folder, LAYOUT.tree) }] }),
  );
  server.registerResource(
    "goal",
    "runner://goal",
    { title: "The goal", description: `${LAYOUT.goal}: the project's goal, given to every iteration`, mimeType: "text/markdown" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/markdown", text: await projectFile(folder, LAYOUT.goal) }] }),
  );
  server.registerResource(
    "iteration",
    new ResourceTemplate(ITERATION_URI, { list: async () => ({ resources: await listIterations(folder) }) }),
    {
      title: "An iteration",
      description:
        "One iteration of a run as `runner log --iteration N --json` tells it: from its commit, and the local log where this machine ran it",
      mimeType: "application/json",
    },
    async (uri, variables) => {
      const { readIteration } = await import("../cli/commands/log.js");
      const { entry } = await readIteration(folder, runIdOf(variables.run_id), iterationOf(variables.iteration));
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: `${JSON.stringify(entry, null, 2)}\n` }] };
    },
  );
  server.registerResource(
    "iteration-log-file",
    new ResourceTemplate(`${ITERATION_URI}/{file}`, { list: undefined, complete: { file: () => [...LOG_FILES] } }),
    {
      title: "A file of an iteration's local log",
      description: `${LAYOUT.iterations}/<run-id>/<NNNN>/<file>, where the machine that ran the iteration keeps it: ${LOG_FILES.join(", ")}`,
      mimeType: "text/plain",
    },
    async (uri, variables) => {
      const file = single(variables.file);
      if (!(LOG_FILES as readonly string[]).includes(file))
        throw new RefusalError(`"${file}" is not a file of an iteration's log; those are ${LOG_FILES.join(", ")}.`);
      const text = readLogFile(findProjectRoot(folder), runIdOf(variables.run_id), iterationOf(variables.iteration), file);
      return { contents: [{ uri: uri.href, mimeType: file.endsWith(".json") ? "application/json" : "text/plain", text }] };
    },
  );
}
