// Fuzz harness: tuning records files (anvil compile --tuning-records, the tuning cache, a resumed
// `anvil tune`). Every line goes through record_from_line, which must never throw: a bad line is
// a nullopt with a reason. A line that reads as a record prints to a line that reads back and
// prints the same again. The bytes are also read as a file by load_records, which must give one
// record or one warning per non-blank line. Seeds: records the harness writes itself, good and
// failed ones.
#include <unistd.h>

#include <fstream>

#include "fuzz_target.h"
#include "tune/record.h"

namespace {

std::string g_path;

[[noreturn]] void fail(const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz: %s\n%s\n", what, detail.c_str());
    std::abort();
}

std::optional<anvil::tune::TuningRecord> read_line(const std::string& line) {
    try {
        return anvil::tune::record_from_line(line);
    } catch (const std::exception& e) {
        fail("record_from_line threw", std::string(e.what()) + "\non: " + line);
    } catch (...) {
        fail("record_from_line threw an unknown exception on:", line);
    }
}

bool is_blank(const std::string& line) {
    return line.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    using namespace anvil;
    g_path = "/tmp/anvil_fuzz_tuning_records_" + std::to_string(::getpid()) + ".jsonl";
    tune::TuningRecord ok;
    ok.workload = "conv2d(f32[1,64,56,56],f32[64,64,3,3];stride=1;pad=1)";
    ok.target = "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4";
    ok.config = {{"tile_oc", 2}, {"tile_ow", 7}, {"unroll", 1}};
    ok.schedule = {
        te::Primitive{.kind = "split", .stage = "C", .axes = {"i"}, .factors = {4}, .nparts = true},
        te::Primitive{.kind = "tile", .stage = "C", .axes = {"i", "j"}, .factors = {32, 8}},
        te::Primitive{.kind = "cache_read", .stage = "A", .target = "local", .readers = {"C"}},
        te::Primitive{.kind = "parallel", .stage = "C", .axes = {"i.outer"}}};
    ok.costs = {0.00012, 0.000119, 0.000121};
    ok.timestamp = 1795000000.5;
    tune::TuningRecord failed = ok;
    failed.costs.clear();
    failed.error = tune::MeasureError::wrong_answer;
    failed.message = "output 0 differs from the default schedule's at [3, 1]";
    std::string good = tune::record_to_line(ok);
    std::string bad = tune::record_to_line(failed);
    anvil::fuzz::write_seeds_if_asked(
        {good, good + "\n" + bad + "\n\n" + good.substr(0, good.size() / 2)});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    std::string text(fuzz::as_text(data, size));
    size_t lines = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        if (is_blank(line)) continue;
        ++lines;
        auto r = read_line(line);
        if (!r) continue;
        std::string printed = tune::record_to_line(*r);
        auto again = read_line(printed);
        if (!again) fail("a printed record does not read back:", printed);
        if (tune::record_to_line(*again) != printed)
            fail("print(read(print(record))) differs from print(record):", printed);
    }

    {
        std::ofstream out(g_path, std::ios::binary | std::ios::trunc);
        out << text;
    }
    std::vector<std::string> warnings;
    size_t records = 0;
    fuzz::expect_only_user_errors([&] { records = tune::load_records(g_path, &warnings).size(); });
    if (records + warnings.size() != lines)
        fail("load_records lost or invented lines:",
             std::to_string(lines) + " non-blank lines, " + std::to_string(records) + " records, " +
                 std::to_string(warnings.size()) + " warnings");
    std::remove(g_path.c_str());
    return 0;
}
