// Device: where an Array's buffer lives. Today every array is on cpu:0; the
// memory issue adds devices(), default_device(), device_put and
// memory_stats(), and virtual CPU devices for pmap.
#pragma once

#include <string>

namespace graft {

class Device {
 public:
  Device(std::string kind = "cpu", int id = 0) : kind_(std::move(kind)), id_(id) {}
  const std::string& kind() const { return kind_; }  // "cpu" or "cuda"
  int id() const { return id_; }
  std::string str() const { return kind_ + ":" + std::to_string(id_); }
  bool operator==(const Device&) const = default;

 private:
  std::string kind_;
  int id_;
};

}  // namespace graft
