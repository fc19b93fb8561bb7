// Fuzz harness: NumPy .npz archives and .npy documents (anvil run --inputs, --params). Seeds:
// .npz files the harness writes itself with every dtype the reader knows.
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "fuzz_target.h"
#include "runtime/npz.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    using namespace anvil::runtime;
    std::vector<std::pair<std::string, NDArray>> arrays;
    int k = 0;
    for (DLDataType t : {DLDataType{kDLFloat, 32, 1}, DLDataType{kDLInt, 64, 1},
                         DLDataType{kDLUInt, 8, 1}, DLDataType{kDLFloat, 16, 1}}) {
        NDArray a = NDArray::empty({2, 3}, t);
        std::memset(a.raw_data(), 0x11 * (k + 1), a.nbytes());
        arrays.emplace_back("a" + std::to_string(k++), a);
    }
    const std::string path = "/tmp/anvil_fuzz_npz_seed_" + std::to_string(::getpid()) + ".npz";
    write_npz(path, arrays);
    std::ifstream in(path, std::ios::binary);
    std::string zip((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(path.c_str());
    anvil::fuzz::write_seeds_if_asked({zip, format_npy(arrays[0].second)});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    std::string bytes(fuzz::as_text(data, size));
    fuzz::expect_only_user_errors([&] { runtime::read_npz_bytes(bytes, "'fuzz.npz'"); });
    fuzz::expect_only_user_errors([&] { runtime::parse_npy(bytes, "'fuzz.npy'"); });
    return 0;
}
