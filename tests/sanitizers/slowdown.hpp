// How much slower code runs in this build, for the few tests that bound a duration (a render, a
// heartbeat deadline): 1 normally; under ASan+UBSan (Debug, -O0) or TSan the same work takes
// several times longer, so such a bound is scaled by k_sanitizer_slowdown instead of being dropped.
// A quadratic algorithm still blows through the scaled bound.
#pragma once

namespace preflight::test_timing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr int k_sanitizer_slowdown = 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr int k_sanitizer_slowdown = 10;
#else
inline constexpr int k_sanitizer_slowdown = 1;
#endif
#else
inline constexpr int k_sanitizer_slowdown = 1;
#endif

// Extra resident memory a sanitized process may hold beyond what the code itself keeps, for tests
// that bound a process's RSS: ASan keeps freed blocks in its quarantine (256 MiB by default) and
// maps shadow memory; TSan's shadow is larger still. 0 in a normal build.
inline constexpr long k_sanitizer_extra_rss_kib = k_sanitizer_slowdown > 1 ? 1024L * 1024 : 0;

}  // namespace preflight::test_timing
