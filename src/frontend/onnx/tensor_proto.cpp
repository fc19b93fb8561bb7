// ONNX TensorProto → runtime::NDArray: element types, the typed data fields, raw_data and
// external data, and the reader for test_data_set .pb files.
#include <google/protobuf/io/coded_stream.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/from_onnx.h"
#include "onnx/onnx-data.pb.h"
#include "runtime/string_tensor.h"

namespace anvil::frontend {

using ::onnx::TensorProto;

std::optional<DataType> dtype_from_onnx(int elem_type) {
    switch (elem_type) {
        case TensorProto::FLOAT:
            return DataType::float32();
        case TensorProto::UINT8:
            return DataType::uint(8);
        case TensorProto::INT8:
            return DataType::int_(8);
        case TensorProto::UINT16:
            return DataType::uint(16);
        case TensorProto::INT16:
            return DataType::int_(16);
        case TensorProto::INT32:
            return DataType::int32();
        case TensorProto::INT64:
            return DataType::int64();
        case TensorProto::BOOL:
            return DataType::bool_();
        case TensorProto::FLOAT16:
            return DataType::float16();
        case TensorProto::DOUBLE:
            return DataType::float64();
        case TensorProto::UINT32:
            return DataType::uint(32);
        case TensorProto::UINT64:
            return DataType::uint(64);
        case TensorProto::BFLOAT16:
            return DataType::bfloat16();
        case TensorProto::STRING:
            return DataType::string();
        default:
            return std::nullopt;
    }
}

std::string onnx_dtype_name(int elem_type) {
    if (TensorProto::DataType_IsValid(elem_type)) {
        return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
    }
    return "element type " + std::to_string(elem_type);
}

namespace {

// Copies typed-field values into the tensor's storage, narrowing to the element type; int32_data
// holds the bit pattern for 16-bit floats.
template <typename Field>
void copy_typed(const Field& field, const runtime::NDArray& out, DataType dtype) {
    auto* dst = static_cast<uint8_t*>(out.raw_data());
    for (int i = 0; i < field.size(); ++i) {
        auto v = field.Get(i);
        switch (dtype.bytes()) {
            case 1: {
                auto x = static_cast<uint8_t>(v);
                if (dtype.is_bool()) x = v != 0;
                dst[i] = x;
                break;
            }
            case 2: {
                auto x = static_cast<uint16_t>(v);
                std::memcpy(dst + 2 * i, &x, 2);
                break;
            }
            case 4: {
                if (dtype.is_float()) {
                    float x = static_cast<float>(v);
                    std::memcpy(dst + 4 * i, &x, 4);
                } else {
                    auto x = static_cast<uint32_t>(v);
                    std::memcpy(dst + 4 * i, &x, 4);
                }
                break;
            }
            default: {
                if (dtype.is_float()) {
                    double x = static_cast<double>(v);
                    std::memcpy(dst + 8 * i, &x, 8);
                } else {
                    auto x = static_cast<uint64_t>(v);
                    std::memcpy(dst + 8 * i, &x, 8);
                }
                break;
            }
        }
    }
}

// Where the tensor's external data lies, checked before anything is allocated or read: the
// location must stay inside the model's directory (as ONNX's checker requires: a model must not
// read arbitrary files as weights) and the file must hold `nbytes` at the offset.
struct ExternalData {
    std::filesystem::path file;
    int64_t offset = 0;
};

ExternalData find_external(const TensorProto& t, int64_t nbytes, const std::string& base_dir,
                           const SourceLoc& loc, const std::string& what) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
        try {
            size_t used = 0;
            if (kv.key() == "location") location = kv.value();
            if (kv.key() == "offset") offset = std::stoll(kv.value(), &used);
            if (kv.key() == "length") length = std::stoll(kv.value(), &used);
            if (used && used != kv.value().size()) throw std::invalid_argument(kv.value());
        } catch (const std::exception&) {
            user_error(loc) << what << ": external data " << kv.key() << " '" << kv.value()
                            << "' is not a number";
        }
    }
    if (location.empty()) user_error(loc) << what << ": external data without a location";
    std::filesystem::path relative = std::filesystem::path(location).lexically_normal();
    if (relative.is_absolute() || relative.has_root_name() || relative.empty() ||
        *relative.begin() == "..") {
        user_error(loc) << what << ": external data location '" << location
                        << "' is outside the model's directory";
    }
    if (offset < 0)
        user_error(loc) << what << ": external data offset " << offset << " is negative";
    if (length >= 0 && length != nbytes) {
        user_error(loc) << what << ": external data length " << length << " does not match "
                        << "its shape (" << nbytes << " bytes)";
    }
    std::filesystem::path file =
        std::filesystem::path(base_dir.empty() ? "." : base_dir) / relative;
    std::error_code ec;
    auto size = std::filesystem::file_size(file, ec);
    if (ec || !std::filesystem::is_regular_file(file, ec)) {
        user_error(loc) << what << ": cannot open its external data file '" << file.string() << "'";
    }
    if (static_cast<uintmax_t>(offset) > size || size - offset < static_cast<uintmax_t>(nbytes)) {
        user_error(loc) << what << ": external data file '" << file.string() << "' (" << size
                        << " bytes) ends before " << nbytes << " bytes at offset " << offset;
    }
    return {file, offset};
}

