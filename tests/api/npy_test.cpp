// .npy I/O: bit-exact round trips, files NumPy wrote, files NumPy reads back,
// and malformed files that must throw clear graft errors (never crash or
// allocate what the header claims).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "graft/graft.h"

using namespace graft;
using Catch::Matchers::Contains;

namespace {

std::string tmp_dir() {
  std::string d = GRAFT_TEST_TMPDIR;
  d += "/npy";
  std::filesystem::create_directories(d);
  return d;
}

std::string tmp_path(const std::string& name) { return tmp_dir() + "/" + name; }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  REQUIRE(out);
}

// A Python interpreter that has NumPy (scripts/setup.sh installs python3-numpy;
// a python3 earlier on PATH, e.g. pyenv's, may lack it). GRAFT_PYTHON overrides.
const std::string& python() {
  static const std::string py = [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("GRAFT_PYTHON")) candidates.emplace_back(env);
    candidates.emplace_back("python3");
    candidates.emplace_back("/usr/bin/python3");
    for (const std::string& c : candidates) {
      std::string cmd = c;
      cmd += " -c \"import numpy\" >/dev/null 2>&1";
      if (std::system(cmd.c_str()) == 0) return c;
    }
    return std::string();
  }();
  return py;
}

// Writes `script` to a file and runs it with the temporary directory as
// sys.argv[1]; returns the exit status (0 on success).
int run_python(const std::string& name, const std::string& script) {
  INFO("no python3 with NumPy found (install python3-numpy: scripts/setup.sh, or set GRAFT_PYTHON)");
  REQUIRE_FALSE(python().empty());
  std::string file = tmp_path(name + ".py");
  write_bytes(file, script);
  std::string cmd = python();
  cmd += " '";
  cmd += file;
  cmd += "' '";
  cmd += tmp_dir();
  cmd += "'";
  return std::system(cmd.c_str());
}

// Where the data starts in a .npy file of version 1.0.
size_t data_offset_v1(const std::string& bytes) {
  REQUIRE(bytes.size() >= 10);
  size_t len = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  return 10 + len;
}

template <class T>
void check_values(const Array& a, DType dtype, const Shape& shape, const std::vector<T>& expected) {
  REQUIRE(a.dtype() == dtype);
  REQUIRE(a.shape() == shape);
  std::vector<T> got = a.to_vector<T>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if constexpr (std::is_same_v<T, float>) {
      CHECK(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(expected[i]));
    } else if constexpr (std::is_same_v<T, double>) {
      CHECK(std::bit_cast<uint64_t>(got[i]) == std::bit_cast<uint64_t>(expected[i]));
    } else {
      CHECK(got[i] == expected[i]);
    }
  }
}

// Saves array(values, shape), loads it back and checks the bytes are
// identical, the file is laid out as NumPy lays it out, and that saving the
// loaded array writes the same file.
template <class T>
void round_trip(const std::string& name, const std::vector<T>& values, const Shape& shape) {
  INFO("round trip " << name);
  Array a = array<T>(values, shape);
  std::string path = tmp_path(name + ".npy");
  save_npy(path, a);
  Array b = load_npy(path);
  REQUIRE(b.dtype() == a.dtype());
  REQUIRE(b.shape() == shape);
  REQUIRE(b.nbytes() == a.nbytes());
  CHECK(std::memcmp(a.unsafe_buffer_pointer(), b.unsafe_buffer_pointer(), static_cast<size_t>(a.nbytes())) == 0);
  check_values<T>(b, a.dtype(), shape, values);

  std::string bytes = read_bytes(path);
  CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  size_t offset = data_offset_v1(bytes);
  CHECK(offset % 64 == 0);
  CHECK(bytes[offset - 1] == '\n');
  CHECK(bytes.size() == offset + static_cast<size_t>(a.nbytes()));

  std::string path2 = tmp_path(name + "_again.npy");
  save_npy(path2, b);
  CHECK(read_bytes(path2) == bytes);
}

