// Authentication of RPC peers.
//
// Every RPC connection (client to server, server to tracker, client to tracker) runs CurveZMQ:
// encrypted, with both ends proving they hold a long-term secret key. Neither end's key pair is
// configured by hand: both are derived from the shared auth key (`--auth-key`, or the
// ANVIL_RPC_KEY environment variable), one pair for the serving end and one for the connecting
// end. A client therefore knows the server's public key only if it knows the auth key, and the
// server (its ZAP handler) accepts only the connecting-end public key of that same auth key, so a
// peer without the key never gets past the handshake: nothing it sends reaches the code that
// serves requests. CurveZMQ's short-term keys and nonces make recorded traffic useless to replay.
//
// The derivation is a keyed BLAKE2b hash (libsodium), not a password hash: the key should be long
// and random (`openssl rand -hex 32`); shorter keys draw a warning.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace anvil::rpc {

struct CurveKeyPair {
    std::array<uint8_t, 32> public_key;
    std::array<uint8_t, 32> secret_key;
};

enum class PeerRole { serving, connecting };

// The key pair the end in `role` uses for `auth_key`.
CurveKeyPair derive_key_pair(const std::string& auth_key, PeerRole role);

// The auth key to use: `given` when not empty, else ANVIL_RPC_KEY. UserError naming `option`
// (e.g. "--auth-key") when neither is set: there is no unauthenticated mode.
std::string resolve_auth_key(const std::string& given, const std::string& option = "--auth-key");

// Keys shorter than this draw a warning (see above).
inline constexpr size_t kRecommendedAuthKeyLength = 16;

}  // namespace anvil::rpc
