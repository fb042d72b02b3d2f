// load_npy / save_npy: NumPy's .npy format (see include/graft/npy.h).
//
// Format (numpy/lib/format.py): the magic "\x93NUMPY", a major and a minor
// version byte, the header length (2 bytes little-endian in 1.0, 4 bytes in
// 2.0 and 3.0), then the header: a Python dict literal with exactly the keys
// 'descr', 'fortran_order' and 'shape', padded with spaces and ended by a
// newline; then the raw elements, row-major.
#include "graft/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "api/array_impl.h"
#include "api/device_map.h"
#include "api/dispatch.h"
#include "graft/errors.h"
#include "ir/dtype.h"
#include "ir/value.h"

namespace graft {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;            // NumPy's ARRAY_ALIGN: data starts at a multiple of this
constexpr size_t kMaxHeaderV1 = 65535;   // the 2-byte header length of version 1.0
constexpr size_t kMaxQuote = 40;         // how much of a bad header an error message quotes

constexpr bool kHostLittle = std::endian::native == std::endian::little;
static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "graft's .npy I/O needs a little- or big-endian host");

std::string where(const char* fn, const std::string& path) {
  std::string s = fn;
  s += "('";
  s += path;
  s += "'): ";
  return s;
}

// Printable excerpt of untrusted header text for error messages.
std::string quote(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxQuote)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  if (text.size() > kMaxQuote) out += "...";
  return out;
}

void byteswap_elements(unsigned char* data, size_t count, size_t item) {
  if (item <= 1) return;
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * item, data + (i + 1) * item);
}

// ---- descriptors

struct Descr {
  DType dtype;
  bool little;  // byte order of the elements in the file
};

// bf16 has no NumPy descriptor: ml_dtypes' bfloat16 saves as 2-byte void records, and so does graft's.
const char* npy_descr(DType dtype) {
  switch (dtype) {
    case DType::bool_: return "|b1";
    case DType::i8: return "|i1";
    case DType::i16: return "<i2";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::u8: return "|u1";
    case DType::u16: return "<u2";
    case DType::u32: return "<u4";
    case DType::u64: return "<u8";
    case DType::f16: return "<f2";
    case DType::bf16: return "|V2";
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::c64: return "<c8";
    case DType::c128: return "<c16";
  }
  return "?";
}

// What a descriptor graft cannot load is, for the error message.
std::string describe_unsupported(std::string_view code) {
  if (code.empty()) return "an empty descriptor";
  static const struct {
    const char* code;
    const char* name;
  } known[] = {{"c32", "complex256"},
               {"f16", "float128"},
               {"f12", "float96"},
               {"V2", "2-byte void records (ml_dtypes' bfloat16: load_npy(path, graft::bf16) reads them)"}};
  for (const auto& k : known)
    if (code == k.code) return k.name;
  switch (code[0]) {
    case 'O': return "object (pickled Python objects)";
    case 'U': return "a unicode string dtype";
    case 'S': case 'a': return "a bytes string dtype";
    case 'V': return "a void/structured dtype";
    case 'M': return "datetime64";
    case 'm': return "timedelta64";
    case 'c': return "a complex dtype";
    default: return "a dtype graft does not have";
  }
}

Descr parse_descr(const std::string& descr, const std::string& ctx, std::optional<DType> records_as) {
  std::string_view code = descr;
  bool little = kHostLittle;
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '=' || code[0] == '|')) {
    if (code[0] == '<') little = true;
    if (code[0] == '>') little = false;
    code.remove_prefix(1);  // '=' and '|' mean native, as in NumPy
  }
  std::optional<DType> dtype;
  static const struct {
    const char* code;
    DType dtype;
  } kCodes[] = {{"b1", DType::bool_}, {"?", DType::bool_}, {"i1", DType::i8},  {"i2", DType::i16},
                {"i4", DType::i32},   {"i8", DType::i64},  {"u1", DType::u8},  {"u2", DType::u16},
                {"u4", DType::u32},   {"u8", DType::u64},  {"f2", DType::f16}, {"e", DType::f16},
                {"f4", DType::f32},   {"f8", DType::f64},  {"c8", DType::c64}, {"c16", DType::c128}};
  for (const auto& c : kCodes)
    if (code == c.code) dtype = c.dtype;
  if (code == "V2" && records_as) dtype = *records_as;
  if (!dtype) {
    std::string msg = ctx;
    msg += "unsupported dtype '";
    msg += quote(descr);
    msg += "' (";
    msg += describe_unsupported(code);
    msg +=
        "); graft loads bool, (u)int8 to (u)int64, float16, float32, float64, complex64 and complex128 "
        "(convert in NumPy first, e.g. a.astype(np.float32))";
    throw DTypeError(msg);
  }
  return {*dtype, little};
}

