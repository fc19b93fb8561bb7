#include "runtime/rpc/auth_key.h"

#include <sodium.h>

#include <cstdlib>
#include <string_view>

#include "support/error.h"

namespace anvil::rpc {

CurveKeyPair derive_key_pair(const std::string& auth_key, PeerRole role) {
    if (sodium_init() < 0) user_error() << "RPC: libsodium could not be initialised";
    // The role is the hash key, so the two pairs of one auth key are unrelated.
    std::string_view context =
        role == PeerRole::serving ? "anvil-rpc-serving-end-v1" : "anvil-rpc-connecting-end-v1";
    std::array<uint8_t, crypto_box_SEEDBYTES> seed{};
    crypto_generichash(seed.data(), seed.size(), reinterpret_cast<const uint8_t*>(auth_key.data()),
                       auth_key.size(), reinterpret_cast<const uint8_t*>(context.data()),
                       context.size());
    CurveKeyPair pair{};
    crypto_box_seed_keypair(pair.public_key.data(), pair.secret_key.data(), seed.data());
    sodium_memzero(seed.data(), seed.size());
    return pair;
}

std::string resolve_auth_key(const std::string& given, const std::string& option) {
    if (!given.empty()) return given;
    const char* env = std::getenv("ANVIL_RPC_KEY");
    if (env != nullptr && *env != '\0') return env;
    user_error() << "RPC needs an auth key: give " << option
                 << " or set ANVIL_RPC_KEY (the server serves nobody without one)";
    return {};
}

}  // namespace anvil::rpc
