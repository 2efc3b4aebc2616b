// jax.numpy: every header of core/numpy/ (with jnp.linalg and jnp.fft), over the lax-level ops
// (core/lax/lax.h). core/ops.h includes it for users; numpy's own files include it or the
// narrow header they need. jnp.save / jnp.load are core/numpy/npy_io.h (not included here:
// absl/status pulls <functional> in, whose std::bind ADL would find core's bind() calls).
#pragma once

#include "core/lax/lax.h"
#include "core/numpy/array_creation.h"
#include "core/numpy/bits.h"
#include "core/numpy/complex.h"
#include "core/numpy/fft/fft.h"
#include "core/numpy/index_tricks.h"
#include "core/numpy/lax_numpy.h"
#include "core/numpy/linalg/decompositions.h"
#include "core/numpy/linalg/eig.h"
#include "core/numpy/linalg/linalg.h"
#include "core/numpy/pad.h"
#include "core/numpy/polynomial.h"
#include "core/numpy/reductions.h"
#include "core/numpy/searching.h"
#include "core/numpy/setops.h"
#include "core/numpy/shapes.h"
#include "core/numpy/special.h"
#include "core/numpy/ufuncs.h"
