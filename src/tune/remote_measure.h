// Measuring candidates on remote devices (anvil tune --tracker HOST:PORT --device-key K): what
// measure_in_child does on this machine, done over RPC (runtime/rpc) on a device of the key that
// the tracker hands out, so a workstation tunes for a board by timing on the board.
//
// A RemoteMeasurer holds one device (one session) at a time and measures one candidate at a
// time on it: it uploads the candidate's library, makes the kernel's inputs there (from the task's
// inputs file) and its outputs, runs the kernel once and brings the outputs back (for the
// tuner's correctness check), then times it there with the measure options (TVM's
// time_evaluator). A tuning session keeps one measurer per device of the key and measures a
// batch's candidates on all of them at once.
//
// Errors cost the trial, as in a child process: a candidate that crashes or runs past the
// timeout ends its session on the server (the error says which), and the measurer asks the
// tracker for a device again at its next candidate. Cache flushing between measurements is
// done by anvil-measure only; asking for it with remote devices is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tune/measure.h"

namespace anvil::rpc {
class RpcSession;
}

namespace anvil::tune {

struct RemoteDevices {
    std::string tracker;     // HOST:PORT
    std::string device_key;  // the kind of device to ask for
    std::string auth_key;    // the pool's key (resolved: not empty)
    bool enabled() const { return !tracker.empty(); }
};

// The number of devices of the key the tracker lists; UserError when it lists none (naming the
// keys it has) or cannot be reached.
int count_remote_devices(const RemoteDevices& devices);

class RemoteMeasurer {
public:
    explicit RemoteMeasurer(RemoteDevices devices);
    ~RemoteMeasurer();
    RemoteMeasurer(const RemoteMeasurer&) = delete;
    RemoteMeasurer& operator=(const RemoteMeasurer&) = delete;

    // As measure_in_child; UserError only for options that cannot be measured remotely.
    MeasureResult measure(const MeasureRequest& request, const MeasureOption& option);

private:
    RemoteDevices devices_;
    std::shared_ptr<rpc::RpcSession> session_;
    int threads_set_ = -1;  // the thread count asked of the current session
    int64_t uploads_ = 0;
};

}  // namespace anvil::tune
