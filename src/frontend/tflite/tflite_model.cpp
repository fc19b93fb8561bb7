#include "frontend/tflite/tflite_model.h"

#include <flatbuffers/flatbuffers.h>

#include <array>
#include <fstream>
#include <limits>

#include "frontend/tflite/tflite_schema.h"
#include "support/error.h"

namespace anvil::frontend::tflite {

namespace {

using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Table;
using flatbuffers::Vector;
using flatbuffers::Verifier;

constexpr flatbuffers::voffset_t vtable_offset(int field) {
    return static_cast<flatbuffers::voffset_t>(4 + 2 * field);
}

// No TFLite model nests tables deeper than a few levels; the table count bounds the work a
// hostile file can cause.
constexpr flatbuffers::uoffset_t kMaxDepth = 64;
constexpr flatbuffers::uoffset_t kMaxTables = 50'000'000;

Verifier make_verifier(const std::vector<uint8_t>& bytes) {
    return Verifier(bytes.data(), bytes.size(), kMaxDepth, kMaxTables);
}

// Reads tables of one file, each access checked by the flatbuffers Verifier.
class Reader {
public:
    Reader(const std::vector<uint8_t>& bytes, std::string origin)
        : bytes_(bytes), verifier_(make_verifier(bytes)), origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& what) const {
        user_error() << origin_ << ": not a valid TFLite model: " << what;
        ANVIL_UNREACHABLE();
    }

    const Table* root() {
        if (bytes_.size() < 8) fail("the file is " + std::to_string(bytes_.size()) + " bytes long");
        if (!flatbuffers::BufferHasIdentifier(bytes_.data(), "TFL3")) {
            fail("the file identifier is not \"TFL3\" (is it a .tflite file?)");
        }
        flatbuffers::uoffset_t o = verifier_.VerifyOffset(0);
        if (o == 0) fail("the root table's offset lies outside the file");
        return checked_table(reinterpret_cast<const Table*>(bytes_.data() + o), "the model table");
    }

    // The table in field `field` of `parent` (null when absent).
    const Table* table(const Table* parent, int field, const std::string& what) {
        if (!parent->VerifyOffset(verifier_, vtable_offset(field)))
            fail(what + " lies outside the file");
        return checked_table(parent->GetPointer<const Table*>(vtable_offset(field)), what);
    }

    template <typename T>
    T scalar(const Table* t, int field, T fallback, const std::string& what) {
        if (!t->VerifyField<T>(verifier_, vtable_offset(field), sizeof(T))) {
            fail(what + " lies outside the file");
        }
        return t->GetField<T>(vtable_offset(field), fallback);
    }

    template <typename T>
    std::vector<T> vector(const Table* t, int field, const std::string& what) {
        const Vector<T>* v = checked_vector<T>(t, field, what);
        if (!v) return {};
        return std::vector<T>(v->begin(), v->end());
    }

    std::string string(const Table* t, int field, const std::string& what) {
        if (!t->VerifyOffset(verifier_, vtable_offset(field)))
            fail(what + " lies outside the file");
        const String* s = t->GetPointer<const String*>(vtable_offset(field));
        if (!s) return {};
        if (!verifier_.VerifyString(s)) fail(what + " is not a string inside the file");
        return s->str();
    }

    // The tables of a vector field; each entry checked.
    std::vector<const Table*> tables(const Table* t, int field, const std::string& what) {
        const Vector<Offset<Table>>* v = checked_vector<Offset<Table>>(t, field, what);
        std::vector<const Table*> out;
        if (!v) return out;
        out.reserve(v->size());
        for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
            std::string item = what + " [" + std::to_string(i) + "]";
            size_t at = reinterpret_cast<const uint8_t*>(v->Data()) - bytes_.data() +
                        size_t{i} * sizeof(flatbuffers::uoffset_t);
            if (!verifier_.VerifyOffset(at)) fail(item + " lies outside the file");
            out.push_back(checked_table(v->Get(i), item));
        }
        return out;
    }

    // A vector field of bytes as a view into the file.
    std::span<const uint8_t> bytes(const Table* t, int field, const std::string& what) {
        const Vector<uint8_t>* v = checked_vector<uint8_t>(t, field, what);
        if (!v) return {};
        return {v->Data(), v->size()};
    }

private:
    const Table* checked_table(const Table* t, const std::string& what) {
        if (!t) return nullptr;
        if (!t->VerifyTableStart(verifier_)) fail(what + " is not a table inside the file");
        // Tables are decoded one level at a time, so depth is never what bounds the work.
        verifier_.EndTable();
        return t;
    }

