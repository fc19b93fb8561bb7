// A schedule as data: the ordered list of primitives applied to a computation. Tuning records
// store exactly this list; replaying it on a fresh schedule of the same computation gives the
// same loops.
//
// Text form, one primitive per line (axis and stage names may contain dots):
//   split(C, i, factor=32)          split(C, j, nparts=4)
//   tile(C, i, j, 32, 8)            reorder(C, i.outer, j.outer, k, i.inner, j.inner)
//   fuse(C, i.outer, j.outer)       vectorize(C, j.inner)     parallel(C, i.outer)
//   unroll(C, k.inner)              bind(C, i.outer, blockIdx.x)
//   compute_at(C.local, C, j.outer) compute_inline(B)         compute_root(B)
//   cache_read(A, local, [C, D])    cache_write(C, local)
//   rfactor(C, k.inner)             rfactor(C, k.inner, factor_axis=1)
// JSON form: [{"kind": "split", "stage": "C", "axes": ["i"], "factors": [32]}, ...]
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace anvil::te {

struct Primitive {
    std::string kind;
    std::string stage;
    std::vector<std::string> axes;     // axes of `stage` that the primitive names
    std::vector<int64_t> factors;      // split: [factor or nparts]; tile: [x_factor, y_factor];
                                       // rfactor: [factor_axis]
    bool nparts = false;               // split: factors[0] is the number of outer parts
    std::string target;                // compute_at: target stage; bind: thread tag; cache_*: scope
    std::vector<std::string> readers;  // cache_read: the stages that read through the cache

    bool operator==(const Primitive&) const = default;
    std::string str() const;  // one line of the text form
};

using ScheduleRecord = std::vector<Primitive>;

std::string print_record(const ScheduleRecord& record);
// UserError with "line N: ..." on malformed text.
ScheduleRecord parse_record(const std::string& text);
nlohmann::json record_to_json(const ScheduleRecord& record);
ScheduleRecord record_from_json(const nlohmann::json& json);

}  // namespace anvil::te
