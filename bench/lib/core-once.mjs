// Child script for the core CPU profile: the core operations of one step on a tree of N nodes.
import { coreScaling } from "../core-scaling.mjs";

await coreScaling([Number(process.argv[2] ?? 100000)], () => 3, { warmups: 1 });
