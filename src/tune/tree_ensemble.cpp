#include "tune/tree_ensemble.h"

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "support/error.h"

namespace anvil::tune {

namespace {

constexpr const char* kFormat = "anvil-cost-model";
constexpr int kVersion = 1;

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& source, const std::string& why) {
    user_error() << "cannot read the cost model '" << source << "': " << why;
    ANVIL_UNREACHABLE();
}

const json& field(const json& j, const char* name, const std::string& source,
                  const std::string& where) {
    auto it = j.find(name);
    if (it == j.end()) bad(source, where + " has no '" + name + "'");
    return *it;
}

int int_field(const json& j, const char* name, const std::string& source,
              const std::string& where) {
    const json& v = field(j, name, source, where);
    if (!v.is_number_integer()) bad(source, where + ": '" + name + "' is not an integer");
    const int64_t x = v.get<int64_t>();
    if (x < -1 || x > (1 << 30)) bad(source, where + ": '" + name + "' is out of range");
    return static_cast<int>(x);
}

// A number within `limit` in magnitude (so that it is a finite float, and sums of leaves stay
// finite: a NaN or infinite score would leave the search's ranking undefined).
float float_field(const json& j, const char* name, const std::string& source,
                  const std::string& where, double limit) {
    const json& v = field(j, name, source, where);
    if (!v.is_number()) bad(source, where + ": '" + name + "' is not a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || std::fabs(x) > limit) {
        bad(source,
            where + ": '" + name + "' is not a finite number within " + std::to_string(limit));
    }
    return static_cast<float>(x);
}

// Leaves of a ranking model are small (XGBoost's are steps of eta times a gradient ratio).
constexpr double kMaxLeaf = 1e6;
constexpr double kMaxThreshold = 1e30;

}  // namespace

float TreeEnsemble::predict(std::span<const float> row) const {
    ANVIL_CHECK(static_cast<int>(row.size()) == num_features)
        << "a row of " << row.size() << " features for a model of " << num_features;
    float sum = 0;
    for (const auto& tree : trees) {
        int at = 0;
        // Children are below their parents (checked when read): the walk ends.
        while (tree[at].feature >= 0) {
            const TreeNode& n = tree[at];
            const float x = row[n.feature];
            at = std::isnan(x) ? n.missing : (x < n.threshold ? n.yes : n.no);
        }
        sum += tree[at].leaf;
    }
    return sum;
}

json TreeEnsemble::to_json() const {
    json out_trees = json::array();
    for (const auto& tree : trees) {
        json nodes = json::array();
        for (const auto& n : tree) {
            if (n.feature < 0) {
                nodes.push_back({{"leaf", n.leaf}});
            } else {
                nodes.push_back({{"feature", n.feature},
                                 {"threshold", n.threshold},
                                 {"yes", n.yes},
                                 {"no", n.no},
                                 {"missing", n.missing}});
            }
        }
        out_trees.push_back({{"nodes", nodes}});
    }
    return {{"format", kFormat},
            {"version", kVersion},
            {"num_features", num_features},
            {"trees", out_trees}};
}

TreeEnsemble TreeEnsemble::from_json(const json& j, const std::string& source) {
    if (!j.is_object()) bad(source, "not a JSON object");
    const json& format = field(j, "format", source, "the file");
    if (!format.is_string() || format.get<std::string>() != kFormat) {
        bad(source, std::string("not an Anvil cost model (format '") + kFormat + "')");
    }
    if (int_field(j, "version", source, "the file") != kVersion) {
        bad(source, "format version is not " + std::to_string(kVersion));
    }
    TreeEnsemble e;
    e.num_features = int_field(j, "num_features", source, "the file");
    if (e.num_features <= 0) bad(source, "'num_features' must be positive");
    const json& trees = field(j, "trees", source, "the file");
    if (!trees.is_array()) bad(source, "'trees' is not an array");
    for (size_t t = 0; t < trees.size(); ++t) {
        const std::string where = "tree " + std::to_string(t);
        if (!trees[t].is_object()) bad(source, where + " is not an object");
        const json& nodes = field(trees[t], "nodes", source, where);
        if (!nodes.is_array() || nodes.empty()) bad(source, where + ": no nodes");
        const int n_nodes = static_cast<int>(nodes.size());
        std::vector<TreeNode> tree(nodes.size());
        for (int k = 0; k < n_nodes; ++k) {
            const json& node = nodes[k];
            const std::string at = where + " node " + std::to_string(k);
            if (!node.is_object()) bad(source, at + " is not an object");
            TreeNode& n = tree[k];
            if (node.contains("leaf")) {
                n.leaf = float_field(node, "leaf", source, at, kMaxLeaf);
                continue;
            }
            n.feature = int_field(node, "feature", source, at);
            if (n.feature < 0 || n.feature >= e.num_features) {
                bad(source, at + ": feature " + std::to_string(n.feature) + " out of range");
            }
            n.threshold = float_field(node, "threshold", source, at, kMaxThreshold);
            for (auto [name, child] : {std::pair{"yes", &n.yes}, std::pair{"no", &n.no},
                                       std::pair{"missing", &n.missing}}) {
                *child = int_field(node, name, source, at);
                // Below the parent: no cycle, and every walk ends at a leaf.
                if (*child <= k || *child >= n_nodes) {
                    bad(source, at + ": child '" + name + "' is no node after it");
                }
            }
        }
        e.trees.push_back(std::move(tree));
    }
    return e;
}

TreeEnsemble TreeEnsemble::from_xgboost_dump(const std::vector<std::string>& trees,
                                             int num_features) {
    TreeEnsemble e;
    e.num_features = num_features;
    for (const auto& text : trees) {
        // The dump nests children inside their parents with XGBoost's node ids; renumber in
        // pre-order so that children come after their parents.
        const json root = json::parse(text);
        std::vector<TreeNode> tree;
        std::function<int(const json&)> visit = [&](const json& node) -> int {
            const int index = static_cast<int>(tree.size());
            tree.emplace_back();
            if (node.contains("leaf")) {
                tree[index].leaf = node.at("leaf").get<float>();
                return index;
            }
            const std::string split = node.at("split").get<std::string>();
            ANVIL_CHECK(split.size() > 1 && split[0] == 'f') << "xgboost split '" << split << "'";
            const int feature = std::stoi(split.substr(1));
            ANVIL_CHECK(feature >= 0 && feature < num_features)
                << "xgboost split on feature " << feature << " of " << num_features;
            const float threshold = node.at("split_condition").get<float>();
            const int yes_id = node.at("yes").get<int>(), no_id = node.at("no").get<int>(),
                      missing_id = node.at("missing").get<int>();
            std::map<int, int> renumbered;
            for (const auto& child : node.at("children")) {
                renumbered[child.at("nodeid").get<int>()] = visit(child);
            }
            ANVIL_CHECK(renumbered.count(yes_id) && renumbered.count(no_id) &&
                        renumbered.count(missing_id))
                << "xgboost dump: a split's child is not among its children";
            TreeNode& n = tree[index];
            n.feature = feature;
            n.threshold = threshold;
            n.yes = renumbered.at(yes_id);
            n.no = renumbered.at(no_id);
            n.missing = renumbered.at(missing_id);
            return index;
        };
        visit(root);
        e.trees.push_back(std::move(tree));
    }
    return e;
}

void TreeEnsemble::add(const TreeEnsemble& other) {
    ANVIL_CHECK(other.num_features == num_features)
        << "adding a model of " << other.num_features << " features to one of " << num_features;
    trees.insert(trees.end(), other.trees.begin(), other.trees.end());
}

}  // namespace anvil::tune
