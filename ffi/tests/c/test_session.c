/* The JSON-RPC 2.0 specification's examples (section 7) and SPEC.md's decisions,
 * through the C API: router builder, C callbacks, session. Also callback errors,
 * the writer's helpers and rules, the response sink and user_data ownership. */
#include <math.h>
#include <stdint.h>

#include "harness.h"

/* ---- tiny params readers (the C side has no JSON library) ---------------- */

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* Reads an integer at p (after whitespace); returns the position after it or NULL. */
static const char *read_int(const char *p, const char *end, long long *out) {
  char buf[32];
  size_t n = 0;
  char *stop;
  p = skip_ws(p, end);
  while (p + n < end && n < sizeof buf - 1 &&
         (p[n] == '-' || (p[n] >= '0' && p[n] <= '9')))
    n++;
  if (n == 0) return NULL;
  memcpy(buf, p, n);
  buf[n] = 0;
  *out = strtoll(buf, &stop, 10);
  return *stop == 0 ? p + n : NULL;
}

/* The integer member "name" of a flat object, or 0 if absent. */
static int member_int(const char *p, const char *end, const char *name, long long *out) {
  size_t n = strlen(name);
  for (; p + n + 2 <= end; p++) {
    if (*p == '"' && memcmp(p + 1, name, n) == 0 && p[n + 1] == '"') {
      const char *q = skip_ws(p + n + 2, end);
      if (q < end && *q == ':') return read_int(q + 1, end, out) != NULL;
    }
  }
  return 0;
}

/* Reads [a, b] or {"minuend": a, "subtrahend": b}. */
static int two_ints(swb_slice params, long long *a, long long *b) {
  const char *p = (const char *)params.ptr, *end = p + params.len;
  if (params.len == 0) return 0;
  if (*p == '[') {
    p = read_int(p + 1, end, a);
    if (!p) return 0;
    p = skip_ws(p, end);
    if (p >= end || *p != ',') return 0;
    return read_int(p + 1, end, b) != NULL;
  }
  return member_int(p, end, "minuend", a) && member_int(p, end, "subtrahend", b);
}

/* ---- callbacks ---------------------------------------------------------- */

static int subtract(void *ud, const swb_call *call, swb_writer *w) {
  long long a, b;
  (void)ud;
  CHECK(!call->is_notification);
  CHECK_SLICE(call->method, "subtract");
  if (!two_ints(call->params, &a, &b)) {
    static const char msg[] = "Invalid params";
    static const char data[] = "{\"reason\":\"expected two integers\"}";
    return (int)swb_writer_error(w, -32602, msg, sizeof msg - 1, data, sizeof data - 1);
  }
  return (int)swb_writer_int64(w, a - b);
}

static int sum(void *ud, const swb_call *call, swb_writer *w) {
  const char *p = (const char *)call->params.ptr, *end = p + call->params.len;
  long long total = 0, v;
  (void)ud;
  if (call->params.len == 0 || *p != '[') return 1;
  p++;
  while ((p = read_int(p, end, &v)) != NULL) {
    total += v;
    p = skip_ws(p, end);
    if (p < end && *p == ',') p++;
  }
  return (int)swb_writer_int64(w, total);
}

static int get_data(void *ud, const swb_call *call, swb_writer *w) {
  static const char json[] = "[\"hello\", 5]";
  (void)ud;
  (void)call;
  return (int)swb_writer_raw_json(w, json, sizeof json - 1);
}

/* Answers the params verbatim (null when absent). */
static int echo(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  if (call->params.len == 0) return (int)swb_writer_null(w);
  return (int)swb_writer_raw_json(w, (const char *)call->params.ptr, call->params.len);
}

/* Answers the id's raw bytes as the result (a valid JSON value too). */
static int id_echo(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  return (int)swb_writer_raw_json(w, (const char *)call->id.ptr, call->id.len);
}

static int notified = 0;
static int notify_calls_seen = 0;

static void on_notify(void *ud, const swb_call *call) {
  int *count = (int *)ud;
  CHECK(call->is_notification || call->id.len > 0);
  CHECK(call->is_notification == (call->id.len == 0));
  (*count)++;
}

