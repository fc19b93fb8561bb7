#include "runtime/npz.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>

#include "runtime/string_tensor.h"
#include "runtime/utf8.h"
#include "support/error.h"

namespace anvil::runtime {

namespace {

// NumPy's dtype strings for the types tensors can have.
struct DescrEntry {
    const char* descr;
    DLDataType dtype;
};
const DescrEntry kDescrs[] = {
    {"f4", {kDLFloat, 32, 1}}, {"f8", {kDLFloat, 64, 1}}, {"f2", {kDLFloat, 16, 1}},
    {"i1", {kDLInt, 8, 1}},    {"i2", {kDLInt, 16, 1}},   {"i4", {kDLInt, 32, 1}},
    {"i8", {kDLInt, 64, 1}},   {"u1", {kDLUInt, 8, 1}},   {"u2", {kDLUInt, 16, 1}},
    {"u4", {kDLUInt, 32, 1}},  {"u8", {kDLUInt, 64, 1}},  {"b1", {kDLUInt, 1, 1}},
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) user_error() << "cannot open '" << path << "'";
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Little-endian integers at `at`; callers check that the bytes exist.
uint32_t u16(std::string_view s, size_t at) {
    return static_cast<uint8_t>(s[at]) | static_cast<uint8_t>(s[at + 1]) << 8;
}
uint32_t u32(std::string_view s, size_t at) {
    return u16(s, at) | u16(s, at + 2) << 16;
}
uint64_t u64(std::string_view s, size_t at) {
    return u32(s, at) | static_cast<uint64_t>(u32(s, at + 4)) << 32;
}

// The value of `key` in a .npy header dict ({'descr': '<f4', 'fortran_order': False, ...}).
std::string header_value(const std::string& header, const std::string& key,
                         const std::string& what) {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) user_error() << what << ": .npy header has no '" << key << "'";
    size_t colon = header.find(':', k);
    size_t start = colon == std::string::npos ? colon : header.find_first_not_of(' ', colon + 1);
    if (start == std::string::npos)
        user_error() << what << ": .npy header has no value for '" << key << "'";
    size_t end = header[start] == '(' ? header.find(')', start) : header.find_first_of(",}", start);
    if (end == std::string::npos)
        user_error() << what << ": malformed .npy header value for '" << key << "'";
    if (header[start] == '(') ++end;
    return header.substr(start, end - start);
}

// The dimensions of a .npy shape tuple such as "(3, 4)" or "(5,)": non-negative, with an
// element count that fits in 63 bits.
std::vector<int64_t> parse_shape_tuple(const std::string& text, const std::string& what) {
    if (text.size() < 2 || text.front() != '(' || text.back() != ')')
        user_error() << what << ": malformed .npy shape " << text;
    std::vector<int64_t> shape;
    int64_t count = 1;
    for (size_t i = 1; i < text.size();) {
        size_t j = text.find_first_of(",)", i);
        std::string dim = text.substr(i, j - i);
        i = j + 1;
        size_t first = dim.find_first_not_of(' ');
        if (first == std::string::npos) continue;
        size_t last = dim.find_last_not_of(' ');
        dim = dim.substr(first, last - first + 1);
        if (dim.empty() || dim.size() > 18 ||
            dim.find_first_not_of("0123456789") != std::string::npos)
            user_error() << what << ": bad .npy dimension '" << dim << "' in shape " << text;
        int64_t d = std::stoll(dim);
        if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
            user_error() << what << ": .npy shape " << text << " has too many elements";
        count *= d;
        shape.push_back(d);
        if (shape.size() > 64)
            user_error() << what << ": .npy shape " << text << " has too many dimensions";
    }
    return shape;
}

// NumPy's '<U<width>' arrays: `width` UTF-32 code units per element, zero-padded; string
// tensors hold UTF-8.
NDArray read_unicode_array(const std::string& bytes, size_t at, std::vector<int64_t> shape,
                           int64_t width, const std::string& what) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;  // parse_shape_tuple bounds the product
    size_t available = (bytes.size() - at) / 4;
    // '<U0' elements take no bytes in the file, so the file cannot bound their number; a
    // string tensor still allocates each one.
    constexpr int64_t kMaxEmptyStrings = int64_t{1} << 24;
    if (width == 0 && count > kMaxEmptyStrings) {
        user_error() << what << ": a '<U0' array of " << count << " elements (at most "
                     << kMaxEmptyStrings << ")";
    }
    if (width < 0 ||
        (width > 0 && static_cast<size_t>(count) > available / static_cast<size_t>(width))) {
        user_error() << what << ": truncated .npy data";
    }
    std::vector<std::string> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
        for (int64_t k = 0; k < width; ++k) {
            char32_t c = u32(bytes, at + 4 * static_cast<size_t>(i * width + k));
            if (c == 0) break;
            if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
                user_error() << what << ": element " << i << " holds an invalid code point";
            }
            append_utf8(c, values[static_cast<size_t>(i)]);
        }
    }
    return make_string_tensor(shape, std::move(values));
}