// A .npy file with the given header text (unpadded) and `data_bytes` zero bytes of data.
std::string npy_file(const std::string& header, size_t data_bytes, int major = 1, int minor = 0) {
  std::string s("\x93NUMPY", 6);
  s += static_cast<char>(major);
  s += static_cast<char>(minor);
  size_t len = header.size();
  int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) s += static_cast<char>((len >> (8 * i)) & 0xff);
  s += header;
  s.append(data_bytes, '\0');
  return s;
}

std::string dict(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  std::string s = "{'descr': '";
  s += descr;
  s += "', 'fortran_order': ";
  s += fortran;
  s += ", 'shape': ";
  s += shape;
  s += ", }\n";
  return s;
}

// load_npy(path) must throw exactly E with the path and every fragment in its message.
template <class E>
void expect_load_error(const std::string& path, const std::vector<std::string>& fragments) {
  INFO("loading " << path);
  try {
    load_npy(path);
    FAIL("load_npy did not throw");
  } catch (const Error& e) {
    INFO("message: " << e.what());
    CHECK(typeid(e) == typeid(E));
    CHECK_THAT(e.what(), Contains(path));
    for (const std::string& f : fragments) CHECK_THAT(e.what(), Contains(f));
  }
}

template <class E>
void expect_bad_file(const std::string& name, const std::string& bytes, const std::vector<std::string>& fragments) {
  std::string path = tmp_path("bad_" + name + ".npy");
  write_bytes(path, bytes);
  expect_load_error<E>(path, fragments);
}

// NumPy's values, computed the same way in C++ (see the Python snippets).
std::vector<float> f32_ramp(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(static_cast<double>(i) / 7.0 - 0.5));
  return v;
}
std::vector<double> f64_ramp(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<double>(i) / 7.0 - 0.5);
  return v;
}

template <class T>
std::string py_list(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ", ";
    if constexpr (std::is_same_v<T, bool>) s += v[i] ? "True" : "False";
    else if constexpr (std::is_same_v<T, float>) s += std::to_string(std::bit_cast<uint32_t>(v[i]));
    else if constexpr (std::is_same_v<T, double>) s += std::to_string(std::bit_cast<uint64_t>(v[i]));
    else s += std::to_string(v[i]);
  }
  s += "]";
  return s;
}

const float kNaN32 = std::bit_cast<float>(uint32_t{0x7fc12345});  // a quiet NaN with a payload
const double kNaN64 = std::bit_cast<double>(uint64_t{0x7ff8000012345678});

}  // namespace

TEST_CASE("npy: every dtype round-trips bit-exactly", "[api][npy]") {
  const float finf = std::numeric_limits<float>::infinity();
  const double dinf = std::numeric_limits<double>::infinity();
  round_trip<float>("rt_f32",
                    {kNaN32, -0.0f, 0.0f, finf, -finf, std::numeric_limits<float>::max(),
                     std::numeric_limits<float>::lowest(), std::numeric_limits<float>::denorm_min(), 1.5f, -2.25f,
                     std::numeric_limits<float>::quiet_NaN(), 1e-30f},
                    {3, 4});
  round_trip<double>("rt_f64",
                     {kNaN64, -0.0, dinf, -dinf, std::numeric_limits<double>::max(),
                      std::numeric_limits<double>::denorm_min(), 0.1, -1e300},
                     {2, 2, 2});
  round_trip<int32_t>("rt_i32",
                      {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), -1, 0, 1, 123456},
                      {6});
  round_trip<int64_t>("rt_i64",
                      {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, 0,
                       int64_t{1} << 53, (int64_t{1} << 53) + 1},
                      {3, 2});
  round_trip<uint32_t>("rt_u32", {0u, 1u, 0x80000000u, std::numeric_limits<uint32_t>::max()}, {2, 1, 2});
  round_trip<bool>("rt_bool", {true, false, false, true, true, false}, {2, 3});

  // 0-d arrays of every dtype
  round_trip<float>("rt_0d_f32", {-0.0f}, {});
  round_trip<double>("rt_0d_f64", {kNaN64}, {});
  round_trip<int32_t>("rt_0d_i32", {std::numeric_limits<int32_t>::min()}, {});
  round_trip<int64_t>("rt_0d_i64", {std::numeric_limits<int64_t>::max()}, {});
  round_trip<uint32_t>("rt_0d_u32", {std::numeric_limits<uint32_t>::max()}, {});
  round_trip<bool>("rt_0d_bool", {true}, {});

  // empty arrays
  round_trip<float>("rt_empty_f32", {}, {0, 3});
  round_trip<int64_t>("rt_empty_i64", {}, {0});
  round_trip<bool>("rt_empty_bool", {}, {2, 0, 5});

  // a larger 4-d array
  std::vector<double> big;
  for (int i = 0; i < 2 * 3 * 4 * 5; ++i) big.push_back(std::sin(i) * 1e10);
  round_trip<double>("rt_4d_f64", big, {2, 3, 4, 5});

  // The header is NumPy's text.
  save_npy(tmp_path("rt_header.npy"), zeros({2, 3}, f32));
  std::string bytes = read_bytes(tmp_path("rt_header.npy"));
  CHECK(bytes.substr(10, 59) == "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  save_npy(tmp_path("rt_header1.npy"), zeros({7}, bool_));
  CHECK_THAT(read_bytes(tmp_path("rt_header1.npy")), Contains("{'descr': '|b1', 'fortran_order': False, 'shape': (7,), }"));
  save_npy(tmp_path("rt_header0.npy"), scalar(1, i64));
  CHECK_THAT(read_bytes(tmp_path("rt_header0.npy")), Contains("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"));
}

