/* Anvil runtime C API.
 *
 * This is the only interface between compiled kernels, the runtime library and host programs.
 * Nothing here throws: every function returns 0 on success and -1 on failure, and on failure
 * anvil_get_last_error() returns a message for the calling thread.
 *
 * Calling convention of every callable (generated kernels, registered functions):
 *
 *   int fn(const AnvilValue* args, const int* type_codes, int num_args,
 *          AnvilValue* ret, int* ret_type_code, void* resource);
 *
 * A kernel compiled from a PrimFunc takes one DLTensor* (type code kAnvilDLTensor) per buffer
 * parameter, in order, then its scalar parameters; it checks their number, dtypes and shapes and
 * fails with a message naming the function and the argument.
 */
#ifndef ANVIL_RUNTIME_H_
#define ANVIL_RUNTIME_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ANVIL_API __attribute__((visibility("default")))

/* Tensors handed to the runtime are aligned to this many bytes. */
#define ANVIL_TENSOR_ALIGNMENT 64

/* String tensors (ONNX STRING) have the dtype {ANVIL_DTYPE_STRING_CODE, 128, 1}: each element is
 * an AnvilString, UTF-8 bytes (not NUL-terminated) that the tensor's owner keeps alive. Kernels
 * never take them; the virtual machine's string instructions make and read them. */
#define ANVIL_DTYPE_STRING_CODE 128
typedef struct {
    const char* data;
    int64_t size;
} AnvilString;

typedef union {
    int64_t v_int64;
    double v_float64;
    void* v_handle;
    const char* v_str;
} AnvilValue;

typedef enum {
    kAnvilInt = 0,
    kAnvilFloat = 2,
    kAnvilHandle = 3,
    kAnvilNull = 4,
    kAnvilDLTensor = 7,
    kAnvilFunction = 10,
    kAnvilStr = 11,
} AnvilTypeCode;

typedef int (*AnvilPackedCFunc)(const AnvilValue* args, const int* type_codes, int num_args,
                                AnvilValue* ret, int* ret_type_code, void* resource);

/* Ownership across a call: arguments are borrowed for the duration of the call. A returned
 * kAnvilStr stays valid until the callee's thread returns another string through the runtime; a
 * returned kAnvilFunction handle carries one reference, which the caller releases with
 * anvil_func_free. A returned kAnvilDLTensor is borrowed. */

/* ---- errors ---------------------------------------------------------------------------- */
ANVIL_API void anvil_set_last_error(const char* message);
ANVIL_API const char* anvil_get_last_error(void);

/* ---- thread pool ------------------------------------------------------------------------
 * A persistent pool of ANVIL_NUM_THREADS workers (default: the number of cores). The lambda is
 * called once for each task_id in [0, num_tasks), possibly concurrently, and must return 0
 * (non-zero reports failure). num_tasks <= 0 means one task per thread. The call returns when
 * all tasks have finished; nested launches run serially on the calling thread. */
typedef int (*AnvilParallelLambda)(int task_id, int num_tasks, void* closure);
/* Tasks are claimed dynamically: task_id says which part of the work to do, not which thread runs
 * it. A task reports failure by setting the last error (in the thread that runs it) and returning
 * non-zero; the launch then returns -1 with that message as the caller's last error, and tasks not
 * yet started are skipped. While another host thread's launch holds the pool, a launch runs
 * serially on its calling thread. */
ANVIL_API int anvil_parallel_launch(AnvilParallelLambda lambda, void* closure, int num_tasks);
ANVIL_API int anvil_num_threads(void);
/* Changes the number of threads of the pool (0 = default); mainly for benchmarks. */
ANVIL_API int anvil_set_num_threads(int num_threads);

/* ---- workspace memory for kernels ------------------------------------------------------- */
/* ANVIL_TENSOR_ALIGNMENT-aligned; NULL (with the last error set) on failure. */
ANVIL_API void* anvil_workspace_alloc(int64_t nbytes);
ANVIL_API void anvil_workspace_free(void* ptr);

/* ---- AMX ---------------------------------------------------------------------------------
 * Asks Linux once per process for the AMX tile state that kernels with AMX tile products use;
 * 0 when granted, else -1 with the last error set. Generated kernels call it themselves. */
ANVIL_API int anvil_request_amx(void);

/* ---- tensors ------------------------------------------------------------------------------
 * anvil_tensor_alloc makes a dense row-major tensor with 64-byte aligned data on the CPU. */
/* The allocation owns the shape array (strides are NULL: compact row-major). An element takes
 * (bits * lanes + 7) / 8 bytes, so bool tensors ({kDLUInt, 1, 1}) hold one byte per element.
 * anvil_tensor_free accepts only tensors from anvil_tensor_alloc (and NULL). */
