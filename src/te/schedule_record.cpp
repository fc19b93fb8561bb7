#include "te/schedule_record.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/error.h"

namespace anvil::te {

std::string Primitive::str() const {
    std::ostringstream os;
    os << kind << "(" << stage;
    if (kind == "compute_at") {
        os << ", " << target;
        for (const auto& a : axes) os << ", " << a;
    } else if (kind == "cache_read") {
        os << ", " << target << ", [";
        for (size_t i = 0; i < readers.size(); ++i) os << (i ? ", " : "") << readers[i];
        os << "]";
    } else if (kind == "cache_write") {
        os << ", " << target;
    } else if (kind == "rfactor") {
        for (const auto& a : axes) os << ", " << a;
        if (!factors.empty() && factors[0] != 0) os << ", factor_axis=" << factors[0];
    } else {
        for (const auto& a : axes) os << ", " << a;
        if (kind == "split") {
            os << (nparts ? ", nparts=" : ", factor=") << (factors.empty() ? 0 : factors[0]);
        } else {
            for (auto f : factors) os << ", " << f;
        }
        if (kind == "bind") os << ", " << target;
    }
    os << ")";
    return os.str();
}

std::string print_record(const ScheduleRecord& record) {
    std::string out;
    for (const auto& p : record) out += p.str() + "\n";
    return out;
}

namespace {

// Reads one line of the text form: kind(arg, arg, [list], key=value).
class LineParser {
public:
    LineParser(const std::string& text, int line) : s_(text), line_(line) {}

    Primitive parse() {
        Primitive p;
        p.kind = name();
        expect('(');
        std::vector<std::string> args;
        std::vector<std::string> list;
        bool has_list = false;
        std::string key, value;
        while (true) {
            skip_space();
            if (peek() == '[') {
                ++pos_;
                has_list = true;
                while (true) {
                    skip_space();
                    if (peek() == ']') break;
                    list.push_back(name());
                    skip_space();
                    if (peek() == ',') ++pos_;
                }
                expect(']');
            } else {
                std::string tok = name();
                skip_space();
                if (peek() == '=') {
                    ++pos_;
                    key = tok;
                    value = name();
                } else {
                    args.push_back(tok);
                }
            }
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect(')');
            break;
        }
        skip_space();
        if (pos_ != s_.size()) fail("unexpected text after ')'");
        if (args.empty()) fail("missing the stage name");
        p.stage = args[0];
        auto number = [&](const std::string& t) {
            try {
                size_t used = 0;
                int64_t v = std::stoll(t, &used);
                if (used != t.size()) throw std::invalid_argument(t);
                return v;
            } catch (const std::exception&) {
                fail("'" + t + "' is not an integer");
            }
            ANVIL_UNREACHABLE();
        };
        if (p.kind == "split") {
            if (args.size() != 2 || (key != "factor" && key != "nparts")) {
                fail("split takes (stage, axis, factor=N) or (stage, axis, nparts=N)");
            }
            p.axes = {args[1]};
            p.factors = {number(value)};
            p.nparts = key == "nparts";
        } else if (p.kind == "tile") {
            if (args.size() != 5) fail("tile takes (stage, x, y, x_factor, y_factor)");
            p.axes = {args[1], args[2]};
            p.factors = {number(args[3]), number(args[4])};
        } else if (p.kind == "compute_at") {
            if (args.size() != 3) fail("compute_at takes (stage, parent_stage, parent_axis)");
            p.target = args[1];
            p.axes = {args[2]};
        } else if (p.kind == "cache_read") {
            if (args.size() != 2 || !has_list) fail("cache_read takes (stage, scope, [readers])");
            p.target = args[1];
            p.readers = list;
        } else if (p.kind == "cache_write") {
            if (args.size() != 2) fail("cache_write takes (stage, scope)");
            p.target = args[1];
        } else if (p.kind == "bind") {
            if (args.size() != 3) fail("bind takes (stage, axis, thread_tag)");
            p.axes = {args[1]};
            p.target = args[2];
        } else if (p.kind == "rfactor") {
            if (args.size() != 2 || (!key.empty() && key != "factor_axis")) {
                fail("rfactor takes (stage, axis) or (stage, axis, factor_axis=N)");
            }
            p.axes = {args[1]};
            p.factors = {key.empty() ? 0 : number(value)};
        } else if (p.kind == "compute_inline" || p.kind == "compute_root") {
            if (args.size() != 1) fail(p.kind + " takes (stage)");
        } else if (p.kind == "reorder" || p.kind == "fuse" || p.kind == "vectorize" ||
                   p.kind == "parallel" || p.kind == "unroll") {
            p.axes.assign(args.begin() + 1, args.end());
            if (p.axes.empty()) fail(p.kind + " needs at least one axis");
        } else {
            fail("unknown primitive '" + p.kind + "'");
        }
        if (!key.empty() && p.kind != "split" && p.kind != "rfactor") {
            fail("unexpected '" + key + "='");
        }
        return p;
    }

private:
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void skip_space() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    std::string name() {
        skip_space();
        size_t start = pos_;
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                    s_[pos_] == '_' || s_[pos_] == '.' || s_[pos_] == '-')) {
            ++pos_;
        }
        if (start == pos_) fail("expected a name or number");
        return s_.substr(start, pos_ - start);
    }
    void expect(char c) {
        skip_space();
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++pos_;
    }
    [[noreturn]] void fail(const std::string& what) const {
        user_error() << "schedule record line " << line_ << ", column " << pos_ + 1 << ": " << what
                     << " in '" << s_ << "'";
        ANVIL_UNREACHABLE();
    }

    const std::string& s_;
    int line_;
    size_t pos_ = 0;
};

}  // namespace

ScheduleRecord parse_record(const std::string& text) {
    ScheduleRecord record;
    std::istringstream in(text);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        auto hash = line.find('#');
        if (hash != std::string::npos) line = line.substr(0, hash);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        record.push_back(LineParser(line, number).parse());
    }
    return record;
}

nlohmann::json record_to_json(const ScheduleRecord& record) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : record) {
        nlohmann::json j = {{"kind", p.kind}, {"stage", p.stage}};
        if (!p.axes.empty()) j["axes"] = p.axes;
        if (!p.factors.empty()) j["factors"] = p.factors;
        if (p.nparts) j["nparts"] = true;
        if (!p.target.empty()) j["target"] = p.target;
        if (!p.readers.empty()) j["readers"] = p.readers;
        out.push_back(std::move(j));
    }
    return out;
}

ScheduleRecord record_from_json(const nlohmann::json& json) {
    if (!json.is_array()) user_error() << "schedule record JSON must be an array of primitives";
    ScheduleRecord record;
    for (size_t i = 0; i < json.size(); ++i) {
        const auto& j = json[i];
        try {
            Primitive p;
            p.kind = j.at("kind").get<std::string>();
            p.stage = j.at("stage").get<std::string>();
            p.axes = j.value("axes", std::vector<std::string>{});
            p.factors = j.value("factors", std::vector<int64_t>{});
            p.nparts = j.value("nparts", false);
            p.target = j.value("target", std::string());
            p.readers = j.value("readers", std::vector<std::string>{});
            record.push_back(std::move(p));
        } catch (const nlohmann::json::exception& e) {
            user_error() << "schedule record JSON, primitive " << i << ": " << e.what();
        }
    }
    return record;
}

}  // namespace anvil::te
