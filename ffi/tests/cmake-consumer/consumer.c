/* Calls through the installed library: version check, one method, rpc.discover. */
#include <stdio.h>
#include <string.h>
#include <switchboard.h>

static int hello(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  return (int)swb_writer_string(w, "world", 5);
}

int main(void) {
  swb_router_builder *b;
  const swb_router *r;
  swb_session *s;
  const uint8_t *o;
  size_t n;
  const char *m = "{\"jsonrpc\":\"2.0\",\"method\":\"hello\",\"id\":1}";
  const char *want = "{\"jsonrpc\":\"2.0\",\"result\":\"world\",\"id\":1}";
  if (strcmp(swb_version(), SWB_VERSION) != 0) return 3;
  if (swb_router_builder_new(&b) || swb_router_builder_method(b, "hello", 5, hello, NULL, NULL) ||
      swb_router_builder_build(b, &r) || swb_session_new(r, &s) ||
      swb_session_handle(s, (const uint8_t *)m, strlen(m), &o, &n))
    return 2;
  if (n != strlen(want) || memcmp(o, want, n) != 0) {
    fprintf(stderr, "got %.*s\n", (int)n, (const char *)o);
    return 1;
  }
  printf("consumer_c %s: %.*s\n", swb_version(), (int)n, (const char *)o);
  swb_session_free(s);
  swb_router_free(r);
  return 0;
}