/* A method callback that also sees notifications: its answer is discarded. */
static int counted(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  if (call->is_notification) {
    notify_calls_seen++;
    CHECK(call->id.ptr == NULL && call->id.len == 0);
  }
  return (int)swb_writer_string(w, "counted", 7);
}

static int fail_silent(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  (void)w;
  return -1;
}

static int fail_error(void *ud, const swb_call *call, swb_writer *w) {
  static const char msg[] = "insufficient funds";
  static const char data[] = "{\"missing\":5}";
  (void)ud;
  (void)call;
  CHECK_OK(swb_writer_error(w, 42, msg, sizeof msg - 1, data, sizeof data - 1));
  /* The call has its answer now. */
  CHECK_RC(swb_writer_int64(w, 1), SWB_RESULT_ALREADY_ANSWERED);
  CHECK_RC(swb_writer_error(w, 1, "x", 1, NULL, 0), SWB_RESULT_ALREADY_ANSWERED);
  return 1; /* the written error wins over the failure code */
}

static int error_ok(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  /* An error without data, returning 0: still the error. */
  return (int)swb_writer_error(w, -32001, "busy, try later", 15, NULL, 0);
}

static int fail_after_result(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_OK(swb_writer_bool(w, 1));
  return 7; /* failure after a result: -32603, the result is dropped */
}

static int twice(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_OK(swb_writer_uint64(w, UINT64_MAX));
  CHECK_RC(swb_writer_uint64(w, 1), SWB_RESULT_ALREADY_ANSWERED);
  CHECK_RC(swb_writer_null(w), SWB_RESULT_ALREADY_ANSWERED);
  CHECK_RC(swb_writer_raw_json(w, "1", 1), SWB_RESULT_ALREADY_ANSWERED);
  return 0;
}

static int bad_writes(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  CHECK_RC(swb_writer_raw_json(w, "{", 1), SWB_RESULT_INVALID_JSON);
  CHECK_RC(swb_writer_raw_json(w, "1 2", 3), SWB_RESULT_INVALID_JSON);
  CHECK_RC(swb_writer_raw_json(w, NULL, 0), SWB_RESULT_INVALID_JSON);
  CHECK_RC(swb_writer_raw_json(w, NULL, 3), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_writer_double(w, NAN), SWB_RESULT_NOT_FINITE);
  CHECK_RC(swb_writer_double(w, INFINITY), SWB_RESULT_NOT_FINITE);
  CHECK_RC(swb_writer_string(w, "\xff", 1), SWB_RESULT_INVALID_UTF8);
  CHECK_RC(swb_writer_string(w, NULL, 2), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_writer_error(w, 1, "\xc0\xaf", 2, NULL, 0), SWB_RESULT_INVALID_UTF8);
  CHECK_RC(swb_writer_error(w, 1, "m", 1, "{oops", 5), SWB_RESULT_INVALID_JSON);
  CHECK_RC(swb_writer_error(w, 1, "m", 1, "\xff", 1), SWB_RESULT_INVALID_JSON);
  CHECK_RC(swb_writer_null(NULL), SWB_RESULT_NULL_PARAMETER);
  /* Nothing was written by the failures: an answer is still possible. */
  return (int)swb_writer_string(w, "ok", 2);
}

/* Answers a value of the type named by the first character of the id string. */
static int types(void *ud, const swb_call *call, swb_writer *w) {
  char t = call->id.len > 1 ? (char)call->id.ptr[1] : '?';
  (void)ud;
  switch (t) {
    case 'b': return (int)swb_writer_bool(w, 0);
    case 'i': return (int)swb_writer_int64(w, INT64_MIN);
    case 'u': return (int)swb_writer_uint64(w, UINT64_MAX);
    case 'd': return (int)swb_writer_double(w, 0.1);
    case 'e': return (int)swb_writer_double(w, -2.5e-300);
    case 's': return (int)swb_writer_string(w, "a\"b\\c\n\x01\xc3\xa9", 9);
    case 'z': return (int)swb_writer_string(w, NULL, 0);
    case 'n': return 0; /* nothing written: null */
    default: return 1;
  }
}

