// Writes ONNX Runtime's output 0 of one model (onnxruntime-node, as ort_time.js sets it up):
//   node ort_output.js MODEL.onnx INPUT_DIR OUT.bin
// OUT.bin: the float32 values, little-endian, in order. The int8 benchmark compares Anvil's
// output with it (int8_compare.py).
"use strict";
const fs = require("fs");
const { prepare } = require("./ort_time.js");

async function main() {
    const [model, inputDir, out] = process.argv.slice(2);
    if (!out) {
        console.error("usage: node ort_output.js MODEL.onnx INPUT_DIR OUT.bin");
        process.exit(2);
    }
    const { session, feeds } = await prepare(model, inputDir, 1);
    const data = (await session.run(feeds))[session.outputNames[0]].data;
    fs.writeFileSync(out, Buffer.from(Float32Array.from(data).buffer));
}

main().catch((e) => {
    console.error(e.message || e);
    process.exit(1);
});
