// The digits data set for the examples: scikit-learn's 8x8 handwritten
// digits (1797 images, 10 classes), the gzipped CSV that Debian's
// python3-sklearn ships (scripts/setup.sh installs it), read with zlib.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "graft/graft.h"

inline constexpr const char* kDefaultData = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
inline constexpr int kPixels = 64;

struct Digits {
  std::vector<float> pixels;  // n x 64, scaled to [0, 1]
  std::vector<int32_t> labels;
  int64_t n = 0;
};

// Each line of the gzipped CSV: 64 pixel values (0..16), then the label.
inline Digits read_digits(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path + " (install python3-sklearn, or pass the file's path)");
  Digits d;
  std::string line;
  char buf[4096];
  while (gzgets(f, buf, sizeof buf)) {
    line = buf;
    if (line.find_first_not_of(" \r\n") == std::string::npos) continue;
    std::stringstream row(line);
    std::string cell;
    std::vector<float> values;
    while (std::getline(row, cell, ',')) values.push_back(std::stof(cell));
    if (values.size() != kPixels + 1) {
      gzclose(f);
      throw std::runtime_error(path + ": line " + std::to_string(d.n + 1) + " has " + std::to_string(values.size()) +
                               " fields, expected 65");
    }
    for (int i = 0; i < kPixels; ++i) d.pixels.push_back(values[static_cast<size_t>(i)] / 16.0f);
    d.labels.push_back(static_cast<int32_t>(values[kPixels]));
    ++d.n;
  }
  gzclose(f);
  if (d.n == 0) throw std::runtime_error(path + ": no rows");
  return d;
}

// Rows `rows` of the data set as arrays: x [n, 64] f32, y [n] i32.
inline std::pair<graft::Array, graft::Array> gather_rows(const Digits& d, const std::vector<int64_t>& rows) {
  std::vector<float> x;
  std::vector<int32_t> y;
  for (int64_t r : rows) {
    x.insert(x.end(), d.pixels.begin() + r * kPixels, d.pixels.begin() + (r + 1) * kPixels);
    y.push_back(d.labels[static_cast<size_t>(r)]);
  }
  const auto n = static_cast<int64_t>(rows.size());
  return {graft::array(x, {n, kPixels}), graft::array(y, {n})};
}

// The examples' split: a fixed shuffle (by `rng`), the last 20 % for testing.
struct DigitsSplit {
  Digits data;
  std::vector<int64_t> train_rows, test_rows;
};

// Reads `path` and splits it; prints the sizes, or the error and returns false.
inline bool load_split(const char* program, const std::string& path, std::mt19937_64& rng, DigitsSplit* out) {
  try {
    out->data = read_digits(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return false;
  }
  std::vector<int64_t> order(static_cast<size_t>(out->data.n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const auto n_test = static_cast<int64_t>(out->data.n / 5);
  out->train_rows.assign(order.begin(), order.end() - n_test);
  out->test_rows.assign(order.end() - n_test, order.end());
  std::printf("digits: %zu training images, %zu test images, from %s\n", out->train_rows.size(), out->test_rows.size(),
              path.c_str());
  return true;
}
