// The loop end to end through the built binary: decompose the root into two leaves, execute each
// with a green guard, root passes; then what every iteration leaves behind (commits, meta.json,
// events.jsonl, the environment of CONTRACT §6) and what it never commits.
import { realpathSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DONE_WHEN_SCRIPT, scenario, subject, TREE_FILE, type Scenario } from "../helpers/scenario.js";
import { writeFiles } from "../helpers/sandbox.js";

const PASSING_EXECUTE = [
  "safetyCheck",
  "loadTree",
  "selectLeaf",
  "buildPrompt",
  "execute",
  "reloadTree",
  "classify",
  "guard",
  "updateState",
  "persist",
  "commit",
  "committed",
];
const DECOMPOSE = [
  "safetyCheck",
  "loadTree",
  "selectLeaf",
  "buildPrompt",
  "execute",
  "reloadTree",
  "classify",
  "updateState",
  "persist",
  "commit",
  "committed",
];

describe.concurrent("runner step end to end", () => {
  describe.concurrent("the done-when scenario: decompose, execute, execute", () => {
    let s: Scenario;
    const results: { exitCode: number; stdout: string; stderr: string }[] = [];
    beforeAll(async () => {
      s = await scenario({ runId: "done-1", start: "runner" });
      s.script(DONE_WHEN_SCRIPT);
      for (let i = 0; i < 3; i++) results.push(await s.step());
    });

    it("commits three iterations and the root passes; a fourth step has nothing to do", async () => {
      for (const result of results) {
        expect(result.stderr).toBe("");
        expect(result.exitCode).toBe(0);
      }
      expect(await s.subjects()).toEqual([
        subject("done-1", 1, "root", "decompose", "skipped"),
        subject("done-1", 2, "a", "execute", "pass"),
        subject("done-1", 3, "b", "execute", "pass"),
      ]);
      const root = s.readTree().root;
      expect(root.passes).toBe(true);
      expect(root.children.map((child) => [child.id, child.passes, child.attempts])).toEqual([
        ["a", true, 0],
        ["b", true, 0],
      ]);
      expect(await s.git(["status", "--porcelain"])).toBe("");
      expect(s.guardRuns()).toEqual([2, 3]);

      const head = await s.head();
      const fourth = await s.step();
      expect(fourth.exitCode).toBe(0);
      expect(fourth.stderr).toBe("");
      expect(fourth.stdout.toLowerCase()).toContain("nothing to do");
      expect(await s.head()).toBe(head);
      expect(s.agentRan(4)).toBe(false);
      expect(await s.git(["status", "--porcelain"])).toBe("");
    });

    it("the committed tree is the canonical tree on disk", async () => {
      expect(await s.git(["show", `HEAD:${TREE_FILE}`])).toBe(s.read(TREE_FILE).replace(/\n$/, ""));
      expect(await s.git(["diff", "--quiet", "HEAD", "--", TREE_FILE])).toBe("");
    });

    it("meta.json records run, iteration, node, kind, status, guard, attempts, passes, durations and the path of states", () => {
      const execute = s.meta(2);
      expect(execute).toMatchObject({
        run_id: "done-1",
        iteration: 2,
        node_id: "a",
        kind: "execute",
        agent_status: "done",
        guard_outcome: "pass",
        attempts_before: 0,
        attempts_after: 0,
        passes_after: true,
      });
      expect(execute.path).toEqual(PASSING_EXECUTE);
      expect(execute.durations.agent_ms).toBeGreaterThan(0);
      expect(execute.durations.guard_ms).toBeGreaterThan(0);
      expect(execute.durations.total_ms).toBeGreaterThanOrEqual(execute.durations.agent_ms + execute.durations.guard_ms);
      const decompose = s.meta(1);
      expect(decompose).toMatchObject({
        run_id: "done-1",
        iteration: 1,
        node_id: "root",
        kind: "decompose",
        agent_status: "decomposed",
        guard_outcome: "skipped",
        attempts_before: 0,
        attempts_after: 0,
        passes_after: false,
      });
      expect(decompose.path).toEqual(DECOMPOSE);
      expect(decompose.durations.guard_ms).toBe(0);
      expect(s.meta(3)).toMatchObject({ iteration: 3, node_id: "b", kind: "execute", guard_outcome: "pass", passes_after: true });
      for (const file of ["prompt.md", "output.json", "executor.log", "trees.json", "diff.patch"]) {
        expect(s.exists(s.iterFile(2, file)), file).toBe(true);
      }
      expect(s.exists(s.iterFile(2, "guard.log"))).toBe(true);
      expect(s.exists(s.iterFile(2, "runner_error.log"))).toBe(false);
      // The tree snapshots are references to the committed tree files, not copies (trees.json).
      for (const file of ["tree.before.json", "tree.after.json"]) expect(s.exists(s.iterFile(2, file)), file).toBe(false);
      const refs = (iteration: number) => JSON.parse(s.read(s.iterFile(iteration, "trees.json"))) as Record<string, { commit: string; blob: string }>;
      expect(refs(2).after).toEqual(refs(3).before);
      expect(refs(2).after!.commit).toBe(s.meta(2).commit);
    });

    it("events.jsonl has one line per transition: iteration, from, event, to, time", () => {
      const events = s.events();
      for (const iteration of [1, 2, 3]) {
        const own = events.filter((event) => event.iteration === iteration);
        // The states entered are the path; an actor's result recorded as a verdict is a transition to the same state.
        expect(own.filter((event, i) => i === 0 || event.to !== event.from).map((event) => event.to)).toEqual(s.meta(iteration).path);
        expect(own[0]).toMatchObject({ from: "(start)", event: "xstate.init", to: "safetyCheck" });
        for (const event of own.filter((e) => e.to === e.from)) expect(event.event).toMatch(/^xstate\.done\.actor\.\w+$/);
        own.forEach((event, i) => {
          expect(Object.keys(event).sort()).toEqual(["event", "from", "iteration", "time", "to"]);
          expect(typeof event.event).toBe("string");
          expect(event.event.length).toBeGreaterThan(0);
          expect(Number.isNaN(Date.parse(event.time))).toBe(false);
          if (i > 0) {
            expect(event.from).toBe(own[i - 1]!.to);
            expect(Date.parse(event.time)).toBeGreaterThanOrEqual(Date.parse(own[i - 1]!.time));
          }
        });
      }
      // Append-only: the iterations follow each other in the file.
      const order = events.map((event) => event.iteration).filter((iteration) => iteration <= 3);
      expect(order).toEqual([...order].sort((x, y) => x - y));
    });

    it("gives the agent the environment of CONTRACT §6, the prompt on stdin, in the repository root", () => {
      const dir = realpathSync(s.dir);
      for (const [iteration, nodeId] of [
        [1, "root"],
        [2, "a"],
        [3, "b"],
      ] as const) {
        const seen = s.agent(iteration);
        expect(seen.env.RUNNER_RUN_ID).toBe("done-1");
        expect(seen.env.RUNNER_ITERATION).toBe(String(iteration));
        expect(seen.env.RUNNER_NODE_ID).toBe(nodeId);
        expect(seen.env.RUNNER_STEP_KIND).toBe("leaf");
        expect(realpathSync(path.dirname(seen.env.RUNNER_PROMPT_FILE!))).toBe(path.join(dir, path.dirname(s.iterFile(iteration, "prompt.md"))));
        expect(path.basename(seen.env.RUNNER_PROMPT_FILE!)).toBe("prompt.md");
        expect(path.resolve(seen.env.RUNNER_OUTPUT_FILE!)).toBe(path.join(path.dirname(path.resolve(seen.env.RUNNER_PROMPT_FILE!)), "output.json"));
        expect(seen.promptFileExists).toBe(true);
        expect(seen.stdin.length).toBeGreaterThan(100);
        expect(seen.promptFileText).toBe(seen.stdin);
        expect(seen.stdin).toBe(s.read(s.iterFile(iteration, "prompt.md")));
        expect(seen.stdin).toContain(`\`${nodeId}\``);
        expect(realpathSync(seen.cwd)).toBe(dir);
      }
      // The output the agent wrote is where the runner looked for it.
      expect(JSON.parse(s.read(s.iterFile(2, "output.json")))).toEqual({ status: "done", summary: "wrote a" });
    });
  });

  describe("commit messages and iteration numbering", () => {
    it("numbers iterations 1 + this run's loop commits, whatever else is on the branch, and never commits iterations/ or context/", async () => {
      const s = await scenario({ runId: "num-a", start: "runner" });
      s.script({
        1: { write: { "x.txt": "1" }, status: "retry", summary: "first try at root" },
        2: { write: { "x.txt": "2" }, status: "retry", summary: "second try" },
        3: { write: { "x.txt": "3" }, status: "retry", summary: "third try" },
      });
      expect((await s.step()).exitCode).toBe(0);
      expect((await s.step()).exitCode).toBe(0);
      // A human commit on the run branch is not a loop commit.
      writeFiles(s.dir, { "human.txt": "by hand\n" });
      await s.git(["add", "human.txt"]);
      await s.git(["commit", "-q", "-m", "chore(loop): a human commit that looks alike"]);
      expect((await s.step()).exitCode).toBe(0);
      expect(await s.subjects()).toEqual([
        subject("num-a", 1, "root", "execute", "skipped"),
        subject("num-a", 2, "root", "execute", "skipped"),
        "chore(loop): a human commit that looks alike",
        subject("num-a", 3, "root", "execute", "skipped"),
      ]);
      // The body carries the agent's summary.
      const body = await s.message("HEAD~2");
      expect(body.split("\n")[0]).toBe(subject("num-a", 2, "root", "execute", "skipped"));
      expect(body).toContain("second try");

      // A second run started from here counts its own commits only.
      const start = await s.runner(["start", "--run-id", "num-b", "--from", "runner/num-a"]);
      expect(start.exitCode).toBe(0);
      s.script({ 1: { write: { "y.txt": "1" }, status: "retry" } });
      expect((await s.step()).exitCode).toBe(0);
      expect((await s.git(["log", "-1", "--format=%s"])).trim()).toBe(subject("num-b", 1, "root", "execute", "skipped"));
      expect(s.exists(".runner/iterations/num-b/0001/meta.json")).toBe(true);

      // Logs and context exist locally and are never committed.
      expect(s.exists(".runner/iterations/num-a/0003/meta.json")).toBe(true);
      expect(s.exists(".runner/context/node.md")).toBe(true);
      const tracked = (await s.git(["ls-files"])).split("\n");
      expect(tracked.filter((file) => file.startsWith(".runner/iterations") || file.startsWith(".runner/context"))).toEqual([]);
      const everCommitted = (await s.git(["log", "--all", "--name-only", "--format="])).split("\n");
      expect(everCommitted.filter((file) => file.startsWith(".runner/iterations") || file.startsWith(".runner/context"))).toEqual([]);
      expect(everCommitted).toContain("x.txt");
      expect(await s.git(["status", "--porcelain"])).toBe("");
    });
  });
});