TEST_CASE("npy: files written by NumPy load bit-exactly", "[api][npy]") {
  const std::string script = R"PY(
import sys
import numpy as np
d = sys.argv[1] + '/'
i = np.arange(24)
np.save(d + 'np_bool.npy', (i[:12] % 3 == 0).reshape(3, 4))
np.save(d + 'np_i32.npy', (i * 7919 - 50000).astype('<i4').reshape(2, 3, 4))
np.save(d + 'np_i64.npy', np.arange(10, dtype='<i8') * 1000000007 - 3000000000)
np.save(d + 'np_u32.npy', (np.arange(10, dtype=np.uint64) * 429496729).astype('<u4'))
np.save(d + 'np_f32.npy', (np.arange(12) / 7 - 0.5).astype('<f4').reshape(4, 3))
np.save(d + 'np_f64.npy', (np.arange(12) / 7 - 0.5).reshape(2, 6))
np.save(d + 'np_0d.npy', np.array(2.5))
np.save(d + 'np_0d_i32.npy', np.array(-7, dtype='<i4'))
np.save(d + 'np_special.npy', np.array([np.nan, -0.0, np.inf, -np.inf, np.finfo(np.float32).max,
                                        np.finfo(np.float32).tiny], dtype='<f4'))
np.save(d + 'np_limits.npy', np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0], dtype='<i8'))
np.save(d + 'np_empty.npy', np.zeros((0, 3), dtype='<f4'))
np.save(d + 'np_big_endian.npy', (np.arange(6) * 1000003 - 7).astype('>i4').reshape(2, 3))
np.save(d + 'np_big_endian_f8.npy', (np.arange(5) / 7 - 0.5).astype('>f8'))
with open(d + 'np_v2.npy', 'wb') as f:
    np.lib.format.write_array(f, (np.arange(12) / 7 - 0.5).reshape(3, 4), version=(2, 0))
with open(d + 'np_v3.npy', 'wb') as f:
    np.lib.format.write_array(f, (i * 7919 - 50000).astype('<i4'), version=(3, 0))
