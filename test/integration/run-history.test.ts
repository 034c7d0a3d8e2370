// The run's history kept in the runner's state folder (src/adapters/audit/run-history.ts): after each of
// its commits the runner adds that commit to the loop commits it read, so the next step needs no
// `git log`. What it keeps must be exactly what the branch says, and anything else at HEAD (a
// person's commit) makes the next step read the branch again.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repositoryState } from "../../src/adapters/state/runner-state.js";
import { scenario, subject } from "../helpers/scenario.js";
import { node, tree } from "../helpers/sandbox.js";

interface Kept {
  runId: string;
  head: string;
  commits: { sha: string; subject: string; body: string; author: string }[];
}

describe("the run's history in the state folder", () => {
  it("holds exactly the branch's loop commits at HEAD (subject, body, author) after each step; a person's commit on top is read from the branch", async () => {
    const s = await scenario({ runId: "h1", tree: tree(node("root", { children: [node("a"), node("b", { order: 1 }), node("c", { order: 2 })] })) });
    s.script({
      1: { status: "retry", summary: "first look\n\nwith a second paragraph" },
      2: { write: { "src/a.txt": "a\n" }, status: "done", summary: "wrote a", guard: { exit: 1, print: "FAIL: a" } },
      3: { write: { "src/a.txt": "a!\n" }, status: "done", summary: "fixed a" },
      4: { write: { "src/b.txt": "b\n" }, status: "done", summary: "wrote b" },
    });
    const file = path.join(repositoryState(s.env, path.join(s.dir, ".git")).dir, "history.json");
    const fromBranch = async () => {
      const out = await s.git(["log", "-E", "--grep=^chore\\(loop\\): run h1 ", "--format=%H%x1f%an <%ae>%x1f%s%x1f%b%x1e", "HEAD"]);
      return out
        .split("\x1e")
        .map((r) => r.replace(/^\n/, ""))
        .filter(Boolean)
        .map((r) => {
          const [sha, author, subj, body] = r.split("\x1f");
          return { sha, subject: subj, body: body!.trimEnd(), author };
        });
    };
    for (let i = 1; i <= 2; i++) {
      expect((await s.step()).exitCode).toBe(0);
      const kept = JSON.parse(readFileSync(file, "utf8")) as Kept;
      expect(kept.head).toBe(await s.head());
      expect(kept.commits).toEqual(await fromBranch());
    }
    // A person's commit: the kept history is not for HEAD, the branch is read again (iteration 3, its failure told).
    await s.git(["commit", "-q", "--allow-empty", "-m", "a person's note"]);
    expect((await s.step()).exitCode).toBe(0);
    expect((await s.subjects()).at(-1)).toBe(subject("h1", 3, "a", "execute", "pass"));
    expect(s.agent(3).context["failure.md"]).toContain("FAIL: a");
    const kept = JSON.parse(readFileSync(file, "utf8")) as Kept;
    expect(kept.head).toBe(await s.head());
    expect(kept.commits).toEqual(await fromBranch());
    expect(existsSync(file)).toBe(true);
    expect((await s.step()).exitCode).toBe(0);
    expect((await s.subjects()).at(-1)).toBe(subject("h1", 4, "b", "execute", "pass"));
  });
});
