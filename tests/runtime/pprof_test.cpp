// Device-memory profiles: gzipped profile.proto that `go tool pprof` reads.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "graft/errors.h"
#include "runtime/pprof.h"
#include "support/shell.h"

using namespace graft::runtime;

namespace {

std::string gunzip(const std::string& gz) {
  z_stream zs{};
  REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char chunk[4096];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - zs.avail_out);
  }
  inflateEnd(&zs);
  REQUIRE(rc == Z_STREAM_END);
  return out;
}

// A tiny protobuf reader: one message's fields, varints and length-delimited only.
struct Field {
  uint32_t number = 0;
  uint64_t varint = 0;  // wire type 0
  std::string bytes;    // wire type 2
};

uint64_t read_varint(const std::string& s, size_t& pos) {
  uint64_t v = 0;
  for (int shift = 0; pos < s.size(); shift += 7) {
    auto b = static_cast<uint8_t>(s[pos++]);
    v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return v;
  }
  FAIL("truncated varint");
  return 0;
}

std::vector<Field> parse(const std::string& message) {
  std::vector<Field> fields;
  size_t pos = 0;
  while (pos < message.size()) {
    uint64_t key = read_varint(message, pos);
    Field f;
    f.number = static_cast<uint32_t>(key >> 3);
    switch (key & 7) {
      case 0: f.varint = read_varint(message, pos); break;
      case 2: {
        uint64_t len = read_varint(message, pos);
        REQUIRE(pos + len <= message.size());
        f.bytes = message.substr(pos, len);
        pos += len;
        break;
      }
      default: FAIL("unexpected wire type " << (key & 7));
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

std::vector<Field> fields_numbered(const std::vector<Field>& fields, uint32_t number) {
  std::vector<Field> out;
  for (const Field& f : fields)
    if (f.number == number) out.push_back(f);
  return out;
}

uint64_t varint_of(const std::vector<Field>& fields, uint32_t number) {
  auto found = fields_numbered(fields, number);
  return found.empty() ? 0 : found.back().varint;
}

std::vector<uint64_t> packed(const std::string& bytes) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  while (pos < bytes.size()) out.push_back(read_varint(bytes, pos));
  return out;
}

const ProfileFrame kMain{"main", "/src/app/train.cpp", 40};

// Three stacks through distinct user lines; `grown` makes the workspace at layers.cpp:78 3x larger.
std::vector<ProfileSample> known_samples(bool grown = false) {
  return {
      {{{"graft::jnp::zeros", "/src/app/model.cpp", 12}, {"build_model", "/src/app/model.cpp", 30}, kMain},
       2,
       1048576,
       {{"kind", "buffer"}, {"device", "cpu:0"}}},
      {{{"graft::jnp::matmul", "/src/app/layers.cpp", 77}, {"forward", "/src/app/layers.cpp", 90}, kMain},
       1,
       4194304,
       {{"kind", "buffer"}, {"device", "cpu:0"}}},
      {{{"graft::jnp::matmul", "/src/app/layers.cpp", 78}, {"forward", "/src/app/layers.cpp", 91}, kMain},
       3,
       grown ? 6291456 : 2097152,
       {{"kind", "workspace"}, {"device", "cpu:0"}}},
  };
}

// Concatenates by appending (GCC 12's -Wrestrict misfires on "literal" + std::string chains).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out += ... += parts);
  return out;
}

}  // namespace