    template <typename T>
    const Vector<T>* checked_vector(const Table* t, int field, const std::string& what) {
        if (!t->VerifyOffset(verifier_, vtable_offset(field)))
            fail(what + " lies outside the file");
        const Vector<T>* v = t->GetPointer<const Vector<T>*>(vtable_offset(field));
        if (v && !verifier_.VerifyVector(v)) fail(what + " is not a vector inside the file");
        return v;
    }

    const std::vector<uint8_t>& bytes_;
    Verifier verifier_;
    std::string origin_;
};

// Bytes per element of the types whose data the importer reads; 0 for the others.
size_t element_bytes(int8_t type) {
    switch (type) {
        case tensor_type::kBool:
        case tensor_type::kInt8:
        case tensor_type::kUInt8:
            return 1;
        case tensor_type::kInt16:
        case tensor_type::kUInt16:
        case tensor_type::kFloat16:
            return 2;
        case tensor_type::kInt32:
        case tensor_type::kUInt32:
        case tensor_type::kFloat32:
            return 4;
        case tensor_type::kInt64:
        case tensor_type::kUInt64:
        case tensor_type::kFloat64:
        case tensor_type::kComplex64:
            return 8;
        default:
            return 0;
    }
}

std::optional<TfliteQuantization> read_quantization(Reader& r, const Table* q,
                                                    const std::string& what) {
    if (!q) return std::nullopt;
    if (r.scalar<uint8_t>(q, quantization_field::kDetailsType, 0, what) != 0) {
        r.fail(what + " uses custom quantization details, which the importer does not read");
    }
    TfliteQuantization out;
    out.scale = r.vector<float>(q, quantization_field::kScale, what + ": scale");
    out.zero_point = r.vector<int64_t>(q, quantization_field::kZeroPoint, what + ": zero_point");
    out.quantized_dimension =
        r.scalar<int32_t>(q, quantization_field::kQuantizedDimension, 0, what);
    // A table with min/max only (left by some converters) carries no quantization.
    if (out.scale.empty() && out.zero_point.empty()) return std::nullopt;
    return out;
}

TfliteTensor read_tensor(Reader& r, const Table* t, const std::string& what, size_t buffers) {
    TfliteTensor out;
    out.shape = r.vector<int32_t>(t, tensor_field::kShape, what + ": shape");
    out.type = r.scalar<int8_t>(t, tensor_field::kType, 0, what);
    out.buffer = r.scalar<uint32_t>(t, tensor_field::kBuffer, 0, what);
    out.name = r.string(t, tensor_field::kName, what + ": name");
    out.quantization =
        read_quantization(r, r.table(t, tensor_field::kQuantization, what + ": quantization"),
                          what + ": quantization");
    out.is_variable = r.scalar<uint8_t>(t, tensor_field::kIsVariable, 0, what) != 0;
    if (r.table(t, tensor_field::kSparsity, what + ": sparsity") != nullptr) {
        r.fail(what + " is sparse (SparsityParameters), which the importer does not read");
    }
    out.shape_signature = r.vector<int32_t>(t, tensor_field::kShapeSignature, what + ": signature");
    for (int32_t d : out.shape) {
        if (d < 0) r.fail(what + " has a negative dimension in its shape");
    }
    if (!out.shape_signature.empty() && out.shape_signature.size() != out.shape.size()) {
        r.fail(what + ": its shape_signature's rank differs from its shape's");
    }
    if (out.buffer >= buffers) {
        r.fail(what + " refers to buffer " + std::to_string(out.buffer) + " of " +
               std::to_string(buffers));
    }
    return out;
}

std::vector<int32_t> checked_indices(Reader& r, std::vector<int32_t> indices, size_t count,
                                     bool optional, const std::string& what) {
    for (int32_t i : indices) {
        if ((optional && i == -1) || (i >= 0 && size_t(i) < count)) continue;
        r.fail(what + " refers to tensor " + std::to_string(i) + " of " + std::to_string(count));
    }
    return indices;
}

// An operator's custom options: in the flatbuffer, or (large_custom_options_offset/size, for
// models over 2 GiB) at an offset of the file past it.
std::span<const uint8_t> custom_options(Reader& r, const Table* o, const std::vector<uint8_t>& file,
                                        const std::string& what) {
    std::span<const uint8_t> inline_bytes = r.bytes(o, operator_field::kCustomOptions, what);
    uint64_t offset = r.scalar<uint64_t>(o, operator_field::kLargeCustomOptionsOffset, 0, what);
    uint64_t size = r.scalar<uint64_t>(o, operator_field::kLargeCustomOptionsSize, 0, what);
    if (offset <= 1) return inline_bytes;
    if (offset > file.size() || size > file.size() - offset) {
        r.fail(what + ": its custom options lie outside the file");
    }
    return {file.data() + offset, size_t(size)};
}

