// The one header of graft's public API (see API.md).
#pragma once

#include "graft/array.h"
#include "graft/autodiff.h"
#include "graft/collectives.h"
#include "graft/control_flow.h"
#include "graft/device.h"
#include "graft/errors.h"
#include "graft/graph.h"
#include "graft/jacobian.h"
#include "graft/make_graph.h"
#include "graft/named_scope.h"
#include "graft/npy.h"
#include "graft/ops.h"
#include "graft/random.h"
#include "graft/tree.h"
#include "graft/types.h"
#include "graft/vmap.h"
