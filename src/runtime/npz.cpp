#include "runtime/npz.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
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

uint32_t u16(const std::string& s, size_t at) {
    return static_cast<uint8_t>(s[at]) | static_cast<uint8_t>(s[at + 1]) << 8;
}
uint32_t u32(const std::string& s, size_t at) {
    return u16(s, at) | u16(s, at + 2) << 16;
}
uint64_t u64(const std::string& s, size_t at) {
    return u32(s, at) | static_cast<uint64_t>(u32(s, at + 4)) << 32;
}

// The value of `key` in a .npy header dict ({'descr': '<f4', 'fortran_order': False, ...}).
std::string header_value(const std::string& header, const std::string& key,
                         const std::string& what) {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) user_error() << what << ": .npy header has no '" << key << "'";
    size_t colon = header.find(':', k);
    size_t start = header.find_first_not_of(' ', colon + 1);
    size_t end =
        header[start] == '(' ? header.find(')', start) + 1 : header.find_first_of(",}", start);
    return header.substr(start, end - start);
}

// NumPy's '<U<width>' arrays: `width` UTF-32 code units per element, zero-padded; string
// tensors hold UTF-8.
NDArray read_unicode_array(const std::string& bytes, size_t at, std::vector<int64_t> shape,
                           int64_t width, const std::string& what) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    if (width < 0 || (bytes.size() - at) / 4 < static_cast<size_t>(count * width)) {
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
    size_t header_len = major == 1 ? u16(bytes, 8) : u32(bytes, 8);
    size_t header_start = major == 1 ? 10 : 12;
    if (header_start + header_len > bytes.size()) user_error() << what << ": truncated .npy header";
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
    std::string shape_text = header_value(header, "shape", what);
    std::vector<int64_t> shape;
    for (size_t i = 1; i < shape_text.size();) {
        size_t j = shape_text.find_first_of(",)", i);
        std::string dim = shape_text.substr(i, j - i);
        if (dim.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(dim));
        i = j + 1;
    }
    size_t data_start = header_start + header_len;
    if (unicode) {
        return read_unicode_array(bytes, data_start, shape, std::stoll(code.substr(1)), what);
    }
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
    std::string zip = read_file(path);
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
    if (eocd == std::string::npos) user_error() << "'" << path << "' is not an .npz (zip) file";
    uint64_t entries = u16(zip, eocd + 10);
    uint64_t cd = u32(zip, eocd + 16);
    std::vector<std::pair<std::string, NDArray>> out;
    for (uint64_t e = 0; e < entries; ++e) {
        if (cd + 46 > zip.size() || u32(zip, cd) != 0x02014b50) {
            user_error() << "'" << path << "': corrupt zip central directory";
        }
        uint32_t method = u16(zip, cd + 10);
        uint64_t csize = u32(zip, cd + 20), usize = u32(zip, cd + 24);
        uint32_t name_len = u16(zip, cd + 28), extra_len = u16(zip, cd + 30),
                 comment_len = u16(zip, cd + 32);
        uint64_t local = u32(zip, cd + 42);
        std::string name = zip.substr(cd + 46, name_len);
        // ZIP64: 0xFFFFFFFF fields come from the extra field 0x0001, in order.
        for (size_t x = cd + 46 + name_len; x + 4 <= cd + 46 + name_len + extra_len;) {
            uint32_t id = u16(zip, x), len = u16(zip, x + 2);
            if (id == 1) {
                size_t at = x + 4;
                if (usize == 0xffffffff) usize = u64(zip, at), at += 8;
                if (csize == 0xffffffff) csize = u64(zip, at), at += 8;
                if (local == 0xffffffff) local = u64(zip, at);
            }
            x += 4 + len;
        }
        cd += 46 + name_len + extra_len + comment_len;
        if (local + 30 > zip.size()) user_error() << "'" << path << "': corrupt zip entry " << name;
        size_t data = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
        if (data + csize > zip.size()) user_error() << "'" << path << "': truncated entry " << name;
        std::string member;
        if (method == 0) {
            member = zip.substr(data, csize);
        } else if (method == 8) {
            member.resize(usize);
            z_stream z{};
            inflateInit2(&z, -MAX_WBITS);  // raw deflate, as zip stores it
            z.next_in = reinterpret_cast<Bytef*>(zip.data() + data);
            z.avail_in = static_cast<uInt>(csize);
            z.next_out = reinterpret_cast<Bytef*>(member.data());
            z.avail_out = static_cast<uInt>(usize);
            int rc = inflate(&z, Z_FINISH);
            inflateEnd(&z);
            if (rc != Z_STREAM_END)
                user_error() << "'" << path << "': cannot inflate entry " << name;
        } else {
            user_error() << "'" << path << "': entry " << name << " uses zip method " << method;
        }
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
            name.resize(name.size() - 4);
        out.emplace_back(name, parse_npy(member, "'" + path + "' entry " + name));
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