TEST_CASE("pprof: a memory profile is gzipped profile.proto", "[memory][pprof]") {
  std::string gz = encode_memory_profile(known_samples());
  REQUIRE(gz.size() > 2);
  CHECK(static_cast<uint8_t>(gz[0]) == 0x1f);
  CHECK(static_cast<uint8_t>(gz[1]) == 0x8b);

  auto profile = parse(gunzip(gz));
  std::vector<std::string> strings;
  for (const Field& f : fields_numbered(profile, 6)) strings.push_back(f.bytes);
  REQUIRE(!strings.empty());
  CHECK(strings[0].empty());
  auto str = [&](uint64_t i) {
    REQUIRE(i < strings.size());
    return strings[i];
  };

  // sample_type: allocations/count then space/bytes; space is the default and the period type.
  auto sample_types = fields_numbered(profile, 1);
  REQUIRE(sample_types.size() == 2);
  CHECK(str(varint_of(parse(sample_types[0].bytes), 1)) == "allocations");
  CHECK(str(varint_of(parse(sample_types[0].bytes), 2)) == "count");
  CHECK(str(varint_of(parse(sample_types[1].bytes), 1)) == "space");
  CHECK(str(varint_of(parse(sample_types[1].bytes), 2)) == "bytes");
  CHECK(str(varint_of(profile, 14)) == "space");
  auto period_type = fields_numbered(profile, 11);
  REQUIRE(period_type.size() == 1);
  CHECK(str(varint_of(parse(period_type[0].bytes), 1)) == "space");
  CHECK(varint_of(profile, 12) == 1);
  CHECK(varint_of(profile, 9) > 0);  // time_nanos

  // One mapping; functions per (function, file), locations per frame, each with one line.
  auto mappings = fields_numbered(profile, 3);
  REQUIRE(mappings.size() == 1);
  auto mapping = parse(mappings[0].bytes);
  CHECK(varint_of(mapping, 1) == 1);
  CHECK(str(varint_of(mapping, 5)) == "graft");
  CHECK(varint_of(mapping, 7) == 1);

  auto functions = fields_numbered(profile, 5);
  CHECK(functions.size() == 5);  // zeros, build_model, main, matmul, forward
  std::vector<std::string> function_names(functions.size() + 1);
  for (const Field& f : functions) {
    auto function = parse(f.bytes);
    uint64_t id = varint_of(function, 1);
    REQUIRE(id >= 1);
    REQUIRE(id <= functions.size());
    function_names[id] = str(varint_of(function, 2));
  }
  auto locations = fields_numbered(profile, 4);
  CHECK(locations.size() == 7);  // main:40 is shared by all three stacks
  std::vector<std::string> location_text(locations.size() + 1);
  for (const Field& f : locations) {
    auto location = parse(f.bytes);
    uint64_t id = varint_of(location, 1);
    REQUIRE(id >= 1);
    REQUIRE(id <= locations.size());
    CHECK(varint_of(location, 2) == 1);
    auto lines = fields_numbered(location, 4);
    REQUIRE(lines.size() == 1);
    auto line = parse(lines[0].bytes);
    location_text[id] = cat(function_names.at(varint_of(line, 1)), ":", std::to_string(varint_of(line, 2)));
  }

  auto samples = fields_numbered(profile, 2);
  REQUIRE(samples.size() == 3);
  auto second = parse(samples[1].bytes);
  auto stack = packed(fields_numbered(second, 1).at(0).bytes);
  REQUIRE(stack.size() == 3);
  CHECK(location_text.at(stack[0]) == "graft::jnp::matmul:77");
  CHECK(location_text.at(stack[1]) == "forward:90");
  CHECK(location_text.at(stack[2]) == "main:40");
  CHECK(packed(fields_numbered(second, 2).at(0).bytes) == std::vector<uint64_t>{1, 4194304});
  auto labels = fields_numbered(second, 3);
  REQUIRE(labels.size() == 2);
  CHECK(str(varint_of(parse(labels[0].bytes), 1)) == "kind");
  CHECK(str(varint_of(parse(labels[0].bytes), 2)) == "buffer");
  CHECK(str(varint_of(parse(labels[1].bytes), 1)) == "device");
  CHECK(str(varint_of(parse(labels[1].bytes), 2)) == "cpu:0");
}

TEST_CASE("pprof: an empty profile still has its sample types", "[memory][pprof]") {
  auto profile = parse(gunzip(encode_memory_profile({})));
  CHECK(fields_numbered(profile, 1).size() == 2);
  CHECK(fields_numbered(profile, 2).empty());
  auto strings = fields_numbered(profile, 6);
  REQUIRE(!strings.empty());
  CHECK(strings[0].bytes.empty());
}

