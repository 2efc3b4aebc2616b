// graft's public ops, with jax.numpy / jax.lax semantics and names: the users' umbrella over
// the lax-level ops (core/lax/lax.h) and jax.numpy (core/numpy/numpy.h). graft's own code
// includes the narrow header it needs, so touching a jax.numpy header recompiles only what
// uses it.
#pragma once

#include "core/lax/lax.h"
#include "core/numpy/numpy.h"
