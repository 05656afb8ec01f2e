/* Every result code (produced where the API can produce it, and its text), NULL
 * for every pointer parameter, zero lengths, and outputs left untouched on failure. */
#include <math.h>
#include <stdint.h>

#include "harness.h"

static int noop_method(void *ud, const swb_call *call, swb_writer *w) {
  (void)ud;
  (void)call;
  (void)w;
  return 0;
}
static void noop_notification(void *ud, const swb_call *call) {
  (void)ud;
  (void)call;
}
static void noop_response(void *ud, const swb_response *r) {
  (void)ud;
  (void)r;
}

static const uint32_t ALL_CODES[] = {
    SWB_RESULT_OK,
    SWB_RESULT_NULL_PARAMETER,
    SWB_RESULT_INVALID_ARGUMENT,
    SWB_RESULT_INVALID_UTF8,
    SWB_RESULT_INVALID_JSON,
    SWB_RESULT_NOT_FINITE,
    SWB_RESULT_INVALID_LIMIT,
    SWB_RESULT_BUFFER_TOO_SMALL,
    SWB_RESULT_ALREADY_ANSWERED,
    SWB_RESULT_SESSION_BUSY,
    SWB_RESULT_NOT_A_BATCH,
    SWB_RESULT_INDEX_OUT_OF_RANGE,
    SWB_RESULT_VALUE_NOT_LIVE,
    SWB_RESULT_WRITER_STATE,
    SWB_RESULT_EMPTY_METHOD_NAME,
    SWB_RESULT_RESERVED_METHOD_NAME,
    SWB_RESULT_DUPLICATE_METHOD,
    SWB_RESULT_INVALID_SCHEMA,
    SWB_RESULT_UNKNOWN_METHOD,
    SWB_RESULT_BUILD_FAILED,
    SWB_RESULT_WRONG_KIND,
    SWB_RESULT_NOT_REPRESENTABLE,
    SWB_RESULT_NOT_FOUND,
    SWB_RESULT_STRING_ESCAPED,
    SWB_RESULT_ITER_END,
    SWB_RESULT_PANIC,
};
#define N_CODES (sizeof ALL_CODES / sizeof ALL_CODES[0])

