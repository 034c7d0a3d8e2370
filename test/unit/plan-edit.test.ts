// Ids a person's `runner add` derives from a title (src/core/edit/plan-edit.ts).
import { describe, expect, it } from "vitest";
import { idFromTitle } from "../../src/core/edit/plan-edit.js";

describe("idFromTitle", () => {
  it("slugs the title, cuts a long one after its last whole word, and numbers a taken id", () => {
    expect(idFromTitle("Add the login page!", new Set())).toBe("add-the-login-page");
    expect(idFromTitle("Audit and report within 10x node -e 0 at 1,000 iterations", new Set())).toBe("audit-and-report-within-10x-node-e-0-at-1-000");
    expect(idFromTitle("x".repeat(60), new Set())).toBe("x".repeat(48));
    expect(idFromTitle("Add the login page", new Set(["add-the-login-page", "add-the-login-page-2"]))).toBe("add-the-login-page-3");
    expect(idFromTitle("!!!", new Set())).toBe("node");
  });
});
