/* Philox4x32-10 and the input generator's per-element definitions, for C.
 * The code lives in problem/philox.cuh so that NVRTC compiles the very same
 * text (build/gen/philox_cuh.h). */
#ifndef KF_PHILOX_H
#define KF_PHILOX_H

#include "problem/philox.cuh"

#endif
