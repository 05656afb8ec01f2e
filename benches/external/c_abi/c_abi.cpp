// switchboard through its C ABI: the demo methods as C callbacks (demo_methods.c)
// on a router, one reused session, swb_session_handle from request bytes to the
// response view (no copy: the view stays valid until the next call). Driven by
// harness.hpp; built and run by benches/external/run.sh.
#include <cstdio>

#include "../harness.hpp"
#include "demo_methods.h"

struct CAbi {
  demo_counters counters{};
  const swb_router* router = nullptr;
  swb_session* session = nullptr;

  CAbi() {
    swb_router_builder* b = nullptr;
    swb_result rc = swb_router_builder_new(&b);
    if (rc == SWB_RESULT_OK) rc = demo_register(b, &counters);
    if (rc == SWB_RESULT_OK) {
      rc = swb_router_builder_build(b, &router);  // consumes b
    } else {
      swb_router_builder_free(b);
    }
    if (rc == SWB_RESULT_OK) rc = swb_session_new(router, &session);
    if (rc != SWB_RESULT_OK) {
      std::fprintf(stderr, "switchboard set-up failed: %s\n", swb_result_str(rc));
      std::exit(1);
    }
  }
  ~CAbi() {
    swb_session_free(session);
    swb_router_free(router);
  }
  bool handle(const std::string& in, const char** out, size_t* n) {
    const uint8_t* o = nullptr;
    swb_result rc = swb_session_handle(session, reinterpret_cast<const uint8_t*>(in.data()), in.size(), &o, n);
    *out = reinterpret_cast<const char*>(o);
    return rc == SWB_RESULT_OK;
  }
};

int main(int argc, char** argv) {
  if (std::strcmp(swb_version(), SWB_VERSION) != 0) {
    std::fprintf(stderr, "header %s does not match library %s\n", SWB_VERSION, swb_version());
    return 1;
  }
  CAbi s;
  return harness::run(s, argc, argv);
}
