/* The header's version macros, each one and the combined string, against
 * swb_version() of the library linked. */
#include "harness.h"

int main(void) {
  const char *v = swb_version();
  char expected[64];
  CHECK(v != NULL);
  /* every numeric macro, checked on its own */
  snprintf(expected, sizeof expected, "%d.%d.%d", SWB_VERSION_MAJOR, SWB_VERSION_MINOR,
           SWB_VERSION_PATCH);
  CHECK(strcmp(v, expected) == 0);
  /* the combined string macro */
  CHECK(strcmp(v, SWB_VERSION) == 0);
  CHECK(strcmp(SWB_VERSION, expected) == 0);
  /* the macros are integer constants usable in #if */
#if SWB_VERSION_MAJOR < 0 || SWB_VERSION_MINOR < 0 || SWB_VERSION_PATCH < 0
  CHECK(0);
#endif
  CHECK(SWB_VERSION_MAJOR * 1000000 + SWB_VERSION_MINOR * 1000 + SWB_VERSION_PATCH > 0);
  /* the same pointer every time: a static string */
  CHECK(swb_version() == v);
  printf("header %s, library %s\n", SWB_VERSION, v);
  return harness_finish("test_version");
}