// The '<U<width>' descr and data of a string tensor; UserError for text that is not UTF-8.
std::pair<std::string, std::string> unicode_array_data(const NDArray& array) {
    std::vector<std::u32string> code_points;
    size_t width = 1;  // NumPy's narrowest unicode type is <U1
    for (std::string_view s : string_values(array, "the array")) {
        std::u32string& cps = code_points.emplace_back();
        for (size_t i = 0; i < s.size();) {
            auto decoded = decode_utf8(s, i);
            if (!decoded) {
                user_error() << "cannot save string element " << code_points.size() - 1
                             << " as .npy: it is not valid UTF-8";
            }
            cps += decoded->first;
            i += decoded->second;
        }
        width = std::max(width, cps.size());
    }
    std::string data;
    data.reserve(code_points.size() * width * 4);
    for (const auto& cps : code_points) {
        for (size_t k = 0; k < width; ++k) {
            char32_t c = k < cps.size() ? cps[k] : 0;
            for (int b = 0; b < 4; ++b) data += static_cast<char>((c >> (8 * b)) & 0xFF);
        }
    }
    return {"<U" + std::to_string(width), std::move(data)};
}

}  // namespace

NDArray parse_npy(const std::string& bytes, const std::string& what) {
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
        user_error() << what << ": not a .npy array (bad magic)";
    }
    int major = static_cast<uint8_t>(bytes[6]);
    if (major < 1 || major > 3) user_error() << what << ": unsupported .npy version " << major;
    if (major > 1 && bytes.size() < 12) user_error() << what << ": truncated .npy header";
    size_t header_len = major == 1 ? u16(bytes, 8) : u32(bytes, 8);
    size_t header_start = major == 1 ? 10 : 12;
    if (header_len > bytes.size() - header_start) user_error() << what << ": truncated .npy header";
    std::string header = bytes.substr(header_start, header_len);
    std::string descr = header_value(header, "descr", what);
    if (descr.size() < 4 || descr.front() != '\'')
        user_error() << what << ": unsupported dtype " << descr;
    descr = descr.substr(1, descr.size() - 2);  // strip quotes
    if (descr[0] == '>') user_error() << what << ": big-endian arrays are not supported";
    std::string code = descr.substr(1);
    const DescrEntry* entry = nullptr;
    for (const auto& d : kDescrs) {
        if (code == d.descr) entry = &d;
    }
    bool unicode = code.size() > 1 && code[0] == 'U' &&
                   code.find_first_not_of("0123456789", 1) == std::string::npos;
    if (!entry && !unicode) user_error() << what << ": unsupported dtype '" << descr << "'";
    if (header_value(header, "fortran_order", what) != "False") {
        user_error() << what
                     << ": Fortran-ordered arrays are not supported (save a C-ordered copy)";
    }
    std::vector<int64_t> shape = parse_shape_tuple(header_value(header, "shape", what), what);
    size_t data_start = header_start + header_len;
    if (unicode) {
        if (code.size() > 10) user_error() << what << ": unsupported dtype '" << descr << "'";
        return read_unicode_array(bytes, data_start, shape, std::stoll(code.substr(1)), what);
    }
    // Check the size before allocating: a header may declare far more than the file holds.
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    size_t element_bytes = (entry->dtype.bits * entry->dtype.lanes + 7) / 8;
    if (static_cast<size_t>(count) > (bytes.size() - data_start) / element_bytes)
        user_error() << what << ": truncated .npy data";
    NDArray array = NDArray::empty(shape, entry->dtype);
    if (bytes.size() - data_start < array.nbytes()) user_error() << what << ": truncated .npy data";
    array.copy_from(bytes.data() + data_start, array.nbytes());
    return array;
}

