// The MPI communicator graft's processes share (a duplicate of
// MPI_COMM_WORLD, so graft's traffic never matches a user's own messages).
// Included only by runtime/ sources built with MPI.
#pragma once

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

namespace graft::runtime {

MPI_Comm mpi_world();

}  // namespace graft::runtime
