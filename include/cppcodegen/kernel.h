// Everything generated kernels include, in one header so that it can be precompiled once
// per compiler and flag set (runtime/build.py keeps the .gch in the cache directory).
#pragma once
#include "cppcodegen/intrin.h"   // first: the intrinsics we use, not all of <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "cppcodegen/scalar.h"
#include "cppcodegen/vec.h"
#include "cppcodegen/complex.h"
#include "cppcodegen/random.h"
#include "cppcodegen/gemm.h"
#include "cppcodegen/blas.h"
#include "cppcodegen/print.h"
#include "cppcodegen/placement.h"
#include "cppcodegen/probe.h"
#include "cppcodegen/ranges.h"
#include "cppcodegen/schedule.h"
#include "cppcodegen/sort.h"
