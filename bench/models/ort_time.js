// Times ONNX Runtime (onnxruntime-node, pinned in package.json) on one ONNX model:
//   node ort_time.js MODEL.onnx INPUT_DIR THREADS REPEAT
// INPUT_DIR holds input_K.pb (ONNX TensorProto, as in the model zoo's test_data_set_0).
// Prints one line: `ort median_ms=M min_ms=M runs=N` (after 3 warm-up runs and a check of output
// 0 against INPUT_DIR/output_0.pb, rtol 1e-3 atol 1e-4, when the file is there).
"use strict";
const fs = require("fs");
const path = require("path");
const ort = require("onnxruntime-node");

// The fields of a TensorProto this needs: dims (1), data_type (2), name (8), raw_data (9),
// float_data (4), int32_data (5), int64_data (7). Enough of the protobuf wire format to read them.
// Element types: float32, int32 and int64 (token ids).
function readTensor(buf) {
    let pos = 0;
    const varint = () => {
        let v = 0n, shift = 0n;
        for (;;) {
            const b = buf[pos++];
            v |= BigInt(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
            shift += 7n;
        }
    };
    const t = { dims: [], dataType: 1, name: "", raw: null, floats: [], ints: [] };
    while (pos < buf.length) {
        const key = Number(varint());
        const field = key >> 3, wire = key & 7;
        if (wire === 0) {
            const v = varint();
            if (field === 1) t.dims.push(Number(v));
            if (field === 2) t.dataType = Number(v);
            if (field === 5 || field === 7) t.ints.push(BigInt.asIntN(64, v));
        } else if (wire === 2) {
            const len = Number(varint());
            const body = buf.subarray(pos, pos + len);
            pos += len;
            if (field === 1 || field === 5 || field === 7) {  // packed dims, int32s or int64s
                const save = [buf, pos];
                buf = body; pos = 0;
                while (pos < buf.length) {
                    const v = varint();
                    if (field === 1) t.dims.push(Number(v));
                    else t.ints.push(BigInt.asIntN(64, v));
                }
                [buf, pos] = save;
            } else if (field === 8) {
                t.name = body.toString("utf8");
            } else if (field === 9) {
                t.raw = body;
            } else if (field === 4) {
                for (let i = 0; i + 4 <= body.length; i += 4) t.floats.push(body.readFloatLE(i));
            }
        } else if (wire === 5) {
            if (field === 4) t.floats.push(buf.readFloatLE(pos));
            pos += 4;
        } else if (wire === 1) {
            pos += 8;
        } else {
            throw new Error("unsupported protobuf wire type " + wire);
        }
    }
    let data, type;
    if (t.dataType === 1) {
        type = "float32";
        if (t.raw) {
            data = new Float32Array(t.raw.length / 4);
            for (let i = 0; i < data.length; ++i) data[i] = t.raw.readFloatLE(i * 4);
        } else {
            data = Float32Array.from(t.floats);
        }
    } else if (t.dataType === 6) {
        type = "int32";
        if (t.raw) {
            data = new Int32Array(t.raw.length / 4);
            for (let i = 0; i < data.length; ++i) data[i] = t.raw.readInt32LE(i * 4);
        } else {
            data = Int32Array.from(t.ints, Number);
        }
    } else if (t.dataType === 7) {
        type = "int64";
        if (t.raw) {
            data = new BigInt64Array(t.raw.length / 8);
            for (let i = 0; i < data.length; ++i) data[i] = t.raw.readBigInt64LE(i * 8);
        } else {
            data = BigInt64Array.from(t.ints);
        }
    } else {
        throw new Error("input data type " + t.dataType + " is not supported " +
                        "(float32, int32, int64 are)");
    }
    return { name: t.name, tensor: new ort.Tensor(type, data, t.dims) };
}

// A session with the settings every benchmark uses (extra: more session options, such as
// profiling), the inputs of INPUT_DIR as its feeds, after 3 warm-up runs and the check of output
// 0 against INPUT_DIR/output_0.pb (rtol 1e-3 atol 1e-4) when the file is there.
async function prepare(model, inputDir, threads, extra = {}) {
    const session = await ort.InferenceSession.create(model, {
        intraOpNumThreads: Number(threads),
        interOpNumThreads: 1,
        executionMode: "sequential",
        graphOptimizationLevel: "all",
        ...extra,
    });
    const feeds = {};
    const files = fs.readdirSync(inputDir).filter((f) => /^input_\d+\.pb$/.test(f)).sort();
    files.forEach((f, k) => {
        const t = readTensor(fs.readFileSync(path.join(inputDir, f)));
        feeds[t.name || session.inputNames[k]] = t.tensor;
    });
    for (let i = 0; i < 3; ++i) await session.run(feeds);
    const refPath = path.join(inputDir, "output_0.pb");
    if (fs.existsSync(refPath)) {
        const ref = readTensor(fs.readFileSync(refPath)).tensor.data;
        const got = (await session.run(feeds))[session.outputNames[0]].data;
        let bad = got.length !== ref.length;
        for (let i = 0; !bad && i < ref.length; ++i) {
            bad = !(Math.abs(got[i] - ref[i]) <= 1e-4 + 1e-3 * Math.abs(ref[i]));
        }
        if (bad) throw new Error("ONNX Runtime's output 0 differs from " + refPath);
    }
    return { session, feeds };
}

async function main() {
    const [model, inputDir, threads, repeat] = process.argv.slice(2);
    if (!repeat) {
        console.error("usage: node ort_time.js MODEL.onnx INPUT_DIR THREADS REPEAT");
        process.exit(2);
    }
    const { session, feeds } = await prepare(model, inputDir, threads);
    const times = [];
    for (let i = 0; i < Number(repeat); ++i) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(`ort median_ms=${median.toFixed(3)} min_ms=${times[0].toFixed(3)} runs=${times.length}`);
}

module.exports = { prepare, readTensor };

if (require.main === module) {
    main().catch((e) => {
        console.error(e.message || e);
        process.exit(1);
    });
}