// Checks that a tensor's constant data is as long as its shape needs.
void check_tensor_data(Reader& r, const TfliteTensor& t, std::span<const uint8_t> data,
                       const std::string& what) {
    if (data.empty()) return;
    size_t bytes = element_bytes(t.type);
    if (bytes == 0) return;  // strings and 4-bit data: refused where a converter reads them
    uint64_t count = 1;
    for (int32_t d : t.shape) {
        if (d != 0 && count > std::numeric_limits<uint64_t>::max() / uint64_t(d)) {
            r.fail(what + ": its element count overflows");
        }
        count *= uint64_t(d);
    }
    if (count > std::numeric_limits<uint64_t>::max() / bytes || count * bytes != data.size()) {
        r.fail(what + " has " + std::to_string(data.size()) + " bytes of data; its shape needs " +
               std::to_string(count) + " elements of " + std::to_string(bytes) + " bytes");
    }
}

}  // namespace

// ---- TfliteOptions ----------------------------------------------------------------------------

const uint8_t* TfliteOptions::field_address(int field, size_t size) const {
    if (!table_) return nullptr;
    // The table's vtable was checked when the model was read; the field's bytes are checked here.
    flatbuffers::voffset_t offset =
        reinterpret_cast<const Table*>(table_)->GetOptionalFieldOffset(vtable_offset(field));
    if (offset == 0) return nullptr;
    Verifier v = make_verifier(*file_);
    if (!v.Verify(size_t(table_ - file_->data()) + offset, size)) {
        user_error(loc_) << "the operator's options field " << field << " lies outside the file";
    }
    return table_ + offset;
}

int32_t TfliteOptions::int32(int field, int32_t fallback) const {
    const uint8_t* p = field_address(field, sizeof(int32_t));
    return p ? flatbuffers::ReadScalar<int32_t>(p) : fallback;
}

int8_t TfliteOptions::int8(int field, int8_t fallback) const {
    const uint8_t* p = field_address(field, sizeof(int8_t));
    return p ? flatbuffers::ReadScalar<int8_t>(p) : fallback;
}

bool TfliteOptions::boolean(int field, bool fallback) const {
    const uint8_t* p = field_address(field, 1);
    return p ? flatbuffers::ReadScalar<uint8_t>(p) != 0 : fallback;
}

float TfliteOptions::float32(int field, float fallback) const {
    const uint8_t* p = field_address(field, sizeof(float));
    return p ? flatbuffers::ReadScalar<float>(p) : fallback;
}

std::vector<int32_t> TfliteOptions::int32_vector(int field) const {
    if (!table_) return {};
    Verifier v = make_verifier(*file_);
    const Table* t = reinterpret_cast<const Table*>(table_);
    if (!t->VerifyOffset(v, vtable_offset(field))) {
        user_error(loc_) << "the operator's options field " << field << " lies outside the file";
    }
    const auto* vec = t->GetPointer<const Vector<int32_t>*>(vtable_offset(field));
    if (!vec) return {};
    if (!v.VerifyVector(vec)) {
        user_error(loc_) << "the operator's options field " << field
                         << " is not a vector inside the file";
    }
    return std::vector<int32_t>(vec->begin(), vec->end());
}

// ---- the model --------------------------------------------------------------------------------