static swb_session *reenter_session = NULL;

static int reenter(void *ud, const swb_call *call, swb_writer *w) {
  const uint8_t *out = (const uint8_t *)"unchanged";
  size_t out_len = 99;
  const char *msg = "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[1,1],\"id\":1}";
  uint64_t dropped = 7;
  (void)ud;
  (void)call;
  CHECK_RC(swb_session_handle(reenter_session, (const uint8_t *)msg, strlen(msg), &out, &out_len),
           SWB_RESULT_SESSION_BUSY);
  CHECK(out_len == 99); /* outputs untouched on failure */
  CHECK_RC(swb_session_dropped_responses(reenter_session, &dropped), SWB_RESULT_SESSION_BUSY);
  CHECK(dropped == 7);
  swb_session_free(reenter_session); /* refused while busy: the session lives on */
  return (int)swb_writer_string(w, "busy-ok", 7);
}

static int responses_seen = 0;

static void on_response(void *ud, const swb_response *r) {
  int *count = (int *)ud;
  (*count)++;
  CHECK(slice_eq(r->id, "5") || slice_eq(r->id, "\"e\""));
  if (slice_eq(r->id, "5")) {
    CHECK_SLICE(r->result, "{\"ok\":true}");
    CHECK(r->error.len == 0 && r->error.ptr == NULL);
  } else {
    CHECK(r->result.len == 0);
    CHECK(bytes_starts_with(r->error.ptr, r->error.len, "{\"code\":1"));
  }
}

static int freed = 0;
static void free_counter(void *ud) {
  (void)ud;
  freed++;
}

/* ---- helpers ------------------------------------------------------------- */

#define REG(b, name, fn) \
  CHECK_OK(swb_router_builder_method((b), (name), strlen(name), (fn), NULL, NULL))

static const swb_router *build_router(swb_config *cfg) {
  swb_router_builder *b = NULL;
  const swb_router *r = NULL;
  CHECK_OK(swb_router_builder_new(&b));
  REG(b, "subtract", subtract);
  REG(b, "sum", sum);
  REG(b, "get_data", get_data);
  REG(b, "echo", echo);
  REG(b, "id_echo", id_echo);
  REG(b, "counted", counted);
  REG(b, "fail_silent", fail_silent);
  REG(b, "fail_error", fail_error);
  REG(b, "error_ok", error_ok);
  REG(b, "fail_after_result", fail_after_result);
  REG(b, "twice", twice);
  REG(b, "bad_writes", bad_writes);
  REG(b, "types", types);
  REG(b, "reenter", reenter);
  CHECK_OK(swb_router_builder_notification(b, "update", 6, on_notify, &notified, free_counter));
  CHECK_OK(swb_router_builder_notification(b, "notify_hello", 12, on_notify, &notified, NULL));
  CHECK_OK(swb_router_builder_response_sink(b, on_response, &responses_seen, free_counter));
  {
    const char *params = "[{\"name\":\"minuend\",\"schema\":{\"type\":\"integer\"}}]";
    const char *result = "{\"name\":\"difference\",\"schema\":{\"type\":\"integer\"}}";
    CHECK_OK(swb_router_builder_schema(b, "subtract", 8, params, strlen(params), result, strlen(result)));
  }
  CHECK_OK(swb_router_builder_set_title(b, "c-tests", 7));
  if (cfg) CHECK_OK(swb_router_builder_set_config(b, cfg));
  CHECK_OK(swb_router_builder_build(b, &r));
  CHECK(r != NULL);
  return r;
}

#define MNF(id) \
  "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32601,\"message\":\"Method not found\",\"data\":{\"field\":\"method\",\"reason\":\"is not registered\"}},\"id\":" id "}"
#define INVALID(data, id) \
  "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request\",\"data\":" data "},\"id\":" id "}"
#define INTERNAL_FAILED(id) \
  "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32603,\"message\":\"Internal error\",\"data\":{\"reason\":\"the handler failed\",\"detail\":\"the callback returned a failure code\"}},\"id\":" id "}"

