// Quoting for /bin/sh: what the code that runs compilers and linkers through std::system shares.
#pragma once

#include <string>

namespace anvil {

// `s` in single quotes, each ' inside written as '\'' , so the shell passes it as one word.
std::string shell_quote(const std::string& s);

}  // namespace anvil
