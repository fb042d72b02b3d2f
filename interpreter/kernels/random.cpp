// CPU kernel of random_bits (being written: the coverage test lists it as pending).
#include "interpreter/kernel.h"

namespace graft::interpreter {

void register_random_kernels(KernelTable&) {}

}  // namespace graft::interpreter