/* Handles msg; checks the response is a parse error (its data holds an offset). */
static void check_parse_error(swb_session *s, const char *msg) {
  const uint8_t *out = NULL;
  size_t n = 0;
  CHECK_OK(swb_session_handle(s, (const uint8_t *)msg, strlen(msg), &out, &n));
  CHECK(bytes_starts_with(out, n, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Parse error\",\"data\":{"));
  CHECK(n > 11 && memcmp(out + n - 11, ",\"id\":null}", 11) == 0);
  if (!bytes_starts_with(out, n, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700"))
    fprintf(stderr, "  for %s got %.*s\n", msg, (int)n, out ? (const char *)out : "(none)");
}

static void spec_examples(swb_session *s) {
  /* rpc call with positional parameters */
  CHECK_HANDLE(s, "{\"jsonrpc\": \"2.0\", \"method\": \"subtract\", \"params\": [42, 23], \"id\": 1}",
               "{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":1}");
  CHECK_HANDLE(s, "{\"jsonrpc\": \"2.0\", \"method\": \"subtract\", \"params\": [23, 42], \"id\": 2}",
               "{\"jsonrpc\":\"2.0\",\"result\":-19,\"id\":2}");
  /* rpc call with named parameters */
  CHECK_HANDLE(s, "{\"jsonrpc\": \"2.0\", \"method\": \"subtract\", \"params\": {\"subtrahend\": 23, \"minuend\": 42}, \"id\": 3}",
               "{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":3}");
  CHECK_HANDLE(s, "{\"jsonrpc\": \"2.0\", \"method\": \"subtract\", \"params\": {\"minuend\": 42, \"subtrahend\": 23}, \"id\": 4}",
               "{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":4}");
  /* a Notification */
  notified = 0;
  CHECK_HANDLE(s, "{\"jsonrpc\": \"2.0\", \"method\": \"update\", \"params\": [1,2,3,4,5]}", NULL);
  CHECK_HANDLE(s, "{\"jsonrpc\": \"2.0\", \"method\": \"foobar\"}", NULL);
  CHECK(notified == 1);
  /* rpc call of non-existent method */
  CHECK_HANDLE(s, "{\"jsonrpc\": \"2.0\", \"method\": \"foobar\", \"id\": \"1\"}", MNF("\"1\""));
  /* rpc call with invalid JSON */
  check_parse_error(s, "{\"jsonrpc\": \"2.0\", \"method\": \"foobar, \"params\": \"bar\", \"baz]");
  /* rpc call with invalid Request object */
  {
    const uint8_t *out = NULL;
    size_t n = 0;
    const char *m = "{\"jsonrpc\": \"2.0\", \"method\": 1, \"params\": \"bar\"}";
    CHECK_OK(swb_session_handle(s, (const uint8_t *)m, strlen(m), &out, &n));
    CHECK(bytes_starts_with(out, n, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid Request\",\"data\":{"));
    CHECK(n > 11 && memcmp(out + n - 11, ",\"id\":null}", 11) == 0);
  }
  /* rpc call Batch, invalid JSON */
  check_parse_error(s, "[\n  {\"jsonrpc\": \"2.0\", \"method\": \"sum\", \"params\": [1,2,4], \"id\": \"1\"},\n  {\"jsonrpc\": \"2.0\", \"method\"\n]");
  /* rpc call with an empty Array */
  CHECK_HANDLE(s, "[]", INVALID("{\"reason\":\"empty batch\"}", "null"));
  /* rpc call with an invalid Batch (but not empty) */
  CHECK_HANDLE(s, "[1]", "[" INVALID("{\"reason\":\"must be an object\"}", "null") "]");
  /* rpc call with invalid Batch */
  CHECK_HANDLE(s, "[1,2,3]",
               "[" INVALID("{\"reason\":\"must be an object\"}", "null") ","
               INVALID("{\"reason\":\"must be an object\"}", "null") ","
               INVALID("{\"reason\":\"must be an object\"}", "null") "]");
  /* rpc call Batch */
  notified = 0;
  CHECK_HANDLE(s,
               "[\n"
               "  {\"jsonrpc\": \"2.0\", \"method\": \"sum\", \"params\": [1,2,4], \"id\": \"1\"},\n"
               "  {\"jsonrpc\": \"2.0\", \"method\": \"notify_hello\", \"params\": [7]},\n"
               "  {\"jsonrpc\": \"2.0\", \"method\": \"subtract\", \"params\": [42,23], \"id\": \"2\"},\n"
               "  {\"foo\": \"boo\"},\n"
               "  {\"jsonrpc\": \"2.0\", \"method\": \"foo.get\", \"params\": {\"name\": \"myself\"}, \"id\": \"5\"},\n"
               "  {\"jsonrpc\": \"2.0\", \"method\": \"get_data\", \"id\": \"9\"}\n"
               "]",
               "[{\"jsonrpc\":\"2.0\",\"result\":7,\"id\":\"1\"},"
               "{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":\"2\"},"
               INVALID("{\"field\":\"jsonrpc\",\"reason\":\"is missing\"}", "null") ","
               MNF("\"5\"") ","
               "{\"jsonrpc\":\"2.0\",\"result\":[\"hello\", 5],\"id\":\"9\"}]");
  CHECK(notified == 1);
  /* rpc call Batch (all notifications): nothing at all, never [] */
  notified = 0;
  CHECK_HANDLE(s,
               "[\n"
               "  {\"jsonrpc\": \"2.0\", \"method\": \"notify_sum\", \"params\": [1,2,4]},\n"
               "  {\"jsonrpc\": \"2.0\", \"method\": \"notify_hello\", \"params\": [7]}\n"
               "]",
               NULL);
  CHECK(notified == 1);
}

static void spec_decisions(swb_session *s) {
  uint64_t dropped = 99;
  /* ids are echoed byte for byte, never converted */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"id_echo\",\"id\":9007199254740993}",
               "{\"jsonrpc\":\"2.0\",\"result\":9007199254740993,\"id\":9007199254740993}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"id_echo\",\"id\":1.5}",
               "{\"jsonrpc\":\"2.0\",\"result\":1.5,\"id\":1.5}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"id_echo\",\"id\":1e2}",
               "{\"jsonrpc\":\"2.0\",\"result\":1e2,\"id\":1e2}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"id_echo\",\"id\":-0}",
               "{\"jsonrpc\":\"2.0\",\"result\":-0,\"id\":-0}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"id_echo\",\"id\":\"\\u0041\"}",
               "{\"jsonrpc\":\"2.0\",\"result\":\"\\u0041\",\"id\":\"\\u0041\"}");
  /* "id": null is a request, answered with id null */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"id_echo\",\"id\":null}",
               "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":null}");
  /* an invalid request whose id is valid: -32600 echoing it */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":1,\"id\":7}",
               INVALID("{\"field\":\"method\",\"reason\":\"must be a string\"}", "7"));
  CHECK_HANDLE(s, "{\"jsonrpc\":\"1.0\",\"method\":\"subtract\",\"id\":\"v\"}",
               INVALID("{\"field\":\"jsonrpc\",\"reason\":\"must be the string \\\"2.0\\\"\"}", "\"v\""));
  /* an id that is an object, array or boolean: -32600, id null */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":{}}",
               INVALID("{\"field\":\"id\",\"reason\":\"must be a string, a number or null\"}", "null"));
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":true}",
               INVALID("{\"field\":\"id\",\"reason\":\"must be a string, a number or null\"}", "null"));
  /* params null: treated as absent */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":null,\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":1}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":{\"a\":[1,{}]},\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":{\"a\":[1,{}]},\"id\":1}");
  /* params a string, number or boolean: -32600 */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":\"x\",\"id\":1}",
               INVALID("{\"field\":\"params\",\"reason\":\"must be an array or an object\"}", "1"));
  /* duplicate top-level member, escaped spelling included: -32600, id null */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"m\\u0065thod\":\"sum\",\"id\":1}",
               INVALID("{\"field\":\"method\",\"reason\":\"duplicate member\"}", "null"));
  /* unknown extra members ignored */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"x\":1,\"x\":2,\"method\":\"subtract\",\"params\":[5,2],\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":1}");
  /* method names compared after unescaping */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"su\\u0062tract\",\"params\":[5,2],\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":3,\"id\":1}");
  /* an escaped lone surrogate never equals a registered name */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"\\ud800\",\"id\":1}", MNF("1"));
  /* invalid UTF-8, BOM, empty, whitespace only, trailing bytes: -32700 */
  check_parse_error(s, "{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\xaf\",\"id\":1}");
  check_parse_error(s, "{\"jsonrpc\":\"2.0\",\"method\":\"\xed\xa0\x80\",\"id\":1}");
  check_parse_error(s, "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":1}");
  check_parse_error(s, "");
  check_parse_error(s, " \n\t ");
  check_parse_error(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":1} x");
  /* a zero-length message with a NULL pointer is the empty message */
  {
    const uint8_t *out = NULL;
    size_t n = 0;
    CHECK_OK(swb_session_handle(s, NULL, 0, &out, &n));
    CHECK(bytes_contains(out, n, "\"code\":-32700"));
    CHECK(bytes_contains(out, n, "\"reason\":\"empty message\""));
  }
  /* Response objects: never answered; handed to the sink */
  responses_seen = 0;
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"result\":{\"ok\":true},\"id\":5}", NULL);
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"},\"id\":\"e\"}", NULL);
  CHECK_HANDLE(s, "[{\"jsonrpc\":\"2.0\",\"result\":{\"ok\":true},\"id\":5}]", NULL);
  CHECK(responses_seen == 3);
  CHECK_OK(swb_session_dropped_responses(s, &dropped));
  CHECK(dropped == 0);
  /* a malformed Response object is -32600 */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"result\":1,\"error\":{\"code\":1,\"message\":\"m\"},\"id\":5}",
               INVALID("{\"field\":\"result\",\"reason\":\"result and error are mutually exclusive\"}", "5"));
  /* rpc.discover is built in */
  {
    const uint8_t *out = NULL;
    size_t n = 0;
    const char *m = "{\"jsonrpc\":\"2.0\",\"method\":\"rpc.discover\",\"id\":1}";
    CHECK_OK(swb_session_handle(s, (const uint8_t *)m, strlen(m), &out, &n));
    CHECK(bytes_starts_with(out, n, "{\"jsonrpc\":\"2.0\",\"result\":{"));
    CHECK(bytes_contains(out, n, "\"openrpc\""));
    CHECK(bytes_contains(out, n, "\"title\":\"c-tests\""));
    CHECK(bytes_contains(out, n, "\"name\":\"subtract\""));
    CHECK(bytes_contains(out, n, "\"name\":\"difference\""));
    CHECK(bytes_contains(out, n, "\"x-notification\":true"));
  }
}