ANVIL_API int anvil_tensor_alloc(const int64_t* shape, int ndim, DLDataType dtype, DLDevice device,
                                 DLTensor** out);
ANVIL_API int anvil_tensor_free(DLTensor* tensor);

/* ---- functions ----------------------------------------------------------------------------- */
typedef struct AnvilFunctionObj* AnvilFunctionHandle;
/* Registers a global function; fails if the name exists and override is 0. */
ANVIL_API int anvil_func_register(const char* name, AnvilPackedCFunc fn, void* resource,
                                  int override);
/* Looks up a global function; *out is NULL when there is none. Free with anvil_func_free. */
ANVIL_API int anvil_func_get_global(const char* name, AnvilFunctionHandle* out);
ANVIL_API int anvil_func_call(AnvilFunctionHandle fn, const AnvilValue* args, const int* type_codes,
                              int num_args, AnvilValue* ret, int* ret_type_code);
ANVIL_API int anvil_func_free(AnvilFunctionHandle fn);

/* ---- modules --------------------------------------------------------------------------------
 * A module is a shared library produced by Anvil's export. */
typedef struct AnvilModuleObj* AnvilModuleHandle;
ANVIL_API int anvil_module_load(const char* path, AnvilModuleHandle* out);
/* *out is NULL when the module has no such function. */
ANVIL_API int anvil_module_get_function(AnvilModuleHandle module, const char* name,
                                        AnvilFunctionHandle* out);
ANVIL_API int anvil_module_free(AnvilModuleHandle module);

/* Symbol every exported module defines: the names of its functions, each NUL-terminated, the list
 * ended by an empty name. */
#define ANVIL_MODULE_FUNCTION_LIST_SYMBOL "__anvil_function_names"
/* void (void), defined by a module whose kernels call registered functions: drops the references
 * to those functions that the kernels cached. Called by whoever unloads the module, once no
 * kernel of it runs (a later call looks the functions up again). */
#define ANVIL_MODULE_RELEASE_SYMBOL "__anvil_release_packed_functions"

/* ---- graph executor ---------------------------------------------------------------------------
 * Runs a compiled model: one shared library holding the kernels, the execution plan and the
 * parameters. A data blob NAME in a module comes with a uint64_t NAME ANVIL_BLOB_SIZE_SUFFIX
 * holding its size; the bytes are 64-byte aligned and followed by one NUL byte. */
#define ANVIL_GRAPH_PLAN_SYMBOL "__anvil_graph_plan"
#define ANVIL_GRAPH_PARAMS_SYMBOL "__anvil_graph_params"
#define ANVIL_BLOB_SIZE_SUFFIX "_size"
/* The external code generators' modules of a model library (BYOC): a text blob of lines
 * "<compiler> <blob symbol>", each blob the bytes that compiler's runtime library
 * (libanvil_runtime_<compiler>.so) makes its module of. */
#define ANVIL_EXTERNAL_MODULES_SYMBOL "__anvil_external_modules"
/* A model that needs the virtual machine (run-time shapes, control flow) holds its program here
 * instead of a graph plan; its params use ANVIL_GRAPH_PARAMS_SYMBOL too. */
#define ANVIL_VM_PROGRAM_SYMBOL "__anvil_vm_program"

typedef struct AnvilGraphExecutorObj* AnvilGraphExecutorHandle;
/* Threads: anvil_graph_executor_run_with may be called from any number of threads at once on one
 * executor (each call runs in a workspace of its own; the weights are shared). The stateful calls
 * (set_input, run, get_output, copy_output, the profile) serve one thread at a time: used from
 * several threads they fail with a message (another thread inside a call, an input last set by
 * another thread, an output of another thread's run) instead of mixing up inputs and outputs.
 * Executors loaded from one file share its weights (read in place from the loaded library). */
/* Loads a model library (anvil compile's output) and allocates its buffers once. */
ANVIL_API int anvil_graph_executor_create_from_file(const char* path,
                                                    AnvilGraphExecutorHandle* out);
/* From a plan (JSON, see src/runtime/graph_plan.h), a parameter blob (copied) and a module holding
 * the kernels (borrowed; the executor keeps its own reference). */
ANVIL_API int anvil_graph_executor_create(const char* plan_json, const void* params,
                                          size_t params_size, AnvilModuleHandle module,
                                          AnvilGraphExecutorHandle* out);
ANVIL_API int anvil_graph_executor_free(AnvilGraphExecutorHandle executor);
ANVIL_API int anvil_graph_executor_get_num_inputs(AnvilGraphExecutorHandle executor, int* out);
ANVIL_API int anvil_graph_executor_get_num_outputs(AnvilGraphExecutorHandle executor, int* out);
/* Name, rank, shape and dtype of an input/output; any out pointer may be NULL. The name and shape
 * stay valid until the executor is freed. */
