// graft's public ops, with jax.numpy / jax.lax semantics and names: the users' umbrella, the
// lax-level ops (core/lax.h) and jax.numpy's breadth (core/ops_numpy_*.h). graft's own code
// includes the narrow header it needs, so touching a jax.numpy header recompiles only what
// uses it.
#pragma once

#include "core/lax.h"
#include "core/ops_numpy_math.h"
#include "core/ops_numpy_array.h"
#include "core/ops_numpy_linalg.h"
#include "core/ops_numpy_stats.h"
#include "core/ops_numpy_search.h"
#include "core/ops_numpy_construct.h"
#include "core/ops_numpy_shapes.h"
#include "core/ops_numpy_poly.h"
#include "core/ops_numpy_complex.h"
#include "core/ops_numpy_fft.h"
#include "core/ops_numpy_bits.h"
#include "core/ops_numpy_special.h"
#include "core/ops_numpy_pad.h"
#include "core/ops_numpy_misc.h"
#include "core/ops_numpy_setops.h"
#include "core/ops_numpy_index_tricks.h"
#include "core/ops_numpy_eig.h"