std::string format_npy(const NDArray& array) {
    std::string descr;
    for (const auto& d : kDescrs) {
        // One-byte types have no byte order ('|'), the others are little-endian ('<').
        bool one_byte = d.descr[1] == '1';
        if (dl_dtype_equal(d.dtype, array.dtype()))
            descr = std::string(one_byte ? "|" : "<") + d.descr;
    }
    // NumPy has no bfloat16: its bits are saved as uint16.
    if (array.dtype().code == kDLBfloat && array.dtype().bits == 16) descr = "<u2";
    std::string data(static_cast<const char*>(array.raw_data()), array.nbytes());
    if (is_string_dtype(array.dtype())) std::tie(descr, data) = unicode_array_data(array);
    if (descr.empty()) user_error() << "cannot save a " << array.str() << " as .npy";
    std::string shape = "(";
    for (int64_t d : array.shape()) shape += std::to_string(d) + ", ";
    if (array.ndim() > 1) shape.resize(shape.size() - 2);
    if (array.ndim() == 1) shape.resize(shape.size() - 1);
    shape += ")";
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // Pad so the data starts at a multiple of 64 bytes, ending the header with a newline.
    size_t total = 10 + header.size() + 1;
    header += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    out += header;
    out += data;
    return out;
}

std::vector<std::pair<std::string, NDArray>> read_npz(const std::string& path) {
    return read_npz_bytes(read_file(path), "'" + path + "'");
}

std::vector<std::pair<std::string, NDArray>> read_npz_bytes(std::string_view zip,
                                                            const std::string& what) {
    // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
    size_t eocd = std::string::npos;
    for (size_t i = zip.size() >= 22 ? zip.size() - 22 : 0;
         i + 22 <= zip.size() && i != std::string::npos; --i) {
        if (u32(zip, i) == 0x06054b50) {
            eocd = i;
            break;
        }
        if (i == 0 || zip.size() - i > 65557) break;
    }
    if (eocd == std::string::npos) user_error() << what << " is not an .npz (zip) file";
    uint64_t entries = u16(zip, eocd + 10);
    uint64_t cd = u32(zip, eocd + 16);
    std::vector<std::pair<std::string, NDArray>> out;
    for (uint64_t e = 0; e < entries; ++e) {
        if (cd > zip.size() || zip.size() - cd < 46 || u32(zip, cd) != 0x02014b50) {
            user_error() << what << ": corrupt zip central directory";
        }
        uint32_t method = u16(zip, cd + 10);
        uint64_t csize = u32(zip, cd + 20), usize = u32(zip, cd + 24);
        uint32_t name_len = u16(zip, cd + 28), extra_len = u16(zip, cd + 30),
                 comment_len = u16(zip, cd + 32);
        uint64_t local = u32(zip, cd + 42);
        size_t record_end = cd + 46 + name_len + extra_len + comment_len;
        if (record_end > zip.size()) user_error() << what << ": corrupt zip central directory";
        std::string name(zip.substr(cd + 46, name_len));
        // ZIP64: 0xFFFFFFFF fields come from the extra field 0x0001, in order.
        size_t extra_end = cd + 46 + name_len + extra_len;
        for (size_t x = cd + 46 + name_len; x + 4 <= extra_end;) {
            uint32_t id = u16(zip, x), len = u16(zip, x + 2);
            size_t at = x + 4, end = std::min(extra_end, at + len);
            if (id == 1) {
                auto next64 = [&](uint64_t& field) {
                    if (field != 0xffffffff) return;
                    if (at + 8 > end)
                        user_error() << what << ": corrupt ZIP64 field of entry " << name;
                    field = u64(zip, at);
                    at += 8;
                };
                next64(usize);
                next64(csize);
                next64(local);
            }
            x += 4 + len;
        }
        cd = record_end;
        if (local > zip.size() || zip.size() - local < 30)
            user_error() << what << ": corrupt zip entry " << name;
        size_t data = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
        if (data > zip.size() || csize > zip.size() - data)
            user_error() << what << ": truncated entry " << name;
        std::string member;
        if (method == 0) {
            member = zip.substr(data, csize);
        } else if (method == 8) {
            // Deflate cannot expand more than 1032:1; a larger claimed size is a corrupt entry,
            // not an allocation to attempt.
            if (usize / 1032 > csize + 1 || usize > (uint64_t{1} << 40))
                user_error() << what << ": entry " << name << " claims " << usize
                             << " bytes uncompressed from " << csize;
            member.resize(usize);
            z_stream z{};
            if (inflateInit2(&z, -MAX_WBITS) != Z_OK)  // raw deflate, as zip stores it
                user_error() << what << ": cannot inflate entry " << name;
            z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zip.data() + data));
            z.avail_in = static_cast<uInt>(std::min<uint64_t>(csize, UINT32_MAX));
            z.next_out = reinterpret_cast<Bytef*>(member.data());
            z.avail_out = static_cast<uInt>(std::min<uint64_t>(usize, UINT32_MAX));
            int rc = inflate(&z, Z_FINISH);
            inflateEnd(&z);
            if (rc != Z_STREAM_END || z.total_out != usize)
                user_error() << what << ": cannot inflate entry " << name;
        } else {
            user_error() << what << ": entry " << name << " uses zip method " << method;
        }
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
            name.resize(name.size() - 4);
        out.emplace_back(name, parse_npy(member, what + " entry " + name));
    }
    return out;
}