void read_external(const ExternalData& where, const runtime::NDArray& out, const SourceLoc& loc,
                   const std::string& what) {
    auto nbytes = static_cast<std::streamsize>(out.nbytes());
    std::ifstream in(where.file, std::ios::binary);
    in.seekg(where.offset);
    in.read(static_cast<char*>(out.raw_data()), nbytes);
    if (!in || in.gcount() != nbytes) {
        user_error(loc) << what << ": cannot read " << nbytes << " bytes at offset " << where.offset
                        << " of its external data file '" << where.file.string() << "'";
    }
}

// How many values the typed field that the element type selects holds.
int64_t typed_count(const TensorProto& t) {
    switch (t.data_type()) {
        case TensorProto::FLOAT:
            return t.float_data_size();
        case TensorProto::DOUBLE:
            return t.double_data_size();
        case TensorProto::INT64:
            return t.int64_data_size();
        case TensorProto::UINT32:
        case TensorProto::UINT64:
            return t.uint64_data_size();
        default:  // int32, int16, int8, uint16, uint8, bool, float16, bfloat16
            return t.int32_data_size();
    }
}

}  // namespace

runtime::NDArray tensor_from_proto(const TensorProto& t, const std::string& base_dir,
                                   const SourceLoc& loc, const std::string& what) {
    std::optional<DataType> dtype = dtype_from_onnx(t.data_type());
    if (!dtype) {
        user_error(loc) << what << " has element type " << onnx_dtype_name(t.data_type())
                        << ", which Anvil does not support";
    }
    if (t.has_segment()) user_error(loc) << what << ": segmented tensors are not supported";
    std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
    for (int64_t d : shape) {
        if (d < 0) user_error(loc) << what << " has a negative dimension " << d;
    }
    // Every size is checked against the data the tensor holds before its storage is allocated:
    // a tensor declaring terabytes and holding a few bytes is refused, not allocated.
    std::optional<int64_t> checked = checked_byte_size(shape, *dtype);
    if (!checked) check_shape(shape, *dtype, loc, what);
    int64_t nbytes = *checked;
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    std::string type = dtype->str() + ints_str(shape);
    if (dtype->is_string()) {
        if (t.data_location() == TensorProto::EXTERNAL || t.has_raw_data()) {
            user_error(loc) << what << ": string data must be in string_data";
        }
        if (t.string_data_size() != count) {
            user_error(loc) << what << " holds " << t.string_data_size() << " string(s), its shape "
                            << "needs " << count;
        }
        return runtime::make_string_tensor(
            shape, std::vector<std::string>(t.string_data().begin(), t.string_data().end()));
    }
    auto allocate = [&] { return runtime::NDArray::empty(shape, graph::dl_dtype_of(*dtype)); };
    if (t.data_location() == TensorProto::EXTERNAL) {
        ExternalData where = find_external(t, nbytes, base_dir, loc, what);
        runtime::NDArray out = allocate();
        read_external(where, out, loc, what);
        return out;
    }
    if (t.has_raw_data()) {
        if (static_cast<int64_t>(t.raw_data().size()) != nbytes) {
            user_error(loc) << what << ": raw_data has " << t.raw_data().size()
                            << " bytes, its type " << type << " needs " << nbytes;
        }
        runtime::NDArray out = allocate();
        if (nbytes) std::memcpy(out.raw_data(), t.raw_data().data(), nbytes);
        return out;
    }
    // Typed fields: which one holds the data depends on the declared element type.
    int64_t given = typed_count(t);
    if (given != count) {
        user_error(loc) << what << " holds " << given << " value(s), its type " << type << " needs "
                        << count;
    }
    runtime::NDArray out = allocate();
    switch (t.data_type()) {
        case TensorProto::FLOAT:
            copy_typed(t.float_data(), out, *dtype);
            break;
        case TensorProto::DOUBLE:
            copy_typed(t.double_data(), out, *dtype);
            break;
        case TensorProto::INT64:
            copy_typed(t.int64_data(), out, *dtype);
            break;
        case TensorProto::UINT32:
        case TensorProto::UINT64:
            copy_typed(t.uint64_data(), out, *dtype);
            break;
        default:
            copy_typed(t.int32_data(), out, *dtype);
            break;
    }
    return out;
}

