/* TEST_SANITIZED is 1 in the sanitized builds, where CI runs each suite
 * again and every access costs several times more: tests that repeat a
 * case for confidence repeat it fewer times there. */
#ifndef WEFT_TEST_SANITIZED_H
#define WEFT_TEST_SANITIZED_H

#include "base/sanitizer.h"

#if defined(WEFT__TSAN) || defined(WEFT__ASAN)
#define TEST_SANITIZED 1
#else
#define TEST_SANITIZED 0
#endif

#endif
