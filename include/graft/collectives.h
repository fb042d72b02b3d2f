// Collectives over a named mapped axis: inside vmap(f, ..., axis_name) (and
// pmap), f's examples (devices) can combine their values. Outside a mapping
// of that name they throw ShapeError ("unbound axis name").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graft/array.h"
#include "graft/detail/source_location.h"
#include "graft/ops.h"

namespace graft {


Array psum(const Array& x, const std::string& axis_name, Loc loc = Loc::current());   // the sum over the axis
Array pmean(const Array& x, const std::string& axis_name, Loc loc = Loc::current());  // the mean over the axis
Array pmax(const Array& x, const std::string& axis_name, Loc loc = Loc::current());
Array pmin(const Array& x, const std::string& axis_name, Loc loc = Loc::current());
// Every example's x, stacked on a new axis `axis` (or concatenated along it when tiled).
Array all_gather(const Array& x, const std::string& axis_name, int axis = 0, bool tiled = false,
                 Loc loc = Loc::current());
// The sum over the axis, scattered: example j keeps slice j of axis
// `scatter_dimension` (which has the axis' size; tiled: chunk j of axis_size
// equal chunks).
Array psum_scatter(const Array& x, const std::string& axis_name, int scatter_dimension = 0, bool tiled = false,
                   Loc loc = Loc::current());
// Example j receives chunk j of every example's axis `split_axis`, side by
// side along `concat_axis` (as JAX's all_to_all). Untiled, split_axis has the
// mapped axis' size and is removed, and a new axis of that size is inserted
// at concat_axis; tiled, split_axis shrinks and concat_axis grows by that size.
Array all_to_all(const Array& x, const std::string& axis_name, int split_axis, int concat_axis, bool tiled = false,
                 Loc loc = Loc::current());
// Sends example s's x to example d for each (s, d); examples that receive nothing get zeros.
Array ppermute(const Array& x, const std::string& axis_name, std::vector<std::pair<int, int>> perm,
               Loc loc = Loc::current());
Array axis_index(const std::string& axis_name, Loc loc = Loc::current());  // this example's position, i32[]

namespace detail {

// While alive, axis `name` of `size` is bound for collectives (vmap and pmap
// open one around tracing f). Frames nest; an empty name binds nothing.
class AxisFrame {
 public:
  AxisFrame(std::string name, int64_t size);
  ~AxisFrame();
  AxisFrame(const AxisFrame&) = delete;
  AxisFrame& operator=(const AxisFrame&) = delete;

 private:
  bool pushed_;
};

// The size of the innermost bound axis called `name`, or -1.
int64_t bound_axis_size(const std::string& name);

}  // namespace detail

}  // namespace graft
