/* Which sanitizer instruments this build, in one place: gcc says so with
 * __SANITIZE_THREAD__ / __SANITIZE_ADDRESS__, clang with __has_feature.
 * WEFT__TSAN and WEFT__ASAN are defined (to 1) under ThreadSanitizer and
 * AddressSanitizer respectively. */
#ifndef WEFT_BASE_SANITIZER_H
#define WEFT_BASE_SANITIZER_H

#if defined(__SANITIZE_THREAD__)
#define WEFT__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT__TSAN 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#define WEFT__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT__ASAN 1
#endif
#endif

#endif