namespace {

// Parses the message in the file at `path`; `kind` names it in errors ("TensorProto").
void read_message_pb(const std::string& path, google::protobuf::Message* message,
                     const char* kind) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) user_error() << path << ": cannot open the file";
    auto size = static_cast<int64_t>(in.tellg());
    if (size < 0) user_error() << path << ": cannot read the file";
    if (size > std::numeric_limits<int>::max()) {
        user_error() << path << ": the file is " << size << " bytes, more than protobuf's limit of "
                     << std::numeric_limits<int>::max() << " bytes for one message";
    }
    std::string bytes(static_cast<size_t>(size), '\0');
    in.seekg(0);
    if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
        user_error() << path << ": cannot read the file";
    }
    google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                  static_cast<int>(bytes.size()));
    stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
    if (!message->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
        user_error() << path << ": not a valid ONNX " << kind << " (truncated or malformed)";
    }
}

runtime::VMValue sequence_value(const ::onnx::SequenceProto& seq, const std::string& path) {
    if (seq.elem_type() != ::onnx::SequenceProto::TENSOR &&
        seq.elem_type() != ::onnx::SequenceProto::UNDEFINED) {
        user_error() << path << ": a sequence of something other than tensors";
    }
    std::vector<runtime::VMValue> items;
    std::string dir = std::filesystem::path(path).parent_path().string();
    for (const auto& t : seq.tensor_values()) {
        items.emplace_back(
            tensor_from_proto(t, dir, SourceLoc{.file = path}, "a sequence element"));
    }
    return runtime::VMValue::tuple(std::move(items));
}

}  // namespace

runtime::NDArray read_tensor_pb(const std::string& path) {
    TensorProto t;
    read_message_pb(path, &t, "TensorProto");
    std::string dir = std::filesystem::path(path).parent_path().string();
    SourceLoc loc{.file = path};
    return tensor_from_proto(t, dir, loc, "tensor '" + t.name() + "'");
}

runtime::VMValue read_value_pb(const std::string& path, const graph::Type& type) {
    if (type.is<graph::TensorType>()) return read_tensor_pb(path);
    if (type.is<graph::SequenceType>()) {
        ::onnx::SequenceProto seq;
        read_message_pb(path, &seq, "SequenceProto");
        return sequence_value(seq, path);
    }
    if (type.is<graph::OptionalType>()) {
        ::onnx::OptionalProto opt;
        read_message_pb(path, &opt, "OptionalProto");
        std::string dir = std::filesystem::path(path).parent_path().string();
        if (opt.has_tensor_value()) {
            return tensor_from_proto(opt.tensor_value(), dir, SourceLoc{.file = path},
                                     "the optional's tensor");
        }
        if (opt.has_sequence_value()) return sequence_value(opt.sequence_value(), path);
        return runtime::VMValue();  // empty
    }
    user_error() << path << ": values of type " << graph::type_str(type) << " cannot be read";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::frontend
