/* JSON-RPC 2.0 over HTTP with libmicrohttpd, per SPEC.md's HTTP rules:
 *   - POST only, else 405 with "Allow: POST";
 *   - Content-Type must be application/json (parameters allowed; a charset other
 *     than UTF-8 is not): else 415;
 *   - a body over the message size limit: 413, before parsing;
 *   - 200 with the response for any JSON-RPC response (errors, -32700 included);
 *   - 204 when there is nothing to send (a notification, a batch of them).
 * One router shared by libmicrohttpd's threads; one session per connection (a
 * connection is served by one thread at a time, its requests one after another).
 *
 * Build (after ffi/install.sh PREFIX, with libmicrohttpd-dev installed):
 *   cc -std=c99 http_server.c $(pkg-config --cflags --libs switchboard libmicrohttpd) -o http_server
 * Run: ./http_server PORT [MAX_MESSAGE_BYTES]   (PORT 0: any free port)
 * It prints "listening on 127.0.0.1:PORT", serves on the loopback address only, and
 * stops when its standard input closes (or on SIGINT/SIGTERM). */
#define _POSIX_C_SOURCE 200809L
#include <microhttpd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "demo_methods.h"
#include "switchboard.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_Result_t;
#else
typedef enum MHD_Result MHD_Result_t;
#endif

/* 413: named MHD_HTTP_CONTENT_TOO_LARGE or MHD_HTTP_PAYLOAD_TOO_LARGE depending on
 * the libmicrohttpd version (the older name is deprecated in newer ones). */
#define HTTP_CONTENT_TOO_LARGE 413

struct server {
  const swb_router *router;
  size_t max_bytes;
};

/* One request's body, gathered across the upload calls. */
struct request {
  char *body;
  size_t len;
  size_t cap;
  int too_large;
};

static volatile sig_atomic_t stop = 0;
static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static MHD_Result_t reply(struct MHD_Connection *c, unsigned int status, const char *body,
                          size_t len, const char *content_type) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
  MHD_Result_t ret;
  if (!r) return MHD_NO;
  if (content_type) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "POST");
  ret = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ret;
}

static MHD_Result_t reply_text(struct MHD_Connection *c, unsigned int status, const char *text) {
  return reply(c, status, text, strlen(text), "text/plain; charset=utf-8");
}

static int is_space(char ch) { return ch == ' ' || ch == '\t'; }

/* Whether a Content-Type header value is application/json with no charset other than
 * UTF-8: "application/json", "Application/JSON ; charset=\"utf-8\"", ... */
static int content_type_ok(const char *v) {
  const char *p = v, *end;
  size_t n;
  if (!v) return 0;
  while (is_space(*p)) p++;
  end = p;
  while (*end && *end != ';') end++;
  n = (size_t)(end - p);
  while (n > 0 && is_space(p[n - 1])) n--;
  if (n != 16 || strncasecmp(p, "application/json", 16) != 0) return 0;
  /* parameters: name=value pairs separated by ';' */
  while (*end == ';') {
    const char *name = end + 1, *eq, *val, *vend;
    size_t nlen, vlen;
    while (is_space(*name)) name++;
    eq = name;
    while (*eq && *eq != '=' && *eq != ';') eq++;
    nlen = (size_t)(eq - name);
    while (nlen > 0 && is_space(name[nlen - 1])) nlen--;
    if (*eq != '=') { /* a parameter without a value: ignore it */
      end = eq;
      continue;
    }
    val = eq + 1;
    while (is_space(*val)) val++;
    vend = val;
    while (*vend && *vend != ';') vend++;
    end = vend;
    vlen = (size_t)(vend - val);
    while (vlen > 0 && is_space(val[vlen - 1])) vlen--;
    if (vlen >= 2 && val[0] == '"' && val[vlen - 1] == '"') {
      val++;
      vlen -= 2;
    }
    if (nlen == 7 && strncasecmp(name, "charset", 7) == 0 &&
        !((vlen == 5 && strncasecmp(val, "utf-8", 5) == 0) || (vlen == 4 && strncasecmp(val, "utf8", 4) == 0)))
      return 0;
  }
  return 1;
}

