// The commands that review and merge a run's branch. Pure: the branches that hold the run's base are
// handed in, and the one to merge into is guessed from them (main, then master, else the only other).

const PREFERRED_TARGETS = ["main", "master", "origin/main", "origin/master"];

/** The branch to merge into among the refs holding the run's base (run branches left out); undefined if none fits. */
export function guessTarget(refs: readonly string[], runBranch: string): string | undefined {
  const candidates = refs.filter((ref) => ref !== runBranch && !/(^|\/)runner\//.test(ref) && !ref.endsWith("/HEAD") && ref !== "HEAD");
  for (const name of PREFERRED_TARGETS) if (candidates.includes(name)) return name.replace(/^origin\//, "");
  const locals = candidates.filter((ref) => !ref.includes("/"));
  return locals.length === 1 ? locals[0] : undefined;
}

/** A word as the shell reads it: as is when it holds only safe characters, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9._/@+=:-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Review and merge commands for the run read from `ref` (`runner/<id>`, or a remote-tracking ref on a
 * fresh clone). `base` is the commit the run began from, used when no target branch is known.
 */
export function mergeCommands(
  ref: string,
  runId: string,
  target: string | undefined,
  base: string | undefined,
): { label: string; command: string }[] {
  const branch = `runner/${runId}`;
  const from = shellWord(target ?? base?.slice(0, 12) ?? "HEAD");
  const commands = [
    { label: "Check out the run's branch", command: `git switch ${shellWord(branch)}` },
    { label: "Check every transition against the rules and replay every pass", command: "runner audit --replay" },
    { label: "The run's commits", command: `git log --oneline --reverse ${from}..${shellWord(ref)}` },
    { label: "What merging brings in", command: `git diff --stat ${from}...${shellWord(ref)}  # drop --stat for the whole patch` },
  ];
  commands.push(
    target !== undefined
      ? { label: `Merge into ${target}`, command: `git switch ${shellWord(target)} && git merge --no-ff ${shellWord(branch)}` }
      : { label: "Merge into the branch you have checked out", command: `git merge --no-ff ${shellWord(branch)}` },
  );
  return commands;
}