np.save(d + 'np_fortran.npy', np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3)))
np.save(d + 'np_f16.npy', np.array([0.5, -2, 65504, 1e-7], dtype='<f2'))
np.save(d + 'np_c8.npy', np.array([1 + 2j, -3.5j], dtype='<c8'))
np.save(d + 'np_c16_be.npy', np.array([1 + 2j, -3.5j], dtype='>c16'))
np.save(d + 'np_u8.npy', np.arange(3, dtype=np.uint8) * 100)
np.save(d + 'np_i16_be.npy', np.array([-300, 7], dtype='>i2'))
np.save(d + 'np_u64.npy', np.array([2**64 - 1, 5], dtype='<u8'))
np.save(d + 'np_f128.npy', np.arange(3, dtype=np.longdouble))
np.save(d + 'np_v2_records.npy', np.array([0x3f80, 0xc020], dtype='<u2').view('V2'))
np.save(d + 'np_object.npy', np.array([1, 'a', None], dtype=object), allow_pickle=True)
np.save(d + 'np_struct.npy', np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]))
)PY";
  REQUIRE(run_python("write_npy", script) == 0);

  std::vector<bool> bools;
  for (int i = 0; i < 12; ++i) bools.push_back(i % 3 == 0);
  check_values<bool>(load_npy(tmp_path("np_bool.npy")), bool_, {3, 4}, bools);

  std::vector<int32_t> i32s;
  for (int i = 0; i < 24; ++i) i32s.push_back(i * 7919 - 50000);
  check_values<int32_t>(load_npy(tmp_path("np_i32.npy")), i32, {2, 3, 4}, i32s);  // 3-d
  check_values<int32_t>(load_npy(tmp_path("np_v3.npy")), i32, {24}, i32s);        // format version 3.0

  std::vector<int64_t> i64s;
  for (int64_t i = 0; i < 10; ++i) i64s.push_back(i * 1000000007 - 3000000000);
  check_values<int64_t>(load_npy(tmp_path("np_i64.npy")), i64, {10}, i64s);

  std::vector<uint32_t> u32s;
  for (uint32_t i = 0; i < 10; ++i) u32s.push_back(i * 429496729u);
  check_values<uint32_t>(load_npy(tmp_path("np_u32.npy")), u32, {10}, u32s);

  check_values<float>(load_npy(tmp_path("np_f32.npy")), f32, {4, 3}, f32_ramp(12));
  check_values<double>(load_npy(tmp_path("np_f64.npy")), f64, {2, 6}, f64_ramp(12));
  check_values<double>(load_npy(tmp_path("np_v2.npy")), f64, {3, 4}, f64_ramp(12));  // format version 2.0
  check_values<double>(load_npy(tmp_path("np_0d.npy")), f64, {}, {2.5});
  check_values<int32_t>(load_npy(tmp_path("np_0d_i32.npy")), i32, {}, {-7});
  check_values<float>(load_npy(tmp_path("np_empty.npy")), f32, {0, 3}, {});

  std::vector<float> special = {std::bit_cast<float>(uint32_t{0x7fc00000}),  // np.nan as float32
                                -0.0f,
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::min()};
  check_values<float>(load_npy(tmp_path("np_special.npy")), f32, {6}, special);
  check_values<int64_t>(load_npy(tmp_path("np_limits.npy")), i64, {4},
                        {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, 0});

  // Big-endian files are byte-swapped on load.
  std::vector<int32_t> be;
  for (int i = 0; i < 6; ++i) be.push_back(i * 1000003 - 7);
  check_values<int32_t>(load_npy(tmp_path("np_big_endian.npy")), i32, {2, 3}, be);
  check_values<double>(load_npy(tmp_path("np_big_endian_f8.npy")), f64, {5}, f64_ramp(5));

  // What graft cannot represent fails clearly.
  expect_load_error<UnsupportedError>(tmp_path("np_fortran.npy"), {"Fortran order", "unsupported"});
  expect_load_error<DTypeError>(tmp_path("np_f128.npy"), {"float128", "unsupported dtype"});
  // 2-byte records (ml_dtypes' bfloat16 as NumPy saves it) load when the caller names their dtype.
  expect_load_error<DTypeError>(tmp_path("np_v2_records.npy"), {"'|V2'", "bf16"});
  check_values<float>(load_npy(tmp_path("np_v2_records.npy"), bf16), bf16, {2}, {1.0f, -2.5f});

  // The other dtypes NumPy has.
  check_values<float>(load_npy(tmp_path("np_f16.npy")), f16, {4}, {0.5f, -2.0f, 65504.0f, float(float16(1e-7f))});
  check_values<std::complex<float>>(load_npy(tmp_path("np_c8.npy")), c64, {2}, {{1, 2}, {0, -3.5}});
  check_values<std::complex<double>>(load_npy(tmp_path("np_c16_be.npy")), c128, {2}, {{1, 2}, {0, -3.5}});
  check_values<uint8_t>(load_npy(tmp_path("np_u8.npy")), u8, {3}, {0, 100, 200});
  check_values<int16_t>(load_npy(tmp_path("np_i16_be.npy")), i16, {2}, {-300, 7});
  check_values<uint64_t>(load_npy(tmp_path("np_u64.npy")), u64, {2}, {~uint64_t{0}, 5});
  expect_load_error<DTypeError>(tmp_path("np_object.npy"), {"'|O'", "object"});
  expect_load_error<DTypeError>(tmp_path("np_struct.npy"), {"structured"});
}