TfliteModel read_tflite_model(std::vector<uint8_t> bytes, const std::string& origin) {
    if (bytes.size() > kMaxTfliteBytes) {
        user_error() << origin << ": the file is " << bytes.size()
                     << " bytes; TFLite flatbuffers larger than 2 GiB are not supported";
    }
    TfliteModel m;
    m.origin = origin;
    auto file = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    m.file = file;
    Reader r(*file, origin);
    const Table* root = r.root();
    m.version = r.scalar<uint32_t>(root, model_field::kVersion, 0, "the model's version");
    if (m.version != 3) {
        r.fail("schema version " + std::to_string(m.version) + " (the importer reads version 3)");
    }

    for (const Table* b : r.tables(root, model_field::kBuffers, "buffer")) {
        std::string what = "buffer " + std::to_string(m.buffers.size());
        std::span<const uint8_t> data = r.bytes(b, buffer_field::kData, what);
        uint64_t offset = r.scalar<uint64_t>(b, buffer_field::kOffset, 0, what);
        uint64_t size = r.scalar<uint64_t>(b, buffer_field::kSize, 0, what);
        if (offset > 1) {  // data kept after the flatbuffer (models over 2 GiB)
            if (offset > file->size() || size > file->size() - offset) {
                r.fail(what + "'s data lies outside the file");
            }
            data = {file->data() + offset, size_t(size)};
        }
        m.buffers.push_back(data);
    }
    if (m.buffers.empty()) m.buffers.emplace_back();  // buffer 0, the empty sentinel

    for (const Table* c : r.tables(root, model_field::kOperatorCodes, "operator code")) {
        std::string what = "operator code " + std::to_string(m.operator_codes.size());
        TfliteOperatorCode code;
        int8_t deprecated =
            r.scalar<int8_t>(c, operator_code_field::kDeprecatedBuiltinCode, 0, what);
        int32_t builtin = r.scalar<int32_t>(c, operator_code_field::kBuiltinCode, 0, what);
        // Files written before the int32 field existed keep the code in the byte field only.
        code.builtin = std::max<int32_t>(builtin, deprecated);
        code.custom = r.string(c, operator_code_field::kCustomCode, what + ": custom code");
        code.version = r.scalar<int32_t>(c, operator_code_field::kVersion, 1, what);
        m.operator_codes.push_back(code);
    }

    std::vector<const Table*> subgraphs = r.tables(root, model_field::kSubgraphs, "subgraph");
    if (subgraphs.empty()) r.fail("it has no subgraph");
    for (size_t s = 0; s < subgraphs.size(); ++s) {
        const Table* g = subgraphs[s];
        std::string where = "subgraph " + std::to_string(s);
        TfliteSubgraph sg;
        sg.name = r.string(g, subgraph_field::kName, where + ": name");
        for (const Table* t : r.tables(g, subgraph_field::kTensors, where + ": tensor")) {
            std::string what = where + ": tensor " + std::to_string(sg.tensors.size());
            sg.tensors.push_back(read_tensor(r, t, what, m.buffers.size()));
            const TfliteTensor& tensor = sg.tensors.back();
            check_tensor_data(r, tensor, m.buffers[tensor.buffer],
                              what + " ('" + tensor.name + "')");
        }
        size_t n = sg.tensors.size();
        sg.inputs = checked_indices(r, r.vector<int32_t>(g, subgraph_field::kInputs, where), n,
                                    false, where + ": an input");
        sg.outputs = checked_indices(r, r.vector<int32_t>(g, subgraph_field::kOutputs, where), n,
                                     false, where + ": an output");
        for (const Table* o : r.tables(g, subgraph_field::kOperators, where + ": operator")) {
            size_t index = sg.operators.size();
            std::string what = where + ": operator " + std::to_string(index);
            TfliteOperator op;
            op.opcode_index = r.scalar<uint32_t>(o, operator_field::kOpcodeIndex, 0, what);
            if (op.opcode_index >= m.operator_codes.size()) {
                r.fail(what + " refers to operator code " + std::to_string(op.opcode_index) +
                       " of " + std::to_string(m.operator_codes.size()));
            }
            op.inputs = checked_indices(r, r.vector<int32_t>(o, operator_field::kInputs, what), n,
                                        true, what + ": an input");
            op.outputs = checked_indices(r, r.vector<int32_t>(o, operator_field::kOutputs, what), n,
                                         false, what + ": an output");
            uint8_t type = r.scalar<uint8_t>(o, operator_field::kBuiltinOptionsType, 0, what);
            const Table* options = r.table(o, operator_field::kBuiltinOptions, what + ": options");
            const TfliteOperatorCode& code = m.operator_codes[op.opcode_index];
            SourceLoc loc{.file = origin,
                          .node_name = "operator " + std::to_string(index),
                          .op_type = operator_name(code),
                          .opset = code.version};
            op.options = TfliteOptions(file, reinterpret_cast<const uint8_t*>(options),
                                       options ? type : 0, loc);
            op.custom_options = custom_options(r, o, *file, what);
            op.custom_options_format =
                r.scalar<uint8_t>(o, operator_field::kCustomOptionsFormat, 0, what);
            sg.operators.push_back(std::move(op));
        }
        m.subgraphs.push_back(std::move(sg));
    }
    return m;
}

TfliteModel read_tflite_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) user_error() << path << ": cannot open the file";
    std::streamoff size = in.tellg();
    if (size < 0) user_error() << path << ": cannot read the file";
    if (uint64_t(size) > kMaxTfliteBytes) {
        user_error() << path << ": the file is " << size
                     << " bytes; TFLite flatbuffers larger than 2 GiB are not supported";
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) {
        user_error() << path << ": cannot read the file";
    }
    return read_tflite_model(std::move(bytes), path);
}

}  // namespace anvil::frontend::tflite
