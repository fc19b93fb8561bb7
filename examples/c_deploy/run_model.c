/* Runs a model compiled by Anvil, from C, with nothing but libanvil_runtime.
 *
 *   run_model model.so [input.raw]
 *
 * Feeds input 0 from a raw little-endian file of exactly its size (zeros without one), runs the
 * model once and prints output 0's shape and its five largest float32 values with their flat
 * indices (for a classifier: the top-5 classes), one "index value" line each. */
#include <anvil/runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                     \
    do {                                                                \
        if ((call) != 0) {                                              \
            fprintf(stderr, "run_model: %s\n", anvil_get_last_error()); \
            return 1;                                                   \
        }                                                               \
    } while (0)

static int64_t tensor_bytes(const DLTensor* t) {
    int64_t n = (t->dtype.bits * t->dtype.lanes + 7) / 8;
    for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
}

static int read_input(const char* path, DLTensor* t) {
    int64_t want = tensor_bytes(t);
    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "run_model: cannot open input '%s'\n", path);
        return 1;
    }
    size_t got = fread(t->data, 1, (size_t)want, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if ((int64_t)got != want || extra) {
        fprintf(stderr, "run_model: input '%s' must hold exactly %lld bytes\n", path,
                (long long)want);
        return 1;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: run_model model.so [input.raw]\n");
        return 2;
    }
    AnvilGraphExecutorHandle ex = NULL;
    CHECK(anvil_graph_executor_create_from_file(argv[1], &ex));

    const char* name = NULL;
    int ndim = 0;
    const int64_t* shape = NULL;
    DLDataType dtype;
    CHECK(anvil_graph_executor_get_input_info(ex, 0, &name, &ndim, &shape, &dtype));
    DLTensor* input = NULL;
    DLDevice cpu = {kDLCPU, 0};
    CHECK(anvil_tensor_alloc(shape, ndim, dtype, cpu, &input));
    memset(input->data, 0, (size_t)tensor_bytes(input));
    if (argc == 3 && read_input(argv[2], input) != 0) return 1;
    CHECK(anvil_graph_executor_set_input(ex, name, input));
    CHECK(anvil_graph_executor_run(ex));

    DLTensor* out = NULL;
    CHECK(anvil_graph_executor_get_output(ex, 0, &out));
    printf("output 0 shape [");
    for (int i = 0; i < out->ndim; ++i) printf(i ? ", %lld" : "%lld", (long long)out->shape[i]);
    printf("]\n");
    if (out->dtype.code != kDLFloat || out->dtype.bits != 32 || out->dtype.lanes != 1) {
        fprintf(stderr, "run_model: output 0 is not float32\n");
        return 1;
    }
    int64_t count = tensor_bytes(out) / 4;
    const float* values = (const float*)((const char*)out->data + out->byte_offset);
    int64_t top[5];
    int k = count < 5 ? (int)count : 5;
    for (int r = 0; r < k; ++r) { /* selection of the k largest, ties to the lower index */
        int64_t best = -1;
        for (int64_t i = 0; i < count; ++i) {
            int taken = 0;
            for (int q = 0; q < r; ++q) taken |= top[q] == i;
            if (!taken && (best < 0 || values[i] > values[best])) best = i;
        }
        top[r] = best;
        printf("%lld %g\n", (long long)best, values[best]);
    }
    int64_t planned = 0, unshared = 0;
    CHECK(anvil_graph_executor_get_memory(ex, &planned, &unshared, NULL));
    printf("memory planned %lld bytes, unshared %lld bytes\n", (long long)planned,
           (long long)unshared);
    anvil_tensor_free(input);
    anvil_graph_executor_free(ex);
    return 0;
}
