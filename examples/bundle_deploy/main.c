/* A program with a model bundled into it (anvil compile --bundle): no model file, no
 * libanvil_runtime.so, nothing loaded at run time.
 *
 *   anvil compile mobilenet_v2.onnx --bundle -o model.a
 *   cc -O2 -I include examples/bundle_deploy/main.c model.a -lstdc++ -lm -lz -lpthread -o classify
 *   ./classify [input.raw]
 *
 * The descriptor is anvil_bundle_<name of the .a>; compile with -DANVIL_BUNDLE=anvil_bundle_xyz
 * for another name. Feeds input 0 from a raw little-endian file of exactly its size (zeros without
 * one), runs the model once, and prints output 0's five largest float32 values with their flat
 * indices (for a classifier: the top-5 classes), one "index value" line each. */
#include <anvil/runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ANVIL_BUNDLE
#define ANVIL_BUNDLE anvil_bundle_model
#endif
extern const AnvilBundle ANVIL_BUNDLE;

#define CHECK(call)                                                    \
    do {                                                               \
        if ((call) != 0) {                                             \
            fprintf(stderr, "classify: %s\n", anvil_get_last_error()); \
            return 1;                                                  \
        }                                                              \
    } while (0)

static int64_t tensor_bytes(int ndim, const int64_t* shape, DLDataType dtype) {
    int64_t n = (dtype.bits * dtype.lanes + 7) / 8;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
}

int main(int argc, char** argv) {
    AnvilGraphExecutorHandle ex;
    CHECK(anvil_graph_executor_create_from_bundle(&ANVIL_BUNDLE, &ex));

    int ndim;
    const int64_t* shape;
    DLDataType dtype;
    CHECK(anvil_graph_executor_get_input_info(ex, 0, NULL, &ndim, &shape, &dtype));
    DLTensor* input;
    CHECK(anvil_tensor_alloc(shape, ndim, dtype, (DLDevice){kDLCPU, 0}, &input));
    int64_t bytes = tensor_bytes(ndim, shape, dtype);
    memset(input->data, 0, (size_t)bytes);
    if (argc > 1) {
        FILE* f = fopen(argv[1], "rb");
        if (f == NULL) {
            fprintf(stderr, "classify: cannot open input '%s'\n", argv[1]);
            return 1;
        }
        size_t got = fread(input->data, 1, (size_t)bytes, f);
        int extra = fgetc(f) != EOF;
        fclose(f);
        if ((int64_t)got != bytes || extra) {
            fprintf(stderr, "classify: input '%s' must hold exactly %lld bytes\n", argv[1],
                    (long long)bytes);
            return 1;
        }
    }
    CHECK(anvil_graph_executor_set_input_index(ex, 0, input));
    CHECK(anvil_graph_executor_run(ex));

    DLTensor* out;
    CHECK(anvil_graph_executor_get_output(ex, 0, &out));
    if (out->dtype.code != kDLFloat || out->dtype.bits != 32) {
        fprintf(stderr, "classify: output 0 is not float32\n");
        return 1;
    }
    int64_t n = tensor_bytes(out->ndim, out->shape, out->dtype) / 4;
    const float* v = (const float*)out->data;
    int top[5];
    int k = n < 5 ? (int)n : 5;
    for (int i = 0; i < k; ++i) {
        int best = -1;
        for (int64_t j = 0; j < n; ++j) {
            int taken = 0;
            for (int t = 0; t < i; ++t) taken |= top[t] == j;
            if (!taken && (best < 0 || v[j] > v[best])) best = (int)j;
        }
        top[i] = best;
        printf("%d %.6g\n", best, v[best]);
    }
    anvil_tensor_free(input);
    CHECK(anvil_graph_executor_free(ex));
    return 0;
}
