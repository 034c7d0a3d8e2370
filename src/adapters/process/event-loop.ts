// Whether a long-lived child (a kept `git cat-file`, a wrapper started ahead) keeps the runner's
// event loop alive: only while the runner waits on it, so that an idle one never holds the runner.
import type { ChildProcess } from "node:child_process";

export function holdEventLoop(child: ChildProcess, on: boolean): void {
  for (const handle of [child, child.stdin, child.stdout, child.stderr] as ({ ref?: () => void; unref?: () => void } | null)[]) {
    if (on) handle?.ref?.();
    else handle?.unref?.();
  }
}