// ---- the header: a small parser for the Python dict literal NumPy writes

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string ctx) : s_(text), ctx_(std::move(ctx)) {}

  struct Result {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  Result parse() {
    Result r;
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{');
    skip_ws();
    while (!at('}')) {
      std::string key = parse_string("a dict key");
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) fail("duplicate key 'descr'");
        have_descr = true;
        if (at('[')) {
          std::string msg = ctx_;
          msg += "unsupported dtype: structured (record) dtypes are not supported; graft loads arrays of numbers";
          throw DTypeError(msg);
        }
        r.descr = parse_string("the 'descr' value");
      } else if (key == "fortran_order") {
        if (have_fortran) fail("duplicate key 'fortran_order'");
        have_fortran = true;
        r.fortran_order = parse_bool();
      } else if (key == "shape") {
        if (have_shape) fail("duplicate key 'shape'");
        have_shape = true;
        r.shape = parse_shape();
      } else {
        fail("unexpected key '" + quote(key) + "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      skip_ws();
      if (at(',')) {
        ++pos_;
        skip_ws();
      } else if (!at('}')) {
        fail_here("expected ',' or '}'");
      }
    }
    ++pos_;  // '}'
    skip_ws();
    if (pos_ != s_.size()) fail_here("unexpected text after the dict");
    if (!have_descr) fail("missing key 'descr'");
    if (!have_fortran) fail("missing key 'fortran_order'");
    if (!have_shape) fail("missing key 'shape'");
    return r;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string msg = ctx_;
    msg += "unparsable header: ";
    msg += what;
    msg += "; header: \"";
    msg += quote(s_);
    msg += "\"";
    throw Error(msg);
  }
  [[noreturn]] void fail_here(const std::string& what) const {
    std::string w = what;
    if (pos_ >= s_.size()) {
      w += " but the header ended";
    } else {
      w += " at offset ";
      w += std::to_string(pos_);
      w += ", found \"";
      w += quote(s_.substr(pos_, 10));
      w += "\"";
    }
    fail(w);
  }

  bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (!at(c)) fail_here(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool starts_with(std::string_view word) const { return s_.substr(pos_, word.size()) == word; }

  std::string parse_string(const char* what) {
    if (!at('\'') && !at('"')) fail_here(std::string("expected a string for ") + what);
    char q = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') {
        if (++pos_ >= s_.size()) break;
      }
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }

  bool parse_bool() {
    if (starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (starts_with("False")) {
      pos_ += 5;
      return false;
    }
    fail_here("expected True or False for 'fortran_order'");
  }

  Shape parse_shape() {
    expect('(');
    Shape shape;
    skip_ws();
    bool need_comma_for_single = true;
    while (!at(')')) {
      shape.push_back(parse_dim());
      if (shape.size() > static_cast<size_t>(ir::kMaxRank)) {
        std::string msg = ctx_;
        msg += "the shape has more than ";
        msg += std::to_string(ir::kMaxRank);
        msg += " dimensions, graft's limit";
        throw ShapeError(msg);
      }
      skip_ws();
      if (at(',')) {
        ++pos_;
        skip_ws();
        need_comma_for_single = false;
      } else if (!at(')')) {
        fail_here("expected ',' or ')' in 'shape'");
      }
    }
    // Python's (3) is an int, not a tuple; NumPy always writes (3,).
    if (shape.size() == 1 && need_comma_for_single) fail("'shape' must be a tuple, e.g. (3,), not (3)");
    ++pos_;  // ')'
    return shape;
  }

  int64_t parse_dim() {
    bool negative = false;
    if (at('-')) {
      negative = true;
      ++pos_;
    }
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') fail_here("expected an integer dimension in 'shape'");
    size_t start = pos_;
    int64_t value = 0;
    bool overflow = false;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      int digit = s_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) overflow = true;
      else value = value * 10 + digit;
      ++pos_;
    }
    if (at('L') || at('l')) ++pos_;  // Python 2 longs, as old NumPy wrote them
    std::string text(s_.substr(start, pos_ - start));
    if (negative) {
      std::string msg = ctx_;
      msg += "negative dimension -";
      msg += text;
      msg += " in the header's shape";
      throw ShapeError(msg);
    }
    if (overflow || value > ir::kMaxDim) {
      std::string msg = ctx_;
      msg += "dimension ";
      msg += text;
      msg += " in the header's shape is too large (graft's limit is 2^40)";
      throw ShapeError(msg);
    }
    return value;
  }

  std::string_view s_;
  std::string ctx_;
  size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

namespace {

Array load_npy_as(const std::string& path, std::optional<DType> records_as) {
  const std::string ctx = where("load_npy", path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(ctx + "is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string msg = ctx;
    msg += "cannot open the file";
    if (err) {
      msg += ": ";
      msg += std::strerror(err);
    }
    throw Error(msg);
  }
  in.seekg(0, std::ios::end);
  std::streamoff end = in.tellg();
  in.seekg(0, std::ios::beg);
  if (end < 0 || !in) throw Error(ctx + "cannot determine the file's size");
  const uint64_t file_size = static_cast<uint64_t>(end);

  auto read_exact = [&](void* dst, uint64_t n, const char* what) {
    in.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (static_cast<uint64_t>(in.gcount()) != n) {
      std::string msg = ctx;
      msg += "read error while reading ";
      msg += what;
      throw Error(msg);
    }
  };

  // Magic and version.
  unsigned char pre[12] = {};
  if (file_size < kMagicLen + 2) {
    read_exact(pre, file_size, "the magic string");
    const bool magic_prefix = std::memcmp(pre, kMagic, std::min<size_t>(file_size, kMagicLen)) == 0;
    std::string msg = ctx;
    msg += magic_prefix ? "truncated file: " : "not a .npy file: ";
    msg += std::to_string(file_size);
    msg += " bytes is too short for the .npy magic string \"\\x93NUMPY\" and version";
    throw Error(msg);
  }
  read_exact(pre, kMagicLen + 2, "the magic string");
  if (std::memcmp(pre, kMagic, kMagicLen) != 0) {
    std::string msg = ctx;
    msg += "not a .npy file: the file starts with \"";
    msg += quote(std::string_view(reinterpret_cast<const char*>(pre), kMagicLen));
    msg += "\", not the .npy magic string \"\\x93NUMPY\"";
    throw Error(msg);
  }
  const int major = pre[6], minor = pre[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0)) {
    std::string msg = ctx;
    msg += "unsupported .npy format version ";
    msg += std::to_string(major);
    msg += ".";
    msg += std::to_string(minor);
    msg += " (graft reads 1.0, 2.0 and 3.0)";
    throw Error(msg);
  }
  const int len_bytes = major == 1 ? 2 : 4;
  const uint64_t prefix = kMagicLen + 2 + static_cast<uint64_t>(len_bytes);
  if (file_size < prefix) {
    std::string msg = ctx;
    msg += "truncated header: the file ends inside the header length field (";
    msg += std::to_string(file_size);
    msg += " bytes)";
    throw Error(msg);
  }
  read_exact(pre + kMagicLen + 2, static_cast<uint64_t>(len_bytes), "the header length");
  const uint64_t header_len = read_le(pre + kMagicLen + 2, len_bytes);
  if (header_len > file_size - prefix) {
    std::string msg = ctx;
    msg += "truncated header: the header length field says ";
    msg += std::to_string(header_len);
    msg += " bytes but only ";
    msg += std::to_string(file_size - prefix);
    msg += " remain in the file";
    throw Error(msg);
  }
  std::string header(static_cast<size_t>(header_len), '\0');
  read_exact(header.data(), header_len, "the header");

  HeaderParser::Result h = HeaderParser(header, ctx).parse();
  Descr descr = parse_descr(h.descr, ctx, records_as);
  if (h.fortran_order) {
    std::string msg = ctx;
    msg += "Fortran order (fortran_order: True) is unsupported; graft arrays are row-major. Save a C-ordered copy "
           "instead: np.save(path, np.ascontiguousarray(a))";
    throw UnsupportedError(msg);
  }

  ir::ValueType type{descr.dtype, h.shape};
  const int64_t count = ir::checked_num_elements(type.shape);
  if (count < 0) {
    std::string msg = ctx;
    msg += "shape ";
    msg += ir::shape_str(type.shape);
    msg += " has more elements than fit in int64";
    throw ShapeError(msg);
  }
  const uint64_t item = ir::dtype_size(descr.dtype);
  const uint64_t remaining = file_size - prefix - header_len;
  // Compare in a form that cannot overflow: count * item vs remaining.
  const bool too_short = static_cast<uint64_t>(count) > remaining / item ||
                         static_cast<uint64_t>(count) * item > remaining;
  if (too_short || static_cast<uint64_t>(count) * item < remaining) {
    std::string msg = ctx;
    msg += too_short ? "truncated data: " : "unexpected trailing data: ";
    msg += "shape ";
    msg += ir::shape_str(type.shape);
    msg += " of '";
    msg += quote(h.descr);
    msg += "' needs ";
    if (static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / item) {
      msg += std::to_string(count);
      msg += " elements of ";
      msg += std::to_string(item);
      msg += " bytes";
    } else {
      msg += std::to_string(static_cast<uint64_t>(count) * item);
      msg += " bytes";
    }
    msg += " of data, but the file has ";
    msg += std::to_string(remaining);
    msg += " bytes after the header";
    throw Error(msg);
  }

  std::shared_ptr<detail::ArrayImpl> impl;
  {
    runtime::DeviceScope on(detail::fill_device());
    impl = detail::allocate_concrete(type);
  }
  const uint64_t nbytes = static_cast<uint64_t>(count) * item;
  auto* data = static_cast<unsigned char*>(impl->buffer->data());
  if (nbytes > 0) read_exact(data, nbytes, "the data");
  if (descr.little != kHostLittle) {  // a complex number's parts swap one by one
    const uint64_t part = ir::is_complex(descr.dtype) ? item / 2 : item;
    byteswap_elements(data, static_cast<size_t>(count * (item / part)), static_cast<size_t>(part));
  }
  if (descr.dtype == DType::bool_)
    for (uint64_t i = 0; i < nbytes; ++i) data[i] = data[i] != 0 ? 1 : 0;  // a C++ bool must be 0 or 1
  detail::place_fresh(*impl);
  return Array(impl);
}

}  // namespace

Array load_npy(const std::string& path) { return load_npy_as(path, std::nullopt); }

Array load_npy(const std::string& path, DType records_as) {
  if (ir::dtype_size(records_as) != 2)
    throw DTypeError(where("load_npy", path) + "2-byte records cannot be read as " + dtype_name(records_as) +
                     " (give bf16 for ml_dtypes' bfloat16)");
  return load_npy_as(path, records_as);
}

void save_npy(const std::string& path, const Array& x) {
  const std::string ctx = where("save_npy", path);
  const detail::ArrayImpl& impl = detail::live_impl(x, "save_npy");
  if (impl.traced()) {
    std::string msg = ctx;
    msg += "needs a concrete value, but this Array (";
    msg += ir::type_str(impl.type);
    msg += ") is traced inside a transform; its value is not known yet. Return it from the transform and save "
           "the result.";
    throw ConcretizationError(msg);
  }
  const int64_t count = impl.type.num_elements();
  const size_t item = ir::dtype_size(impl.type.dtype);
  const size_t nbytes = static_cast<size_t>(count) * item;
  if (nbytes > 0 && (!detail::data_buffer(impl) || detail::data_buffer(impl)->size() < nbytes))
    throw Error(ctx + "the Array has no buffer of the expected size");

  // The header, as NumPy writes it.
  std::string dict = "{'descr': '";
  dict += npy_descr(impl.type.dtype);
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < impl.type.shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(impl.type.shape[i]);
  }
  if (impl.type.shape.size() == 1) dict += ",";
  dict += "), }";

  auto padded_len = [&](size_t len_bytes) {
    size_t unpadded = kMagicLen + 2 + len_bytes + dict.size() + 1;  // + '\n'
    return dict.size() + 1 + (kAlign - unpadded % kAlign) % kAlign;
  };
  int major = 1;
  size_t header_len = padded_len(2);
  if (header_len > kMaxHeaderV1) {
    major = 2;
    header_len = padded_len(4);
  }
  std::string head(kMagic, kMagicLen);
  head += static_cast<char>(major);
  head += '\0';
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) head += static_cast<char>((header_len >> (8 * i)) & 0xff);
  head += dict;
  head.append(header_len - dict.size() - 1, ' ');
  head += '\n';

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    int err = errno;
    std::string msg = ctx;
    msg += "cannot open the file for writing";
    if (err) {
      msg += ": ";
      msg += std::strerror(err);
    }
    throw Error(msg);
  }
  out.write(head.data(), static_cast<std::streamsize>(head.size()));
  if (nbytes > 0) {
    const runtime::BufferPtr host = detail::host_buffer(impl);
    const char* data = static_cast<const char*>(host->data());
    if (kHostLittle || item == 1) {
      out.write(data, static_cast<std::streamsize>(nbytes));
    } else {
      std::vector<unsigned char> swapped(data, data + nbytes);
      byteswap_elements(swapped.data(), static_cast<size_t>(count), item);
      out.write(reinterpret_cast<const char*>(swapped.data()), static_cast<std::streamsize>(nbytes));
    }
  }
  out.close();
  if (!out) throw Error(ctx + "writing the file failed (disk full or I/O error?)");
}

}  // namespace graft
