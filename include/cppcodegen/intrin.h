// cppcodegen/intrin.h -- the x86 intrinsics vec.h and gemm.h use, without the rest.
//
// <immintrin.h> declares every x86 extension the compiler knows (AMX, AVX-512 FP16, VNNI, key
// locker, ...), each behind a target switch. Parsing it was the largest part of compiling a
// kernel without the precompiled header: with g++ 12 on an AMD EPYC, 0.29 s of a kernel.h
// parse of 0.52 s CPU with -march=native (AVX-512), 0.45 s with the AVX2 flags. With GCC
// this header includes only the sub-headers for SSE..AVX2 and FMA and, when the flags enable
// AVX-512, its F/VL/BW/DQ parts (0.17 s / 0.03 s), and defines <immintrin.h>'s include guard
// so that the later `#include <immintrin.h>` of vec.h and gemm.h is skipped.
//
// Included first by kernel.h. Other compilers, GCC versions whose header layout we have not
// checked, the portable build (-DCCG_NO_SIMD) and -DCCG_FULL_IMMINTRIN get <immintrin.h>
// itself, from vec.h, as before. An intrinsic from another extension needs its sub-header here.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&          \
    !defined(__INTEL_COMPILER) && __GNUC__ >= 9 && __GNUC__ <= 14 &&             \
    !defined(CCG_NO_SIMD) && !defined(CCG_FULL_IMMINTRIN) &&                      \
    !defined(_IMMINTRIN_H_INCLUDED) && (defined(__AVX2__) || defined(__AVX512F__))
#define _IMMINTRIN_H_INCLUDED 1
#define CCG_TRIMMED_IMMINTRIN 1
// the order of <immintrin.h>: later sub-headers use the types of earlier ones
#include <mmintrin.h>
#include <xmmintrin.h>
#include <emmintrin.h>
#include <pmmintrin.h>
#include <tmmintrin.h>
#include <smmintrin.h>
#include <avxintrin.h>
#include <avx2intrin.h>
#if defined(__AVX512F__)
#include <avx512fintrin.h>
#include <avx512vlintrin.h>
#include <avx512bwintrin.h>
#include <avx512dqintrin.h>
#include <avx512vlbwintrin.h>
#include <avx512vldqintrin.h>
#endif
#include <fmaintrin.h>
#endif
