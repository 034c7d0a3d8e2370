// The /proc texts containment reads, taken apart: stat lines, environment blocks, cgroup paths.
import { describe, expect, it } from "vitest";
import { cgroup2Dir, environHasToken, parseProcStat, withToken } from "../../src/core/process/proc-text.js";

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
