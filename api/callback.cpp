// Host callbacks (graft/callback.h): the node a callback traces to, and the
// function its kernel calls, which wraps graft's buffers as Arrays without
// copying them and checks what the user's function returns.
#include "graft/callback.h"

#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>

#include "api/array_impl.h"
#include "api/dispatch.h"
#include "graft/errors.h"
#include "ir/dtype.h"
#include "ir/host_callback.h"
#include "runtime/device.h"

namespace graft::detail {

namespace {

// Arrays viewing buffers graft owns, valid while the callback runs. An
// Array the user's function kept past its return is given a copy of its
// elements then (so it never reads memory graft reuses).
class Views {
 public:
  Array view(const ir::ValueType& type, void* data, bool writable) {
    auto buffer =
        std::make_shared<runtime::Buffer>(runtime::Buffer::Borrowed{}, data, type.num_bytes(), runtime::host_device());
    auto impl = make_concrete(type, buffer);
    impl->writable = writable;
    impls_.push_back(impl);
    return Array(std::move(impl));
  }
  // Detaches every view still referenced elsewhere; true when a buffer is
  // still shared by something other than a view (an Array derived from a
  // view without a copy), which graft cannot redirect.
  bool release() {
    std::vector<std::weak_ptr<runtime::Buffer>> borrowed;
    for (std::shared_ptr<ArrayImpl>& impl : impls_) {
      borrowed.push_back(impl->buffer);
      impl->writable = false;
      if (impl.use_count() > 1) {
        auto copy = std::make_shared<runtime::Buffer>(impl->buffer->size(), runtime::host_device());
        if (copy->size()) std::memcpy(copy->data(), impl->buffer->data(), copy->size());
        impl->buffer = std::move(copy);
      }
    }
    impls_.clear();
    for (const auto& b : borrowed)
      if (!b.expired()) return true;
    return false;
  }
  ~Views() { release(); }