static void result_texts(void) {
  size_t i, j;
  char buf[SWB_RESULT_MESSAGE_MAX];
  size_t n;
  const char *unknown = swb_result_str(424242);
  CHECK(unknown != NULL && strcmp(unknown, "unknown result code") == 0);
  for (i = 0; i < N_CODES; i++) {
    const char *t = swb_result_str(ALL_CODES[i]);
    CHECK(t != NULL && strlen(t) > 0 && strlen(t) < SWB_RESULT_MESSAGE_MAX);
    CHECK(strcmp(t, unknown) != 0);
    /* distinct texts */
    for (j = 0; j < i; j++) CHECK(strcmp(t, swb_result_str(ALL_CODES[j])) != 0);
    /* the buffer form gives the same text, NUL-terminated */
    n = 9999;
    memset(buf, 'x', sizeof buf);
    CHECK_OK(swb_result_message(ALL_CODES[i], buf, sizeof buf, &n));
    CHECK(n == strlen(t) && strcmp(buf, t) == 0);
    /* exactly big enough: text + NUL */
    CHECK_OK(swb_result_message(ALL_CODES[i], buf, strlen(t) + 1, &n));
    /* one byte short: refused, nothing written */
    n = 9999;
    memset(buf, 'x', sizeof buf);
    CHECK_RC(swb_result_message(ALL_CODES[i], buf, strlen(t), &n), SWB_RESULT_BUFFER_TOO_SMALL);
    CHECK(n == 9999 && buf[0] == 'x');
  }
  CHECK_OK(swb_result_message(424242, buf, sizeof buf, &n));
  CHECK(strcmp(buf, "unknown result code") == 0);
  CHECK_RC(swb_result_message(0, NULL, 10, &n), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_result_message(0, buf, sizeof buf, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_result_message(0, NULL, 0, &n), SWB_RESULT_NULL_PARAMETER);
  /* the numeric ranges are as documented */
  CHECK(SWB_RESULT_OK == 0);
  CHECK(SWB_RESULT_NULL_PARAMETER >= 1000 && SWB_RESULT_BUFFER_TOO_SMALL < 2000);
  CHECK(SWB_RESULT_ALREADY_ANSWERED >= 2000 && SWB_RESULT_VALUE_NOT_LIVE < 3000);
  CHECK(SWB_RESULT_EMPTY_METHOD_NAME >= 3000 && SWB_RESULT_BUILD_FAILED < 4000);
  CHECK(SWB_RESULT_WRONG_KIND >= 4000 && SWB_RESULT_ITER_END < 5000);
  CHECK(SWB_RESULT_PANIC == 9000);
  /* result codes never collide with JSON-RPC codes */
  CHECK(sizeof(swb_result) == 4);
}

static void null_pointers_and_zero_lengths(void) {
  swb_router_builder *b = (swb_router_builder *)(uintptr_t)1; /* must stay untouched */
  const swb_router *r = NULL;
  const swb_router *r_out = (const swb_router *)(uintptr_t)1;
  swb_session *s = NULL;
  swb_session *s_out = (swb_session *)(uintptr_t)1;
  swb_classifier *c = NULL;
  swb_classifier *c_out = (swb_classifier *)(uintptr_t)1;
  swb_config *cfg = NULL;
  swb_config *cfg_out = (swb_config *)(uintptr_t)1;
  swb_message m;
  const uint8_t *out = (const uint8_t *)"x";
  size_t out_len = 42;
  uint64_t dropped = 42;
  const uint8_t msg[] = "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}";

  /* constructors: NULL out */
  CHECK_RC(swb_config_new(NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_new(NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_classifier_new(NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_session_new(NULL, &s_out), SWB_RESULT_NULL_PARAMETER);
  CHECK(s_out == (swb_session *)(uintptr_t)1);

  /* frees of NULL are no-ops */
  swb_config_free(NULL);
  swb_router_builder_free(NULL);
  swb_router_free(NULL);
  swb_session_free(NULL);
  swb_classifier_free(NULL);

  /* config */
  CHECK_RC(swb_config_set_max_depth(NULL, 5), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_config_set_max_batch_len(NULL, 5), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_config_set_max_message_bytes(NULL, 5), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_config_set_allow_batches(NULL, 1), SWB_RESULT_NULL_PARAMETER);
  CHECK_OK(swb_config_new(&cfg_out));
  cfg = cfg_out;
  CHECK_RC(swb_config_set_max_depth(cfg, 0), SWB_RESULT_INVALID_LIMIT);
  CHECK_RC(swb_config_set_max_depth(cfg, 65537), SWB_RESULT_INVALID_LIMIT);
  CHECK_OK(swb_config_set_max_depth(cfg, 65536));
  CHECK_OK(swb_config_set_max_depth(cfg, 1));
  CHECK_RC(swb_config_set_max_message_bytes(cfg, 0), SWB_RESULT_INVALID_LIMIT);
  CHECK_RC(swb_config_set_max_message_bytes(cfg, (size_t)4294967295u), SWB_RESULT_INVALID_LIMIT);
  CHECK_OK(swb_config_set_max_message_bytes(cfg, (size_t)4294967294u));
  CHECK_OK(swb_config_set_max_batch_len(cfg, 0));

  /* builder */
  CHECK_RC(swb_router_builder_method(NULL, "m", 1, noop_method, NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_RC(swb_router_builder_method(b, NULL, 1, noop_method, NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_method(b, "m", 1, NULL, NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_method(b, NULL, 0, noop_method, NULL, NULL), SWB_RESULT_EMPTY_METHOD_NAME);
  CHECK_RC(swb_router_builder_method(b, "", 0, noop_method, NULL, NULL), SWB_RESULT_EMPTY_METHOD_NAME);
  CHECK_RC(swb_router_builder_method(b, "rpc.x", 5, noop_method, NULL, NULL), SWB_RESULT_RESERVED_METHOD_NAME);
  CHECK_RC(swb_router_builder_method(b, "rpc.discover", 12, noop_method, NULL, NULL), SWB_RESULT_RESERVED_METHOD_NAME);
  CHECK_RC(swb_router_builder_method(b, "\xff", 1, noop_method, NULL, NULL), SWB_RESULT_INVALID_UTF8);
  CHECK_RC(swb_router_builder_method(b, "m", (size_t)PTRDIFF_MAX + 1, noop_method, NULL, NULL),
           SWB_RESULT_INVALID_ARGUMENT);
  CHECK_OK(swb_router_builder_method(b, "m", 1, noop_method, NULL, NULL));
  /* a name with an embedded NUL is just bytes */
  CHECK_OK(swb_router_builder_method(b, "m\0n", 3, noop_method, NULL, NULL));
  CHECK_RC(swb_router_builder_method(b, "m", 1, noop_method, NULL, NULL), SWB_RESULT_DUPLICATE_METHOD);
  CHECK_RC(swb_router_builder_notification(b, "m", 1, noop_notification, NULL, NULL), SWB_RESULT_DUPLICATE_METHOD);
  CHECK_RC(swb_router_builder_notification(NULL, "n", 1, noop_notification, NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_notification(b, "n", 1, NULL, NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_notification(b, "", 0, noop_notification, NULL, NULL), SWB_RESULT_EMPTY_METHOD_NAME);
  CHECK_RC(swb_router_builder_notification(b, "rpc.n", 5, noop_notification, NULL, NULL), SWB_RESULT_RESERVED_METHOD_NAME);
  CHECK_OK(swb_router_builder_notification(b, "n", 1, noop_notification, NULL, NULL));
  CHECK_RC(swb_router_builder_response_sink(NULL, noop_response, NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_response_sink(b, NULL, NULL, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_set_config(b, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_set_config(NULL, cfg), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_set_title(NULL, "t", 1), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_set_title(b, NULL, 1), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_set_title(b, "\xc3", 1), SWB_RESULT_INVALID_UTF8);
  CHECK_OK(swb_router_builder_set_title(b, NULL, 0));
  CHECK_RC(swb_router_builder_schema(NULL, "m", 1, NULL, 0, NULL, 0), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_builder_schema(b, "zz", 2, "[]", 2, NULL, 0), SWB_RESULT_UNKNOWN_METHOD);
  CHECK_RC(swb_router_builder_schema(b, "m", 1, "{}", 2, NULL, 0), SWB_RESULT_INVALID_SCHEMA);
  CHECK_RC(swb_router_builder_schema(b, "m", 1, "[", 1, NULL, 0), SWB_RESULT_INVALID_SCHEMA);
  CHECK_RC(swb_router_builder_schema(b, "m", 1, NULL, 0, "[]", 2), SWB_RESULT_INVALID_SCHEMA);
  CHECK_RC(swb_router_builder_schema(b, "m", 1, NULL, 0, "{\"a\":", 5), SWB_RESULT_INVALID_SCHEMA);
  CHECK_OK(swb_router_builder_schema(b, "m", 1, NULL, 0, NULL, 0));
  CHECK_OK(swb_router_builder_schema(b, "m", 1, " []", 3, "{\"name\":\"r\"}", 12));
  CHECK_OK(swb_router_builder_set_config(b, cfg));
  CHECK_RC(swb_router_builder_build(NULL, &r_out), SWB_RESULT_NULL_PARAMETER);
  CHECK(r_out == (const swb_router *)(uintptr_t)1);
  CHECK_OK(swb_router_builder_build(b, &r_out));
  r = r_out;
  swb_config_free(cfg);

  /* router */
  CHECK_RC(swb_router_clone(NULL, &r_out), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_router_clone(r, NULL), SWB_RESULT_NULL_PARAMETER);

  /* session */
  CHECK_RC(swb_session_new(r, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_OK(swb_session_new(r, &s_out));
  s = s_out;
  CHECK_RC(swb_session_handle(NULL, msg, sizeof msg - 1, &out, &out_len), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_session_handle(s, NULL, 5, &out, &out_len), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_session_handle(s, msg, sizeof msg - 1, NULL, &out_len), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_session_handle(s, msg, sizeof msg - 1, &out, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_session_handle(s, msg, (size_t)PTRDIFF_MAX + 1, &out, &out_len), SWB_RESULT_INVALID_ARGUMENT);
  CHECK_RC(swb_session_handle(s, msg, SIZE_MAX, &out, &out_len), SWB_RESULT_INVALID_ARGUMENT);
  CHECK(out_len == 42); /* untouched by every failure */
  /* zero length (with or without a pointer): the empty message, -32700 */
  CHECK_OK(swb_session_handle(s, msg, 0, &out, &out_len));
  CHECK(bytes_contains(out, out_len, "-32700"));
  CHECK_OK(swb_session_handle(s, NULL, 0, &out, &out_len));
  CHECK(bytes_contains(out, out_len, "-32700"));
  CHECK_OK(swb_session_handle(s, msg, sizeof msg - 1, &out, &out_len));
  CHECK(bytes_eq(out, out_len, "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":1}"));
  CHECK_RC(swb_session_dropped_responses(NULL, &dropped), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_session_dropped_responses(s, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK(dropped == 42);
  swb_session_free(s);
  swb_router_free(r);

  /* classifier */
  CHECK_OK(swb_classifier_new(NULL, &c_out));
  c = c_out;
  m.kind = 99;
  CHECK_RC(swb_classifier_classify(NULL, msg, sizeof msg - 1, &m), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_classifier_classify(c, NULL, 3, &m), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_classifier_classify(c, msg, sizeof msg - 1, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_classifier_classify(c, msg, SIZE_MAX, &m), SWB_RESULT_INVALID_ARGUMENT);
  CHECK(m.kind == 99);
  CHECK_RC(swb_classifier_batch_get(c, 0, &m), SWB_RESULT_NOT_A_BATCH); /* nothing classified yet */
  CHECK_RC(swb_classifier_batch_get(NULL, 0, &m), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_classifier_batch_get(c, 0, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK(m.kind == 99);
  CHECK_OK(swb_classifier_classify(c, msg, 0, &m));
  CHECK(m.kind == SWB_KIND_ERROR);
  swb_classifier_free(c);
  (void)b;
}

/* SWB_RESULT_ALREADY_ANSWERED, NOT_FINITE, INVALID_JSON and SESSION_BUSY come from
 * inside callbacks: produced and checked in test_session.c. Checked here once more,
 * compactly, so that this file covers every code the API can produce. */
static swb_session *busy_session;
static swb_result seen[4];
static int writer_codes(void *ud, const swb_call *call, swb_writer *w) {
  const uint8_t *out;
  size_t n;
  (void)ud;
  (void)call;
  seen[0] = swb_writer_raw_json(w, "nope", 4);
  seen[1] = swb_writer_double(w, NAN);
  seen[2] = swb_session_handle(busy_session, (const uint8_t *)"{}", 2, &out, &n);
  swb_writer_null(w);
  seen[3] = swb_writer_null(w);
  return 0;
}

static void callback_codes(void) {
  swb_router_builder *b = NULL;
  const swb_router *r = NULL;
  const uint8_t *out = NULL;
  size_t n = 0;
  const char *msg = "{\"jsonrpc\":\"2.0\",\"method\":\"w\",\"id\":1}";
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_method(b, "w", 1, writer_codes, NULL, NULL));
  CHECK_OK(swb_router_builder_build(b, &r));
  CHECK_OK(swb_session_new(r, &busy_session));
  CHECK_OK(swb_session_handle(busy_session, (const uint8_t *)msg, strlen(msg), &out, &n));
  CHECK(bytes_eq(out, n, "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":1}"));
  CHECK_RC(seen[0], SWB_RESULT_INVALID_JSON);
  CHECK_RC(seen[1], SWB_RESULT_NOT_FINITE);
  CHECK_RC(seen[2], SWB_RESULT_SESSION_BUSY);
  CHECK_RC(seen[3], SWB_RESULT_ALREADY_ANSWERED);
  swb_session_free(busy_session);
  swb_router_free(r);
}

int main(void) {
  result_texts();
  null_pointers_and_zero_lengths();
  callback_codes();
  /* SWB_RESULT_BUILD_FAILED (a build error this version cannot name) and
   * SWB_RESULT_PANIC (a caught internal bug) cannot be produced through the API
   * on purpose; their texts are checked above, the panic boundary by Rust tests. */
  return harness_finish("test_errors");
}
