/* A JSON-RPC 2.0 server on stdin/stdout, newline-delimited (MCP's stdio transport):
 * one message per line in, one response per line out (nothing for notifications),
 * blank lines skipped. Build (after ffi/install.sh PREFIX):
 *   cc -std=c99 ndjson_server.c $(pkg-config --cflags --libs switchboard) -o ndjson_server
 * Try:
 *   echo '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}' | ./ndjson_server
 * Options: --max-bytes N (message size limit), --no-batches. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_methods.h"
#include "switchboard.h"

int main(int argc, char **argv) {
  swb_config *config = NULL;
  swb_router_builder *builder = NULL;
  const swb_router *router = NULL;
  swb_session *session = NULL;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  unsigned long updates = 0;
  int i;

  if (strcmp(swb_version(), SWB_VERSION) != 0) {
    fprintf(stderr, "header %s does not match library %s\n", SWB_VERSION, swb_version());
    return 1;
  }
  demo_check(swb_config_new(&config), "config");
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
      demo_check(swb_config_set_max_message_bytes(config, (size_t)strtoull(argv[++i], NULL, 10)), "--max-bytes");
    } else if (strcmp(argv[i], "--no-batches") == 0) {
      demo_check(swb_config_set_allow_batches(config, false), "--no-batches");
    } else {
      fprintf(stderr, "usage: %s [--max-bytes N] [--no-batches]\n", argv[0]);
      return 2;
    }
  }

  demo_check(swb_router_builder_new(&builder), "builder");
  demo_check(swb_router_builder_set_config(builder, config), "config");
  demo_check(demo_register(builder, &updates), "register");
  demo_check(swb_router_builder_build(builder, &router), "build"); /* consumes builder */
  demo_check(swb_session_new(router, &session), "session");
  swb_config_free(config);

  while ((n = getline(&line, &cap, stdin)) != -1) {
    const uint8_t *resp = NULL;
    size_t resp_len = 0;
    size_t len = (size_t)n;
    /* strip the line ending; skip blank lines */
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    if (len == 0) continue;
    demo_check(swb_session_handle(session, (const uint8_t *)line, len, &resp, &resp_len), "handle");
    if (resp_len == 0) continue; /* a notification (or a batch of them): nothing to send */
    fwrite(resp, 1, resp_len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
  }

  fprintf(stderr, "ndjson_server: %lu update notification(s)\n", updates);
  free(line);
  swb_session_free(session);
  swb_router_free(router);
  return 0;
}