TEST_CASE("npy: files written by graft load in NumPy", "[api][npy]") {
  std::vector<bool> b = {true, false, true, false, false, true};
  std::vector<int32_t> i32s = {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), -1, 0, 7,
                               -123456, 5, 6, 7, 8, 9, 10};
  std::vector<int64_t> i64s = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, 0};
  std::vector<uint32_t> u32s = {0u, 1u, std::numeric_limits<uint32_t>::max()};
  std::vector<float> f32s = {kNaN32, -0.0f, std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::denorm_min()};
  std::vector<double> f64s = f64_ramp(8);
  f64s[0] = kNaN64;
  f64s[1] = -0.0;
  save_npy(tmp_path("g_bool.npy"), array<bool>(b, {2, 3}));
  save_npy(tmp_path("g_i32.npy"), array<int32_t>(i32s, {2, 2, 3}));
  save_npy(tmp_path("g_i64.npy"), array<int64_t>(i64s, {4}));
  save_npy(tmp_path("g_u32.npy"), array<uint32_t>(u32s, {3, 1}));
  save_npy(tmp_path("g_f32.npy"), array<float>(f32s, {3, 2}));
  save_npy(tmp_path("g_f64.npy"), array<double>(f64s, {2, 4}));
  save_npy(tmp_path("g_0d.npy"), scalar(2.5, f64));
  save_npy(tmp_path("g_empty.npy"), zeros({0, 3}, f32));
  save_npy(tmp_path("g_computed.npy"), arange(6, f32) * 0.5);  // an op's result, not a literal

  std::string script = R"PY(
import sys
import numpy as np
d = sys.argv[1] + '/'
def load(name, dtype, shape):
    a = np.load(d + name, allow_pickle=False)
    assert a.dtype == np.dtype(dtype), (name, a.dtype)
    assert a.shape == shape, (name, a.shape)
    assert a.flags.c_contiguous, name
    with open(d + name, 'rb') as f:
        assert np.lib.format.read_magic(f) == (1, 0), name
        np.lib.format.read_array_header_1_0(f)
        assert f.tell() % 64 == 0, (name, f.tell())
    return a
def check(name, got, want):
    assert got == want, (name, got, want)
)PY";
  script += "check('bool', load('g_bool.npy', '?', (2, 3)).ravel().tolist(), " + py_list(b) + ")\n";
  script += "check('i32', load('g_i32.npy', '<i4', (2, 2, 3)).ravel().tolist(), " + py_list(i32s) + ")\n";
  script += "check('i64', load('g_i64.npy', '<i8', (4,)).ravel().tolist(), " + py_list(i64s) + ")\n";
  script += "check('u32', load('g_u32.npy', '<u4', (3, 1)).ravel().tolist(), " + py_list(u32s) + ")\n";
  script += "check('f32', load('g_f32.npy', '<f4', (3, 2)).view('<u4').ravel().tolist(), " + py_list(f32s) + ")\n";
  script += "check('f64', load('g_f64.npy', '<f8', (2, 4)).view('<u8').ravel().tolist(), " + py_list(f64s) + ")\n";
  script += R"PY(
assert np.isnan(load('g_f32.npy', '<f4', (3, 2))[0, 0])
check('f64 values', load('g_f64.npy', '<f8', (2, 4)).ravel()[2:].tolist(), (np.arange(8) / 7 - 0.5)[2:].tolist())
check('0d', load('g_0d.npy', '<f8', ()).item(), 2.5)
check('empty', load('g_empty.npy', '<f4', (0, 3)).size, 0)
check('computed', load('g_computed.npy', '<f4', (6,)).tolist(), [0.0, 0.5, 1.0, 1.5, 2.0, 2.5])
print('numpy read graft files: ok')
)PY";
  CHECK(run_python("read_graft", script) == 0);
}