 private:
  std::vector<std::shared_ptr<ArrayImpl>> impls_;
};

// Runs the user's function on one call's buffers.
void run_user_function(const std::string& name, const CallbackReturning& returning, const CallbackWriting& writing,
                       const ir::HostCallbackCall& c) {
  Views views;
  std::vector<Array> ins, outs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    ins.push_back(views.view(c.input_types[i], const_cast<void*>(c.inputs[i]), false));
  if (writing)
    for (size_t i = 0; i < c.outputs.size(); ++i) outs.push_back(views.view(c.output_types[i], c.outputs[i], true));
  std::vector<Array> results;
  try {
    if (writing)
      writing(ins, outs);
    else
      results = returning(ins);
  } catch (const Error&) {
    throw;  // graft's own errors already name the op and the line
  } catch (const std::exception& e) {
    throw Error(name + ": the callback threw: " + e.what());
  } catch (...) {
    throw Error(name + ": the callback threw an exception that is not a std::exception");
  }
  ins.clear();
  outs.clear();
  if (!writing) {
    if (results.size() != c.outputs.size())
      throw ShapeError(name + ": the callback returned " + std::to_string(results.size()) + " arrays, but " +
                       std::to_string(c.outputs.size()) + " were declared in result_shape_dtypes");
    for (size_t i = 0; i < results.size(); ++i) {
      const ArrayImpl& r = live_impl(results[i], "callback result");
      if (r.traced()) throw TracerLeakError(name + ": the callback returned a traced Array");
      const ir::ValueType& want = c.output_types[i];
      if (r.type.dtype != want.dtype)
        throw DTypeError(name + ": result " + std::to_string(i) + " is " + ir::type_str(r.type) + " but " +
                         ir::type_str(want) + " was declared in result_shape_dtypes");
      if (r.type.shape != want.shape)
        throw ShapeError(name + ": result " + std::to_string(i) + " is " + ir::type_str(r.type) + " but " +
                         ir::type_str(want) + " was declared in result_shape_dtypes");
      runtime::BufferPtr data = host_buffer(r);
      if (want.num_bytes()) std::memcpy(c.outputs[i], data->data(), want.num_bytes());
    }
    results.clear();
  }
  if (views.release())
    throw Error(name +
                ": the callback kept an Array that shares memory with its arguments or results past its "
                "return; keep a copy instead (graft::copy)");
}

}  // namespace

std::vector<Array> callback_bind(CallbackKind kind, VmapMethod method, CallbackReturning returning,
                                 CallbackWriting writing, const std::vector<ShapeDtype>& results,
                                 const std::vector<Array>& args, const std::source_location& loc,
                                 const std::string& what) {
  ir::SourceLoc user = to_loc(loc);
  auto cb = std::make_shared<ir::HostCallback>();
  std::string at = ir::loc_str(user);
  cb->name = at.empty() ? what : what + " at " + at;
  cb->loc = user;
  for (size_t i = 0; i < results.size(); ++i) {
    for (int64_t d : results[i].shape)
      if (d < 0)
        throw ShapeError(cb->name + ": result_shape_dtypes[" + std::to_string(i) + "] has a negative dimension");
    cb->results.push_back(ir::ValueType{results[i].dtype, results[i].shape});
  }
  cb->call = [name = cb->name, returning = std::move(returning), writing = std::move(writing)](
                 const ir::HostCallbackCall& c) { run_user_function(name, returning, writing, c); };
  ir::Attrs attrs{{"callback", ir::HostCallbackPtr(std::move(cb))}};
  if (kind == CallbackKind::pure) {
    static constexpr const char* kMethods[] = {"sequential", "expand_dims", "broadcast_all"};
    attrs.set("vmap_method", std::string(kMethods[static_cast<int>(method)]));
    return bind(ir::Op::pure_callback, args, std::move(attrs), loc);
  }
  attrs.set("ordered", int64_t{kind == CallbackKind::io_ordered ? 1 : 0});
  return bind(ir::Op::io_callback, args, std::move(attrs), loc);
}

void* writable_pointer(Array& out, DType want) {
  const ArrayImpl& impl = checked_impl(out, "writable_data");
  if (impl.traced() || !impl.writable)
    throw Error(
        "writable_data: the Array is not a callback's output (only the `out` parameter of a callback that writes its "
        "results may be written, and only while the callback runs)");
  DType have = impl.type.dtype;
  bool bits16 = want == DType::u16 && (have == DType::f16 || have == DType::bf16);
  if (have != want && !bits16)
    throw DTypeError(std::string("writable_data: the output is ") + graft::dtype_name(have) + ", not " +
                     graft::dtype_name(want));
  return impl.buffer->data();
}

std::string format_debug(const std::string& format, const std::vector<std::string>& values,
                         const std::source_location& loc) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    char ch = format[i];
    if ((ch == '{' || ch == '}') && i + 1 < format.size() && format[i + 1] == ch) {
      out += ch;
      ++i;
    } else if (ch == '{' && i + 1 < format.size() && format[i + 1] == '}') {
      if (next == values.size()) break;
      out += values[next++];
      ++i;
    } else {
      out += ch;
    }
  }
  size_t placeholders = 0;
  for (size_t i = 0; i + 1 < format.size(); ++i) {
    if ((format[i] == '{' || format[i] == '}') && format[i + 1] == format[i]) {
      ++i;
    } else if (format[i] == '{' && format[i + 1] == '}') {
      ++placeholders;
      ++i;
    }
  }
  if (placeholders != values.size())
    throw Error("debug.print at " + ir::loc_str(to_loc(loc)) + ": the format \"" + format + "\" has " +
                std::to_string(placeholders) + " {} placeholders for " + std::to_string(values.size()) + " arguments");
  return out;
}

void debug_write(const std::string& line) { std::cout << line << std::endl; }

std::string debug_value(const std::vector<Array>& leaves, bool is_single_array) {
  std::ostringstream s;
  if (is_single_array && leaves.size() == 1) {
    return values_text(leaves[0], "");
  }
  s << '[';
  for (size_t i = 0; i < leaves.size(); ++i) s << (i ? ", " : "") << values_text(leaves[i], " ");
  s << ']';
  return s.str();
}

}  // namespace graft::detail