static void callback_errors(swb_session *s) {
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"fail_silent\",\"id\":1}", INTERNAL_FAILED("1"));
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"fail_error\",\"id\":2}",
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":42,\"message\":\"insufficient funds\",\"data\":{\"missing\":5}},\"id\":2}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"error_ok\",\"id\":3}",
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32001,\"message\":\"busy, try later\"},\"id\":3}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"fail_after_result\",\"id\":4}", INTERNAL_FAILED("4"));
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"twice\",\"id\":5}",
               "{\"jsonrpc\":\"2.0\",\"result\":18446744073709551615,\"id\":5}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"bad_writes\",\"id\":6}",
               "{\"jsonrpc\":\"2.0\",\"result\":\"ok\",\"id\":6}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[\"a\"],\"id\":7}",
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32602,\"message\":\"Invalid params\",\"data\":{\"reason\":\"expected two integers\"}},\"id\":7}");
  /* failures of notifications are never answered */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"fail_silent\"}", NULL);
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"fail_error\"}", NULL);
  CHECK_HANDLE(s, "[{\"jsonrpc\":\"2.0\",\"method\":\"fail_silent\"},{\"jsonrpc\":\"2.0\",\"method\":\"fail_silent\",\"id\":8}]",
               "[" INTERNAL_FAILED("8") "]");
  /* a method callback called as a notification: its answer is discarded */
  notify_calls_seen = 0;
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"counted\"}", NULL);
  CHECK(notify_calls_seen == 1);
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"counted\",\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":\"counted\",\"id\":1}");
  /* a request to a notification method: result null once it ran */
  notified = 0;
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"update\",\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":1}");
  CHECK(notified == 1);
  /* writer helpers */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"b\"}", "{\"jsonrpc\":\"2.0\",\"result\":false,\"id\":\"b\"}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"i\"}", "{\"jsonrpc\":\"2.0\",\"result\":-9223372036854775808,\"id\":\"i\"}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"u\"}", "{\"jsonrpc\":\"2.0\",\"result\":18446744073709551615,\"id\":\"u\"}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"d\"}", "{\"jsonrpc\":\"2.0\",\"result\":0.1,\"id\":\"d\"}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"e\"}", "{\"jsonrpc\":\"2.0\",\"result\":-2.5e-300,\"id\":\"e\"}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"s\"}", "{\"jsonrpc\":\"2.0\",\"result\":\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\",\"id\":\"s\"}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"z\"}", "{\"jsonrpc\":\"2.0\",\"result\":\"\",\"id\":\"z\"}");
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"types\",\"id\":\"n\"}", "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":\"n\"}");
  /* re-entering the session from a callback is refused */
  reenter_session = s;
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"reenter\",\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":\"busy-ok\",\"id\":1}");
  /* ... and the session works normally afterwards */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[3,2],\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}");
}

