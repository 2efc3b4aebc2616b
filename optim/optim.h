// graft::optim: Optax-style optimizers. One include for all of it.
#pragma once

#include "optim/losses.h"
#include "optim/multi_steps.h"
#include "optim/optimizers.h"
#include "optim/schedule.h"
#include "optim/state.h"
#include "optim/transform.h"
#include "optim/transformations.h"
#include "optim/wrappers.h"
