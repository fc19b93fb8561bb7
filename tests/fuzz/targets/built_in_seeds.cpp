#include <filesystem>
#include <fstream>

#include "fuzz_target.h"

namespace anvil::fuzz {

std::vector<std::string> built_in_seeds;

void write_seeds_if_asked(const std::vector<std::string>& seeds) {
    built_in_seeds = seeds;
    const char* dir = std::getenv("ANVIL_FUZZ_WRITE_SEEDS");
    if (!dir || !*dir) return;
    std::filesystem::create_directories(dir);
    for (size_t i = 0; i < seeds.size(); ++i) {
        std::ofstream out(std::filesystem::path(dir) / ("built_in_" + std::to_string(i)),
                          std::ios::binary);
        out << seeds[i];
    }
}

}  // namespace anvil::fuzz