static void limits(void) {
  swb_config *cfg = NULL;
  const swb_router *r;
  swb_session *s = NULL;
  char deep[300];
  int i;
  CHECK_OK(swb_config_new(&cfg));
  CHECK_OK(swb_config_set_max_batch_len(cfg, 2));
  CHECK_OK(swb_config_set_max_depth(cfg, 4));
  CHECK_OK(swb_config_set_max_message_bytes(cfg, 200));
  r = build_router(cfg);
  swb_config_free(cfg); /* the router keeps its own copy */
  CHECK_OK(swb_session_new(r, &s));
  swb_router_free(r); /* the session keeps the router alive */
  CHECK_HANDLE(s, "[{\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[1],\"id\":1},{\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[2],\"id\":2}]",
               "[{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1},{\"jsonrpc\":\"2.0\",\"result\":2,\"id\":2}]");
  CHECK_HANDLE(s, "[1,2,3]", INVALID("{\"reason\":\"batch longer than max_batch_len\",\"limit\":2}", "null"));
  /* depth 4 passes (the outermost object is level 1), 5 fails with -32700 */
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[[[1]]],\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":[[[1]]],\"id\":1}");
  {
    const uint8_t *out = NULL;
    size_t n = 0;
    const char *m = "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[[[[1]]]],\"id\":1}";
    CHECK_OK(swb_session_handle(s, (const uint8_t *)m, strlen(m), &out, &n));
    CHECK(bytes_contains(out, n, "\"code\":-32700"));
    CHECK(bytes_contains(out, n, "\"reason\":\"nesting deeper than max_depth\""));
  }
  /* over max_message_bytes: -32600 with the limit, before parsing */
  memset(deep, ' ', sizeof deep);
  memcpy(deep, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":1}", 39);
  deep[sizeof deep - 1] = 0;
  CHECK_HANDLE(s, deep, INVALID("{\"reason\":\"message larger than max_message_bytes\",\"limit\":200}", "null"));
  swb_session_free(s);

  /* batches switched off */
  CHECK_OK(swb_config_new(&cfg));
  CHECK_OK(swb_config_set_allow_batches(cfg, 0));
  r = build_router(cfg);
  swb_config_free(cfg);
  CHECK_OK(swb_session_new(r, &s));
  CHECK_HANDLE(s, "[{\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[1],\"id\":1}]",
               INVALID("{\"reason\":\"batches are disabled\"}", "null"));
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"sum\",\"params\":[1],\"id\":1}",
               "{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}");
  swb_session_free(s);
  swb_router_free(r);

  /* default depth: 128 levels pass, 129 fail */
  r = build_router(NULL);
  CHECK_OK(swb_session_new(r, &s));
  for (i = 0; i < 2; i++) {
    int levels = i == 0 ? 127 : 128; /* plus the outer object */
    char msg[400];
    size_t n = 0;
    int k;
    const uint8_t *out = NULL;
    size_t out_len = 0;
    n += (size_t)sprintf(msg + n, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":1,\"params\":");
    for (k = 0; k < levels; k++) msg[n++] = '[';
    for (k = 0; k < levels; k++) msg[n++] = ']';
    msg[n++] = '}';
    CHECK_OK(swb_session_handle(s, (const uint8_t *)msg, n, &out, &out_len));
    CHECK(bytes_contains(out, out_len, "\"code\":-32700") == (i == 1));
  }
  swb_session_free(s);
  swb_router_free(r);
}

