// IdList: a node's operand or result ids. Nearly every node has at most four
// of each, so up to four are held inline: a pass that copies a graph of 100k
// nodes would otherwise make (and later free) two heap blocks per node.
// It reads like a std::vector<ValueId> and converts to and from one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace graft::ir {

using ValueId = int32_t;

class IdList {
 public:
  using value_type = ValueId;
  using size_type = size_t;
  using iterator = ValueId*;
  using const_iterator = const ValueId*;
  using reference = ValueId&;
  using const_reference = const ValueId&;

  IdList() noexcept {}
  IdList(std::initializer_list<ValueId> ids) { assign(ids.begin(), ids.end()); }
  IdList(const std::vector<ValueId>& ids) { assign(ids.begin(), ids.end()); }  // NOLINT: converts like a vector
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  IdList(It first, It last) {
    assign(first, last);
  }
  explicit IdList(size_t n, ValueId value = 0) { resize(n, value); }

  IdList(const IdList& other) { assign(other.begin(), other.end()); }
  IdList(IdList&& other) noexcept { take(other); }
  IdList& operator=(const IdList& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  IdList& operator=(IdList&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~IdList() { release(); }

  // For interfaces that take a vector (this copies).
  operator std::vector<ValueId>() const { return std::vector<ValueId>(begin(), end()); }  // NOLINT

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  ValueId* data() { return on_heap() ? heap_ : inline_; }
  const ValueId* data() const { return on_heap() ? heap_ : inline_; }
  ValueId* begin() { return data(); }
  ValueId* end() { return data() + size_; }
  const ValueId* begin() const { return data(); }
  const ValueId* end() const { return data() + size_; }
  ValueId& operator[](size_t i) { return data()[i]; }
  const ValueId& operator[](size_t i) const { return data()[i]; }
  ValueId& front() { return data()[0]; }
  const ValueId& front() const { return data()[0]; }
  ValueId& back() { return data()[size_ - 1]; }
  const ValueId& back() const { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    auto* grown = new ValueId[n];
    std::copy(begin(), end(), grown);
    const uint32_t size = size_;
    release();
    heap_ = grown;
    cap_ = static_cast<uint32_t>(n);
    size_ = size;
  }
  void push_back(ValueId id) {
    if (size_ == cap_) reserve(2 * static_cast<size_t>(cap_));
    data()[size_++] = id;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(size_t n, ValueId value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = static_cast<uint32_t>(n);
  }
  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data());
    size_ = static_cast<uint32_t>(n);
  }
  // Appends [first, last) at the end (the only position passes insert at);
  // the range must not point into this list, which may move as it grows.
  template <class It>
  void append(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }

  friend bool operator==(const IdList& a, const IdList& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const IdList& a, const std::vector<ValueId>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  static constexpr uint32_t kInline = 4;

  bool on_heap() const { return cap_ > kInline; }
  void release() {
    if (on_heap()) delete[] heap_;
    cap_ = kInline;
    size_ = 0;
  }
  // Takes other's ids, leaving it empty (other must not own a block we still hold).
  void take(IdList& other) noexcept {
    size_ = other.size_;
    cap_ = other.cap_;
    if (other.on_heap()) heap_ = other.heap_;
    else std::memcpy(inline_, other.inline_, sizeof(inline_));
    other.cap_ = kInline;
    other.size_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
  union {
    ValueId inline_[kInline] = {};
    ValueId* heap_;
  };
};

}  // namespace graft::ir
