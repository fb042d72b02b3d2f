#include "runtime/pprof.h"

#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "graft/errors.h"

namespace graft::runtime {
namespace {

// ---- protobuf wire format: just what profile.proto needs.
enum WireType : uint32_t { kVarint = 0, kLengthDelimited = 2 };

class ProtoWriter {
 public:
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void tag(uint32_t field, WireType type) { varint((uint64_t{field} << 3) | type); }

  // proto3 leaves zero scalars out; int64 negatives are their two's complement.
  void int_field(uint32_t field, int64_t v) {
    if (v == 0) return;
    tag(field, kVarint);
    varint(static_cast<uint64_t>(v));
  }
  void bool_field(uint32_t field, bool v) { int_field(field, v ? 1 : 0); }
  void bytes_field(uint32_t field, const std::string& bytes) {  // written even when empty
    tag(field, kLengthDelimited);
    varint(bytes.size());
    out_ += bytes;
  }
  void message_field(uint32_t field, const ProtoWriter& message) { bytes_field(field, message.out_); }
  void packed_field(uint32_t field, const std::vector<int64_t>& values) {
    if (values.empty()) return;
    ProtoWriter packed;
    for (int64_t v : values) packed.varint(static_cast<uint64_t>(v));
    bytes_field(field, packed.out_);
  }

  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

// profile.proto field numbers.
namespace profile_field {
constexpr uint32_t kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5, kStringTable = 6,
                   kTimeNanos = 9, kPeriodType = 11, kPeriod = 12, kDefaultSampleType = 14;
}
namespace value_type_field {
constexpr uint32_t kType = 1, kUnit = 2;
}
namespace sample_field {
constexpr uint32_t kLocationId = 1, kValue = 2, kLabel = 3;
}
namespace label_field {
constexpr uint32_t kKey = 1, kStr = 2;
}
namespace mapping_field {
constexpr uint32_t kId = 1, kMemoryStart = 2, kMemoryLimit = 3, kFilename = 5, kHasFunctions = 7,
                   kHasFilenames = 8, kHasLineNumbers = 9;
}
namespace location_field {
constexpr uint32_t kId = 1, kMappingId = 2, kLine = 4;
}
namespace line_field {
constexpr uint32_t kFunctionId = 1, kLine = 2;
}
namespace function_field {
constexpr uint32_t kId = 1, kName = 2, kSystemName = 3, kFilename = 4;
}

// Mapping: the locations are source frames, not addresses, so its range is nominal.
constexpr int64_t kMappingId = 1;
constexpr uint64_t kMappingStart = 0x1000, kMappingLimit = 0x100000;

class StringTable {
 public:
  StringTable() { index(""); }  // string_table[0] must be ""
  int64_t index(const std::string& s) {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<int64_t>(strings_.size()));
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> strings_;
};

ProtoWriter value_type(StringTable& strings, const std::string& type, const std::string& unit) {
  ProtoWriter vt;
  vt.int_field(value_type_field::kType, strings.index(type));
  vt.int_field(value_type_field::kUnit, strings.index(unit));
  return vt;
}

std::string encode_profile_proto(const std::vector<ProfileSample>& samples) {
  StringTable strings;
  ProtoWriter profile;

  profile.message_field(profile_field::kSampleType, value_type(strings, "allocations", "count"));
  profile.message_field(profile_field::kSampleType, value_type(strings, "space", "bytes"));

  // Functions per distinct (function, file); locations per distinct frame. Ids from 1 in first-seen order.
  std::map<std::pair<std::string, std::string>, int64_t> function_ids;
  std::map<std::tuple<std::string, std::string, int64_t>, int64_t> location_ids;
  ProtoWriter functions, locations;  // concatenated field-5 and field-4 entries

  for (const ProfileSample& sample : samples) {
    std::vector<int64_t> location_id;
    location_id.reserve(sample.stack.size());
    for (const ProfileFrame& frame : sample.stack) {
      auto [fit, new_function] =
          function_ids.try_emplace({frame.function, frame.file}, static_cast<int64_t>(function_ids.size()) + 1);
      if (new_function) {
        ProtoWriter function;
        function.int_field(function_field::kId, fit->second);
        int64_t name = strings.index(frame.function);
        function.int_field(function_field::kName, name);
        function.int_field(function_field::kSystemName, name);
        function.int_field(function_field::kFilename, strings.index(frame.file));
        functions.message_field(profile_field::kFunction, function);
      }
      auto [lit, new_location] = location_ids.try_emplace({frame.function, frame.file, frame.line},
                                                          static_cast<int64_t>(location_ids.size()) + 1);
      if (new_location) {
        ProtoWriter line;
        line.int_field(line_field::kFunctionId, fit->second);
        line.int_field(line_field::kLine, frame.line);
        ProtoWriter location;
        location.int_field(location_field::kId, lit->second);
        location.int_field(location_field::kMappingId, kMappingId);
        location.message_field(location_field::kLine, line);
        locations.message_field(profile_field::kLocation, location);
      }
      location_id.push_back(lit->second);
    }

    ProtoWriter s;
    s.packed_field(sample_field::kLocationId, location_id);
    s.packed_field(sample_field::kValue, {sample.count, sample.bytes});
    for (const auto& [key, value] : sample.labels) {
      ProtoWriter label;
      label.int_field(label_field::kKey, strings.index(key));
      label.int_field(label_field::kStr, strings.index(value));
      s.message_field(sample_field::kLabel, label);
    }
    profile.message_field(profile_field::kSample, s);
  }

  ProtoWriter mapping;
  mapping.int_field(mapping_field::kId, kMappingId);
  mapping.int_field(mapping_field::kMemoryStart, static_cast<int64_t>(kMappingStart));
  mapping.int_field(mapping_field::kMemoryLimit, static_cast<int64_t>(kMappingLimit));
  mapping.int_field(mapping_field::kFilename, strings.index("graft"));
  mapping.bool_field(mapping_field::kHasFunctions, true);
  mapping.bool_field(mapping_field::kHasFilenames, true);
  mapping.bool_field(mapping_field::kHasLineNumbers, true);
  profile.message_field(profile_field::kMapping, mapping);

  std::string out = profile.bytes();
  out += locations.bytes();
  out += functions.bytes();

  // The tail is built before the string table is written so every string it uses is interned.
  int64_t space = strings.index("space");
  ProtoWriter tail;
  tail.int_field(profile_field::kTimeNanos,
                 std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count());
  tail.message_field(profile_field::kPeriodType, value_type(strings, "space", "bytes"));
  tail.int_field(profile_field::kPeriod, 1);
  tail.int_field(profile_field::kDefaultSampleType, space);

  ProtoWriter table;
  for (const std::string& s : strings.strings()) table.bytes_field(profile_field::kStringTable, s);
  out += table.bytes();
  out += tail.bytes();
  return out;
}

// gzip (not raw zlib) framing: pprof expects a gzipped file.
std::string gzip(const std::string& data) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("pprof: zlib deflateInit2 failed");
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  size_t written = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw Error("pprof: zlib deflate failed");
  out.resize(written);
  return out;
}

}  // namespace

std::string encode_memory_profile(const std::vector<ProfileSample>& samples) {
  return gzip(encode_profile_proto(samples));
}

void write_memory_profile(const std::string& path, const std::vector<ProfileSample>& samples) {
  std::string bytes = encode_memory_profile(samples);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::string msg = "write_memory_profile: cannot open ";
    msg += path;
    msg += ": ";
    msg += std::strerror(errno);
    throw Error(msg);
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::string msg = "write_memory_profile: cannot write ";
    msg += path;
    throw Error(msg);
  }
}

}  // namespace graft::runtime