TEST_CASE("pprof: write_memory_profile reports I/O failure", "[memory][pprof]") {
  CHECK_THROWS_AS(write_memory_profile("/nonexistent-graft-dir/mem.pb.gz", known_samples()), graft::Error);
}

TEST_CASE("pprof: go tool pprof reads, traces and diffs memory profiles", "[memory][pprof]") {
  if (!graft::test::have_go()) {
    WARN("skipped: `go` is not on PATH (install golang-go for go tool pprof)");
    return;
  }
  namespace fs = std::filesystem;
  fs::path dir = fs::path(GRAFT_TEST_TMPDIR) / "pprof";
  std::string pprof = graft::test::go_pprof_command(dir);  // makes the directory
  std::string base = (dir / "base.pb.gz").string(), grown = (dir / "grown.pb.gz").string();
  write_memory_profile(base, known_samples());
  write_memory_profile(grown, known_samples(/*grown=*/true));

  std::string base_q = cat("'", base, "'"), grown_q = cat("'", grown, "'");
  auto pprof_run = [&](const std::string& args) {
    int status = 0;
    std::string out = graft::test::run(cat(pprof, args), &status);
    INFO("go tool pprof " << args << "\n" << out);
    REQUIRE(status == 0);
    return out;
  };

  SECTION("top by function and by line") {
    std::string top = pprof_run(cat("-top -sample_index=space -unit=B ", base_q));
    INFO(top);
    CHECK(top.find("Type: space") != std::string::npos);
    CHECK(top.find("7340032B, 100% of 7340032B total") != std::string::npos);
    CHECK(top.find("6291456B") != std::string::npos);  // matmul: 4 MiB + 2 MiB
    CHECK(top.find("graft::jnp::matmul") != std::string::npos);
    CHECK(top.find("graft::jnp::zeros") != std::string::npos);

    std::string lines = pprof_run(cat("-top -lines -sample_index=space -unit=B ", base_q));
    INFO(lines);
    CHECK(lines.find("4194304B") != std::string::npos);
    CHECK(lines.find("graft::jnp::matmul /src/app/layers.cpp:77") != std::string::npos);
    CHECK(lines.find("graft::jnp::matmul /src/app/layers.cpp:78") != std::string::npos);
    CHECK(lines.find("graft::jnp::zeros /src/app/model.cpp:12") != std::string::npos);
    CHECK(lines.find("main /src/app/train.cpp:40") != std::string::npos);

    std::string counts = pprof_run(cat("-top -sample_index=allocations ", base_q));
    INFO(counts);
    CHECK(counts.find("Type: allocations") != std::string::npos);
    CHECK(counts.find("6, 100% of 6 total") != std::string::npos);
  }

  SECTION("traces carry the stacks and labels") {
    std::string traces = pprof_run(cat("-traces -unit=B ", base_q));
    INFO(traces);
    CHECK(traces.find("kind:  workspace") != std::string::npos);
    CHECK(traces.find("device:  cpu:0") != std::string::npos);
    CHECK(traces.find("2097152B   graft::jnp::matmul") != std::string::npos);
    CHECK(traces.find("build_model") != std::string::npos);
  }

  SECTION("diff_base shows only the line that grew") {
    std::string diff = pprof_run(cat("-top -lines -unit=B -diff_base=", base_q, " ", grown_q));
    INFO(diff);
    CHECK(diff.find("4194304B") != std::string::npos);  // 6 MiB - 2 MiB at layers.cpp:78
    CHECK(diff.find("graft::jnp::matmul /src/app/layers.cpp:78") != std::string::npos);
    CHECK(diff.find("forward /src/app/layers.cpp:91") != std::string::npos);
    CHECK(diff.find("layers.cpp:77") == std::string::npos);
    CHECK(diff.find("model.cpp") == std::string::npos);
  }
}
