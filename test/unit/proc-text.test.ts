// The /proc texts containment reads, taken apart: stat lines, environment blocks, cgroup paths.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  bornBetween,
  cgroup2Dir,
  environHasToken,
  parseForkCount,
  parseProcStat,
  parseTaskCount,
  withToken,
  type PidMark,
} from "../../src/core/process/proc-text.js";

describe("parseProcStat", () => {
  it("reads state, parent, group, session and start time, whatever the command name holds", () => {
    const line =
      "4242 (my ) (odd) name) S 1 4242 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 12345 67 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    expect(parseProcStat(line)).toEqual({ state: "S", ppid: 1, pgrp: 4242, session: 4240, startTime: "987654" });
  });

  it("refuses what is not a stat line", () => {
    expect(parseProcStat("")).toBeUndefined();
    expect(parseProcStat("12 (short) S 1 2 3")).toBeUndefined();
  });
});

describe("environHasToken", () => {
  const block = (...entries: string[]) => Buffer.from(entries.join("\0") + "\0", "latin1");

  it("finds the token among the variable's space-separated tags", () => {
    expect(environHasToken(block("PATH=/bin", "RUNNER_CONTAINMENT=aaaa bbbb"), "RUNNER_CONTAINMENT", "bbbb")).toBe(true);
    expect(environHasToken(block("RUNNER_CONTAINMENT=aaaa"), "RUNNER_CONTAINMENT", "aaaa")).toBe(true);
  });

  it("does not take the token from another variable or a longer tag", () => {
    expect(environHasToken(block("OTHER=bbbb", "RUNNER_CONTAINMENT=aaaa"), "RUNNER_CONTAINMENT", "bbbb")).toBe(false);
    expect(environHasToken(block("RUNNER_CONTAINMENT=bbbbcc"), "RUNNER_CONTAINMENT", "bbbb")).toBe(false);
    expect(environHasToken(block("X_RUNNER_CONTAINMENT=bbbb"), "RUNNER_CONTAINMENT", "bbbb")).toBe(false);
    expect(environHasToken(Buffer.alloc(0), "RUNNER_CONTAINMENT", "bbbb")).toBe(false);
    expect(environHasToken(block("RUNNER_CONTAINMENT="), "RUNNER_CONTAINMENT", "")).toBe(false);
  });
});

describe("withToken", () => {
  it("appends to the tags of an enclosing run, once", () => {
    expect(withToken(undefined, "bbbb")).toBe("bbbb");
    expect(withToken("aaaa", "bbbb")).toBe("aaaa bbbb");
    expect(withToken(" aaaa  bbbb ", "bbbb")).toBe("aaaa bbbb");
  });
});

describe("cgroup2Dir", () => {
  const unified = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  const hybrid =
    "35 25 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

  it("joins the cgroup2 mount and the process's path", () => {
    expect(cgroup2Dir("0::/user.slice/user-1000.slice/session-3.scope\n", unified)).toBe("/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope");
    expect(cgroup2Dir("4:memory:/x\n0::/\n", hybrid)).toBe("/sys/fs/cgroup/unified");
  });

  it("takes a mount of a subtree into account and decodes escaped mount points", () => {
    const sub = "50 23 0:26 /delegated /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw\n";
    expect(cgroup2Dir("0::/delegated/job\n", sub)).toBe("/mnt/my cgroups/job");
    expect(cgroup2Dir("0::/elsewhere\n", sub)).toBeUndefined();
  });

  it("is undefined without a cgroup2 line or mount", () => {
    expect(cgroup2Dir("4:memory:/x\n", hybrid)).toBeUndefined();
    expect(cgroup2Dir("0::/\n", "35 25 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n")).toBeUndefined();
  });
});

