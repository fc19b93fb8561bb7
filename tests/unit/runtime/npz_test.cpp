#include "runtime/npz.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "require_package.h"
#include "runtime/string_tensor.h"
#include "support/error.h"

namespace anvil::runtime {
namespace {

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / (std::to_string(getpid()) + "_" + name))
        .string();
}

TEST(Npz, RoundTripsEveryDtype) {
    std::vector<std::pair<std::string, NDArray>> arrays;
    for (const char* t : {"float32", "float64", "int64", "int32", "uint8", "int8", "float16"}) {
        NDArray a = NDArray::empty({2, 3}, dl_dtype_from_string(t));
        auto* bytes = static_cast<uint8_t*>(a.raw_data());
        for (size_t i = 0; i < a.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
        arrays.emplace_back(t, a);
    }
    arrays.emplace_back("scalar", NDArray::empty({}, dl_dtype_from_string("float32")));
    arrays.emplace_back("vector", NDArray::empty({5}, dl_dtype_from_string("int64")));
    std::string path = temp_path("a.npz");
    write_npz(path, arrays);
    auto back = read_npz(path);
    ASSERT_EQ(back.size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
        EXPECT_EQ(back[i].first, arrays[i].first);
        EXPECT_EQ(back[i].second.str(), arrays[i].second.str());
        EXPECT_EQ(std::memcmp(back[i].second.raw_data(), arrays[i].second.raw_data(),
                              arrays[i].second.nbytes()),
                  0);
    }
    std::filesystem::remove(path);
}

// Files written by NumPy itself (stored and deflated), when Debian's python3-numpy is present.
TEST(Npz, ReadsWhatNumpyWrites) {
    ANVIL_REQUIRE_PACKAGE(std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0,
                          "NumPy for /usr/bin/python3", "apt-get install python3-numpy");
    std::string plain = temp_path("np.npz"), packed = temp_path("npc.npz");
    std::string script =
        "/usr/bin/python3 -c \"import numpy as np; a = np.arange(12, dtype=np.float32).reshape(3, "
        "4); "
        "b = np.array([True, False, True]); np.savez('" +
        plain +
        "', a=a, b=b); "
        "np.savez_compressed('" +
        packed + "', a=a, b=b)\"";
    ASSERT_EQ(std::system(script.c_str()), 0);
    for (const auto& path : {plain, packed}) {
        auto arrays = read_npz(path);
        ASSERT_EQ(arrays.size(), 2u) << path;
        EXPECT_EQ(arrays[0].first, "a");
        EXPECT_EQ(arrays[0].second.str(), "float32[3, 4]");
        EXPECT_EQ(arrays[0].second.data<float>()[11], 11.0f);
        EXPECT_EQ(arrays[1].second.num_elements(), 3);
        std::filesystem::remove(path);
    }
}

// String tensors are NumPy unicode ('<U') arrays both ways, and NumPy reads what is written.
TEST(Npz, StringTensorsAreNumpyUnicodeArrays) {
    NDArray words = make_string_tensor({2, 2}, {"a", "", "Straße", "東京🙂"});
    std::string path = temp_path("s.npz");
    write_npz(path, {{"words", words}});
    auto back = read_npz(path);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].second.str(), "string[2, 2]");
    std::vector<std::string_view> v = string_values(back[0].second, "words");
    EXPECT_EQ(std::vector<std::string>(v.begin(), v.end()),
              (std::vector<std::string>{"a", "", "Straße", "東京🙂"}));
    // NumPy reads what was written, and writes what is read.
    ANVIL_REQUIRE_PACKAGE(std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0,
                          "NumPy for /usr/bin/python3", "apt-get install python3-numpy");
    {
        std::string check = "/usr/bin/python3 -c \"import numpy as np; w = np.load('" + path +
                            "')['words']; assert w.dtype == np.dtype('<U6'), w.dtype; "
                            "assert w[1, 1] == '\u6771\u4eac\U0001F642', w; "
                            "np.savez('" +
                            path + "', w=np.array(['xyz', 'q']))\"";
        ASSERT_EQ(std::system(check.c_str()), 0);
        back = read_npz(path);
        v = string_values(back[0].second, "w");
        EXPECT_EQ(std::vector<std::string>(v.begin(), v.end()),
                  (std::vector<std::string>{"xyz", "q"}));
    }
    std::filesystem::remove(path);
    EXPECT_THROW(write_npz(path, {{"bad", make_string_tensor({1}, {"\xff"})}}), UserError);
}

TEST(Npz, ErrorsNameTheFile) {
    std::string path = temp_path("bad.npz");
    std::ofstream(path) << "not a zip";
    try {
        read_npz(path);
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.npz' is not an .npz"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW(read_npz(temp_path("missing.npz")), UserError);
    std::filesystem::remove(path);
}

// A .npy document: magic, version 1.0, the header padded to 16 bytes, then `data`.
std::string npy(std::string header, const std::string& data = "") {
    header += std::string((16 - (10 + header.size() + 1) % 16) % 16, ' ') + "\n";
    std::string out = std::string("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(header.size() & 0xFF);
    out += static_cast<char>(header.size() >> 8);
    return out + header + data;
}

std::string npy_error(const std::string& bytes) {
    try {
        parse_npy(bytes, "'x.npy'");
    } catch (const UserError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
}

// Headers that lie about their data: each a UserError, checked before anything is allocated
// (the fuzz harness tests/fuzz/targets/npz_fuzz.cpp found the width-0 case).
TEST(Npz, HostileHeadersAreErrorsNotAllocations) {
    auto header = [](const std::string& descr, const std::string& shape) {
        return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    };
    EXPECT_NE(npy_error(npy(header("<f4", "(-1, 3)"))).find("bad .npy dimension '-1'"),
              std::string::npos);
    EXPECT_NE(
        npy_error(npy(header("<f4", "(4294967296, 4294967296, 16)"))).find("has too many elements"),
        std::string::npos);
    EXPECT_NE(npy_error(npy(header("<f4", "(1000000000000,)"), "abcd")).find("truncated .npy data"),
              std::string::npos);
    EXPECT_NE(npy_error(npy(header("<U0", "(4333333333333333, 38)"))).find("'<U0' array"),
              std::string::npos);
    EXPECT_NE(npy_error(npy(header("<U4", "(1000000,)"), "abcd")).find("truncated .npy data"),
              std::string::npos);
    EXPECT_NE(npy_error(npy("{'descr': '<f4', 'shape': (3,)")).find("no 'fortran_order'"),
              std::string::npos);
    EXPECT_NE(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3")).find("shape"),
              std::string::npos);
    std::string cut = npy(header("<f4", "(2,)"), "12345678");
    EXPECT_NE(npy_error(cut.substr(0, 20)).find("truncated .npy header"), std::string::npos);
    EXPECT_EQ(parse_npy(cut, "'x.npy'").shape().size(), 1u);  // the honest one reads
}

}  // namespace
}  // namespace anvil::runtime