ANVIL_API int anvil_graph_executor_get_input_info(AnvilGraphExecutorHandle executor, int index,
                                                  const char** name, int* ndim,
                                                  const int64_t** shape, DLDataType* dtype);
ANVIL_API int anvil_graph_executor_get_output_info(AnvilGraphExecutorHandle executor, int index,
                                                   const char** name, int* ndim,
                                                   const int64_t** shape, DLDataType* dtype);
/* Copies `value` (a CPU tensor of exactly the input's shape and dtype, compact row-major, any
 * alignment) into the input. */
ANVIL_API int anvil_graph_executor_set_input(AnvilGraphExecutorHandle executor, const char* name,
                                             const DLTensor* value);
ANVIL_API int anvil_graph_executor_set_input_index(AnvilGraphExecutorHandle executor, int index,
                                                   const DLTensor* value);
/* Runs every kernel; on failure the last error names the node, the kernel and its message. */
ANVIL_API int anvil_graph_executor_run(AnvilGraphExecutorHandle executor);
/* Runs the model on `inputs` (num_inputs tensors, in input order) and copies its outputs into
 * `outputs` (num_outputs caller-allocated tensors, in output order); thread-safe (see above).
 * Every tensor must be a CPU tensor of exactly the input's / output's shape and dtype with compact
 * row-major data (strides NULL or row-major); any alignment is accepted. On failure the last error
 * names the input or output (index and name) and what was expected and given. */
ANVIL_API int anvil_graph_executor_run_with(AnvilGraphExecutorHandle executor,
                                            const DLTensor* const* inputs, int num_inputs,
                                            DLTensor* const* outputs, int num_outputs);
/* *out borrows the executor's output buffer: valid until the executor is freed, overwritten by
 * every run. */
ANVIL_API int anvil_graph_executor_get_output(AnvilGraphExecutorHandle executor, int index,
                                              DLTensor** out);
/* Copies output `index` into `dst` (same shape and dtype, CPU, compact). */
ANVIL_API int anvil_graph_executor_copy_output(AnvilGraphExecutorHandle executor, int index,
                                               DLTensor* dst);
/* Profiling: run() with every kernel call timed, the times added up until reset. The report is
 * the per-kernel table of `anvil run --profile` (src/runtime/kernel_profile.h); *text stays valid
 * until the next get_profile or the executor is freed. */
ANVIL_API int anvil_graph_executor_run_profiled(AnvilGraphExecutorHandle executor);
ANVIL_API int anvil_graph_executor_get_profile(AnvilGraphExecutorHandle executor,
                                               const char** text);
ANVIL_API int anvil_graph_executor_reset_profile(AnvilGraphExecutorHandle executor);
/* Activation memory after sharing, one buffer per tensor, and the parameters; any may be NULL. */
ANVIL_API int anvil_graph_executor_get_memory(AnvilGraphExecutorHandle executor,
                                              int64_t* planned_bytes, int64_t* unshared_bytes,
                                              int64_t* param_bytes);

/* ---- bundled models ---------------------------------------------------------------------------
 * `anvil compile --bundle -o model.a` writes one static library holding the runtime, the kernels,
 * the plan and the parameters; a program links it (cc main.c model.a -lstdc++ -lm -lz -lpthread)
 * and makes the executor from the bundle's descriptor, `anvil_bundle_<name>` (<name>: the output
 * file's name without its extension, as a C identifier: model.a -> anvil_bundle_model). Nothing is
 * loaded at run time, and the parameters are read in place. */
typedef struct {
    const char* name;
    AnvilPackedCFunc function;
} AnvilBundleFunction;

#define ANVIL_BUNDLE_VERSION 1
typedef struct {
    uint32_t version; /* ANVIL_BUNDLE_VERSION */
    uint32_t size;    /* sizeof(AnvilBundle): what the bundle was made with */
    const AnvilBundleFunction* functions;
    uint64_t num_functions;
    const char* plan_json;
    uint64_t plan_size;
    const void* params; /* ANVIL_TENSOR_ALIGNMENT-aligned */
    uint64_t params_size;
    void (*release_packed_functions)(void); /* may be NULL */
} AnvilBundle;

/* An executor for a bundled model (see above); `bundle` must outlive it. */
ANVIL_API int anvil_graph_executor_create_from_bundle(const AnvilBundle* bundle,
                                                      AnvilGraphExecutorHandle* out);

#ifdef __cplusplus
}
#endif

#endif /* ANVIL_RUNTIME_H_ */