// Linux's pid allocator (kernel/pid.c alloc_pid + idr_alloc_cyclic), small enough to wrap in a test.
class PidTable {
  readonly live = new Set<number>();
  cursor = 1;
  forks = 0;
  constructor(readonly pidMax: number) {}
  fork(): number | undefined {
    const min = this.cursor > 300 ? 300 : 1;
    const from = Math.max(this.cursor, min);
    const pid = this.free(from, this.pidMax) ?? (from > min ? this.free(min, this.pidMax) : undefined);
    if (pid === undefined) return undefined; // full
    this.live.add(pid);
    this.cursor = pid + 1;
    this.forks++;
    return pid;
  }
  private free(from: number, to: number): number | undefined {
    for (let pid = from; pid < to; pid++) if (!this.live.has(pid)) return pid;
    return undefined;
  }
  mark(): PidMark {
    return { lastPid: this.cursor - 1, forksBefore: this.forks, forksAfter: this.forks, tasks: this.live.size, pidMax: this.pidMax };
  }
}

describe("bornBetween", () => {
  it("holds every pid given between the two marks, however the counter wrapped, or gives up", () => {
    // An operation: a fork, or (one in three) the exit of the live task it picks.
    const operations = (maxLength: number) => fc.array(fc.nat(), { maxLength });
    fc.assert(
      fc.property(
        fc.integer({ min: 310, max: 900 }),
        fc.integer({ min: 0, max: 900 }),
        operations(1500),
        operations(900),
        (pidMax, alive, before, between) => {
          const table = new PidTable(pidMax);
          const step = (operation: number, born?: number[]) => {
            if (operation % 3 !== 0 || table.live.size === 0) {
              const pid = table.fork();
              if (pid !== undefined) born?.push(pid);
            } else {
              table.live.delete([...table.live][operation % table.live.size]!);
            }
          };
          // Many tasks alive at the first mark (they hold pids the counter skips), then forks and exits mixed.
          for (let n = 0; n < alive; n++) step(1);
          for (const operation of before) step(operation);
          const then = table.mark();
          const born: number[] = [];
          for (const operation of between) step(operation, born);
          const inRange = bornBetween(then, table.mark());
          return inRange === undefined || born.every((pid) => inRange(pid));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("narrows to the pids given since, across a wrap, and leaves older pids out", () => {
    const mark = (lastPid: number, forks: number) => ({ lastPid, forksBefore: forks, forksAfter: forks, tasks: 80, pidMax: 32_768 });
    const plain = bornBetween(mark(1_000, 5_000), mark(1_040, 5_060))!;
    expect([1_001, 1_040].map(plain)).toEqual([true, true]);
    expect([1_000, 1_041, 999, 12].map(plain)).toEqual([false, false, false, false]);
    const wrapped = bornBetween(mark(32_700, 5_000), mark(320, 5_100))!;
    expect([32_701, 32_767, 300, 320].map(wrapped)).toEqual([true, true, true, true]);
    expect([32_700, 321, 5_000].map(wrapped)).toEqual([false, false, false]);
  });

  it("gives up where the counter could have gone once round, or a mark is not a count", () => {
    const then = { lastPid: 1_000, forksBefore: 5_000, forksAfter: 5_002, tasks: 80, pidMax: 32_768 };
    const now = (forksAfter: number) => ({ ...then, forksBefore: forksAfter, forksAfter });
    expect(bornBetween(then, now(5_000 + 32_768 - 80 - 300))).toBeUndefined();
    expect(bornBetween(then, now(5_000 + 32_768 - 80 - 301))).toBeDefined();
    expect(bornBetween(then, now(4_999))).toBeUndefined();
    expect(bornBetween(then, { ...then, lastPid: Number.NaN })).toBeUndefined();
    expect(bornBetween({ ...then, tasks: 40_000 }, then)).toBeUndefined();
  });
});

describe("the counts a pid mark reads", () => {
  it("takes the forks from /proc/stat and the tasks from /proc/loadavg", () => {
    expect(parseForkCount("cpu  1 2 3\nintr 5 6\nctxt 7\nbtime 8\nprocesses 2139187\nprocs_running 1\n")).toBe(2_139_187);
    expect(parseForkCount("cpu 1 2 3\n")).toBeUndefined();
    expect(parseTaskCount("0.42 0.91 1.15 1/82 31561\n")).toBe(82);
    expect(parseTaskCount("0.42 0.91\n")).toBeUndefined();
  });
});