void write_npz(const std::string& path,
               const std::vector<std::pair<std::string, NDArray>>& arrays) {
    std::string zip, central;
    auto put16 = [](std::string& s, uint32_t v) {
        s += static_cast<char>(v & 0xff);
        s += static_cast<char>((v >> 8) & 0xff);
    };
    auto put32 = [&](std::string& s, uint32_t v) {
        put16(s, v & 0xffff);
        put16(s, v >> 16);
    };
    for (const auto& [name, array] : arrays) {
        std::string file = name + ".npy";
        std::string data = format_npy(array);
        if (data.size() >= 0xffffffffu)
            user_error() << "'" << path << "': array " << name << " is too large";
        uint32_t crc =
            crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
        uint32_t offset = static_cast<uint32_t>(zip.size());
        put32(zip, 0x04034b50);
        put16(zip, 20), put16(zip, 0), put16(zip, 0), put16(zip, 0), put16(zip, 0x21);
        put32(zip, crc), put32(zip, data.size()), put32(zip, data.size());
        put16(zip, file.size()), put16(zip, 0);
        zip += file + data;
        put32(central, 0x02014b50);
        put16(central, 20), put16(central, 20), put16(central, 0), put16(central, 0);
        put16(central, 0), put16(central, 0x21);
        put32(central, crc), put32(central, data.size()), put32(central, data.size());
        put16(central, file.size()), put16(central, 0), put16(central, 0), put16(central, 0);
        put16(central, 0), put32(central, 0), put32(central, offset);
        central += file;
    }
    uint32_t cd_offset = static_cast<uint32_t>(zip.size());
    zip += central;
    put32(zip, 0x06054b50);
    put16(zip, 0), put16(zip, 0), put16(zip, arrays.size()), put16(zip, arrays.size());
    put32(zip, central.size()), put32(zip, cd_offset), put16(zip, 0);
    std::ofstream out(path, std::ios::binary);
    out.write(zip.data(), static_cast<std::streamsize>(zip.size()));
    if (!out) user_error() << "cannot write '" << path << "'";
}

}  // namespace anvil::runtime