static void user_data_ownership(void) {
  swb_router_builder *b = NULL;
  const swb_router *r = NULL, *r2 = NULL;
  swb_session *s = NULL;
  int dummy = 0;
  /* a builder freed unbuilt frees its user_data */
  freed = 0;
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_method(b, "a", 1, counted, &dummy, free_counter));
  CHECK_OK(swb_router_builder_notification(b, "b", 1, on_notify, &dummy, free_counter));
  /* a refused registration does not take user_data over */
  CHECK_RC(swb_router_builder_method(b, "a", 1, counted, &dummy, free_counter), SWB_RESULT_DUPLICATE_METHOD);
  CHECK(freed == 0);
  swb_router_builder_free(b);
  CHECK(freed == 2);

  /* a router frees them with its last reference, sessions included */
  freed = 0;
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_method(b, "a", 1, counted, &dummy, free_counter));
  CHECK_OK(swb_router_builder_response_sink(b, on_response, &dummy, free_counter));
  CHECK_OK(swb_router_builder_response_sink(b, on_response, &dummy, free_counter)); /* replaces: frees the first */
  CHECK(freed == 1);
  CHECK_OK(swb_router_builder_build(b, &r));
  CHECK_OK(swb_router_clone(r, &r2));
  CHECK(r2 == r);
  CHECK_OK(swb_session_new(r, &s));
  swb_router_free(r);
  swb_router_free(r2);
  CHECK(freed == 1);
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":1}", "{\"jsonrpc\":\"2.0\",\"result\":\"counted\",\"id\":1}");
  swb_session_free(s);
  CHECK(freed == 3);

  /* a failed build frees them too (the builder is consumed) */
  freed = 0;
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_method(b, "a", 1, counted, &dummy, free_counter));
  CHECK_RC(swb_router_builder_build(b, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK(freed == 1);
}

int main(void) {
  const swb_router *r = build_router(NULL);
  swb_session *s = NULL;
  swb_session *s2 = NULL;
  uint64_t dropped = 0;
  CHECK_OK(swb_session_new(r, &s));
  spec_examples(s);
  spec_decisions(s);
  callback_errors(s);
  swb_session_free(s);
  /* a router without a response sink drops and counts responses */
  {
    swb_router_builder *b = NULL;
    const swb_router *bare = NULL;
    CHECK_OK(swb_router_builder_new(&b));
    CHECK_OK(swb_router_builder_build(b, &bare));
    CHECK_OK(swb_session_new(bare, &s2));
    CHECK_HANDLE(s2, "{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}", NULL);
    CHECK_HANDLE(s2, "[{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1},{\"jsonrpc\":\"2.0\",\"error\":{\"code\":3,\"message\":\"x\"},\"id\":2}]", NULL);
    CHECK_OK(swb_session_dropped_responses(s2, &dropped));
    CHECK(dropped == 3);
    CHECK_HANDLE(s2, "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1}", MNF("1"));
    swb_session_free(s2);
    swb_router_free(bare);
  }
  freed = 0;
  swb_router_free(r); /* the last reference: update's and the sink's free_counter run */
  CHECK(freed == 2);
  limits();
  user_data_ownership();
  return harness_finish("test_session");
}