static MHD_Result_t on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_data_size,
                               void **req_cls) {
  struct server *srv = (struct server *)cls;
  struct request *req = (struct request *)*req_cls;
  (void)url;
  (void)version;

  if (req == NULL) {
    /* First call: the headers are in; refuse early what needs no body. */
    const char *cl;
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
      return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only POST is allowed\n");
    if (!content_type_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE)))
      return reply_text(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json\n");
    cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > srv->max_bytes)
      return reply_text(c, HTTP_CONTENT_TOO_LARGE, "request body too large\n");
    req = (struct request *)calloc(1, sizeof *req);
    if (!req) return MHD_NO;
    *req_cls = req;
    return MHD_YES;
  }

  if (*upload_data_size > 0) {
    /* A piece of the body (chunked uploads have no Content-Length: limit here too). */
    size_t add = *upload_data_size;
    *upload_data_size = 0;
    if (req->too_large || req->len + add > srv->max_bytes) {
      req->too_large = 1;
      return MHD_YES;
    }
    if (req->len + add > req->cap) {
      size_t cap = req->cap ? req->cap : 1024;
      char *nb;
      while (cap < req->len + add) cap *= 2;
      nb = (char *)realloc(req->body, cap);
      if (!nb) return MHD_NO;
      req->body = nb;
      req->cap = cap;
    }
    memcpy(req->body + req->len, upload_data, add);
    req->len += add;
    return MHD_YES;
  }

  /* The whole body is in. */
  if (req->too_large) return reply_text(c, HTTP_CONTENT_TOO_LARGE, "request body too large\n");
  {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    swb_session *session = info ? (swb_session *)info->socket_context : NULL;
    const uint8_t *resp = NULL;
    size_t resp_len = 0;
    if (!session || swb_session_handle(session, (const uint8_t *)req->body, req->len, &resp, &resp_len) != SWB_RESULT_OK)
      return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
    if (resp_len == 0) return reply(c, MHD_HTTP_NO_CONTENT, "", 0, NULL);
    /* MUST_COPY: the bytes are the session's, valid until its next message. */
    return reply(c, MHD_HTTP_OK, (const char *)resp, resp_len, "application/json");
  }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe) {
  struct request *req = (struct request *)*req_cls;
  (void)cls;
  (void)c;
  (void)toe;
  if (req) {
    free(req->body);
    free(req);
    *req_cls = NULL;
  }
}

/* A session per connection, created when it opens and freed when it closes. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
  struct server *srv = (struct server *)cls;
  (void)c;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    swb_session *s = NULL;
    if (swb_session_new(srv->router, &s) == SWB_RESULT_OK) *socket_context = s;
  } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
    swb_session_free((swb_session *)*socket_context);
    *socket_context = NULL;
  }
}

int main(int argc, char **argv) {
  struct server srv;
  swb_config *config = NULL;
  swb_router_builder *builder = NULL;
  struct MHD_Daemon *daemon;
  const union MHD_DaemonInfo *info;
  struct sockaddr_in addr;
  unsigned long port;
  char buf[256];

  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s PORT [MAX_MESSAGE_BYTES]\n", argv[0]);
    return 2;
  }
  port = strtoul(argv[1], NULL, 10);
  srv.max_bytes = argc == 3 ? (size_t)strtoull(argv[2], NULL, 10) : (size_t)1 << 20;

  demo_check(swb_config_new(&config), "config");
  demo_check(swb_config_set_max_message_bytes(config, srv.max_bytes), "max bytes");
  demo_check(swb_router_builder_new(&builder), "builder");
  demo_check(swb_router_builder_set_config(builder, config), "config");
  demo_check(demo_register(builder, NULL), "register");
  demo_check(swb_router_builder_build(builder, &srv.router), "build");
  swb_config_free(config);

  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL,
                            on_request, &srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)2, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, &srv,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30, MHD_OPTION_END);
  if (!daemon) {
    fprintf(stderr, "cannot start the HTTP daemon on port %lu\n", port);
    return 1;
  }
  info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  printf("listening on 127.0.0.1:%u\n", info ? (unsigned)info->port : (unsigned)port);
  fflush(stdout);

  {
    /* no SA_RESTART: a signal interrupts the read below */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
  }
  /* Serve until stdin closes or a signal arrives. */
  while (!stop && read(STDIN_FILENO, buf, sizeof buf) > 0) {
  }

  MHD_stop_daemon(daemon);
  swb_router_free(srv.router);
  return 0;
}