TEST_CASE("npy: save_npy errors", "[api][npy]") {
  // A traced Array has no values to save.
  try {
    make_graph([](const Array& x) {
      save_npy(tmp_path("traced.npy"), x);
      return x;
    })(ones({2}));
    FAIL("save_npy of a traced Array did not throw");
  } catch (const ConcretizationError& e) {
    CHECK_THAT(e.what(), Contains("save_npy"));
    CHECK_THAT(e.what(), Contains("traced"));
  }
  CHECK_THROWS_AS(save_npy(tmp_path("empty_handle.npy"), Array()), Error);
  std::string bad = tmp_path("no_such_dir/x.npy");
  CHECK_THROWS_AS(save_npy(bad, ones({2})), Error);
  CHECK_THROWS_WITH(save_npy(bad, ones({2})), Contains("cannot open") && Contains(bad));
}

TEST_CASE("npy: load_npy accepts NumPy's variations", "[api][npy]") {
  // '=' and '|' byte orders, no byte order, '?' for bool, double-quoted strings,
  // no trailing comma, version 2.0, Python 2 longs.
  std::string data4("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  std::string f = npy_file("{'descr': '=i4', 'fortran_order': False, 'shape': (2,), }\n", 0) + data4;
  write_bytes(tmp_path("var_eq.npy"), f);
  check_values<int32_t>(load_npy(tmp_path("var_eq.npy")), i32, {2}, {1, 2});
  f = npy_file("{\"descr\": \"i4\", \"shape\": (1, 2L), \"fortran_order\": False}", 0, 2) + data4;
  write_bytes(tmp_path("var_v2.npy"), f);
  check_values<int32_t>(load_npy(tmp_path("var_v2.npy")), i32, {1, 2}, {1, 2});
  // NumPy reads any nonzero bool byte as True; graft normalises it.
  f = npy_file("{'descr': '?', 'fortran_order': False, 'shape': (3,)}", 0) + std::string("\x00\x02\xff", 3);
  write_bytes(tmp_path("var_bool.npy"), f);
  check_values<bool>(load_npy(tmp_path("var_bool.npy")), bool_, {3}, {false, true, true});
  // Zero elements with a large (but allowed) dimension allocate nothing.
  write_bytes(tmp_path("var_zero.npy"), npy_file(dict("<f8", "(0, 1099511627776)"), 0));
  check_values<double>(load_npy(tmp_path("var_zero.npy")), f64, {0, 1099511627776}, {});
}

TEST_CASE("npy: malformed files throw clear errors", "[api][npy]") {
  // missing file, directory
  expect_load_error<Error>(tmp_path("does_not_exist.npy"), {"cannot open", "No such file"});
  expect_load_error<Error>(tmp_dir(), {"is a directory"});

  // truncated or wrong magic, unsupported versions
  expect_bad_file<Error>("empty", "", {"truncated", "0 bytes"});
  expect_bad_file<Error>("short_magic", std::string("\x93NUM", 4), {"truncated", "4 bytes"});
  expect_bad_file<Error>("zip_magic", std::string("PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00", 12),
                         {"not a .npy file", "PK"});
  expect_bad_file<Error>("text", "hello, this is not an array\n", {"not a .npy file", "hello,"});
  expect_bad_file<Error>("version4", npy_file(dict("<f4", "(1,)"), 4, 4), {"unsupported .npy format version 4.0"});
  expect_bad_file<Error>("version1_1", npy_file(dict("<f4", "(1,)"), 4, 1, 1), {"version 1.1"});

  // truncated header
  expect_bad_file<Error>("short_len", std::string("\x93NUMPY\x02\x00\x10\x00", 10), {"truncated header", "length"});
  expect_bad_file<Error>("short_header", npy_file(dict("<f4", "(1,)"), 0).substr(0, 30),
                         {"truncated header", "says 58 bytes", "only 20 remain"});

  // unparsable headers
  expect_bad_file<Error>("no_comma", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}\n", 12),
                         {"unparsable header", "expected ',' or ')'"});
  expect_bad_file<Error>("no_paren", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,}\n", 12),
                         {"unparsable header", "expected an integer dimension"});
  expect_bad_file<Error>("not_dict", npy_file("[1, 2, 3]\n", 12), {"unparsable header", "expected '{'"});
  expect_bad_file<Error>("empty_header", npy_file("", 12), {"unparsable header"});
  expect_bad_file<Error>("missing_shape", npy_file("{'descr': '<f4', 'fortran_order': False}\n", 12),
                         {"unparsable header", "missing key 'shape'"});
  expect_bad_file<Error>("extra_key",
                         npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}\n", 12),
                         {"unexpected key 'extra'"});
  expect_bad_file<Error>("dup_key",
                         npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\n", 12),
                         {"duplicate key 'descr'"});
  expect_bad_file<Error>("fortran_str", npy_file(dict("<f4", "(3,)", "'no'"), 12), {"True or False"});
  expect_bad_file<Error>("shape_int", npy_file(dict("<f4", "(3)"), 12), {"must be a tuple"});
  expect_bad_file<Error>("unterminated", npy_file("{'descr': '<f4\n", 12), {"unterminated string"});
  expect_bad_file<Error>("junk_after", npy_file(dict("<f4", "(3,)") + "xyz", 12), {"unexpected text after"});

  // unsupported dtypes and Fortran order
  expect_bad_file<DTypeError>("c32", npy_file(dict("<c32", "(3,)"), 96), {"unsupported dtype '<c32'", "complex256"});
  expect_bad_file<DTypeError>("v2", npy_file(dict("|V2", "(3,)"), 6), {"unsupported dtype '|V2'", "bf16"});
  expect_bad_file<DTypeError>("object", npy_file(dict("|O", "(3,)"), 24), {"'|O'", "object"});
  expect_bad_file<DTypeError>("unicode", npy_file(dict("<U3", "(3,)"), 36), {"'<U3'", "string"});
  expect_bad_file<DTypeError>("structured",
                              npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}\n", 12),
                              {"structured"});
  expect_bad_file<UnsupportedError>("fortran", npy_file(dict("<f4", "(2, 3)", "True"), 24),
                                    {"Fortran order", "unsupported"});

  // bad shapes
  expect_bad_file<ShapeError>("negative", npy_file(dict("<f4", "(2, -3)"), 24), {"negative dimension -3"});
  expect_bad_file<ShapeError>("dim_too_large", npy_file(dict("<f4", "(10000000000000,)"), 24),
                              {"dimension 10000000000000", "too large"});
  expect_bad_file<ShapeError>("dim_overflow", npy_file(dict("<f4", "(123456789012345678901234567890,)"), 24),
                              {"dimension 123456789012345678901234567890", "too large"});
  expect_bad_file<ShapeError>("count_overflow", npy_file(dict("<f4", "(1099511627776, 1099511627776)"), 24),
                              {"more elements than fit"});
  std::string many = "(";
  for (int i = 0; i < 65; ++i) many += "1, ";
  many += ")";
  expect_bad_file<ShapeError>("rank65", npy_file(dict("<f4", many), 4), {"more than 64 dimensions"});

  // A header claiming 10^12 elements over 16 bytes of data must throw before
  // allocating anything (so plain Error, not OutOfMemoryError or bad_alloc).
  expect_bad_file<Error>("huge_claim", npy_file(dict("<f8", "(1000000000000,)"), 16),
                         {"truncated data", "needs 8000000000000 bytes", "has 16 bytes"});
  expect_bad_file<Error>("huge_claim_2d", npy_file(dict("<f8", "(1099511627776, 1048576)"), 16),
                         {"truncated data", "1099511627776"});

  // data shorter or longer than the shape says
  expect_bad_file<Error>("short_data", npy_file(dict("<f4", "(4,)"), 12),
                         {"truncated data", "[4]", "needs 16 bytes", "has 12 bytes"});
  expect_bad_file<Error>("long_data", npy_file(dict("<f4", "(2,)"), 12),
                         {"trailing data", "needs 8 bytes", "has 12 bytes"});
  expect_bad_file<Error>("no_data_0d", npy_file(dict("<f8", "()"), 0), {"truncated data", "needs 8 bytes"});
}
