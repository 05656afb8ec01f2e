/* A tiny test harness for the C ABI tests: CHECK macros and helpers.
 * Each test program returns 0 when every check passed, 1 otherwise. */
#ifndef SWB_TEST_HARNESS_H
#define SWB_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchboard.h"

static int harness_failures = 0;
static int harness_checks = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    harness_checks++;                                                          \
    if (!(cond)) {                                                             \
      harness_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* Checks a swb_result, printing its text when it is not the expected one. */
#define CHECK_RC(expr, expected)                                               \
  do {                                                                         \
    swb_result rc_ = (expr);                                                   \
    harness_checks++;                                                          \
    if (rc_ != (swb_result)(expected)) {                                       \
      harness_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s returned %u (%s), expected %u (%s)\n",       \
              __FILE__, __LINE__, #expr, (unsigned)rc_, swb_result_str(rc_),   \
              (unsigned)(expected), swb_result_str((expected)));              \
    }                                                                          \
  } while (0)

#define CHECK_OK(expr) CHECK_RC(expr, SWB_RESULT_OK)

/* Whether the len bytes at ptr equal the NUL-terminated string s. */
static inline int bytes_eq(const uint8_t *ptr, size_t len, const char *s) {
  size_t n = strlen(s);
  if (len != n) return 0;
  return n == 0 || memcmp(ptr, s, n) == 0;
}

static inline int slice_eq(swb_slice v, const char *s) { return bytes_eq(v.ptr, v.len, s); }

static inline int bytes_starts_with(const uint8_t *ptr, size_t len, const char *s) {
  size_t n = strlen(s);
  return len >= n && memcmp(ptr, s, n) == 0;
}

static inline int bytes_contains(const uint8_t *ptr, size_t len, const char *s) {
  size_t n = strlen(s);
  size_t i;
  if (n == 0) return 1;
  for (i = 0; i + n <= len; i++) {
    if (memcmp(ptr + i, s, n) == 0) return 1;
  }
  return 0;
}

#define CHECK_SLICE(v, s)                                                      \
  do {                                                                         \
    swb_slice v_ = (v);                                                        \
    harness_checks++;                                                          \
    if (!slice_eq(v_, (s))) {                                                  \
      harness_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s is \"%.*s\", expected \"%s\"\n", __FILE__,    \
              __LINE__, #v, (int)v_.len, v_.ptr ? (const char *)v_.ptr : "",   \
              (s));                                                            \
    }                                                                          \
  } while (0)

/* Handles msg on session s; checks the response equals expected (NULL: none). */
#define CHECK_HANDLE(s, msg, expected)                                         \
  do {                                                                         \
    const uint8_t *out_ = NULL;                                                \
    size_t out_len_ = 12345;                                                   \
    const char *exp_ = (expected);                                             \
    CHECK_OK(swb_session_handle((s), (const uint8_t *)(msg), strlen(msg),     \
                                &out_, &out_len_));                            \
    harness_checks++;                                                          \
    if (exp_ == NULL ? (out_ != NULL || out_len_ != 0)                         \
                     : !bytes_eq(out_, out_len_, exp_)) {                      \
      harness_failures++;                                                      \
      fprintf(stderr, "%s:%d: for %s\n  got      %.*s\n  expected %s\n",      \
              __FILE__, __LINE__, (msg), (int)out_len_,                        \
              out_ ? (const char *)out_ : "(none)", exp_ ? exp_ : "(none)");   \
    }                                                                          \
  } while (0)

static inline int harness_finish(const char *name) {
  if (harness_checks == 0) {
    fprintf(stderr, "%s: no checks ran\n", name);
    return 1;
  }
  if (harness_failures != 0) {
    fprintf(stderr, "%s: %d of %d checks FAILED\n", name, harness_failures,
            harness_checks);
    return 1;
  }
  printf("%s: %d checks passed\n", name, harness_checks);
  return 0;
}

#endif
