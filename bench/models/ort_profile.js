// ONNX Runtime's own per-node profile of one model (onnxruntime-node, as ort_time.js runs it):
//   node ort_profile.js MODEL.onnx INPUT_DIR THREADS REPEAT
// Runs the model REPEAT times after ort_time.js's warm-up and check, with ONNX Runtime's profiler
// on, and prints one JSON object: the median run ("run_ms") and, per node of the optimized graph
// (ONNX Runtime's fusions applied: its node names and op types), the mean time per run of its
// kernel over those REPEAT runs ("nodes": [{"name", "op", "ms"}], slowest first).
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { prepare } = require("./ort_time.js");

async function main() {
    const [model, inputDir, threads, repeat] = process.argv.slice(2);
    if (!repeat) {
        console.error("usage: node ort_profile.js MODEL.onnx INPUT_DIR THREADS REPEAT");
        process.exit(2);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ort-profile-"));
    try {
        const { session, feeds } = await prepare(model, inputDir, threads, {
            enableProfiling: true,
            profileFilePrefix: path.join(dir, "profile"),
        });
        for (let i = 0; i < Number(repeat); ++i) await session.run(feeds);
        session.endProfiling();
        const file = fs.readdirSync(dir).find((f) => f.endsWith(".json"));
        if (!file) throw new Error("ONNX Runtime wrote no profile in " + dir);
        const events = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"));
        // The last REPEAT runs (the warm-up and the check ran before them): their windows.
        const runs = events.filter((e) => e.cat === "Session" && e.name === "model_run")
                         .sort((a, b) => a.ts - b.ts)
                         .slice(-Number(repeat));
        const inRun = (e) => runs.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
        const byNode = new Map();
        for (const e of events) {
            if (e.cat !== "Node" || !e.name.endsWith("_kernel_time") || !inRun(e)) continue;
            const name = e.name.slice(0, -"_kernel_time".length);
            const node = byNode.get(name) || { name, op: (e.args && e.args.op_name) || "?", us: 0 };
            node.us += e.dur;
            byNode.set(name, node);
        }
        const nodes = [...byNode.values()]
            .map((n) => ({ name: n.name, op: n.op, ms: n.us / 1000 / runs.length }))
            .sort((a, b) => b.ms - a.ms);
        const durations = runs.map((r) => r.dur / 1000).sort((a, b) => a - b);
        console.log(JSON.stringify({
            run_ms: durations[Math.floor(durations.length / 2)],
            runs: runs.length,
            nodes,
        }));
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

main().catch((e) => {
    console.error(e.message || e);
    process.exit(1);
});
