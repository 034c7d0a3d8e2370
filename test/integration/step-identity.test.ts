// What the runner commits and writes, beyond the loop itself: the git identity (CONTRACT §7), secret
// redaction (CONTRACT §9) and determinism (seed 000: same inputs, same commits).
import { describe, expect, it } from "vitest";
import { DONE_WHEN_SCRIPT, scenario, TREE_FILE } from "../helpers/scenario.js";
import { tempDir } from "../helpers/sandbox.js";

const SECRET = "supersecretvalue123";

describe.concurrent("what the runner commits and writes", () => {
  describe.concurrent("commit identity", () => {
    it("with no git identity configured anywhere, commits as runner <runner@localhost>", async () => {
      const s = await scenario({ identity: false, env: { HOME: tempDir("runner-home-") } });
      delete s.env.EMAIL;
      s.script({ 1: { write: { "x.txt": "x" }, status: "retry" } });
      const result = await s.step();
      expect(result.exitCode, result.stderr).toBe(0);
      expect((await s.git(["log", "-1", "--format=%an <%ae>|%cn <%ce>"])).trim()).toBe("runner <runner@localhost>|runner <runner@localhost>");
    });

    it("with an identity only in the environment (GIT_AUTHOR_* / GIT_COMMITTER_*), commits with it", async () => {
      const s = await scenario({ identity: true, env: { HOME: tempDir("runner-home-") } });
      s.script({ 1: { write: { "x.txt": "x" }, status: "retry" } });
      const result = await s.step();
      expect(result.exitCode, result.stderr).toBe(0);
      expect((await s.git(["log", "-1", "--format=%an <%ae>|%cn <%ce>"])).trim()).toBe(
        "Test Author <author@example.com>|Test Author <author@example.com>",
      );
    });

    it("with an identity configured in the repository, commits with it", async () => {
      const s = await scenario({ identity: false, env: { HOME: tempDir("runner-home-") } });
      await s.git(["config", "user.name", "Repo Owner"]);
      await s.git(["config", "user.email", "owner@example.com"]);
      s.script({ 1: { write: { "x.txt": "x" }, status: "retry" } });
      const result = await s.step();
      expect(result.exitCode, result.stderr).toBe(0);
      expect((await s.git(["log", "-1", "--format=%an <%ae>|%cn <%ce>"])).trim()).toBe(
        "Repo Owner <owner@example.com>|Repo Owner <owner@example.com>",
      );
    });
  });

  describe.concurrent("secrets and determinism", () => {
    it("redacts the value of MY_API_TOKEN from executor.log, prompt.md, meta.json and the commit message", async () => {
      const s = await scenario({ env: { MY_API_TOKEN: SECRET } });
      s.script({
        1: {
          print: `my token is ${SECRET}`,
          printErr: `stderr token ${SECRET}`,
          append: { ".runner/state/assumptions.md": `- The token is ${SECRET}.\n` },
          write: { "x.txt": "x\n" },
          status: "retry",
          summary: `used ${SECRET} to log in`,
        },
        2: { print: `again ${SECRET}`, status: "retry", summary: `still ${SECRET}` },
      });
      expect((await s.step()).exitCode).toBe(0);
      expect((await s.step()).exitCode).toBe(0);
      // The agent did see it (the test would prove nothing otherwise).
      expect(s.agent(1).env.MY_API_TOKEN).toBe(SECRET);
      for (const iteration of [1, 2]) {
        for (const file of ["executor.log", "prompt.md", "meta.json", "trees.json", "diff.patch"]) {
          expect(s.read(s.iterFile(iteration, file)), `${iteration}/${file}`).not.toContain(SECRET);
        }
      }
      expect(s.read(s.iterFile(1, "executor.log"))).toContain("my token is ***");
      // Iteration 2's prompt carries the assumptions and the history, both with the secret in them.
      const prompt = s.read(s.iterFile(2, "prompt.md"));
      expect(prompt).toContain("The token is ***");
      // What the agent reads on stdin is what RUNNER_PROMPT_FILE holds: redacted too.
      expect(s.agent(2).stdin).not.toContain(SECRET);
      expect(s.agent(2).stdin).toBe(prompt);
      expect(s.read(`.runner/iterations/t1/events.jsonl`)).not.toContain(SECRET);
      const messages = await s.git(["log", "--format=%B", "main..HEAD"]);
      expect(messages).toContain("used *** to log in");
      expect(messages).not.toContain(SECRET);
    });

    it("the same scenario in two fresh repositories with the same run id and fixed dates gives the same commits", async () => {
      const dates = { GIT_AUTHOR_DATE: "2025-01-02T03:04:05Z", GIT_COMMITTER_DATE: "2025-01-02T03:04:05Z" };
      const play = async () => {
        const s = await scenario({ runId: "same", env: dates, start: "runner" });
        s.script(DONE_WHEN_SCRIPT);
        for (let i = 0; i < 3; i++) expect((await s.step()).exitCode).toBe(0);
        return {
          subjects: await s.subjects(),
          tree: (await s.git(["rev-parse", "HEAD^{tree}"])).trim(),
          head: await s.head(),
          bytes: s.read(TREE_FILE),
        };
      };
      const [one, two] = await Promise.all([play(), play()]);
      expect(one.subjects).toHaveLength(3);
      expect(two.subjects).toEqual(one.subjects);
      expect(two.tree).toBe(one.tree);
      expect(two.bytes).toBe(one.bytes);
      expect(JSON.parse(one.bytes)).toMatchObject({ root: { passes: true } });
      expect(two.head).toBe(one.head);
    });
  });
});
