// Key pairs derived from the auth key: the same for the same key and role, unrelated otherwise;
// and the key taken from ANVIL_RPC_KEY when no option gives it.
#include "runtime/rpc/auth_key.h"

#include <gtest/gtest.h>

#include "scoped_env.h"
#include "support/error.h"

namespace anvil::rpc {
namespace {

TEST(RpcAuthKey, PairsDependOnTheKeyAndTheRole) {
    CurveKeyPair a = derive_key_pair("a long shared secret", PeerRole::serving);
    EXPECT_EQ(a.public_key, derive_key_pair("a long shared secret", PeerRole::serving).public_key);
    EXPECT_EQ(a.secret_key, derive_key_pair("a long shared secret", PeerRole::serving).secret_key);
    EXPECT_NE(a.public_key,
              derive_key_pair("a long shared secret", PeerRole::connecting).public_key);
    EXPECT_NE(a.public_key, derive_key_pair("a long shared secreT", PeerRole::serving).public_key);
    EXPECT_NE(a.public_key, a.secret_key);
}

TEST(RpcAuthKey, TheKeyComesFromTheOptionOrTheEnvironment) {
    {
        testing::ScopedEnv env("ANVIL_RPC_KEY", "from-environment");
        EXPECT_EQ(resolve_auth_key("given"), "given");
        EXPECT_EQ(resolve_auth_key(""), "from-environment");
    }
    testing::ScopedEnv env("ANVIL_RPC_KEY", nullptr);
    try {
        resolve_auth_key("", "--auth-key");
        ADD_FAILURE() << "no key was accepted";
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(),
                     "RPC needs an auth key: give --auth-key or set ANVIL_RPC_KEY (the server "
                     "serves nobody without one)");
    }
}

}  // namespace
}  // namespace anvil::rpc
