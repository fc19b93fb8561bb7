// Runs TFLite models with the real TFLite runtime (LiteRT compiled to WebAssembly, npm
// @litertjs/core) for the TFLite importer's tests: node run_litert.mjs MANIFEST.json
//
// The manifest lists runs: {"runs": [{"model": PATH, "inputs": [{"file": PATH, "dtype": "int8",
// "shape": [1, 96, 96, 1]}], "outputs": PREFIX}]}. Each run writes its outputs' raw bytes to
// PREFIX_<k>.bin; the script prints one JSON line: per run, the outputs' dtypes and shapes, or
// the error the runtime raised.
//
// The package's JS API lists float32, int32 and uint8 tensors only, although the runtime runs
// models of other types: the script loads a copy of its module with the other types added to
// that list. It runs the CPU (XNNPACK) path with one thread.
import fs from 'fs';
import path from 'path';
import vm from 'vm';
import {createRequire} from 'module';

const require = createRequire(import.meta.url);
const coreDir = path.dirname(require.resolve('@litertjs/core/package.json'));
const wasmDir = path.join(coreDir, 'wasm');

// The Emscripten loader expects a browser or a worker: give it what it reads.
globalThis.self = globalThis;
globalThis.__dirname = wasmDir;
globalThis.__filename = path.join(wasmDir, 'loader.js');
globalThis.require = require;
globalThis.importScripts = (url) => {
    const file = url.toString().replace(/^file:\/\//, '');
    vm.runInThisContext(fs.readFileSync(file, 'utf8'), {filename: file});
};

const extraTypes = `
  {dtype: "int8", typedArrayConstructor: Int8Array, elementType: ElementType.INT8},
  {dtype: "int16", typedArrayConstructor: Int16Array, elementType: ElementType.INT16},
  {dtype: "int64", typedArrayConstructor: BigInt64Array, elementType: ElementType.INT64},
  {dtype: "uint32", typedArrayConstructor: Uint32Array, elementType: ElementType.UINT32},`;
const marker = 'var DATATYPES = Object.freeze([';
let source = fs.readFileSync(path.join(coreDir, 'dist/index.js'), 'utf8');
if (!source.includes(marker)) throw new Error('@litertjs/core: unexpected dist/index.js');
source = source.replace(marker, marker + extraTypes);
const patched = path.join(coreDir, 'dist/index.anvil-tests.mjs');
fs.writeFileSync(patched, source);
const {loadLiteRt, loadAndCompile, Tensor} = await import(patched);

const arrays = {
    float32: Float32Array, int32: Int32Array, uint8: Uint8Array, int8: Int8Array,
    int16: Int16Array, int64: BigInt64Array, uint32: Uint32Array,
};

// Quiet the runtime's INFO lines on stdout: the result is the only thing printed there.
const log = console.log;
console.log = (...args) => process.stderr.write(args.join(' ') + '\n');
console.info = console.log;
console.warn = console.log;
await loadLiteRt(wasmDir + '/');

const manifest = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const results = [];
for (const run of manifest.runs) {
    try {
        const bytes = new Uint8Array(fs.readFileSync(run.model));
        const model = await loadAndCompile(bytes, {accelerator: 'wasm', cpuOptions: {numThreads: 1}});
        const inputs = run.inputs.map((spec) => {
            const raw = fs.readFileSync(spec.file);
            const Array = arrays[spec.dtype];
            if (!Array) throw new Error(`input dtype ${spec.dtype} is not supported`);
            const data = new Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
            return new Tensor(data, spec.shape);
        });
        const outputs = await model.run(inputs);
        const described = [];
        for (let k = 0; k < outputs.length; ++k) {
            const data = outputs[k].toTypedArray();
            fs.writeFileSync(`${run.outputs}_${k}.bin`, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
            const details = model.getOutputDetails()[k];
            described.push({dtype: details.dtype, shape: Array.from(outputs[k].type.layout.dimensions)});
            outputs[k].delete();
        }
        inputs.forEach((t) => t.delete());
        results.push({outputs: described});
    } catch (e) {
        results.push({error: String(e && e.message ? e.message : e)});
    }
}
log(JSON.stringify(results));
process.exit(0);
